// sar-route eval: validate routing tables (libsar's routing pass) and print their metrics. An
// invalid table set exits 1 with ValidateRouting's message on stderr, after the report.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli_common.h"
#include "flows_report.h"
#include "sar/analysis/analysis.h"
#include "sar/analysis/lower_bound.h"
#include "sar/analysis/oblivious.h"
#include "sar/engines/engine.h"
#include "sar/io/job_file.h"
#include "sar/io/layers_file.h"
#include "sar/model/fabric_order.h"
#include "sar/model/jobs.h"
#include "sar/pass/routing_pass.h"

namespace sarcli {
namespace {

using Json = nlohmann::ordered_json;

RoutingArgs EvalRouting() {
  RoutingArgs r;
  r.vls = 15;  // eval judges tables that may use every lane
  return r;
}

struct EvalArgs {
  FabricArgs fabric;
  // --jobs, --job-hca-pairs, --vls (default 15), --allow-disconnected, --hca-pairs-only, --threads
  RoutingArgs routing = EvalRouting();
  std::string lfts;
  std::string layers;
  bool json = false;
  std::string progress = "auto";
  bool per_channel = false;
  std::vector<std::string> traffic;
  std::string source_lids;    // engine whose per-source LID choice the metrics follow
  bool flows = true;          // per-job max-min fair throughput (sar/analysis/flows.h)
  bool schedules = false;     // alltoall jobs exchange in their published FORS phases
  std::string schedules_of;   // ... published beside this mapping instead of --jobs
  std::string baseline_lfts;  // per-job comparison against these tables
  std::string baseline_name = "baseline";
};

// Which LID of each destination every source sends to, as engine `name` chooses it
// (RoutingOutput::source_lid_offset: osrm2/osrm3 give each source group its own LID). The choice
// depends on the fabric alone, so it is recomputed here rather than stored beside the tables:
// tables read back from OpenSM (no file of ours with them) are evaluated just the same. It is
// computed in the canonical node order that `route`, `compare` and the OpenSM plugin route in,
// then mapped back to `f`'s endpoints by node name and port.
sar::Status SourceLidsOf(const sar::Fabric& f, const std::string& name, const RoutingArgs& routing,
                         std::vector<uint8_t>* offsets, sar::RoutingResult* pass) {
  if (!sar::MakeRoutingEngine(name)) {
    return sar::Status::InvalidArgument("--source-lids: unknown engine '" + name +
                                        "'; known engines: " + sar::RoutingEngineList());
  }
  sar::Fabric canon;
  SAR_RETURN_IF_ERROR(sar::CanonicalNodeOrder(f, &canon));
  // libsar's routing pass, as `route` runs it with these options (FORS, the empty-mapping rule,
  // the guards, the validation).
  sar::RoutingRequest request;
  request.fabric = &canon;
  request.options = RoutingOptionsFrom(routing, name);
  const sar::Status s = sar::RunRoutingPass(request, pass);
  if (!s.ok()) return sar::Status::InvalidArgument("--source-lids " + name + ": " + s.message());
  const sar::RoutingOutput& out = pass->output;
  offsets->clear();
  if (out.source_lid_offset.empty()) return sar::Status::OK();  // base LIDs
  const std::vector<sar::PortRef> ends = f.Endpoints(), canon_ends = canon.Endpoints();
  std::vector<int> slot(canon.num_port_slots(), -1);  // canonical endpoint index per port slot
  for (size_t i = 0; i < canon_ends.size(); ++i) {
    slot[canon.port_id(canon_ends[i])] = static_cast<int>(i);
  }
  offsets->resize(ends.size());
  for (size_t i = 0; i < ends.size(); ++i) {
    const sar::NodeId n = canon.FindByName(f.name(ends[i].node));
    const int c = n == sar::kNoNode ? -1 : slot[canon.port_id({n, ends[i].port})];
    if (c < 0)
      return sar::Status::InvalidArgument("--source-lids: endpoint lost in canonical order");
    (*offsets)[i] = out.source_lid_offset[c];
  }
  return sar::Status::OK();
}

sar::Status ParseTraffic(const std::string& text, sar::TrafficSpec* spec) {
  // all-to-all | shift:N | random:SEED | clustered:SIZE[:SEED]
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  std::vector<long long> nums;
  for (size_t pos = colon; pos != std::string::npos;) {
    const size_t next = text.find(':', pos + 1);
    const std::string part =
        text.substr(pos + 1, next == std::string::npos ? next : next - pos - 1);
    char* end = nullptr;
    const long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v < 0) {
      return sar::Status::InvalidArgument("--traffic: '" + part + "' is not a number in '" + text +
                                          "'");
    }
    nums.push_back(v);
    pos = next;
  }
  if (kind == "all-to-all" && nums.empty()) {
    spec->pattern = sar::TrafficPattern::kAllToAll;
  } else if (kind == "shift" && nums.size() == 1) {
    spec->pattern = sar::TrafficPattern::kShift;
    spec->shift = static_cast<int>(nums[0]);
  } else if (kind == "random" && nums.size() <= 1) {
    spec->pattern = sar::TrafficPattern::kRandomPermutation;
    if (!nums.empty()) spec->seed = nums[0];
  } else if (kind == "clustered" && (nums.size() == 1 || nums.size() == 2)) {
    spec->pattern = sar::TrafficPattern::kClustered;
    spec->cluster_size = static_cast<int>(nums[0]);
    if (nums.size() == 2) spec->seed = nums[1];
  } else {
    return sar::Status::InvalidArgument(
        "--traffic: expected all-to-all, shift:N, random[:SEED] or "
        "clustered:SIZE[:SEED], got '" +
        text + "'");
  }
  return sar::Status::OK();
}

Json EfiJson(const sar::EfiSummary& e) { return Json{{"max", e.max}, {"mean", e.mean}}; }

int RunEval(const EvalArgs& a) {
  const StepLog steps("eval", StepsWanted(a.progress, a.json));
  steps.Step("reading the fabric and the tables");
  sar::Stopwatch watch;
  Json timing;
  sar::Fabric f;
  std::vector<sar::LftSet> tables;
  std::vector<std::string> lft_paths = {a.lfts};
  if (!a.baseline_lfts.empty()) lft_paths.push_back(a.baseline_lfts);
  sar::Status s = LoadFabricAndLfts(a.fabric, lft_paths, &f, &tables);
  if (!s.ok()) return Fail(s);
  const sar::LftSet& lfts = tables[0];
  std::vector<sar::ResolvedJob> jobs;
  s = LoadJobs(f, a.routing.jobs, &jobs, a.routing.hca_pairs);
  if (!s.ok()) return Fail(s);
  std::optional<sar::VirtualLayers> layers;
  if (!a.layers.empty()) {
    layers.emplace();
    s = sar::ReadVirtualLayers(a.layers, &*layers);
    if (!s.ok()) return Fail(s);
  }
  std::vector<sar::TrafficSpec> traffic(a.traffic.size());
  for (size_t i = 0; i < a.traffic.size(); ++i) {
    s = ParseTraffic(a.traffic[i], &traffic[i]);
    if (!s.ok()) return Fail(s);
  }
  std::vector<uint8_t> offsets;  // empty: every source sends to base LIDs
  sar::RoutingResult source_pass;
  if (!a.source_lids.empty()) {
    s = SourceLidsOf(f, a.source_lids, a.routing, &offsets, &source_pass);
    for (const std::string& note : source_pass.Notes()) {
      std::fprintf(stderr, "sar-route: note: --source-lids %s: %s\n", a.source_lids.c_str(),
                   note.c_str());
    }
    if (!s.ok()) return Fail(s);
  }
  timing["read_ms"] = watch.LapMs();
  steps.Step("validating and analysing the routes (" + std::to_string(f.num_nodes()) + " nodes, " +
             std::to_string(f.num_switches()) + " switches)");

  // One sweep over the destinations gives the verdict of libsar's routing pass
  // (ValidateRouting, as for `route`, `compare`, the plugin and sar-filterd) and everything
  // else eval reports: each destination's tree of routes is built once. Without --layers the
  // routes' layers are unknown (tables read back from a subnet manager): their channel
  // dependencies are then reported, not judged.
  sar::ValidationOptions vo;
  vo.num_vls = a.routing.vls;
  vo.allow_disconnected = a.routing.allow_disconnected;
  vo.layers_known = layers.has_value();
  vo.check_min_hop = true;
  vo.switch_lids = !a.routing.hca_pairs_only;
  vo.threads = a.routing.threads;
  sar::AnalysisOptions also;
  also.what = sar::kAnalyseSingleLayerDeadlock | sar::kAnalyseMetrics;
  also.jobs = &jobs;
  also.deadlock_switch_lids = vo.switch_lids;
  also.traffic = traffic;
  also.source_lid_offset = &offsets;
  sar::AnalysisResult r;
  sar::ValidationReport check;
  const sar::Status verdict =
      sar::ValidateRouting(f, lfts, layers ? &*layers : nullptr, layers ? layers->num_layers() : 1,
                           vo, also, &r, &check);
  if (!verdict.ok() && verdict.code() != sar::Status::Code::kFailed) return Fail(verdict);
  timing["analysis_ms"] = watch.LapMs();
  steps.Step("the oblivious performance ratio");
  const sar::TraceReport& trace = r.trace;
  const sar::DeadlockReport& single_layer = r.single_layer;
  const sar::DeadlockReport* layered = layers ? &r.deadlock : nullptr;
  const sar::Metrics& m = r.metrics;
  const std::vector<sar::LinkLoad>& loads = r.traffic;

  const bool valid = verdict.ok();
  // Yuan's oblivious performance ratio (max disjoint size); null when the fabric is too large
  // to match every channel's pairs.
  sar::ObliviousResult obl;
  sar::ObliviousOptions oo;
  oo.source_lid_offset = &offsets;
  const sar::Status obl_status = sar::ComputeObliviousRatio(f, lfts, oo, &obl);
  timing["oblivious_ms"] = watch.LapMs();

  // What the jobs feel: each job's slowest flow with every job sending at once.
  sar::FlowReport flows, base_flows;
  sar::FlowComparison vs;
  std::vector<std::string> flow_notes;
  bool want_flows = a.flows && !jobs.empty();
  bool want_baseline = want_flows && !a.baseline_lfts.empty();
  if (want_flows) {
    steps.Step("per-job flows of " + std::to_string(jobs.size()) + " jobs, every job at once");
    const std::vector<sar::FlowJob> flow_jobs =
        FlowJobsFor(f, jobs, a.schedules_of.empty() ? a.routing.jobs : a.schedules_of,
                    a.schedules || !a.schedules_of.empty(), &flow_notes);
    sar::FlowOptions fo;
    fo.source_lid_offset = &offsets;
    fo.threads = a.routing.threads;
    s = sar::ComputeJobFlows(f, lfts, flow_jobs, fo, &flows);
    if (s.code() == sar::Status::Code::kFailed) {  // over the flow limit: a note, not an error
      flow_notes.push_back(s.message());
      want_flows = want_baseline = false;
      s = sar::Status::OK();
    }
    if (!s.ok()) return Fail(s);
    if (want_baseline) {
      // The baseline's tables carry no FORS schedule of ours: its jobs send all-to-all.
      s = sar::ComputeJobFlows(f, tables[1], sar::AllToAllFlowJobs(jobs), fo, &base_flows);
      if (!s.ok()) return Fail(s);
      vs = sar::CompareJobFlows(flows, base_flows);
    }
    timing["flows_ms"] = watch.LapMs();
  }

  Json j;
  j["valid"] = valid;
  j["source_lids"] = a.source_lids.empty() ? Json(nullptr) : Json(a.source_lids);
  if (!a.source_lids.empty()) {  // the routing pass that chose them
    j["source_lids_pass"] = {{"engine_used", source_pass.inputs.engine},
                             {"notes", source_pass.Notes()}};
  }
  j["pairs"] = trace.pairs;
  j["unreachable_pairs"] = trace.unreachable;
  j["loops"] = trace.loops;
  j["non_min_hop"] = trace.non_min_hop;
  j["max_hops"] = trace.max_hops;
  j["mean_hops"] = trace.mean_hops;
  j["deadlock_free"] = layered ? Json(layered->deadlock_free) : Json(nullptr);
  j["layers"] = layered ? Json(layered->layers) : Json(nullptr);
  j["single_layer_deadlock_free"] = single_layer.deadlock_free;
  j["single_layer_dependencies"] = single_layer.dependencies;
  j["deadlock_switch_lids"] = single_layer.switch_lids;  // the one-lane rule may say no
  j["channels"] = m.channels;
  j["efi"] = EfiJson(m.efi);
  j["effective_efi"] = EfiJson(m.effective_efi);
  const sar::EffectiveEfiBound lb = sar::EffectiveEfiLowerBound(f, jobs);
  j["lower_bound"] = jobs.empty() ? Json(nullptr)
                                  : Json{{"value", lb.value},
                                         {"leaf", lb.leaf},
                                         {"level", lb.level},
                                         {"leaf_average", lb.leaf_avg},
                                         {"where", lb.where}};
  j["bound_gap"] =
      lb.value > 0 ? Json(sar::BoundGap(m.effective_efi.max, lb.value)) : Json(nullptr);
  j["dark_fiber"] = m.dark_fiber;
  // Loads per unit of capacity (a full-rate link counts 1): beside the raw EFIs, not instead.
  const sar::LinkRate nominal = f.nominal_rate();
  j["nominal_rate"] = nominal.declared() ? Json(sar::LinkRateString(nominal)) : Json(nullptr);
  j["slow_channels"] = m.slow_channels;
  j["efi_per_capacity"] = {{"max", m.efi_per_capacity.max}, {"mean", m.efi_per_capacity.mean}};
  j["effective_efi_per_capacity"] = {{"max", m.effective_efi_per_capacity.max},
                                     {"mean", m.effective_efi_per_capacity.mean}};
  j["oblivious_ratio"] = obl_status.ok() ? Json(obl.max_disjoint) : Json(nullptr);
  j["oblivious_ratio_exact"] = obl_status.ok() ? Json(obl.full_bisection) : Json(nullptr);
  Json jobs_json = Json::array();
  for (const sar::JobMetrics& jm : m.jobs) {
    jobs_json.push_back({{"id", jm.id},
                         {"hosts", jm.hosts},
                         {"leaf_switches", jm.leaf_switches},
                         {"efi_max", jm.efi_max},
                         {"channels", jm.channels}});
  }
  j["jobs"] = std::move(jobs_json);
  if (!want_flows && !flow_notes.empty()) j["flows"] = {{"notes", flow_notes}};
  if (want_flows) {
    j["flows"] = FlowsJson(flows, want_baseline ? &vs : nullptr, a.baseline_name);
    j["flows"]["notes"] = flow_notes;
    if (want_baseline) {
      j["flows"]["baseline_summary"] = FlowsJson(base_flows, nullptr, "")["summary"];
    }
  }
  if (!traffic.empty()) {
    Json t = Json::array();
    for (size_t i = 0; i < traffic.size(); ++i) {
      const sar::LinkLoad& l = loads[i];
      Json row = {{"pattern", a.traffic[i]},
                  {"flows", l.flows},
                  {"max_load", l.max_load},
                  {"mean_load", l.mean_load}};
      if (l.max_channel != sar::kNoPort) {
        const sar::PortRef p = f.port_ref(l.max_channel);
        row["max_channel"] = {{"from", f.name(p.node)}, {"from_port", p.port}};
      }
      t.push_back(std::move(row));
    }
    j["traffic"] = std::move(t);
  }
  j["problems"] = trace.examples;
  j["invalid"] = valid ? Json(nullptr) : Json(verdict.message());
  if (layered && !layered->deadlock_free) {
    Json cycle = Json::array();
    for (sar::PortId c : layered->cycle) {
      const sar::PortRef p = f.port_ref(c);
      cycle.push_back(f.name(p.node) + "[" + std::to_string(p.port) + "]");
    }
    j["deadlock_cycle"] = {{"layer", layered->cyclic_layer}, {"channels", cycle}};
  }
  if (a.per_channel) {
    Json pc = Json::array();
    for (sar::PortId c = 0; c < f.num_port_slots(); ++c) {
      if (!f.is_inter_switch(c)) continue;
      const sar::PortRef from = f.port_ref(c);
      const sar::PortRef to = f.peer(from);
      pc.push_back({{"from", f.name(from.node)},
                    {"from_port", from.port},
                    {"to", f.name(to.node)},
                    {"to_port", to.port},
                    {"from_desc", Describe(f, from.node)},
                    {"to_desc", Describe(f, to.node)},
                    {"efi", m.efi_per_channel[c]},
                    {"effective_efi", m.effective_efi_per_channel[c]}});
      const sar::LinkRate rate = f.link_rate(c);
      pc.back()["rate"] = rate.declared() ? Json(sar::LinkRateString(rate)) : Json(nullptr);
    }
    j["per_channel"] = std::move(pc);
  }
  j["timing_ms"] = timing;

  if (a.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("routing:        %s\n", valid ? "valid" : "INVALID");
    if (!offsets.empty()) {
      std::printf("source LIDs:    %s's (each source sends to its group's LID)\n",
                  a.source_lids.c_str());
    }
    std::printf("pairs:          %llu traced, %llu unreachable, %llu loops, %llu not min-hop\n",
                static_cast<unsigned long long>(trace.pairs),
                static_cast<unsigned long long>(trace.unreachable),
                static_cast<unsigned long long>(trace.loops),
                static_cast<unsigned long long>(trace.non_min_hop));
    std::printf("hops:           max %d, mean %.2f\n", trace.max_hops, trace.mean_hops);
    std::printf("deadlock:       single layer %s",
                single_layer.deadlock_free ? "acyclic" : "CYCLIC");
    if (layered) {
      std::printf("; %d layers %s", layered->layers, layered->deadlock_free ? "acyclic" : "CYCLIC");
    }
    std::printf("\nchannels:       %d switch-to-switch\n", m.channels);
    if (obl_status.ok()) {
      std::printf("oblivious:      max disjoint size %u (%s)\n", obl.max_disjoint,
                  obl.full_bisection ? "= oblivious performance ratio, full bisection"
                                     : "upper bound of the oblivious ratio, oversubscribed");
    } else {
      std::printf("oblivious:      not computed: %s\n", obl_status.message().c_str());
    }
    std::printf("EFI:            max %llu, mean %.1f\n", static_cast<unsigned long long>(m.efi.max),
                m.efi.mean);
    if (!jobs.empty()) {
      std::printf("effective EFI:  max %llu, mean %.2f\n",
                  static_cast<unsigned long long>(m.effective_efi.max), m.effective_efi.mean);
      if (lb.value > 0) {
        std::printf("lower bound:    %llu (%s), gap %.1f%%\n",
                    static_cast<unsigned long long>(lb.value), lb.where.c_str(),
                    100.0 * sar::BoundGap(m.effective_efi.max, lb.value));
      }
      std::printf("dark fiber:     %.1f%%\n", 100.0 * m.dark_fiber);
    }
    if (m.slow_channels > 0) {
      std::printf("per capacity:   %d channels below the nominal %s; EFI max %.2f, mean %.2f",
                  m.slow_channels, sar::LinkRateString(nominal).c_str(), m.efi_per_capacity.max,
                  m.efi_per_capacity.mean);
      if (!jobs.empty()) {
        std::printf("; effective EFI max %.2f, mean %.2f", m.effective_efi_per_capacity.max,
                    m.effective_efi_per_capacity.mean);
      }
      std::printf("\n");
    }
    if (!jobs.empty()) {
      std::printf("%-16s %6s %6s %8s %9s\n", "job", "hosts", "leaves", "EFI max", "channels");
      for (const sar::JobMetrics& jm : m.jobs) {
        std::printf("%-16s %6d %6d %8llu %9d\n", jm.id.c_str(), jm.hosts, jm.leaf_switches,
                    static_cast<unsigned long long>(jm.efi_max), jm.channels);
      }
    }
    if (want_flows) PrintFlows(flows, want_baseline ? &vs : nullptr, a.baseline_name);
    for (const std::string& n : flow_notes) std::printf("note: %s\n", n.c_str());
    for (size_t i = 0; i < traffic.size(); ++i) {
      std::printf("traffic %-12s %llu flows, max link load %llu, mean %.2f\n", a.traffic[i].c_str(),
                  static_cast<unsigned long long>(loads[i].flows),
                  static_cast<unsigned long long>(loads[i].max_load), loads[i].mean_load);
    }
    for (const std::string& e : trace.examples) std::printf("problem: %s\n", e.c_str());
  }
  if (!valid) return Fail(verdict);
  return kOk;
}

}  // namespace

std::function<int()> SetupEval(CLI::App* c) {
  auto a = std::make_shared<EvalArgs>();
  EvalArgs& e = *a;
  AddFabricOptions(c, &e.fabric);
  c->add_option("--lfts,-l", e.lfts, "LFT dump (OpenSM dump, file engine input, or dump_fts)")
      ->required();
  c->add_option("--jobs,-j", e.routing.jobs,
                "job mapping file: '<hostname> <jobid> [<pattern>]' per line");
  AddJobHcaPairsOption(c, &e.routing.hca_pairs);
  c->add_option("--layers", e.layers,
                "virtual layer per route (see docs/formats.md); with it, every layer must be "
                "deadlock-free for the tables to be valid");
  c->add_option("--vls", e.routing.vls, "virtual lanes usable as layers (valid: layers <= this)")
      ->check(CLI::Range(1, 15));
  c->add_flag("--allow-disconnected", e.routing.allow_disconnected,
              "unreachable pairs do not make the tables invalid (loops still do)");
  c->add_option("--traffic", e.traffic,
                "max link load for all-to-all | shift:N | random[:SEED] | "
                "clustered:SIZE[:SEED] (repeatable)");
  c->add_option("--source-lids", e.source_lids,
                "ENGINE (osrm2, osrm3): every metric follows the LID of each destination that "
                "ENGINE has each source send to (one LID per source group), recomputed from the "
                "fabric; without it every source sends to base LIDs");
  c->add_option("--threads", e.routing.threads, "worker threads (0 = all cores)");
  c->add_flag("!--no-flows", e.flows,
              "skip the per-job throughput (each job's slowest flow, every job sending at once, "
              "max-min fair)");
  c->add_flag("--schedules", e.schedules,
              "alltoall jobs with a published FORS schedule (<jobs>.fors.<job>) exchange in its "
              "phases in the per-job throughput");
  c->add_option("--schedules-of", e.schedules_of,
                "like --schedules, with the schedules published beside this mapping "
                "(MAPPING.fors.<job>: sar-filterd's mapping file)");
  c->add_option("--baseline-lfts", e.baseline_lfts,
                "compare every job's slowest flow with these tables' (e.g. OpenSM's minhop read "
                "back from the switches)");
  c->add_option("--baseline-name", e.baseline_name, "what to call the baseline in the report");
  c->add_flag("--hca-pairs-only", e.routing.hca_pairs_only,
              "the deadlock checks count routes between HCAs only, not from and to switch "
              "LIDs (the check before issue 33; for comparison)");
  c->add_flag("--json", e.json, "print one JSON object");
  AddProgressOption(c, &e.progress);
  c->add_flag("--per-channel", e.per_channel, "with --json: EFI of every channel");
  return [a] { return RunEval(*a); };
}

}  // namespace sarcli
