// sar-route route: run one routing engine on a fabric, check the result, write its tables.
//
// Nothing is written unless the tables pass the same checks `eval` makes: every endpoint
// reaches every other endpoint LID without loops (unreachable pairs are tolerated only with
// --allow-disconnected), and with virtual layers every layer is deadlock-free.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_common.h"
#include "sar/deadlock.h"
#include "sar/engine.h"
#include "sar/io/file_util.h"
#include "sar/io/job_file.h"
#include "sar/io/layers_file.h"
#include "sar/io/lft_dump.h"
#include "sar/jobs.h"
#include "sar/node_classes.h"
#include "sar/trace.h"

namespace sarcli {
namespace {

using Json = nlohmann::ordered_json;

struct RouteArgs {
  FabricArgs fabric;
  std::string engine;
  std::string jobs;
  std::string cn_guids;
  std::string io_guids;
  std::vector<std::string> roots;
  int vls = 8;
  int threads = 0;
  bool allow_disconnected = false;
  std::string out;
  std::string sl_out;
  bool json = false;
};

std::string EngineList() {
  std::string names;
  for (const std::string& n : sar::RoutingEngineNames()) names += (names.empty() ? "" : ", ") + n;
  return names;
}

// Node classes from the two GUID files; GUIDs the fabric lacks are noted, as OpenSM does.
sar::Status LoadClasses(const RouteArgs& a, const sar::Fabric& f, sar::NodeClasses* classes) {
  std::vector<sar::Guid> cn, io;
  if (!a.cn_guids.empty()) SAR_RETURN_IF_ERROR(sar::ReadGuidFile(a.cn_guids, &cn));
  if (!a.io_guids.empty()) SAR_RETURN_IF_ERROR(sar::ReadGuidFile(a.io_guids, &io));
  std::vector<std::string> unknown;
  SAR_RETURN_IF_ERROR(sar::MakeNodeClasses(f, a.cn_guids.empty() ? nullptr : &cn,
                                           a.io_guids.empty() ? nullptr : &io, classes, &unknown));
  for (const std::string& g : unknown) {
    std::fprintf(stderr,
                 "sar-route: note: GUID %s of the class files is not an HCA of the fabric\n",
                 g.c_str());
  }
  return sar::Status::OK();
}

int RunRoute(const RouteArgs& a) {
  if (a.engine == "list") {
    for (const std::string& n : sar::RoutingEngineNames()) std::printf("%s\n", n.c_str());
    return kOk;
  }
  const std::unique_ptr<sar::RoutingEngine> engine = sar::MakeRoutingEngine(a.engine);
  if (engine == nullptr) {
    std::fprintf(stderr, "sar-route: unknown engine '%s'; known engines: %s\n", a.engine.c_str(),
                 EngineList().c_str());
    return kUsage;
  }
  if (a.fabric.topology.empty() || a.out.empty()) {
    std::fprintf(stderr, "sar-route: route needs --topology and -o (see route --help)\n");
    return kUsage;
  }
  Stopwatch watch;
  sar::Fabric f;
  sar::Status s = LoadFabric(a.fabric, &f);
  if (!s.ok()) return Fail(s);

  sar::RoutingInput in;
  in.fabric = &f;
  in.num_vls = a.vls;
  in.threads = a.threads;
  in.allow_disconnected = a.allow_disconnected;
  for (const std::string& name : a.roots) {
    const sar::NodeId n = f.FindByName(name);
    if (n == sar::kNoNode || !f.is_switch(n)) {
      return Fail(sar::Status::InvalidArgument("--roots: '" + name + "' is not a switch of " +
                                               a.fabric.topology));
    }
    in.roots.push_back(n);
  }
  std::vector<sar::ResolvedJob> jobs;
  s = LoadJobs(f, a.jobs, &jobs);
  if (!s.ok()) return Fail(s);
  if (!a.jobs.empty()) in.jobs = &jobs;
  sar::NodeClasses classes;
  if (!a.cn_guids.empty() || !a.io_guids.empty()) {
    s = LoadClasses(a, f, &classes);
    if (!s.ok()) return Fail(s);
    in.classes = &classes;
  }
  const double read_ms = watch.Lap();

  sar::RoutingOutput out;
  s = engine->Route(in, &out);
  for (const std::string& note : out.notes) {
    std::fprintf(stderr, "sar-route: note: %s\n", note.c_str());
  }
  if (!s.ok()) return Fail(s);
  const double route_ms = watch.Lap();

  // The same checks as eval, before anything is written.
  sar::TraceOptions topts;
  topts.threads = a.threads;
  topts.check_min_hop = false;
  sar::TraceReport trace;
  s = sar::TraceAll(f, out.lfts, topts, &trace);
  if (!s.ok()) return Fail(s);
  const bool delivered = trace.loops == 0 && (a.allow_disconnected || trace.unreachable == 0);
  bool deadlock_free = true;
  if (out.layers.size() > 0) {
    sar::DeadlockReport dl;
    s = sar::CheckDeadlock(f, out.lfts, &out.layers, &dl);
    if (!s.ok()) return Fail(s);
    deadlock_free = dl.deadlock_free;
  }
  const double check_ms = watch.Lap();
  if (!delivered || !deadlock_free) {
    std::fprintf(stderr,
                 "sar-route: %s produced invalid tables (%llu unreachable pairs, %llu loops%s); "
                 "nothing written\n",
                 a.engine.c_str(), static_cast<unsigned long long>(trace.unreachable),
                 static_cast<unsigned long long>(trace.loops),
                 deadlock_free ? "" : ", a cyclic virtual layer");
    for (const std::string& e : trace.examples) std::fprintf(stderr, "problem: %s\n", e.c_str());
    return kCheckFailed;
  }

  if (!a.sl_out.empty()) {
    s = sar::WriteVirtualLayers(a.sl_out, out.layers);
    if (!s.ok()) return Fail(s);
  }
  s = sar::WriteLftDump(a.out, f, out.lfts);
  if (!s.ok()) return Fail(s);
  const double write_ms = watch.Lap();

  int lids = 0;
  for (sar::Lid lid = 1; lid <= f.max_lid(); ++lid) lids += f.lid_owner(lid).valid();
  if (a.json) {
    Json j;
    j["engine"] = a.engine;
    j["switches"] = f.num_switches();
    j["lids"] = lids;
    j["layers"] = out.num_layers;
    j["paths_ms"] = out.paths_ms;
    j["layers_ms"] = out.layers_ms;
    j["pairs"] = trace.pairs;
    j["unreachable_pairs"] = trace.unreachable;
    j["notes"] = out.notes;
    j["lfts"] = a.out;
    j["sl_out"] = a.sl_out.empty() ? Json(nullptr) : Json(a.sl_out);
    j["timing_ms"] = {{"read_ms", read_ms},
                      {"route_ms", route_ms},
                      {"check_ms", check_ms},
                      {"write_ms", write_ms}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("%s: %d switches, %d LIDs, %d layer%s, paths %.1f ms, layers %.1f ms -> %s\n",
                a.engine.c_str(), f.num_switches(), lids, out.num_layers,
                out.num_layers == 1 ? "" : "s", out.paths_ms, out.layers_ms, a.out.c_str());
  }
  return kOk;
}

}  // namespace

std::function<int()> SetupRoute(CLI::App* c) {
  auto a = std::make_shared<RouteArgs>();
  RouteArgs& r = *a;
  c->add_option("--engine,-e", r.engine, "routing engine, or 'list' (" + EngineList() + ")")
      ->required();
  // The topology is checked in run: `--engine list` must work without one.
  AddFabricOptions(c, &r.fabric, /*topology_required=*/false);
  c->add_option("--jobs,-j", r.jobs, "job mapping file: '<hostname> <jobid> [<pattern>]' per line");
  c->add_option("--vls", r.vls, "virtual lanes usable as layers")->check(CLI::Range(1, 15));
  c->add_option("--cn-guids", r.cn_guids, "compute node GUIDs, one per line");
  c->add_option("--io-guids", r.io_guids, "storage (I/O) node GUIDs, one per line");
  c->add_option("--roots", r.roots, "Up*/Down* root switches by name (comma list)")->delimiter(',');
  c->add_option("--threads", r.threads, "worker threads (0 = all cores)");
  c->add_flag("--allow-disconnected", r.allow_disconnected,
              "route what can be routed when some endpoints cannot reach others");
  c->add_option("-o,--out", r.out, "LFT file to write (the form OpenSM's file engine loads)");
  c->add_option("--sl-out", r.sl_out, "virtual layer per route (layers file, docs/formats.md)");
  c->add_flag("--json", r.json, "print one JSON object");
  return [a] { return RunRoute(*a); };
}

}  // namespace sarcli
