// sar-route: generate fabrics, read routing tables and judge them.
//
// One table of subcommands (kSubcommands); each handler parses nothing itself (CLI11 does),
// loads what it needs through libsar and returns an exit code:
//   0 success, 1 a check failed (invalid routing, tables differ), 2 bad usage,
//   3 malformed input file, 4 I/O or system error.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sar/deadlock.h"
#include "sar/fabric.h"
#include "sar/failures.h"
#include "sar/generate.h"
#include "sar/io/guid2lid.h"
#include "sar/io/job_file.h"
#include "sar/io/layers_file.h"
#include "sar/io/lft_dump.h"
#include "sar/io/topology.h"
#include "sar/jobs.h"
#include "sar/lft.h"
#include "sar/lids.h"
#include "sar/metrics.h"
#include "sar/trace.h"

namespace {

using Json = nlohmann::ordered_json;

enum ExitCode { kOk = 0, kCheckFailed = 1, kUsage = 2, kBadInput = 3, kIoError = 4 };

int ExitCodeFor(const sar::Status& s) {
  switch (s.code()) {
    case sar::Status::Code::kOk:
      return kOk;
    case sar::Status::Code::kCorruption:
      return kBadInput;
    case sar::Status::Code::kIOError:
    case sar::Status::Code::kNotFound:
      return kIoError;
    case sar::Status::Code::kInvalidArgument:
      return kUsage;
    case sar::Status::Code::kFailed:
      return kCheckFailed;
  }
  return kIoError;
}

// Prints the error and returns its exit code.
int Fail(const sar::Status& s) {
  std::fprintf(stderr, "sar-route: %s\n", s.ToString().c_str());
  return ExitCodeFor(s);
}

class Stopwatch {
 public:
  double Lap() {
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
    return ms;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// --- Loading a fabric with LIDs -------------------------------------------------------------

struct FabricArgs {
  std::string topology;
  std::string lids;  // guid2lid file
  int lmc = 0;
};

void AddFabricOptions(CLI::App* cmd, FabricArgs* args) {
  cmd->add_option("--topology,-t", args->topology, "topology file (ibnetdiscover or ibsim form)")
      ->required();
  cmd->add_option("--lids", args->lids,
                  "OpenSM guid2lid file with the fabric's LIDs (default: the LIDs in the "
                  "topology file, else the deterministic assignment)");
  cmd->add_option("--lmc", args->lmc, "LMC for the deterministic LID assignment")
      ->check(CLI::Range(0, 7));
}

// Reads the topology and settles its LIDs: a guid2lid file wins, then LIDs carried by the
// topology (live ibnetdiscover output), then the deterministic assignment.
sar::Status LoadFabric(const FabricArgs& args, sar::Fabric* fabric) {
  SAR_RETURN_IF_ERROR(sar::ReadTopology(args.topology, fabric));
  if (!args.lids.empty()) {
    std::vector<sar::Guid2LidEntry> entries;
    SAR_RETURN_IF_ERROR(sar::ReadGuid2Lid(args.lids, &entries));
    fabric->ClearLids();
    int skipped = 0;
    sar::Status s = sar::ApplyGuid2Lid(entries, fabric, &skipped);
    if (!s.ok()) return sar::Status::Corruption(args.lids + ": " + s.message());
    if (skipped > 0) {
      std::fprintf(stderr, "sar-route: note: %d GUIDs of %s are not in %s\n", skipped,
                   args.lids.c_str(), args.topology.c_str());
    }
  } else if (fabric->max_lid() == 0) {
    sar::LidOptions opts;
    opts.lmc = args.lmc;
    SAR_RETURN_IF_ERROR(sar::AssignLids(opts, fabric));
  }
  // Every endpoint needs a LID to be routed to; say which one lacks it rather than guess.
  for (const sar::PortRef& e : fabric->Endpoints()) {
    if (fabric->base_lid(e) == 0) {
      return sar::Status::Corruption(args.topology + ": HCA '" + fabric->name(e.node) + "' port " +
                                     std::to_string(e.port) + " has no LID (give --lids)");
    }
  }
  return sar::Status::OK();
}

// LoadFabric, then each LFT dump in `lft_paths` into the matching `lfts` entry.
sar::Status LoadFabricAndLfts(const FabricArgs& args, const std::vector<std::string>& lft_paths,
                              sar::Fabric* fabric, std::vector<sar::LftSet>* lfts) {
  SAR_RETURN_IF_ERROR(LoadFabric(args, fabric));
  lfts->resize(lft_paths.size());
  for (size_t i = 0; i < lft_paths.size(); ++i) {
    SAR_RETURN_IF_ERROR(sar::ReadLftDump(lft_paths[i], *fabric, &(*lfts)[i]));
  }
  return sar::Status::OK();
}

std::string Describe(const sar::Fabric& f, sar::NodeId n) {
  return f.description(n).empty() ? f.name(n) : f.description(n);
}

// --- gen --------------------------------------------------------------------------------------

struct GenArgs {
  std::string fabric_spec;
  int parallel = 1;
  std::vector<int> hosts_per_leaf;
  int switch_ports = 0;
  int lmc = 0;
  int fail_links = 0;
  int fail_switches = 0;
  uint64_t seed = 1;
  std::vector<std::string> fail_link;    // "node:port"
  std::vector<std::string> fail_switch;  // "node"
  bool allow_disconnect = false;
  std::string style = "ibsim";
  std::string out;
  std::string guid2lid_out;
};

int RunGen(const GenArgs& a) {
  sar::PgftSpec spec;
  sar::Status s = sar::ParsePgftSpec(a.fabric_spec, &spec);
  if (!s.ok()) return Fail(sar::Status::InvalidArgument("--fabric: " + s.message()));
  if (a.parallel > 1) {
    for (size_t l = 1; l < spec.p.size(); ++l) spec.p[l] *= a.parallel;
  }
  sar::GenerateOptions opts;
  opts.hosts_per_leaf = a.hosts_per_leaf;
  opts.switch_ports = a.switch_ports;
  sar::Fabric fabric;
  s = sar::GeneratePgft(spec, opts, &fabric);
  if (!s.ok()) return Fail(sar::Status::InvalidArgument(s.message()));

  sar::FailureSet failures;
  for (const std::string& fl : a.fail_link) {
    const size_t colon = fl.rfind(':');
    int port = 0;
    if (colon == std::string::npos || std::sscanf(fl.c_str() + colon + 1, "%d", &port) != 1) {
      return Fail(sar::Status::InvalidArgument("--fail-link wants NODE:PORT, got '" + fl + "'"));
    }
    failures.links.emplace_back(fl.substr(0, colon), port);
  }
  failures.switches = a.fail_switch;
  if (a.fail_links > 0 || a.fail_switches > 0) {
    sar::RandomFailureOptions ro;
    ro.num_links = a.fail_links;
    ro.num_switches = a.fail_switches;
    ro.seed = a.seed;
    ro.keep_hcas_connected = !a.allow_disconnect;
    sar::FailureSet random;
    s = sar::PickRandomFailures(fabric, ro, &random);
    if (!s.ok()) return Fail(s);
    failures.links.insert(failures.links.end(), random.links.begin(), random.links.end());
    failures.switches.insert(failures.switches.end(), random.switches.begin(),
                             random.switches.end());
  }
  if (!failures.links.empty() || !failures.switches.empty()) {
    sar::Fabric degraded;
    s = sar::ApplyFailures(fabric, failures, &degraded);
    if (!s.ok()) return Fail(s);
    fabric = std::move(degraded);
    for (const auto& [node, port] : failures.links) {
      std::fprintf(stderr, "sar-route: failed link %s[%d]\n", node.c_str(), port);
    }
    for (const std::string& sw : failures.switches) {
      std::fprintf(stderr, "sar-route: failed switch %s\n", sw.c_str());
    }
    if (!sar::HcasConnected(fabric)) {
      std::fprintf(stderr, "sar-route: warning: some HCAs can no longer reach each other\n");
    }
  }

  sar::LidOptions lid_opts;
  lid_opts.lmc = a.lmc;
  s = sar::AssignLids(lid_opts, &fabric);
  if (!s.ok()) return Fail(s);

  sar::TopologyWriteOptions wopts;
  wopts.style =
      a.style == "ibnetdiscover" ? sar::TopologyStyle::kIbnetdiscover : sar::TopologyStyle::kIbsim;
  s = sar::WriteTopology(a.out, fabric, wopts);
  if (!s.ok()) return Fail(s);
  if (!a.guid2lid_out.empty()) {
    s = sar::WriteGuid2Lid(a.guid2lid_out, fabric);
    if (!s.ok()) return Fail(s);
  }
  std::fprintf(stderr, "sar-route: wrote %s: %d switches, %zu HCAs, %d cables, LMC %d\n",
               a.out.c_str(), fabric.num_switches(), fabric.hcas().size(), fabric.num_links(),
               a.lmc);
  return kOk;
}

// --- info -------------------------------------------------------------------------------------

struct InfoArgs {
  FabricArgs fabric;
  bool json = false;
};

int RunInfo(const InfoArgs& a) {
  sar::Fabric f;
  sar::Status s = LoadFabric(a.fabric, &f);
  if (!s.ok()) return Fail(s);
  int inter_switch = 0;
  for (sar::PortId c = 0; c < f.num_port_slots(); ++c) inter_switch += f.is_inter_switch(c);
  const auto endpoints = f.Endpoints();
  Json j;
  j["switches"] = f.num_switches();
  j["hcas"] = f.hcas().size();
  j["endpoints"] = endpoints.size();
  j["cables"] = f.num_links();
  j["switch_channels"] = inter_switch;
  j["max_lid"] = f.max_lid();
  j["first_hca"] = f.hcas().empty() ? "" : f.name(f.hcas().front());
  j["connected"] = sar::HcasConnected(f);
  if (a.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf(
        "%s: %d switches, %zu HCAs (%zu cabled ports), %d cables, %d switch-to-switch "
        "channels, max LID %u, HCAs %sconnected\n",
        a.fabric.topology.c_str(), f.num_switches(), f.hcas().size(), endpoints.size(),
        f.num_links(), inter_switch, f.max_lid(), j["connected"].get<bool>() ? "" : "NOT ");
  }
  return kOk;
}

// --- eval -------------------------------------------------------------------------------------

struct EvalArgs {
  FabricArgs fabric;
  std::string lfts;
  std::string jobs;
  std::string layers;
  bool json = false;
  bool per_channel = false;
  std::vector<std::string> traffic;
  int threads = 0;
};

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
  Stopwatch watch;
  Json timing;
  sar::Fabric f;
  std::vector<sar::LftSet> tables;
  sar::Status s = LoadFabricAndLfts(a.fabric, {a.lfts}, &f, &tables);
  if (!s.ok()) return Fail(s);
  const sar::LftSet& lfts = tables[0];
  sar::JobMapping mapping;
  if (!a.jobs.empty()) {
    s = sar::ReadJobMapping(a.jobs, &mapping);
    if (!s.ok()) return Fail(s);
  }
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
  timing["read_ms"] = watch.Lap();

  sar::TraceOptions topts;
  topts.threads = a.threads;
  sar::TraceReport trace;
  s = sar::TraceAll(f, lfts, topts, &trace);
  if (!s.ok()) return Fail(s);
  timing["trace_ms"] = watch.Lap();

  sar::DeadlockReport single_layer;
  s = sar::CheckDeadlock(f, lfts, nullptr, &single_layer);
  if (!s.ok()) return Fail(s);
  std::optional<sar::DeadlockReport> layered;
  if (layers) {
    layered.emplace();
    s = sar::CheckDeadlock(f, lfts, &*layers, &*layered);
    if (!s.ok()) return Fail(s);
  }
  timing["deadlock_ms"] = watch.Lap();

  std::vector<std::string> unknown_hosts;
  const std::vector<sar::ResolvedJob> jobs = sar::ResolveJobs(f, mapping, &unknown_hosts);
  for (const std::string& h : unknown_hosts) {
    std::fprintf(stderr, "sar-route: note: host '%s' of %s is not in the fabric\n", h.c_str(),
                 a.jobs.c_str());
  }
  sar::MetricsOptions mopts;
  mopts.threads = a.threads;
  sar::Metrics m;
  s = sar::ComputeMetrics(f, lfts, jobs, mopts, &m);
  if (!s.ok()) return Fail(s);
  timing["metrics_ms"] = watch.Lap();

  std::vector<sar::LinkLoad> loads(traffic.size());
  for (size_t i = 0; i < traffic.size(); ++i) {
    s = sar::ComputeLinkLoad(f, lfts, traffic[i], &loads[i]);
    if (!s.ok()) return Fail(s);
  }
  timing["traffic_ms"] = watch.Lap();

  const bool valid = trace.valid() && (!layered || layered->deadlock_free);

  Json j;
  j["valid"] = valid;
  j["pairs"] = trace.pairs;
  j["unreachable_pairs"] = trace.unreachable;
  j["loops"] = trace.loops;
  j["non_min_hop"] = trace.non_min_hop;
  j["max_hops"] = trace.max_hops;
  j["mean_hops"] = trace.mean_hops;
  j["deadlock_free"] = layered ? Json(layered->deadlock_free) : Json(nullptr);
  j["layers"] = layered ? Json(layered->layers) : Json(nullptr);
  j["single_layer_deadlock_free"] = single_layer.deadlock_free;
  j["channels"] = m.channels;
  j["efi"] = EfiJson(m.efi);
  j["effective_efi"] = EfiJson(m.effective_efi);
  j["dark_fiber"] = m.dark_fiber;
  Json jobs_json = Json::array();
  for (const sar::JobMetrics& jm : m.jobs) {
    jobs_json.push_back({{"id", jm.id},
                         {"hosts", jm.hosts},
                         {"leaf_switches", jm.leaf_switches},
                         {"efi_max", jm.efi_max},
                         {"channels", jm.channels}});
  }
  j["jobs"] = std::move(jobs_json);
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
    }
    j["per_channel"] = std::move(pc);
  }
  j["timing_ms"] = timing;

  if (a.json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("routing:        %s\n", valid ? "valid" : "INVALID");
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
    std::printf("EFI:            max %llu, mean %.1f\n", static_cast<unsigned long long>(m.efi.max),
                m.efi.mean);
    if (!jobs.empty()) {
      std::printf("effective EFI:  max %llu, mean %.2f\n",
                  static_cast<unsigned long long>(m.effective_efi.max), m.effective_efi.mean);
      std::printf("dark fiber:     %.1f%%\n", 100.0 * m.dark_fiber);
      std::printf("%-16s %6s %6s %8s %9s\n", "job", "hosts", "leaves", "EFI max", "channels");
      for (const sar::JobMetrics& jm : m.jobs) {
        std::printf("%-16s %6d %6d %8llu %9d\n", jm.id.c_str(), jm.hosts, jm.leaf_switches,
                    static_cast<unsigned long long>(jm.efi_max), jm.channels);
      }
    }
    for (size_t i = 0; i < traffic.size(); ++i) {
      std::printf("traffic %-12s %llu flows, max link load %llu, mean %.2f\n", a.traffic[i].c_str(),
                  static_cast<unsigned long long>(loads[i].flows),
                  static_cast<unsigned long long>(loads[i].max_load), loads[i].mean_load);
    }
    for (const std::string& e : trace.examples) std::printf("problem: %s\n", e.c_str());
  }
  return valid ? kOk : kCheckFailed;
}

// --- convert-lfts / diff-lfts -----------------------------------------------------------------

struct LftArgs {
  FabricArgs fabric;
  std::string in;
  std::string other;
  std::string out;
  int max_diffs = 20;
};

int RunConvertLfts(const LftArgs& a) {
  sar::Fabric f;
  std::vector<sar::LftSet> tables;
  sar::Status s = LoadFabricAndLfts(a.fabric, {a.in}, &f, &tables);
  if (!s.ok()) return Fail(s);
  s = sar::WriteLftDump(a.out, f, tables[0]);
  if (!s.ok()) return Fail(s);
  return kOk;
}

int RunDiffLfts(const LftArgs& a) {
  sar::Fabric f;
  std::vector<sar::LftSet> tables;
  const sar::Status s = LoadFabricAndLfts(a.fabric, {a.in, a.other}, &f, &tables);
  if (!s.ok()) return Fail(s);
  const sar::LftSet& x = tables[0];
  const sar::LftSet& y = tables[1];
  long long diffs = 0;
  for (int sw = 0; sw < f.num_switches(); ++sw) {
    for (sar::Lid lid = 1; lid <= f.max_lid(); ++lid) {
      const uint8_t px = x.port(sw, lid), py = y.port(sw, lid);
      if (px == py) continue;
      if (++diffs <= a.max_diffs) {
        auto show = [](uint8_t p) {
          return p == sar::LftSet::kNoRoute ? std::string("none") : std::to_string(p);
        };
        std::printf("%s lid %u: %s port %s, %s port %s\n", f.name(f.switches()[sw]).c_str(), lid,
                    a.in.c_str(), show(px).c_str(), a.other.c_str(), show(py).c_str());
      }
    }
  }
  if (diffs == 0) {
    std::printf("identical: %d switches, LIDs 1..%u\n", f.num_switches(), f.max_lid());
    return kOk;
  }
  std::printf("%lld entries differ\n", diffs);
  return kCheckFailed;
}

// --- the table --------------------------------------------------------------------------------

struct Args {
  GenArgs gen;
  InfoArgs info;
  EvalArgs eval;
  LftArgs convert;
  LftArgs diff;
};

struct Subcommand {
  const char* name;
  const char* help;
  void (*add_options)(CLI::App*, Args*);
  int (*run)(const Args&);
};

const Subcommand kSubcommands[] = {
    {"gen", "generate a fat-tree topology (ibsim form) and its LIDs",
     [](CLI::App* c, Args* a) {
       GenArgs& g = a->gen;
       c->add_option("--fabric,-f", g.fabric_spec,
                     "ft2:M0,M1 | kary:K,N | pgft:H;m1,..;w1,..;p1,..")
           ->required();
       c->add_option("--parallel", g.parallel, "parallel cables between switch levels")
           ->check(CLI::Range(1, 64));
       c->add_option("--hosts-per-leaf", g.hosts_per_leaf, "hosts on each leaf (comma list)")
           ->delimiter(',');
       c->add_option("--switch-ports", g.switch_ports, "ports per switch (default: as needed)");
       c->add_option("--lmc", g.lmc, "LIDs per HCA port = 2^LMC")->check(CLI::Range(0, 7));
       c->add_option("--fail-links", g.fail_links, "cut N random switch-to-switch cables");
       c->add_option("--fail-switches", g.fail_switches, "remove N random switches");
       c->add_option("--seed", g.seed, "seed for random failures");
       c->add_option("--fail-link", g.fail_link, "cut the cable at NODE:PORT (repeatable)");
       c->add_option("--fail-switch", g.fail_switch, "remove switch NODE (repeatable)");
       c->add_flag("--allow-disconnect", g.allow_disconnect, "random failures may disconnect HCAs");
       c->add_option("--style", g.style, "ibsim (default) or ibnetdiscover")
           ->check(CLI::IsMember({"ibsim", "ibnetdiscover"}));
       c->add_option("-o,--out", g.out, "topology file to write")->required();
       c->add_option("--guid2lid", g.guid2lid_out, "also write OpenSM's guid2lid file");
     },
     [](const Args& a) { return RunGen(a.gen); }},
    {"info", "summarise a topology",
     [](CLI::App* c, Args* a) {
       AddFabricOptions(c, &a->info.fabric);
       c->add_flag("--json", a->info.json, "print JSON");
     },
     [](const Args& a) { return RunInfo(a.info); }},
    {"eval", "validate routing tables and print their metrics (exit 1 if invalid)",
     [](CLI::App* c, Args* a) {
       EvalArgs& e = a->eval;
       AddFabricOptions(c, &e.fabric);
       c->add_option("--lfts,-l", e.lfts, "LFT dump (OpenSM dump, file engine input, or dump_fts)")
           ->required();
       c->add_option("--jobs,-j", e.jobs, "job mapping file: '<hostname> <jobid>' per line");
       c->add_option("--layers", e.layers, "virtual layer per route (see docs/formats.md)");
       c->add_option("--traffic", e.traffic,
                     "max link load for all-to-all | shift:N | random[:SEED] | "
                     "clustered:SIZE[:SEED] (repeatable)");
       c->add_option("--threads", e.threads, "worker threads (0 = all cores)");
       c->add_flag("--json", e.json, "print one JSON object");
       c->add_flag("--per-channel", e.per_channel, "with --json: EFI of every channel");
     },
     [](const Args& a) { return RunEval(a.eval); }},
    {"convert-lfts", "rewrite any LFT dump in the form OpenSM's file engine loads",
     [](CLI::App* c, Args* a) {
       AddFabricOptions(c, &a->convert.fabric);
       c->add_option("input", a->convert.in, "LFT dump to read")->required();
       c->add_option("-o,--out", a->convert.out, "file to write")->required();
     },
     [](const Args& a) { return RunConvertLfts(a.convert); }},
    {"diff-lfts", "compare two LFT dumps entry for entry (exit 1 if they differ)",
     [](CLI::App* c, Args* a) {
       AddFabricOptions(c, &a->diff.fabric);
       c->add_option("a", a->diff.in, "first dump")->required();
       c->add_option("b", a->diff.other, "second dump")->required();
       c->add_option("--max-diffs", a->diff.max_diffs, "differences to print");
     },
     [](const Args& a) { return RunDiffLfts(a.diff); }},
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "sar-route: fat-tree generation, routing table checks and metrics for InfiniBand "
      "fabrics.\nExit codes: 0 ok, 1 check failed (invalid routing / tables differ), 2 usage, "
      "3 malformed input file, 4 I/O error."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "sar-route 0.1.0");
  Args args;
  std::vector<std::pair<CLI::App*, const Subcommand*>> registered;
  for (const Subcommand& sc : kSubcommands) {
    CLI::App* cmd = app.add_subcommand(sc.name, sc.help);
    sc.add_options(cmd, &args);
    registered.emplace_back(cmd, &sc);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kOk : kUsage;
  }
  for (const auto& [cmd, sc] : registered) {
    if (cmd->parsed()) return sc->run(args);
  }
  return kUsage;
}
