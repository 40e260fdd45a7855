// sar-route compare: several routings of one fabric and job mix side by side, ours computed here
// and OpenSM's real engines run on the ibsim test bed (scripts/sar_testbed.py) and read back
// from the simulated switches.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_common.h"
#include "flows_report.h"
#include "sar/analysis/lower_bound.h"
#include "sar/analysis/metrics.h"
#include "sar/analysis/oblivious.h"
#include "sar/engines/engine.h"
#include "sar/env.h"
#include "sar/io/file_util.h"
#include "sar/io/guid2lid.h"
#include "sar/io/job_file.h"
#include "sar/io/lft_dump.h"
#include "sar/io/topology.h"
#include "sar/model/jobs.h"
#include "sar/pass/routing_pass.h"
#include "sar/report/report_html.h"

namespace sarcli {
namespace {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

struct CompareArgs {
  FabricArgs fabric;
  RoutingArgs
      routing;  // --jobs, --vls, --threads, --allow-disconnected, SAR's knobs, --job-hca-pairs
  std::vector<std::string> engines;
  std::vector<std::string> opensm;
  bool json = false;
  std::string progress = "auto";
  std::string html;
  std::string testbed_script;
  std::string workdir;
  std::string baseline;  // row the per-job throughput is compared with
  bool per_job = false;  // text: the per-job throughput table of every row
};

// One line of the table.
struct Row {
  std::string name;
  bool ok = false;
  std::string error;
  bool valid = false;
  std::string invalid;       // ValidateRouting's message when not valid
  uint64_t pairs = 0;        // (source endpoint, destination LID) pairs traced
  uint64_t unreachable = 0;  // of them not delivered (holes and misdeliveries)
  uint64_t loops = 0;
  sar::Metrics metrics;
  double mean_job_efi_max = 0;   // over jobs spanning >= 2 leaf switches
  double mean_job_channels = 0;  // same jobs
  int unused_channels = 0;       // switch-to-switch channels no route crosses
  double routing_ms = 0;
  int layers = 1;           // -1 = unknown
  int64_t oblivious = -1;   // max disjoint size (Yuan's ratio on full bisection); -1 = too large
  sar::FlowReport flows;    // per-job throughput, every job all-to-all at once
  sar::FlowComparison vs;   // against the baseline row
  std::string note;         // where max effective EFI and the per-job throughput disagree
  std::string engine_used;  // ours: the engine the routing pass ran
  std::vector<std::string> pass_notes;  // ours: what the routing pass noted
};

// Where scripts/sar_testbed.py is: the option, $SAR_TESTBED, beside the source tree the binary
// was built in, or the installed share directory.
std::string FindTestbedScript(const std::string& given) {
  if (!given.empty()) return given;
  if (const char* env = std::getenv("SAR_TESTBED")) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const char* rel : {"../../scripts/sar_testbed.py", "../scripts/sar_testbed.py",
                            "../share/sar/sar_testbed.py"}) {
      const fs::path p = exe.parent_path() / rel;
      if (fs::exists(p, ec)) return fs::weakly_canonical(p, ec).string();
    }
  }
  return "";
}

// Runs argv, stdout and stderr to `log`; returns the exit status (or -1). No time bound: a test
// bed run takes what the fabric takes, and Ctrl-C reaches it with us.
int RunLogged(const std::vector<std::string>& argv, const std::string& log) {
  sar::RunRequest request;
  request.argv = argv;
  request.output_file = log;
  request.timeout_s = std::numeric_limits<double>::infinity();
  const sar::RunResult r = sar::RealEnv()->Run(request);
  return r.status.ok() ? r.exit_code : -1;
}

std::string LastLines(const std::string& path, int n) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  for (size_t i = lines.size() > static_cast<size_t>(n) ? lines.size() - n : 0; i < lines.size();
       ++i) {
    out += (out.empty() ? "" : " | ") + lines[i];
  }
  return out;
}

// The row from the sweep that gave the verdict (`s`, ValidateRouting's: Failed = invalid), then
// what compare measures on top. `offsets`: the LID each source uses (osrm2/osrm3), null = base.
void FillRow(const CompareArgs& a, const sar::Fabric& f, const sar::LftSet& lfts,
             const std::vector<uint8_t>* offsets, const std::vector<sar::ResolvedJob>& jobs,
             const sar::Status& s, const sar::ValidationReport& report,
             sar::AnalysisResult* analysis, Row* row) {
  if (!s.ok() && s.code() != sar::Status::Code::kFailed) {
    row->error = s.ToString();
    return;
  }
  row->valid = s.ok();
  row->invalid = s.ok() ? "" : s.message();
  row->pairs = report.trace.pairs;
  row->unreachable = report.trace.unreachable;
  row->loops = report.trace.loops;
  row->metrics = std::move(analysis->metrics);
  int n = 0;
  for (const sar::JobMetrics& jm : row->metrics.jobs) {
    if (jm.leaf_switches < 2) continue;
    ++n;
    row->mean_job_efi_max += static_cast<double>(jm.efi_max);
    row->mean_job_channels += jm.channels;
  }
  if (n > 0) {
    row->mean_job_efi_max /= n;
    row->mean_job_channels /= n;
  }
  for (sar::PortId c = 0; c < f.num_port_slots(); ++c) {
    row->unused_channels += f.is_inter_switch(c) && row->metrics.efi_per_channel[c] == 0;
  }
  sar::ObliviousResult obl;
  sar::ObliviousOptions oo;
  oo.source_lid_offset = offsets;
  if (sar::ComputeObliviousRatio(f, lfts, oo, &obl).ok()) {
    row->oblivious = obl.max_disjoint;
  }
  sar::FlowOptions fo;
  fo.source_lid_offset = offsets;
  fo.threads = a.routing.threads;
  const sar::Status fs =
      sar::ComputeJobFlows(f, lfts, sar::AllToAllFlowJobs(jobs), fo, &row->flows);
  if (fs.code() == sar::Status::Code::kFailed) {  // over the flow limit: a note, not an error
    row->note = fs.message();
  } else if (!fs.ok()) {
    row->error = fs.ToString();
    return;
  }
  row->ok = true;
}

// Our engines: libsar's routing pass, as `route` and the plugin run it (FORS for alltoall jobs,
// the empty-mapping rule, the layer guard, the one validation), judged by its validating sweep.
void RouteOurs(const CompareArgs& a, const sar::Fabric& f,
               const std::vector<sar::ResolvedJob>& jobs, const std::string& engine, Row* row) {
  row->name = engine;
  if (!sar::MakeRoutingEngine(engine)) {
    row->error = "no engine '" + engine + "'";
    return;
  }
  sar::RoutingRequest request;
  request.fabric = &f;
  request.options = RoutingOptionsFrom(a.routing, engine);
  request.also.what = sar::kAnalyseMetrics;
  request.also.jobs = &jobs;
  sar::RoutingResult result;
  const sar::Status s = sar::RunRoutingPass(request, &result);
  row->engine_used = result.inputs.engine;
  row->pass_notes = result.Notes();
  row->routing_ms = result.route_ms;
  if (!result.validated) {
    row->error = s.ToString();
    return;
  }
  row->layers = result.output.num_layers;
  FillRow(a, f, result.output.lfts, &result.output.source_lid_offset, jobs, s, result.report,
          &result.analysis, row);
}

// OpenSM's tables, whose per-route SLs we do not know: their channel dependencies go unchecked.
void Judge(const CompareArgs& a, const sar::Fabric& f, const sar::LftSet& lfts,
           const std::vector<sar::ResolvedJob>& jobs, Row* row) {
  sar::RoutingOptions ro = RoutingOptionsFrom(a.routing, "");
  sar::ValidationOptions vo = sar::ValidationFor(ro);
  vo.layers_known = false;
  sar::AnalysisOptions also;
  also.what = sar::kAnalyseMetrics;
  also.jobs = &jobs;
  sar::AnalysisResult analysis;
  sar::ValidationReport report;
  const sar::Status s = sar::ValidateRouting(f, lfts, nullptr, 1, vo, also, &analysis, &report);
  FillRow(a, f, lfts, nullptr, jobs, s, report, &analysis, row);
}

void RouteOpenSm(const CompareArgs& a, const sar::Fabric& f,
                 const std::vector<sar::ResolvedJob>& jobs, const std::string& script,
                 const fs::path& dir, const std::string& engine, Row* row) {
  row->name = "opensm:" + engine;
  row->layers = -1;  // OpenSM does not say
  const fs::path out = dir / ("opensm-" + engine);
  std::vector<std::string> argv = {"python3",
                                   script,
                                   "route",
                                   "--topology",
                                   (dir / "fabric.topo").string(),
                                   "--guid2lid",
                                   (dir / "guid2lid").string(),
                                   "--engine",
                                   engine,
                                   "--out",
                                   out.string()};
  int lmc = 0;
  for (const sar::PortRef& p : f.Endpoints()) lmc = std::max(lmc, f.lmc(p));
  argv.push_back("--lmc");
  argv.push_back(std::to_string(lmc));
  const std::string log = (dir / ("opensm-" + engine + ".log")).string();
  std::fprintf(stderr, "sar-route: running OpenSM %s on the test bed...\n", engine.c_str());
  const int rc = RunLogged(argv, log);
  if (rc != 0) {
    // The test bed's own verdict (e.g. "OpenSM configured the tables with 'minhop', not
    // 'ftree'": ftree refusing a degraded tree) when it gave one, else the log's tail.
    std::ifstream in(log);
    std::string verdict;
    for (std::string line; verdict.empty() && std::getline(in, line);) {
      if (line.rfind("sar_testbed: ", 0) == 0) verdict = line;
    }
    row->error = "test bed failed (exit " + std::to_string(rc) +
                 "): " + (verdict.empty() ? LastLines(log, 2) : verdict);
    return;
  }
  std::ifstream result(out / "result.json");
  try {
    const Json r = Json::parse(result);
    if (r.contains("routing_time_s") && r["routing_time_s"].is_number()) {
      row->routing_ms = 1000.0 * r["routing_time_s"].get<double>();
    }
  } catch (const Json::exception& e) {
    row->error = std::string("bad result.json: ") + e.what();
    return;
  }
  sar::LftSet lfts;
  const sar::Status s = sar::ReadLftDump((out / "switches.lfts").string(), f, &lfts);
  if (!s.ok()) {
    row->error = s.ToString();
    return;
  }
  Judge(a, f, lfts, jobs, row);
}

// The table and one leaf-to-upper-switch heat map of effective EFI per engine, one colour scale.
std::string CompareHtml(const CompareArgs& a, const sar::Fabric& f, size_t num_jobs, int multi,
                        uint64_t bound, const std::vector<Row>& rows) {
  sar::ReportTable t;
  t.caption = "Engines on " + a.fabric.topology + " with " + a.routing.jobs;
  t.header = {
      "engine",           "valid",           "max eff. EFI", "mean eff. EFI", "dark fiber",
      "job EFI max mean", "unused channels", "route ms",     "layers",        "oblivious ratio"};
  uint64_t max = 1;
  for (const Row& r : rows) {
    if (!r.ok) {
      t.rows.push_back({r.name, "FAILED: " + r.error});
      continue;
    }
    max = std::max(max, r.metrics.effective_efi.max);
    char buf[5][32];
    std::snprintf(buf[0], sizeof buf[0], "%.2f", r.metrics.effective_efi.mean);
    std::snprintf(buf[1], sizeof buf[1], "%.1f%%", 100.0 * r.metrics.dark_fiber);
    std::snprintf(buf[2], sizeof buf[2], "%.2f", r.mean_job_efi_max);
    std::snprintf(buf[3], sizeof buf[3], "%.1f", r.routing_ms);
    t.rows.push_back({r.name, r.valid ? "yes" : "NO", std::to_string(r.metrics.effective_efi.max),
                      buf[0], buf[1], buf[2], std::to_string(r.unused_channels), buf[3],
                      r.layers >= 0 ? std::to_string(r.layers) : "-",
                      r.oblivious >= 0 ? std::to_string(r.oblivious) : "-"});
  }
  std::string body = "<p>" + std::to_string(num_jobs) + " jobs, " + std::to_string(multi) +
                     " span two or more leaf switches; no routing has max effective EFI below " +
                     std::to_string(bound) + ".</p>\n" + sar::ReportTableHtml(t);
  body +=
      "<h2>Effective EFI of each leaf's links to each upper switch</h2>\n<p>The larger "
      "direction, parallel cables summed; white = dark, grey = no cable, darkest = " +
      std::to_string(max) + ".</p>\n";
  for (const Row& r : rows) {
    if (r.ok) {
      body += sar::LinkLoadHeatmapHtml(f, r.metrics.effective_efi_per_channel, max, r.name);
    }
  }
  return sar::ReportPageHtml("sar-route compare: " + a.fabric.topology, body);
}

int RunCompare(const CompareArgs& a) {
  const StepLog steps("compare", StepsWanted(a.progress, a.json));
  steps.Step("reading the fabric and the jobs");
  sar::Fabric f;
  sar::Status s = LoadFabric(a.fabric, &f);
  if (!s.ok()) return Fail(s);
  std::vector<sar::ResolvedJob> jobs;
  s = LoadJobs(f, a.routing.jobs, &jobs, a.routing.hca_pairs);
  if (!s.ok()) return Fail(s);

  std::string script;
  fs::path dir;
  if (!a.opensm.empty()) {
    script = FindTestbedScript(a.testbed_script);
    if (script.empty()) {
      return Fail(sar::Status::NotFound(
          "--opensm needs scripts/sar_testbed.py: give --testbed-script or set SAR_TESTBED"));
    }
    std::error_code ec;
    if (!a.workdir.empty()) {
      dir = a.workdir;
      fs::create_directories(dir, ec);
    } else {
      std::string tmpl = (fs::temp_directory_path(ec) / "sar-compare-XXXXXX").string();
      if (mkdtemp(tmpl.data()) == nullptr) {
        return Fail(sar::Status::IOError("cannot create a temporary directory: " + tmpl));
      }
      dir = tmpl;
    }
    // The test bed simulates exactly this fabric with exactly these LIDs. ibsim gives HCA ports
    // its own GUIDs (node GUID + port), so OpenSM's guid2lid is keyed by those, not by the
    // source's (a real dump's port GUID often equals its node GUID).
    s = sar::WriteTopology((dir / "fabric.topo").string(), f, sar::TopologyWriteOptions());
    if (s.ok()) s = sar::WriteGuid2Lid((dir / "guid2lid").string(), sar::WithIbsimPortGuids(f));
    if (!s.ok()) return Fail(s);
  }

  std::vector<Row> rows;
  for (const std::string& e : a.engines) {
    steps.Step("routing, validating and judging with " + e);
    rows.emplace_back();
    RouteOurs(a, f, jobs, e, &rows.back());
    for (const std::string& note : rows.back().pass_notes) {
      std::fprintf(stderr, "sar-route: note: %s: %s\n", e.c_str(), note.c_str());
    }
  }
  for (const std::string& e : a.opensm) {
    steps.Step("OpenSM's " + e + " on ibsim");
    rows.emplace_back();
    RouteOpenSm(a, f, jobs, script, dir, e, &rows.back());
  }
  if (!a.opensm.empty() && a.workdir.empty()) {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  // The per-job throughput against the baseline row (given, else dfsssp, else the first).
  const Row* base = nullptr;
  std::vector<std::string> wanted = {a.baseline};
  if (a.baseline.empty()) wanted = {"dfsssp", ""};  // "": the first row that routed
  for (const std::string& want : wanted) {
    for (const Row& r : rows) {
      if (!base && r.ok && (want.empty() || r.name == want)) base = &r;
    }
  }
  if (!a.baseline.empty() && !base) {
    return Fail(sar::Status::InvalidArgument("--baseline " + a.baseline +
                                             ": no such row that routed (rows are the "
                                             "--engines and opensm:<engine>)"));
  }
  for (Row& r : rows) {
    if (!r.ok || !base) continue;
    r.vs = sar::CompareJobFlows(r.flows, base->flows);
    if (&r != base && r.note.empty()) {
      r.note = FlowsVersusEfiNote(r.name, r.metrics.effective_efi.max, base->name,
                                  base->metrics.effective_efi.max, r.vs);
    }
  }

  int multi = 0;
  for (const sar::ResolvedJob& j : jobs) multi += j.num_leaf_switches >= 2;
  bool all_ok = true;
  Json out;
  out["topology"] = a.fabric.topology;
  out["jobs"] = jobs.size();
  out["multi_switch_jobs"] = multi;
  const sar::EffectiveEfiBound lb = sar::EffectiveEfiLowerBound(f, jobs);
  const uint64_t bound = lb.value;
  out["effective_efi_lower_bound"] = bound;
  const sar::LinkRate nominal = f.nominal_rate();
  out["nominal_rate"] = nominal.declared() ? Json(sar::LinkRateString(nominal)) : Json(nullptr);
  out["lower_bound"] = {{"value", lb.value},
                        {"leaf", lb.leaf},
                        {"level", lb.level},
                        {"leaf_average", lb.leaf_avg},
                        {"where", lb.where}};
  Json table = Json::array();
  for (const Row& r : rows) {
    all_ok = all_ok && r.ok && r.valid;
    Json j = {{"engine", r.name}, {"ok", r.ok}};
    if (!r.engine_used.empty()) {  // ours: what the routing pass ran and noted
      j["engine_used"] = r.engine_used;
      j["pass_notes"] = r.pass_notes;
    }
    if (!r.ok) {
      j["error"] = r.error;
    } else {
      j["valid"] = r.valid;
      if (!r.valid) j["invalid"] = r.invalid;
      j["effective_efi_max"] = r.metrics.effective_efi.max;
      j["effective_efi_mean"] = r.metrics.effective_efi.mean;
      j["bound_gap"] =
          bound > 0 ? Json(sar::BoundGap(r.metrics.effective_efi.max, bound)) : Json(nullptr);
      j["efi_max"] = r.metrics.efi.max;
      j["pairs"] = r.pairs;
      j["unreachable_pairs"] = r.unreachable;
      j["loops"] = r.loops;
      // Per unit of capacity, a full-rate link counting 1 (equal to the raw maxima when every
      // link runs at the nominal rate).
      j["effective_efi_per_capacity_max"] = r.metrics.effective_efi_per_capacity.max;
      j["efi_per_capacity_max"] = r.metrics.efi_per_capacity.max;
      j["dark_fiber"] = r.metrics.dark_fiber;
      j["mean_job_efi_max"] = r.mean_job_efi_max;
      j["mean_job_channels"] = r.mean_job_channels;
      j["unused_channels"] = r.unused_channels;
      j["routing_ms"] = r.routing_ms;
      j["layers"] = r.layers >= 0 ? Json(r.layers) : Json(nullptr);
      j["oblivious_ratio"] = r.oblivious >= 0 ? Json(r.oblivious) : Json(nullptr);
      j["flows"] = FlowsJson(r.flows, base ? &r.vs : nullptr, base ? base->name : "");
      j["note"] = r.note.empty() ? Json(nullptr) : Json(r.note);
    }
    table.push_back(std::move(j));
  }
  out["engines"] = std::move(table);
  out["baseline"] = base ? Json(base->name) : Json(nullptr);
  if (!a.html.empty()) {
    s = sar::WriteFileAtomic(a.html, CompareHtml(a, f, jobs.size(), multi, bound, rows));
    if (!s.ok()) return Fail(s);
  }
  if (a.json) {
    std::cout << out.dump(2) << "\n";
  } else {
    std::printf(
        "%s: %zu jobs, %d span two or more leaf switches; no routing has max effective EFI "
        "below %llu\n",
        a.fabric.topology.c_str(), jobs.size(), multi, static_cast<unsigned long long>(bound));
    std::printf("lower bound %llu from %s (per leaf %llu, per level %llu, leaf average %llu)\n",
                static_cast<unsigned long long>(lb.value),
                lb.where.empty() ? "-" : lb.where.c_str(), static_cast<unsigned long long>(lb.leaf),
                static_cast<unsigned long long>(lb.level),
                static_cast<unsigned long long>(lb.leaf_avg));
    std::printf("%-16s %5s %9s %6s %9s %7s %10s %10s %7s %9s %6s %5s %7s %10s %8s %8s %12s\n",
                "engine", "valid", "effEFImax", "gap%", "effEFImean", "dark%", "jobEFImax",
                "jobChans", "unused", "route_ms", "layers", "obl", "EFImax", "effEFI/cap",
                "jobTmed", "jobTmax", "slower/jobs");
    for (const Row& r : rows) {
      if (!r.ok) {
        std::printf("%-16s FAILED: %s\n", r.name.c_str(), r.error.c_str());
        continue;
      }
      char gap[16] = "-";
      if (bound > 0) {
        std::snprintf(gap, sizeof gap, "%.1f",
                      100.0 * sar::BoundGap(r.metrics.effective_efi.max, bound));
      }
      char slower[32];
      std::snprintf(slower, sizeof slower, "%d/%d", r.vs.slower, r.vs.jobs);
      std::printf(
          "%-16s %5s %9llu %6s %9.2f %7.1f %10.2f %10.1f %7d %9.1f %6s %5s %7llu %10.2f %8.1f "
          "%8.1f %12s\n",
          r.name.c_str(), r.valid ? "yes" : "NO",
          static_cast<unsigned long long>(r.metrics.effective_efi.max), gap,
          r.metrics.effective_efi.mean, 100.0 * r.metrics.dark_fiber, r.mean_job_efi_max,
          r.mean_job_channels, r.unused_channels, r.routing_ms,
          r.layers >= 0 ? std::to_string(r.layers).c_str() : "-",
          r.oblivious >= 0 ? std::to_string(r.oblivious).c_str() : "-",
          static_cast<unsigned long long>(r.metrics.efi.max),
          r.metrics.effective_efi_per_capacity.max, r.flows.summary.median_time,
          r.flows.summary.max_time, base ? slower : "-");
      if (!r.valid) std::printf("%-16s   %s\n", "", r.invalid.c_str());
      if (r.valid && r.unreachable > 0) {
        std::printf("%-16s   %llu of %llu pairs unreachable (--allow-disconnected)\n", "",
                    static_cast<unsigned long long>(r.unreachable),
                    static_cast<unsigned long long>(r.pairs));
      }
    }
    std::printf(
        "jobTmed/jobTmax: the median and the slowest job's exchange time (message / line rate) "
        "when every job sends all-to-all at once, max-min fair; slower: jobs whose slowest flow "
        "is slower than under %s\n",
        base ? base->name.c_str() : "-");
    for (const Row& r : rows) {
      if (r.ok && !r.note.empty()) std::printf("%s\n", r.note.c_str());
    }
    if (a.per_job) {
      for (const Row& r : rows) {
        if (!r.ok) continue;
        std::printf("\n%s:\n", r.name.c_str());
        PrintFlows(r.flows, base ? &r.vs : nullptr, base ? base->name : "");
      }
    }
  }
  return all_ok ? kOk : kCheckFailed;
}

}  // namespace

std::function<int()> SetupCompare(CLI::App* c) {
  auto a = std::make_shared<CompareArgs>();
  AddFabricOptions(c, &a->fabric, /*topology_required=*/true, /*canonical_default=*/true);
  AddSarOptions(c, &a->routing.sar);
  AddJobHcaPairsOption(c, &a->routing.hca_pairs);
  c->add_option("--jobs,-j", a->routing.jobs,
                "job mapping file: '<hostname> <jobid> [<pattern>]' per line")
      ->required();
  c->add_option("--engines,-e", a->engines,
                "our engines, comma separated (see route --engine list)")
      ->delimiter(',');
  c->add_option("--opensm", a->opensm,
                "OpenSM engines to run on the ibsim test bed, comma separated (e.g. "
                "ftree,dfsssp,updn,minhop)")
      ->delimiter(',');
  c->add_option("--vls", a->routing.vls, "virtual lanes for layered engines")
      ->check(CLI::Range(1, 15));
  c->add_option("--threads", a->routing.threads, "worker threads (0 = all cores)");
  c->add_option("--testbed-script", a->testbed_script,
                "path of scripts/sar_testbed.py (default: $SAR_TESTBED or found beside the build)");
  c->add_option("--workdir", a->workdir, "keep the OpenSM runs here (default: a removed temp dir)");
  c->add_flag("--allow-disconnected", a->routing.allow_disconnected,
              "our engines leave pairs without a legal route unrouted instead of failing, and "
              "unreachable pairs do not make any row invalid (loops still do); the JSON counts "
              "them in unreachable_pairs");
  c->add_option("--baseline", a->baseline,
                "row the per-job throughput is compared with (an engine, or opensm:<engine>; "
                "default dfsssp if it is a row, else the first row)");
  c->add_flag("--per-job", a->per_job, "also print every row's per-job throughput table");
  c->add_flag("--json", a->json, "print one JSON object");
  AddProgressOption(c, &a->progress);
  c->add_option("--html", a->html,
                "also write a self-contained HTML report (table, per-engine link-load heat maps)");
  return [a] {
    if (a->engines.empty() && a->opensm.empty()) {
      return Fail(sar::Status::InvalidArgument("give --engines and/or --opensm"));
    }
    return RunCompare(*a);
  };
}

}  // namespace sarcli
