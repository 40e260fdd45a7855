// sar-route route: run one routing engine on a fabric, check the result, write its tables.
//
// Inputs and checks are libsar's routing pass (sar/pass/routing_pass.h), as in the OpenSM plugin
// and sar-filterd: nothing is written unless ValidateRouting accepts the tables (every route
// delivered unless --allow-disconnected, no loops, at most --vls layers, each layer's channel
// dependencies acyclic). Engine "sar" without jobs routes as plain dfsssp (noted; the JSON's
// "engine" says which engine made the tables).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_common.h"
#include "sar/engines/engine.h"
#include "sar/fors/fors_job.h"
#include "sar/io/file_util.h"
#include "sar/io/job_file.h"
#include "sar/io/layers_file.h"
#include "sar/io/lft_dump.h"
#include "sar/model/jobs.h"
#include "sar/pass/routing_pass.h"

namespace sarcli {
namespace {

using Json = nlohmann::ordered_json;

struct RouteArgs {
  FabricArgs fabric;
  std::string engine;
  RoutingArgs routing;
  std::string out;
  std::string out_format = "opensm";
  std::string sl_out;
  size_t sl_out_limit = sar::kMaxLayersFileBytes;  // hidden, for tests
  std::string previous;
  std::string previous_jobs;
  std::string schedule_out;
  bool json = false;
  std::string progress = "auto";
};

int RunRoute(const RouteArgs& a) {
  if (a.engine == "list") {
    for (const std::string& n : sar::RoutingEngineNames()) std::printf("%s\n", n.c_str());
    return kOk;
  }
  if (sar::MakeRoutingEngine(a.engine) == nullptr) {
    std::fprintf(stderr, "sar-route: unknown engine '%s'; known engines: %s\n", a.engine.c_str(),
                 sar::RoutingEngineList().c_str());
    return kUsage;
  }
  if (a.fabric.topology.empty() || a.out.empty()) {
    // Name only what is missing: "needs --topology and -o" when -t was given sends people
    // looking at the wrong option.
    std::fprintf(stderr, "sar-route: route needs %s (see route --help)\n",
                 a.fabric.topology.empty() && a.out.empty() ? "--topology and -o"
                 : a.out.empty()                            ? "-o FILE (the LFT file to write)"
                                                            : "--topology FILE");
    return kUsage;
  }
  const StepLog steps("route", StepsWanted(a.progress, a.json));
  steps.Step("reading the fabric and the jobs");
  sar::Stopwatch watch;
  sar::Fabric f;
  sar::Status s = LoadFabric(a.fabric, &f);
  if (!s.ok()) return Fail(s);

  sar::RoutingRequest request;
  request.fabric = &f;
  request.options = RoutingOptionsFrom(a.routing, a.engine);
  if (!a.previous.empty()) {
    s = sar::ReadLftDump(a.previous, f, &request.previous);
    if (!s.ok()) return Fail(s);
  }
  if (!a.previous_jobs.empty()) {
    if (a.previous.empty())
      return Fail(sar::Status::InvalidArgument("--previous-jobs needs --previous"));
    request.previous_mapping.emplace();
    s = sar::ReadJobMapping(a.previous_jobs, &*request.previous_mapping);
    if (!s.ok()) return Fail(s);
  }
  double read_ms = watch.LapMs();

  // The routing pass: the inputs, the engine, then libsar's one validation, before anything is
  // written.
  steps.Step("routing with " + a.engine + " and validating (" + std::to_string(f.num_nodes()) +
             " nodes)");
  sar::RoutingResult result;
  s = sar::RunRoutingPass(request, &result);
  for (const std::string& note : result.Notes()) {
    std::fprintf(stderr, "sar-route: note: %s\n", note.c_str());
  }
  const sar::RoutingInputs& in = result.inputs;
  const sar::RoutingOutput& out = result.output;
  if (!s.ok()) {
    Fail(s);
    if (s.code() == sar::Status::Code::kFailed) {
      std::fprintf(stderr, "sar-route: %s: nothing written\n", in.engine.c_str());
    }
    return ExitCodeFor(s);
  }
  read_ms += result.inputs_ms;
  const std::vector<sar::ForsJobPlan>& fors = result.fors;
  const std::vector<sar::ForsJobNone>& fors_none = result.fors_none;
  const sar::ValidationReport& check = result.report;
  const double route_ms = out.paths_ms + out.layers_ms;
  const double check_ms = check.check_ms;
  watch.LapMs();

  // The layers' text is made before anything is written: layers too large to list (a fabric of
  // ~8k hosts or more, one line per LID pair) do not cost the tables, which are written anyway.
  std::string layers_text;
  sar::Status layers_made = sar::Status::OK();
  if (!a.sl_out.empty()) {
    layers_made = sar::FormatVirtualLayers(out.layers, &layers_text, a.sl_out_limit);
  }
  steps.Step("writing " + a.out);
  s = a.out_format == "compact" ? sar::WriteCompactLftDump(a.out, f, out.lfts)
                                : sar::WriteLftDump(a.out, f, out.lfts);
  if (!s.ok()) return Fail(s);
  if (!layers_made.ok()) {
    Fail(sar::Status::IOError("--sl-out " + a.sl_out + " not written: " + layers_made.message() +
                              "; the tables are written to " + a.out));
    return kIoError;
  }
  if (!a.sl_out.empty()) {
    s = sar::WriteFileAtomic(a.sl_out, layers_text);
    if (!s.ok()) return Fail(s);
  }
  if (!a.schedule_out.empty()) {
    // The same files the plugin and sar-filterd publish beside the mapping (epoch 0), by the
    // same function: a service's file must equal this one but for its epoch.
    std::vector<std::string> rows;
    for (const sar::ForsJobPlan& plan : fors) rows.push_back(sar::FormatForsScheduleRows(f, plan));
    int current = 0;
    s = sar::PublishForsSchedules(a.schedule_out, fors, rows, fors_none, 0, static_cast<gid_t>(-1),
                                  &current);
    if (!s.ok()) return Fail(s);
    for (const sar::ForsJobNone& n : fors_none) {
      std::fprintf(stderr, "sar-route: WARN: alltoall job %s gets no FORS schedule: %s\n",
                   n.job_id.c_str(), n.reason.c_str());
    }
  }
  const double write_ms = watch.LapMs();

  sar::LftChanges changed;
  if (!a.previous.empty()) changed = sar::CountLftChanges(request.previous, out.lfts);
  int lids = 0;
  for (sar::Lid lid = 1; lid <= f.max_lid(); ++lid) lids += f.lid_owner(lid).valid();
  if (a.json) {
    Json j;
    j["engine"] = in.engine;
    j["switches"] = f.num_switches();
    j["lids"] = lids;
    j["layers"] = out.num_layers;
    j["paths_ms"] = out.paths_ms;
    j["layers_ms"] = out.layers_ms;
    j["pairs"] = check.trace.pairs;
    j["unreachable_pairs"] = check.trace.unreachable;
    if (!a.previous.empty()) {
      j["previous"] = a.previous;
      j["lft_entries_changed"] = changed.entries;
      j["lft_blocks_changed"] = changed.blocks;
    }
    j["notes"] = result.Notes();
    j["lfts"] = a.out;
    j["sl_out"] = a.sl_out.empty() ? Json(nullptr) : Json(a.sl_out);
    j["timing_ms"] = {{"read_ms", read_ms},
                      {"route_ms", route_ms},
                      {"check_ms", check_ms},
                      {"write_ms", write_ms}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("%s: %d switches, %d LIDs, %d layer%s, paths %.1f ms, layers %.1f ms -> %s\n",
                in.engine.c_str(), f.num_switches(), lids, out.num_layers,
                out.num_layers == 1 ? "" : "s", out.paths_ms, out.layers_ms, a.out.c_str());
    if (!a.previous.empty()) {
      std::printf("against %s: %llu LFT entries in %llu blocks changed\n", a.previous.c_str(),
                  static_cast<unsigned long long>(changed.entries),
                  static_cast<unsigned long long>(changed.blocks));
    }
  }
  return kOk;
}

}  // namespace

std::function<int()> SetupRoute(CLI::App* c) {
  auto a = std::make_shared<RouteArgs>();
  RouteArgs& r = *a;
  c->add_option("--engine,-e", r.engine,
                "routing engine, or 'list' (" + sar::RoutingEngineList() + ")")
      ->required();
  // The topology is checked in run: `--engine list` must work without one.
  AddFabricOptions(c, &r.fabric, /*topology_required=*/false, /*canonical_default=*/true);
  AddSarOptions(c, &r.routing.sar);
  AddJobHcaPairsOption(c, &r.routing.hca_pairs);
  c->add_option("--jobs,-j", r.routing.jobs,
                "job mapping file: '<hostname> <jobid> [<pattern>]' per line");
  c->add_option("--vls", r.routing.vls, "virtual lanes usable as layers")->check(CLI::Range(1, 15));
  c->add_option("--cn-guids", r.routing.cn_guids, "compute node GUIDs, one per line");
  c->add_option("--io-guids", r.routing.io_guids, "storage (I/O) node GUIDs, one per line");
  c->add_option("--roots", r.routing.roots, "Up*/Down* root switches by name (comma list)")
      ->delimiter(',');
  c->add_option("--threads", r.routing.threads, "worker threads (0 = all cores)");
  c->add_flag("--allow-disconnected", r.routing.allow_disconnected,
              "route what can be routed when some endpoints cannot reach others");
  c->add_flag("--migration", r.routing.migration,
              "LMC 1 migration mode: base LIDs by the engine on layers 0..vls-2, highLIDs by "
              "updn on layer vls-1 (the OpenSM plugin's `migration on`)");
  c->add_flag("--hca-pairs-only", r.routing.hca_pairs_only,
              "deadlock freedom (layers, check) for routes between HCAs only, not from and to "
              "switch LIDs (the check before issue 33; for comparison)");
  c->add_option("-o,--out", r.out, "LFT file to write (the form OpenSM's file engine loads)");
  c->add_option("--out-format", r.out_format,
                "form of -o: 'opensm' (opensm-lfts.dump, what the file engine loads) or "
                "'compact' (sar's hex form, ~50x smaller; docs/formats.md)")
      ->check(CLI::IsMember({"opensm", "compact"}));
  c->add_option("--sl-out", r.sl_out, "virtual layer per route (layers file, docs/formats.md)");
  c->add_option("--sl-out-limit", r.sl_out_limit, "(tests) the layers file's size limit in bytes")
      ->group("");
  c->add_option("--previous", r.previous,
                "the tables the switches hold now (an LFT dump, as -o writes it): sar and dfsssp "
                "keep every entry of it that costs no quality (minimal-delta update)");
  c->add_option("--previous-jobs", r.previous_jobs,
                "the job mapping --previous was computed for: jobs running across the reroute "
                "(same hosts) keep their own routes unless the fabric changed or keeping them "
                "costs more than 2% (docs/dfsssp-sar.md)");
  c->add_option("--schedule-out", r.schedule_out,
                "PREFIX: write each alltoall job's FORS schedule (or its 'none' file saying why "
                "it has none) to PREFIX.fors.<job>, as the plugin and sar-filterd publish them "
                "beside the mapping (epoch 0; docs/formats.md)");
  c->add_flag("--json", r.json, "print one JSON object");
  AddProgressOption(c, &r.progress);
  return [a] { return RunRoute(*a); };
}

}  // namespace sarcli
