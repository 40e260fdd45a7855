// sar-route replay: a job history played on a fabric, rerouted by each engine at every change of
// the multi-leaf job set (sar/study/replay.h does the work; this file reads options and prints).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli_common.h"
#include "sar/engines/engine.h"
#include "sar/io/file_util.h"
#include "sar/report/report_html.h"
#include "sar/study/job_history.h"
#include "sar/study/replay.h"
#include "sar/study/shards.h"
#include "shard_run.h"

namespace sarcli {
namespace {

using Json = nlohmann::ordered_json;

struct ReplayArgs {
  FabricArgs fabric;
  std::string swf, trace, sacct;
  std::vector<std::string> engines = {"sar", "dfsssp"};
  int machine_nodes = 0;
  bool no_scale = false;
  double from_days = 0, days = 0;
  RoutingArgs routing;  // --vls, --threads, --sar-no-regret
  bool json = false;
  std::string csv, html, title;
  int heatmap_event = -1;
  std::string progress = "auto";
  bool delta = false;
  bool no_stable_jobs = false;
  bool no_flows = false;
  std::string baseline;
  SplitArgs split;
};

// Options that change no figure: left out of the key that ties shards to their inputs.
const std::set<std::string> kOutputOnly = {"--json",  "--csv",     "--html",
                                           "--title", "--threads", "--heatmap-event"};

// What the report calls an input file: its name without the directories. A pipe
// (`--swf <(zcat x.swf.gz)` gives /dev/fd/63) has no name worth showing: "" then.
std::string InputName(const std::string& path) {
  static const std::regex kPipe(R"(^(-|/dev/stdin|/dev/fd/\d+|/proc/(self|\d+)/fd/\d+)$)");
  if (std::regex_match(path, kPipe)) return "";
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The report's title: --title, else the history's and the topology's file names.
std::string ReportTitle(const ReplayArgs& a) {
  if (!a.title.empty()) return a.title;
  const std::string kind = !a.swf.empty() ? "SWF history" : !a.trace.empty() ? "trace" : "sacct";
  std::string name = InputName(a.swf + a.trace + a.sacct);
  if (name.empty()) name = kind + " from a pipe (name it with --title)";
  const std::string topo = InputName(a.fabric.topology);
  return "sar-route replay: " + name + (topo.empty() ? "" : " on " + topo);
}

// A sample as a shard stores it: every field the reports read, in this order (doubles in JSON
// round-trip exactly; the per-job figures stay in the shard, their count is kept).
Json SampleRow(const sar::ReplaySample& s) {
  return Json::array({s.effective_efi_max,  s.dark_fiber,
                      s.worst_job_efi,      s.efi_max,
                      s.reroute_ms,         s.lft_changed,
                      s.lft_blocks_changed, s.jobs_continuing,
                      s.jobs_rerouted,      s.stale_effective_efi_max,
                      s.rerouted,           s.job_time_median,
                      s.job_time_max,       s.slowest_median,
                      s.slowest_min,        s.jobs_faster,
                      s.jobs_slower,        s.jobs_slower_2pct,
                      s.speedup_median,     s.flow_jobs,
                      s.engine_used});
}

double Real(const Json& j) {  // JSON has no NaN: nlohmann writes it as null
  return j.is_null() ? std::numeric_limits<double>::quiet_NaN() : j.get<double>();
}

sar::ReplaySample SampleFromRow(const Json& j) {
  sar::ReplaySample s;
  s.effective_efi_max = j.at(0).get<uint64_t>();
  s.dark_fiber = Real(j.at(1));
  s.worst_job_efi = j.at(2).get<uint64_t>();
  s.efi_max = j.at(3).get<uint64_t>();
  s.reroute_ms = Real(j.at(4));
  s.lft_changed = j.at(5).get<uint64_t>();
  s.lft_blocks_changed = j.at(6).get<uint64_t>();
  s.jobs_continuing = j.at(7).get<int>();
  s.jobs_rerouted = j.at(8).get<int>();
  s.stale_effective_efi_max = j.at(9).get<uint64_t>();
  s.rerouted = j.at(10).get<bool>();
  s.job_time_median = Real(j.at(11));
  s.job_time_max = Real(j.at(12));
  s.slowest_median = Real(j.at(13));
  s.slowest_min = Real(j.at(14));
  s.jobs_faster = j.at(15).get<int>();
  s.jobs_slower = j.at(16).get<int>();
  s.jobs_slower_2pct = j.at(17).get<int>();
  s.speedup_median = Real(j.at(18));
  s.flow_jobs = j.at(19).get<int>();
  s.engine_used = j.at(20).get<std::string>();
  return s;
}

// The merge: the plan (placement and events, cheap and deterministic) and every shard's samples.
sar::Status MergeReplayShards(const std::string& dir, const Manifest& m, const sar::Fabric& f,
                              const sar::JobHistory& history, const sar::ReplayOptions& o,
                              sar::ReplayResult* r, double* wall_ms) {
  SAR_RETURN_IF_ERROR(sar::PlanReplay(f, history, o, r));
  std::vector<Json> shards;
  SAR_RETURN_IF_ERROR(ReadShards(dir, m, &shards));
  const size_t events = r->events.size();
  r->samples.assign(o.engines.size(), std::vector<sar::ReplaySample>(events));
  *wall_ms = 0;
  for (int k = 0; k < m.shards; ++k) {
    const Json& j = shards[k];
    const std::string path = ShardPath(dir, k);
    try {
      const sar::ShardRange want = sar::ShardOf(events, k, m.shards);
      if (j.at("events").get<size_t>() != events || j.at("begin").get<size_t>() != want.begin ||
          j.at("end").get<size_t>() != want.end) {
        return sar::Status::InvalidArgument(path + ": events of another plan");
      }
      const Json& rows = j.at("samples");
      if (rows.size() != o.engines.size()) {
        return sar::Status::Corruption(path + ": samples of " + std::to_string(rows.size()) +
                                       " engines, want " + std::to_string(o.engines.size()));
      }
      for (size_t e = 0; e < rows.size(); ++e) {
        if (rows[e].size() != want.end - want.begin) {
          return sar::Status::Corruption(path + ": wrong number of samples");
        }
        for (size_t i = 0; i < rows[e].size(); ++i) {
          r->samples[e][want.begin + i] = SampleFromRow(rows[e][i]);
        }
      }
      if (k == 0) r->flow_baseline = j.at("flow_baseline").get<std::string>();
      *wall_ms += 1000 * j.at("wall_s").get<double>();
    } catch (const Json::exception& e) {
      return sar::Status::Corruption(path + ": " + e.what());
    }
  }
  return sar::Status::OK();
}

Json SummaryJson(const sar::ReplaySummary& s) {
  return {{"effective_efi_max_mean", s.eff_efi_mean},
          {"effective_efi_max_p95", s.eff_efi_p95},
          {"effective_efi_max_max", s.eff_efi_max},
          {"effective_efi_max_mean_without_reroute", s.stale_eff_efi_mean},
          {"dark_fiber_mean", s.dark_mean},
          {"dark_fiber_p95", s.dark_p95},
          {"worst_job_efi_mean", s.worst_job_efi_mean},
          {"efi_max", s.efi_max},
          {"reroutes", s.reroutes},
          {"reroute_ms_mean", s.reroute_ms_mean},
          {"reroute_ms_p95", s.reroute_ms_p95},
          {"lft_changed_mean", s.lft_changed_mean},
          {"lft_changed_median", s.lft_changed_median},
          {"lft_blocks_changed_mean", s.lft_blocks_changed_mean},
          {"lft_blocks_changed_median", s.lft_blocks_changed_median},
          {"jobs_rerouted_share_mean", s.jobs_rerouted_share_mean},
          {"jobs_rerouted_share_median", s.jobs_rerouted_share_median},
          {"job_time_median_mean", s.job_time_median_mean},
          {"job_time_max", s.job_time_max},
          {"jobs_faster", s.jobs_faster},
          {"jobs_slower", s.jobs_slower},
          {"jobs_slower_over_2pct", s.jobs_slower_2pct},
          {"events_with_slower_jobs", s.events_with_slower},
          {"speedup_median", s.speedup_median}};
}

std::string Csv(const sar::ReplayResult& r) {
  std::string out =
      "event,time_s,running,busy_hosts,multi_leaf_jobs,engine,engine_used,effective_efi_max,"
      "dark_fiber,worst_job_efi,efi_max,rerouted,reroute_ms,lft_changed,"
      "stale_effective_efi_max,lft_blocks_changed,jobs_continuing,jobs_rerouted,"
      "job_time_median,job_time_max,slowest_median,slowest_min,jobs_faster,jobs_slower,"
      "jobs_slower_2pct,speedup_median\n";
  char buf[512];
  for (size_t e = 0; e < r.engines.size(); ++e) {
    for (size_t k = 0; k < r.events.size(); ++k) {
      const sar::ReplayEvent& ev = r.events[k];
      const sar::ReplaySample& s = r.samples[e][k];
      std::snprintf(buf, sizeof buf,
                    "%zu,%.0f,%d,%d,%zu,%s,%s,%llu,%.6f,%llu,%llu,%d,%.3f,%llu,%llu,%llu,%d,%d,"
                    "%.6g,%.6g,%.6g,%.6g,%d,%d,%d,%.6g\n",
                    k, ev.time_s, ev.running, ev.busy_hosts, ev.jobs.size(), r.engines[e].c_str(),
                    s.engine_used.c_str(), static_cast<unsigned long long>(s.effective_efi_max),
                    s.dark_fiber, static_cast<unsigned long long>(s.worst_job_efi),
                    static_cast<unsigned long long>(s.efi_max), s.rerouted ? 1 : 0, s.reroute_ms,
                    static_cast<unsigned long long>(s.lft_changed),
                    static_cast<unsigned long long>(s.stale_effective_efi_max),
                    static_cast<unsigned long long>(s.lft_blocks_changed), s.jobs_continuing,
                    s.jobs_rerouted, s.job_time_median, s.job_time_max, s.slowest_median,
                    s.slowest_min, s.jobs_faster, s.jobs_slower, s.jobs_slower_2pct,
                    s.speedup_median);
      out += buf;
    }
  }
  return out;
}

int RunReplay(ReplayArgs& a, const CLI::App* cmd) {
  const int sources = !a.swf.empty() + !a.trace.empty() + !a.sacct.empty();
  if (sources != 1) {
    return Fail(sar::Status::InvalidArgument("give exactly one of --swf, --trace, --sacct"));
  }
  Manifest manifest;
  sar::Status s = PrepareSplit("replay", cmd, &a.split, kOutputOnly, &manifest);
  if (!s.ok()) return Fail(s);
  sar::Fabric f;
  s = LoadFabric(a.fabric, &f);
  if (!s.ok()) return Fail(s);
  sar::JobHistory history;
  if (!a.swf.empty()) s = sar::ReadJobHistory(a.swf, sar::HistoryFormat::kSwf, &history);
  if (!a.trace.empty()) s = sar::ReadJobHistory(a.trace, sar::HistoryFormat::kTrace, &history);
  if (!a.sacct.empty()) s = sar::ReadJobHistory(a.sacct, sar::HistoryFormat::kSacct, &history);
  if (!s.ok()) return Fail(s);
  if (a.split.slurm_array > 0) {              // the inputs read: split and submit
    for (const std::string& e : a.engines) {  // what every shard would refuse
      if (!sar::MakeRoutingEngine(e)) {
        return Fail(sar::Status::InvalidArgument("unknown engine '" + e +
                                                 "'; known engines: " + sar::RoutingEngineList()));
      }
    }
    s = StartSlurmArray("replay", a.split, manifest);
    return s.ok() ? kOk : Fail(s);
  }

  sar::ReplayOptions o;
  o.engines = a.engines;
  o.routing = RoutingOptionsFrom(a.routing, "");  // the engine: each of o.engines
  o.machine_nodes = a.machine_nodes;
  o.scale = !a.no_scale;
  o.delta = a.delta;
  o.delta_stable = !a.no_stable_jobs;
  o.flows = !a.no_flows;
  o.flow_baseline = a.baseline;
  o.from_s = a.from_days * 86400.0;
  if (a.days > 0) o.to_s = o.from_s + a.days * 86400.0;
  // The bar stays on with --json: the summary goes to stdout, the bar to stderr.
  const bool bar = StepsWanted(a.progress, /*json_output=*/false);
  auto progress = std::make_shared<ProgressBar>();
  if (bar) o.progress = [progress](size_t done, size_t total) { progress->Update(done, total); };
  sar::ReplayResult r;
  sar::Stopwatch watch;
  double wall_ms = 0;
  if (!a.split.merge_dir.empty()) {
    s = MergeReplayShards(a.split.merge_dir, manifest, f, history, o, &r, &wall_ms);
    if (!s.ok()) return Fail(s);
  } else if (a.split.shard_index >= 0) {
    // One shard: its contiguous range of events, all engines (the per-job throughput compares
    // engines at the same event), into the work directory.
    sar::ReplayResult plan;
    s = sar::PlanReplay(f, history, o, &plan);
    if (!s.ok()) return Fail(s);
    const sar::ShardRange range =
        sar::ShardOf(plan.events.size(), a.split.shard_index, a.split.shard_count);
    o.event_begin = range.begin;
    o.event_end = range.end;
    s = sar::Replay(f, history, o, &r);
    if (!s.ok()) return Fail(s);
    Json rows = Json::array();
    for (size_t e = 0; e < r.engines.size(); ++e) {
      Json mine = Json::array();
      for (size_t k = range.begin; k < range.end; ++k) mine.push_back(SampleRow(r.samples[e][k]));
      rows.push_back(std::move(mine));
    }
    const double shard_s = watch.LapMs() / 1000;
    Json payload = {{"events", r.events.size()},
                    {"begin", range.begin},
                    {"end", range.end},
                    {"wall_s", shard_s},
                    {"cpu_s", static_cast<double>(std::clock()) / CLOCKS_PER_SEC},
                    {"flow_baseline", r.flow_baseline},
                    {"samples", std::move(rows)}};
    s = WriteShard(a.split.work_dir, manifest, a.split.shard_index, std::move(payload));
    if (!s.ok()) return Fail(s);
    std::printf("shard %d/%d: events %zu..%zu of %zu, %zu engines, %.1f s -> %s\n",
                a.split.shard_index, a.split.shard_count, range.begin, range.end, r.events.size(),
                r.engines.size(), shard_s,
                ShardPath(a.split.work_dir, a.split.shard_index).c_str());
    return kOk;
  } else {
    s = sar::Replay(f, history, o, &r);
    if (!s.ok()) return Fail(s);
    wall_ms = watch.LapMs();
  }

  if (!a.csv.empty()) {
    s = sar::WriteFileAtomic(a.csv, Csv(r));
    if (!s.ok()) return Fail(s);
  }
  if (!a.html.empty()) {
    sar::ReplayReportInput in;
    in.title = ReportTitle(a);
    in.result = &r;
    in.fabric = &f;
    // The heat map: the given event, else the first job-aware engine's reroute that lowered
    // max effective EFI most (before = its previous tables on the new jobs), else its reroute
    // that changed most LFT entries, else the event with the highest max effective EFI.
    int event = a.heatmap_event;
    size_t engine = 0;
    for (size_t e = 0; e < r.engines.size(); ++e) {
      if (sar::MakeRoutingEngine(r.engines[e])->uses_jobs()) {
        engine = e;
        break;
      }
    }
    if (event < 0) {  // the reroute that lowered max effective EFI most
      uint64_t most = 0;
      for (size_t k = 1; k < r.events.size(); ++k) {
        const sar::ReplaySample& x = r.samples[engine][k];
        if (x.stale_effective_efi_max > x.effective_efi_max &&
            x.stale_effective_efi_max - x.effective_efi_max > most) {
          most = x.stale_effective_efi_max - x.effective_efi_max;
          event = static_cast<int>(k);
        }
      }
    }
    if (event < 0) {  // none lowered it: the reroute that changed most LFT entries
      uint64_t most = 0;
      for (size_t k = 1; k < r.events.size(); ++k) {
        if (r.samples[engine][k].lft_changed > most) {
          most = r.samples[engine][k].lft_changed;
          event = static_cast<int>(k);
        }
      }
    }
    if (event < 0) {  // no reroute changed anything (engines that ignore jobs): the worst event
      uint64_t worst = 0;
      for (size_t k = 1; k < r.events.size(); ++k) {
        if (r.samples[engine][k].effective_efi_max > worst) {
          worst = r.samples[engine][k].effective_efi_max;
          event = static_cast<int>(k);
        }
      }
    }
    std::vector<uint64_t> before, after;
    if (event > 0 && event < static_cast<int>(r.events.size())) {
      s = sar::ReplayLinkLoads(f, r, o, r.engines[engine], event, &before, &after);
      if (!s.ok()) return Fail(s);
      in.heatmap_engine = r.engines[engine];
      in.heatmap_event = event;
      in.before = &before;
      in.after = &after;
    }
    s = sar::WriteFileAtomic(a.html, sar::ReplayReportHtml(in));
    if (!s.ok()) return Fail(s);
  }

  Json out;
  out["topology"] = a.fabric.topology;
  out["history_jobs"] = r.history_jobs;
  out["skipped_records"] = history.skipped;
  out["placed"] = r.placed;
  out["zero_length"] = r.zero_length;
  out["not_placed"] = r.not_placed;
  out["unknown_hosts"] = r.unknown_hosts;
  out["scale"] = r.scale;
  out["fabric_hosts"] = r.fabric_hosts;
  out["multi_leaf_jobs"] = r.jobs.size();
  out["events"] = r.events.size();
  out["wall_s"] = wall_ms / 1000.0;
  out["delta"] = a.delta;
  out["delta_stable"] = a.delta && !a.no_stable_jobs;
  Json engines = Json::array();
  for (size_t e = 0; e < r.engines.size(); ++e) {
    Json j = {{"engine", r.engines[e]}};
    j.update(SummaryJson(sar::SummarizeReplay(r, e)));
    engines.push_back(std::move(j));
  }
  out["engines"] = std::move(engines);
  out["flow_baseline"] = r.flow_baseline.empty() ? Json(nullptr) : Json(r.flow_baseline);
  if (a.json) {
    std::cout << out.dump(2) << "\n";
    return kOk;
  }
  std::printf(
      "%d jobs (%d skipped records, %d of no duration), %d placed, %d not placed, %d unknown "
      "hosts; scale %.3f to %d hosts; %zu multi-leaf jobs; %zu events; %.1f s\n",
      r.history_jobs, history.skipped, r.zero_length, r.placed, r.not_placed, r.unknown_hosts,
      r.scale, r.fabric_hosts, r.jobs.size(), r.events.size(), wall_ms / 1000.0);
  std::printf("%-10s %9s %9s %8s %9s %8s %8s %9s %7s %8s %9s %9s %10s %9s %9s\n", "engine",
              "effEFImean", "effEFIp95", "effEFImax", "noRerMean", "dark%", "dark%p95",
              "jobEFImean", "EFImax", "reroutes", "ms_mean", "ms_p95", "LFTchanged", "blocksMed",
              "jobsMov%");
  for (size_t e = 0; e < r.engines.size(); ++e) {
    const sar::ReplaySummary x = sar::SummarizeReplay(r, e);
    std::printf(
        "%-10s %9.2f %9.0f %8llu %9.2f %8.1f %8.1f %9.2f %7llu %8d %9.1f %9.1f %10.0f %9.1f "
        "%9.1f\n",
        r.engines[e].c_str(), x.eff_efi_mean, x.eff_efi_p95,
        static_cast<unsigned long long>(x.eff_efi_max), x.stale_eff_efi_mean, 100 * x.dark_mean,
        100 * x.dark_p95, x.worst_job_efi_mean, static_cast<unsigned long long>(x.efi_max),
        x.reroutes, x.reroute_ms_mean, x.reroute_ms_p95, x.lft_changed_mean,
        x.lft_blocks_changed_median, 100 * x.jobs_rerouted_share_median);
  }
  if (!r.flow_baseline.empty()) {
    std::printf(
        "per-job throughput (each job all-to-all, alltoall jobs in their FORS phases, every job "
        "at once, max-min fair; time in message/line rate), against %s at the same event:\n",
        r.flow_baseline.c_str());
    std::printf("%-10s %12s %10s %8s %8s %12s %14s %10s\n", "engine", "jobTmedMean", "jobTmax",
                "faster", "slower", "slower>2%", "eventsSlower", "speedupMed");
    for (size_t e = 0; e < r.engines.size(); ++e) {
      const sar::ReplaySummary x = sar::SummarizeReplay(r, e);
      std::printf("%-10s %12.1f %10.1f %8d %8d %12d %14d %9.2fx\n", r.engines[e].c_str(),
                  x.job_time_median_mean, x.job_time_max, x.jobs_faster, x.jobs_slower,
                  x.jobs_slower_2pct, x.events_with_slower, x.speedup_median);
    }
  }
  return kOk;
}

}  // namespace

std::function<int()> SetupReplay(CLI::App* c) {
  auto a = std::make_shared<ReplayArgs>();
  AddFabricOptions(c, &a->fabric);
  c->add_option("--swf", a->swf,
                "Standard Workload Format history (sizes only; placed by the tree best-fit "
                "allocator; a pipe works: <(zcat x.swf.gz))");
  c->add_option("--trace", a->trace,
                "replay trace as sar-filterd reads it: <start_s> <end_s|-> <id> <hostlist> ...");
  c->add_option("--sacct", a->sacct, "sacct --parsable2 output with JobID, Start, End, NodeList");
  c->add_option("--engines,-e", a->engines,
                "engines, comma separated (default sar,dfsssp; see route --engine list)")
      ->delimiter(',');
  c->add_option("--machine-nodes", a->machine_nodes,
                "SWF: nodes of the recorded machine (default: its MaxNodes header)");
  c->add_flag("--no-scale", a->no_scale, "SWF: place sizes as recorded, not scaled to the fabric");
  c->add_option("--from-days", a->from_days, "window start, days after the first job start");
  c->add_option("--days", a->days, "window length in days (default: to the end)");
  c->add_option("--vls", a->routing.vls, "virtual lanes for layered engines")
      ->check(CLI::Range(1, 15));
  c->add_option("--threads", a->routing.threads, "worker threads (0 = all cores)");
  c->add_flag("--json", a->json, "print one JSON object (the summary)");
  c->add_option("--csv", a->csv, "write one row per event and engine");
  c->add_option("--html", a->html,
                "write a self-contained HTML report (charts: Vega-Lite, inlined)");
  c->add_option("--title", a->title,
                "the HTML report's title (default: the history's and the topology's file "
                "names)");
  c->add_option("--heatmap-event", a->heatmap_event,
                "event of the report's before/after link-load heat map (default: the reroute "
                "that lowered max effective EFI most)");
  c->add_flag("--delta", a->delta,
              "minimal-delta updates: each reroute keeps what it can of the engine's previous "
              "tables (route --previous); default: full recompute");
  c->add_flag("--no-stable-jobs", a->no_stable_jobs,
              "with --delta: do not give each reroute the previous event's job set (route "
              "--previous-jobs), so running jobs' routes are not pinned");
  c->add_flag("--no-flows", a->no_flows,
              "skip the per-job throughput (each job's slowest flow) at every event");
  c->add_flag("--no-sar-no-regret{false}", a->routing.sar.no_regret,
              "sar: skip the no-regret stage (route --no-sar-no-regret) at every reroute");
  c->add_flag("--sar-no-regret", a->routing.sar.no_regret,
              "sar: the no-regret stage (the default; kept for old command lines)");
  c->add_option("--baseline", a->baseline,
                "engine the per-job throughput is compared with (default dfsssp if replayed, "
                "else the first engine)");
  c->add_option("--progress", a->progress, "progress bar on stderr: auto (on a terminal), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  AddSplitOptions(c, &a->split);
  return [a, c] { return RunReplay(*a, c); };
}

}  // namespace sarcli
