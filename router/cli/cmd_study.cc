// sar-route study: the fail-in-place study (sar/study/study.h does the work; this file reads
// options, draws the steps from annual failure rates if asked, and prints).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "sar/engines/engine.h"
#include "sar/io/file_util.h"
#include "sar/report/report_html.h"
#include "sar/study/shards.h"
#include "sar/study/study.h"
#include "shard_run.h"

namespace sarcli {
namespace {

using Json = nlohmann::ordered_json;

struct StudyArgs {
  FabricArgs fabric;
  std::vector<std::string> engines = {"sar", "dfsssp", "minhop", "updn", "dmodc"};
  std::vector<int> links = {0, 1, 2, 4, 8, 16};
  std::vector<int> switches;
  int years = 0;
  double link_afr = 0.009, switch_afr = 0.01;  // TSUBAME2.0, fail-in-place paper Table I
  int seeds = 3;
  uint64_t seed = 1;
  std::vector<int> clusters = {4, 16};
  RoutingArgs routing;  // --vls, --threads, --jobs
  bool json = false;
  std::string html;
  std::string progress = "auto";
  SplitArgs split;
};

const std::set<std::string> kOutputOnly = {"--json", "--html", "--threads"};

double Real(const Json& j) {  // JSON has no NaN: nlohmann writes it as null
  return j.is_null() ? std::numeric_limits<double>::quiet_NaN() : j.get<double>();
}

std::vector<double> Reals(const Json& j) {
  std::vector<double> v;
  for (const Json& x : j) v.push_back(Real(x));
  return v;
}

// A point as a shard stores it (doubles in JSON round-trip exactly).
Json PointJson(const sar::StudyPoint& pt) {
  Json cells = Json::array();
  for (const sar::StudyCell& c : pt.cells) {
    cells.push_back({c.routed, c.error, c.disconnected_before, c.alltoall, c.exchange, c.clustered,
                     c.cluster_time_max, c.cluster_time_median, c.route_ms});
  }
  return {pt.links, pt.switches, pt.seed, pt.drawn, pt.draw_error, std::move(cells)};
}

sar::StudyPoint PointFromJson(const Json& j) {
  sar::StudyPoint pt;
  pt.links = j.at(0).get<int>();
  pt.switches = j.at(1).get<int>();
  pt.seed = j.at(2).get<uint64_t>();
  pt.drawn = j.at(3).get<bool>();
  pt.draw_error = j.at(4).get<std::string>();
  for (const Json& c : j.at(5)) {
    sar::StudyCell cell;
    cell.routed = c.at(0).get<bool>();
    cell.error = c.at(1).get<std::string>();
    cell.disconnected_before = c.at(2).get<uint64_t>();
    cell.alltoall = Real(c.at(3));
    cell.exchange = Real(c.at(4));
    cell.clustered = Reals(c.at(5));
    cell.cluster_time_max = Reals(c.at(6));
    cell.cluster_time_median = Reals(c.at(7));
    cell.route_ms = Real(c.at(8));
    pt.cells.push_back(std::move(cell));
  }
  return pt;
}

// The merge: every shard's points in shard order, then the fits over all of them.
sar::Status MergeStudyShards(const std::string& dir, const Manifest& m, const sar::StudyOptions& o,
                             sar::StudyResult* r) {
  std::vector<Json> shards;
  SAR_RETURN_IF_ERROR(ReadShards(dir, m, &shards));
  const size_t points = sar::StudyPointCount(o);
  *r = sar::StudyResult();
  r->engines = o.engines;
  r->cluster_sizes = o.cluster_sizes;
  for (int k = 0; k < m.shards; ++k) {
    const Json& j = shards[k];
    const std::string path = ShardPath(dir, k);
    try {
      const sar::ShardRange want = sar::ShardOf(points, k, m.shards);
      if (j.at("begin").get<size_t>() != want.begin || j.at("end").get<size_t>() != want.end ||
          j.at("points").size() != want.end - want.begin) {
        return sar::Status::InvalidArgument(path + ": points of another split");
      }
      const auto intact = j.at("intact_error").get<std::vector<std::string>>();
      if (k == 0) {
        r->endpoints = j.at("endpoints").get<size_t>();
        r->pairs = j.at("pairs").get<uint64_t>();
        r->intact_error = intact;
        r->intact_engine_used = j.at("intact_engine_used").get<std::vector<std::string>>();
        r->intact_notes = j.at("intact_notes").get<std::vector<std::vector<std::string>>>();
      } else if (intact != r->intact_error || j.at("endpoints").get<size_t>() != r->endpoints) {
        return sar::Status::InvalidArgument(path + ": another intact fabric than shard 0's");
      }
      for (const Json& p : j.at("points")) {
        r->points.push_back(PointFromJson(p));
        if (r->points.back().drawn && r->points.back().cells.size() != o.engines.size()) {
          return sar::Status::Corruption(path + ": a point without every engine");
        }
      }
    } catch (const Json::exception& e) {
      return sar::Status::Corruption(path + ": " + e.what());
    }
  }
  sar::FitStudy(r);
  return sar::Status::OK();
}

// Cables between switches and switches without HCAs: what PickRandomFailures may fail.
void Failable(const sar::Fabric& f, int* cables, int* switches) {
  *cables = 0;
  *switches = 0;
  for (sar::NodeId s : f.switches()) {
    bool hca = false;
    for (int p = 1; p <= f.num_ports(s); ++p) {
      const sar::PortRef peer = f.peer({s, p});
      if (!peer.valid()) continue;
      hca |= !f.is_switch(peer.node);
      *cables += f.is_switch(peer.node);
    }
    *switches += !hca;
  }
  *cables /= 2;
}

Json FitJson(const sar::LinearFit& f) {
  return {{"intercept", f.intercept}, {"slope", f.slope}, {"r2", f.r2}, {"n", f.n}};
}

int RunStudy(StudyArgs& a, const CLI::App* cmd) {
  Manifest manifest;
  sar::Status s = PrepareSplit("study", cmd, &a.split, kOutputOnly, &manifest);
  if (!s.ok()) return Fail(s);
  sar::Fabric f;
  s = LoadFabric(a.fabric, &f);
  if (!s.ok()) return Fail(s);
  if (a.split.slurm_array > 0) {              // the inputs read: split and submit
    for (const std::string& e : a.engines) {  // what every shard would refuse
      if (!sar::MakeRoutingEngine(e)) {
        return Fail(sar::Status::InvalidArgument("unknown engine '" + e +
                                                 "'; known engines: " + sar::RoutingEngineList()));
      }
    }
    s = StartSlurmArray("study", a.split, manifest);
    return s.ok() ? kOk : Fail(s);
  }
  sar::StudyOptions o;
  o.engines = a.engines;
  o.seeds = a.seeds;
  o.seed = a.seed;
  o.cluster_sizes = a.clusters;
  o.routing = RoutingOptionsFrom(a.routing, "");  // the engine: each of o.engines
  if (a.years > 0) {
    // Expected failures after y years at a constant annual rate, each component independently.
    int cables = 0, sws = 0;
    Failable(f, &cables, &sws);
    o.links.clear();
    o.switches.clear();
    for (int y = 0; y <= a.years; ++y) {
      o.links.push_back(static_cast<int>(std::lround(cables * (1 - std::pow(1 - a.link_afr, y)))));
      o.switches.push_back(
          static_cast<int>(std::lround(sws * (1 - std::pow(1 - a.switch_afr, y)))));
    }
  } else {
    o.links = a.links;
    o.switches = a.switches.empty() ? std::vector<int>(a.links.size(), 0) : a.switches;
  }
  // The bar stays on with --json: the summary goes to stdout, the bar to stderr.
  const bool bar = StepsWanted(a.progress, /*json_output=*/false);
  auto progress = std::make_shared<ProgressBar>();
  if (bar) o.progress = [progress](int done, int total) { progress->Update(done, total); };
  sar::StudyResult r;
  if (!a.split.merge_dir.empty()) {
    s = MergeStudyShards(a.split.merge_dir, manifest, o, &r);
  } else if (a.split.shard_index >= 0) {
    // One shard: its contiguous range of (step, draw) points into the work directory.
    const sar::ShardRange range =
        sar::ShardOf(sar::StudyPointCount(o), a.split.shard_index, a.split.shard_count);
    o.point_begin = range.begin;
    o.point_end = range.end;
    s = sar::RunStudy(f, o, &r);
    if (!s.ok()) return Fail(s);
    Json points = Json::array();
    for (const sar::StudyPoint& pt : r.points) points.push_back(PointJson(pt));
    Json payload = {{"begin", range.begin},           {"end", range.end},
                    {"endpoints", r.endpoints},       {"pairs", r.pairs},
                    {"intact_error", r.intact_error}, {"intact_engine_used", r.intact_engine_used},
                    {"intact_notes", r.intact_notes}, {"points", std::move(points)}};
    s = WriteShard(a.split.work_dir, manifest, a.split.shard_index, std::move(payload));
    if (!s.ok()) return Fail(s);
    std::printf("shard %d/%d: points %zu..%zu -> %s\n", a.split.shard_index, a.split.shard_count,
                range.begin, range.end, ShardPath(a.split.work_dir, a.split.shard_index).c_str());
    return kOk;
  } else {
    s = sar::RunStudy(f, o, &r);
  }
  if (!s.ok()) return Fail(s);
  if (!a.html.empty()) {
    s = sar::WriteFileAtomic(a.html,
                             sar::StudyReportHtml("Fail-in-place study: " + a.fabric.topology, r));
    if (!s.ok()) return Fail(s);
  }
  if (a.json) {
    Json out;
    out["topology"] = a.fabric.topology;
    out["endpoints"] = r.endpoints;
    out["cluster_sizes"] = r.cluster_sizes;
    Json engines = Json::array();
    for (size_t e = 0; e < r.engines.size(); ++e) {
      Json j = {{"engine", r.engines[e]},
                {"alltoall", FitJson(r.fit_alltoall[e])},
                {"exchange", FitJson(r.fit_exchange[e])}};
      Json cl = Json::array();
      for (const sar::LinearFit& c : r.fit_clustered[e]) cl.push_back(FitJson(c));
      j["clustered"] = std::move(cl);
      if (!r.intact_error[e].empty()) j["intact_error"] = r.intact_error[e];
      // The intact fabric's routing pass: the engine it ran and what it noted.
      if (e < r.intact_engine_used.size()) j["engine_used"] = r.intact_engine_used[e];
      if (e < r.intact_notes.size()) j["notes"] = r.intact_notes[e];
      engines.push_back(std::move(j));
    }
    out["engines"] = std::move(engines);
    Json points = Json::array();
    for (const sar::StudyPoint& pt : r.points) {
      Json p = {{"links", pt.links}, {"switches", pt.switches}, {"seed", pt.seed}};
      if (!pt.drawn) {
        p["error"] = pt.draw_error;
      } else {
        Json cells = Json::array();
        for (const sar::StudyCell& c : pt.cells) {
          Json jc = {{"routed", c.routed},
                     {"disconnected_before", c.disconnected_before},
                     {"alltoall", c.alltoall},
                     {"exchange", c.exchange},
                     {"clustered", c.clustered},
                     {"route_ms", c.route_ms},
                     {"cluster_time_max", c.cluster_time_max},
                     {"cluster_time_median", c.cluster_time_median}};
          if (!c.routed) jc["error"] = c.error;
          cells.push_back(std::move(jc));
        }
        p["engines"] = std::move(cells);
      }
      points.push_back(std::move(p));
    }
    out["points"] = std::move(points);
    std::cout << out.dump(2) << "\n";
    return kOk;
  }
  std::printf("%zu endpoints, %zu draws; throughput in link bandwidths (all-to-all at most %zu)\n",
              r.endpoints, r.points.size(), r.endpoints);
  std::printf("%-10s %7s %10s %8s %5s   %9s %8s %5s", "engine", "routed", "intercept", "slope",
              "R2", "exchange", "slope", "R2");
  for (int c : r.cluster_sizes) std::printf("   c%-3d intercept   slope    R2", c);
  std::printf("\n");
  for (size_t e = 0; e < r.engines.size(); ++e) {
    int routed = 0, drawn = 0;
    for (const sar::StudyPoint& pt : r.points) {
      drawn += pt.drawn;
      routed += pt.drawn && pt.cells[e].routed;
    }
    const sar::LinearFit& x = r.fit_alltoall[e];
    const sar::LinearFit& xx = r.fit_exchange[e];
    std::printf("%-10s %3d/%-3d %10.2f %8.3f %5.2f   %9.2f %8.3f %5.2f", r.engines[e].c_str(),
                routed, drawn, x.intercept, x.slope, x.r2, xx.intercept, xx.slope, xx.r2);
    for (const sar::LinearFit& c : r.fit_clustered[e]) {
      std::printf("   %14.2f %7.3f %5.2f", c.intercept, c.slope, c.r2);
    }
    std::printf("\n");
    if (!r.intact_error[e].empty()) {
      std::printf("  %s: intact fabric not routed: %s\n", r.engines[e].c_str(),
                  r.intact_error[e].c_str());
    }
  }
  // What jobs feel: clusters as jobs, all at once; the slowest cluster's exchange time.
  std::printf(
      "slowest cluster's exchange time (clusters as jobs sending at once, max-min fair; message / "
      "line rate), mean over the routed draws:\n%-10s",
      "engine");
  for (int c : r.cluster_sizes) std::printf("   c%-5d", c);
  std::printf("\n");
  for (size_t e = 0; e < r.engines.size(); ++e) {
    std::printf("%-10s", r.engines[e].c_str());
    for (size_t c = 0; c < r.cluster_sizes.size(); ++c) {
      double sum = 0;
      int n = 0;
      for (const sar::StudyPoint& pt : r.points) {
        if (!pt.drawn || !pt.cells[e].routed || c >= pt.cells[e].cluster_time_max.size()) continue;
        sum += pt.cells[e].cluster_time_max[c];
        ++n;
      }
      std::printf("   %7.1f", n ? sum / n : 0.0);
    }
    std::printf("\n");
  }
  return kOk;
}

}  // namespace

std::function<int()> SetupStudy(CLI::App* c) {
  auto a = std::make_shared<StudyArgs>();
  AddFabricOptions(c, &a->fabric);
  c->add_option("--engines,-e", a->engines,
                "engines, comma separated (default sar,dfsssp,minhop,updn,dmodc)")
      ->delimiter(',');
  c->add_option("--links", a->links,
                "failed switch-to-switch cables per step (default 0,1,2,4,8,16)")
      ->delimiter(',');
  c->add_option("--switches", a->switches,
                "failed switches per step, as many as --links (default all 0)")
      ->delimiter(',');
  c->add_option("--years", a->years,
                "instead of --links/--switches: steps 0..N years at the annual failure rates");
  c->add_option("--link-afr", a->link_afr, "annual failure rate of a cable (default 0.009)");
  c->add_option("--switch-afr", a->switch_afr, "annual failure rate of a switch (default 0.01)");
  c->add_option("--seeds", a->seeds, "failure draws per step (default 3)")
      ->check(CLI::PositiveNumber);
  c->add_option("--seed", a->seed, "first seed (default 1)");
  c->add_option("--clusters", a->clusters, "cluster sizes of the clustered pattern (default 4,16)")
      ->delimiter(',');
  c->add_option("--vls", a->routing.vls, "virtual lanes for layered engines")
      ->check(CLI::Range(1, 15));
  c->add_option("--jobs,-j", a->routing.jobs,
                "job mapping the engines route for (default none: sar routes as dfsssp, noted)");
  c->add_option("--threads", a->routing.threads, "worker threads (0 = all cores)");
  c->add_flag("--json", a->json, "print one JSON object (fits and every point)");
  c->add_option("--html", a->html,
                "write a self-contained HTML report (charts: Vega-Lite, inlined)");
  c->add_option("--progress", a->progress, "progress bar on stderr: auto (on a terminal), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  AddSplitOptions(c, &a->split);
  return [a, c] { return RunStudy(*a, c); };
}

}  // namespace sarcli
