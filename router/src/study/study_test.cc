// The fail-in-place study's pieces against hand-computed cases: max-min fair rates, the
// least-squares line, the disconnected pair count against an independent walk over the degraded
// fabric, and a small study end to end.
#include "sar/study/study.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <regex>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "sar/engines/engine.h"
#include "sar/model/failures.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"
#include "sar/pass/routing_pass.h"
#include "sar/report/report_html.h"
#include "sar/study/shards.h"

namespace sar {
namespace {

TEST(MaxMinFair, HandComputedCases) {
  // One flow alone: the whole link.
  EXPECT_DOUBLE_EQ(MaxMinFairRates({{0}}, 1)[0], 1.0);
  // Two flows on one link: half each.
  const std::vector<double> two = MaxMinFairRates({{0}, {0}}, 1);
  EXPECT_DOUBLE_EQ(two[0], 0.5);
  EXPECT_DOUBLE_EQ(two[1], 0.5);
  // A crosses links 0 and 1, B only 0, C and D only 1: link 1 is the bottleneck at 1/3 for A, C
  // and D; B then takes what A leaves on link 0, 2/3.
  const std::vector<double> r = MaxMinFairRates({{0, 1}, {0}, {1}, {1}}, 2);
  EXPECT_NEAR(r[0], 1.0 / 3, 1e-12);
  EXPECT_NEAR(r[1], 2.0 / 3, 1e-12);
  EXPECT_NEAR(r[2], 1.0 / 3, 1e-12);
  EXPECT_NEAR(r[3], 1.0 / 3, 1e-12);
  // Three levels: link 0 shared by A,B,C,D (1/4 each) except that D also crosses link 1 with E..G
  // (D and E..G at 1/4 too there: 4 flows); link 2 carries only H: 1.
  const std::vector<double> s = MaxMinFairRates({{0}, {0}, {0}, {0, 1}, {1}, {1}, {1}, {2}}, 3);
  for (int f = 0; f < 7; ++f) EXPECT_NEAR(s[f], 0.25, 1e-12) << f;
  EXPECT_NEAR(s[7], 1.0, 1e-12);
  // No path: rate 0.
  EXPECT_EQ(MaxMinFairRates({{}}, 1)[0], 0.0);
}

TEST(FitLine, KnownLines) {
  const LinearFit exact = FitLine({0, 1, 2, 5}, {3, 1, -1, -7});
  EXPECT_NEAR(exact.intercept, 3, 1e-12);
  EXPECT_NEAR(exact.slope, -2, 1e-12);
  EXPECT_NEAR(exact.r2, 1, 1e-12);
  // By hand: means 1.5 and 2.5, Sxy = 4, Sxx = 5, Syy = 5.
  const LinearFit noisy = FitLine({0, 1, 2, 3}, {1, 3, 2, 4});
  EXPECT_NEAR(noisy.slope, 0.8, 1e-12);
  EXPECT_NEAR(noisy.intercept, 1.3, 1e-12);
  EXPECT_NEAR(noisy.r2, 0.64, 1e-12);
  EXPECT_EQ(noisy.n, 4);
}

Fabric Ft2(int m0, int m1, int lmc = 0) {
  Fabric f;
  EXPECT_TRUE(GenerateFatTree2(m0, m1, 1, {}, &f).ok());
  LidOptions lo;
  lo.lmc = lmc;
  EXPECT_TRUE(AssignLids(lo, &f).ok());
  return f;
}

// Issue 37: the study routes through the one routing pass, so an alltoall job gets FORS and no
// mapping gets dfsssp, with the notes RunRoutingPass itself gives on the same fabric.
TEST(Study, RoutesThroughTheRoutingPass) {
  const Fabric f = Ft2(4, 4);
  std::string dir = "/tmp/sar_study_test.XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::string mapping = dir + "/jobs.map";
  {
    std::ofstream out(mapping);
    const auto& h = f.hcas();
    for (size_t i : {0, 1, 5, 9, 14}) out << f.hostname(h[i]) << " 7 alltoall\n";
  }
  for (const std::string& path : {mapping, std::string()}) {
    StudyOptions o;
    o.engines = {"sar"};
    o.links = {0};
    o.switches = {0};
    o.cluster_sizes = {4};
    o.routing.threads = 1;
    o.routing.mapping_path = path;
    StudyResult r;
    ASSERT_TRUE(RunStudy(f, o, &r).ok());
    RoutingRequest request;
    request.fabric = &f;
    request.options = o.routing;
    RoutingResult pass;
    ASSERT_TRUE(RunRoutingPass(request, &pass).ok());
    ASSERT_EQ(r.intact_notes.size(), 1u);
    EXPECT_EQ(r.intact_notes[0], pass.Notes());
    EXPECT_EQ(r.intact_engine_used[0], path.empty() ? "dfsssp" : "sar");
    const std::string want = path.empty() ? "job mapping (none given): routing with plain dfsssp"
                                          : "fors job 7: 5 hosts";
    bool noted = false;
    for (const std::string& n : r.intact_notes[0]) noted = noted || n.rfind(want, 0) == 0;
    EXPECT_TRUE(noted) << want;
    ASSERT_EQ(r.points.size(), 1u);
    EXPECT_TRUE(r.points[0].cells[0].routed) << r.points[0].cells[0].error;
  }
}

TEST(Study, AllToAllOnAnIntactFullBisectionTreeReachesOnePerHost) {
  // dmodk spreads all-to-all evenly: the HCA links are the bottleneck, N - 1 flows each, so
  // every flow gets 1 / (N - 1) and the sum is N.
  const Fabric f = Ft2(4, 4);
  RoutingInput in;
  in.fabric = &f;
  RoutingOutput out;
  ASSERT_TRUE(MakeRoutingEngine("dmodk")->Route(in, &out).ok());
  std::vector<std::vector<int32_t>> paths;
  uint64_t lost = 0;
  TraceFlows(f, out.lfts, {}, AllToAllFlows(16), &paths, &lost);
  EXPECT_EQ(lost, 0u);
  ASSERT_EQ(paths.size(), 16u * 15);
  const std::vector<double> rates = MaxMinFairRates(paths, f.num_port_slots());
  EXPECT_NEAR(std::accumulate(rates.begin(), rates.end(), 0.0), 16.0, 1e-9);
}

TEST(Study, ClustersPartitionTheEndpoints) {
  const std::vector<Flow> flows = ClusteredFlows(10, 4, 7);  // 4 + 4 + 2 endpoints
  EXPECT_EQ(flows.size(), 12u + 12u + 2u);
  std::set<uint32_t> srcs;
  for (const Flow& fl : flows) {
    EXPECT_NE(fl.src, fl.dst);
    srcs.insert(fl.src);
  }
  EXPECT_EQ(srcs.size(), 10u);
}

TEST(Study, DisconnectedPairsMatchAWalkOverTheDegradedFabric) {
  const Fabric f = Ft2(4, 6);
  RoutingInput in;
  in.fabric = &f;
  RoutingOutput out;
  ASSERT_TRUE(MakeRoutingEngine("dfsssp")->Route(in, &out).ok());
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    RandomFailureOptions ro;
    ro.num_links = 3;
    ro.num_switches = 1;
    ro.seed = seed;
    FailureSet fs;
    ASSERT_TRUE(PickRandomFailures(f, ro, &fs).ok());
    Fabric g;
    ASSERT_TRUE(ApplyFailures(f, fs, &g).ok());
    std::vector<bool> failed(f.num_port_slots(), false);
    for (const auto& [name, port] : fs.links) {
      const PortId id = f.port_id(f.FindByName(name), port);
      failed[id] = failed[f.peer_id(id)] = true;
    }
    for (const std::string& name : fs.switches) {
      const NodeId n = f.FindByName(name);
      for (int p = 0; p <= f.num_ports(n); ++p) failed[f.port_id(n, p)] = true;
    }
    const uint64_t got = DisconnectedPairs(f, out.lfts, {}, failed);
    // Independently: follow the intact tables through the degraded fabric by node names; a
    // pair is cut if a switch on its route is gone or the port it leaves by has no cable.
    uint64_t want = 0;
    const std::vector<PortRef> ends = f.Endpoints();
    for (const PortRef& s : ends) {
      for (const PortRef& d : ends) {
        if (s == d) continue;
        NodeId at = f.peer(s).node;
        while (true) {
          const NodeId here = g.FindByName(f.name(at));
          const int port = out.lfts.port(f.switch_index(at), f.base_lid(d));
          if (here == kNoNode || !g.peer({here, port}).valid()) {
            ++want;
            break;
          }
          const PortRef next = f.peer({at, port});
          if (!f.is_switch(next.node)) break;
          at = next.node;
        }
      }
    }
    EXPECT_EQ(got, want) << "seed " << seed;
    EXPECT_GT(want, 0u);
  }
}

// Shards of the (step, draw) list put back in order give the unsplit run's points, and the fits
// over them (FitStudy) its lines.
TEST(Study, ShardsPutTogetherEqualTheUnsplitRun) {
  const Fabric f = Ft2(4, 4);
  StudyOptions o;
  o.engines = {"dfsssp", "minhop"};
  o.links = {0, 1, 3};
  o.switches = {0, 0, 1};
  o.seeds = 3;
  o.cluster_sizes = {4};
  o.routing.threads = 1;
  StudyResult whole;
  ASSERT_TRUE(RunStudy(f, o, &whole).ok());
  ASSERT_EQ(StudyPointCount(o), 7u);
  ASSERT_EQ(whole.points.size(), 7u);
  for (const int shards : {2, 3, 7}) {
    StudyResult merged;
    merged.engines = o.engines;
    merged.cluster_sizes = o.cluster_sizes;
    for (int k = 0; k < shards; ++k) {
      const ShardRange range = ShardOf(StudyPointCount(o), k, shards);
      StudyOptions so = o;
      so.point_begin = range.begin;
      so.point_end = range.end;
      StudyResult part;
      ASSERT_TRUE(RunStudy(f, so, &part).ok());
      ASSERT_EQ(part.points.size(), range.end - range.begin);
      EXPECT_EQ(part.intact_error, whole.intact_error);
      for (StudyPoint& p : part.points) merged.points.push_back(std::move(p));
    }
    FitStudy(&merged);
    ASSERT_EQ(merged.points.size(), whole.points.size());
    for (size_t i = 0; i < whole.points.size(); ++i) {
      const StudyPoint &a = merged.points[i], &b = whole.points[i];
      EXPECT_EQ(a.links, b.links);
      EXPECT_EQ(a.switches, b.switches);
      EXPECT_EQ(a.seed, b.seed);
      EXPECT_EQ(a.drawn, b.drawn);
      ASSERT_EQ(a.cells.size(), b.cells.size());
      for (size_t e = 0; e < a.cells.size(); ++e) {
        EXPECT_EQ(a.cells[e].routed, b.cells[e].routed) << i << " " << e;
        EXPECT_EQ(a.cells[e].disconnected_before, b.cells[e].disconnected_before);
        EXPECT_EQ(a.cells[e].alltoall, b.cells[e].alltoall);
        EXPECT_EQ(a.cells[e].exchange, b.cells[e].exchange);
        EXPECT_EQ(a.cells[e].clustered, b.cells[e].clustered);
        EXPECT_EQ(a.cells[e].cluster_time_max, b.cells[e].cluster_time_max);
      }
    }
    for (size_t e = 0; e < o.engines.size(); ++e) {
      EXPECT_EQ(merged.fit_alltoall[e].slope, whole.fit_alltoall[e].slope);
      EXPECT_EQ(merged.fit_alltoall[e].intercept, whole.fit_alltoall[e].intercept);
      EXPECT_EQ(merged.fit_exchange[e].n, whole.fit_exchange[e].n);
      EXPECT_EQ(merged.fit_clustered[e][0].slope, whole.fit_clustered[e][0].slope);
    }
  }
  // The fits need points at several failure counts: a single shard's are not the whole's.
  StudyOptions one = o;
  one.point_end = 2;
  StudyResult part;
  ASSERT_TRUE(RunStudy(f, one, &part).ok());
  EXPECT_NE(part.fit_alltoall[0].n, whole.fit_alltoall[0].n);
}

TEST(Study, SmallStudyEndToEnd) {
  const Fabric f = Ft2(4, 4);
  StudyOptions o;
  o.engines = {"dfsssp", "dmodk"};
  o.links = {0, 2};
  o.switches = {0, 0};
  o.seeds = 2;
  o.cluster_sizes = {4};
  int calls = 0;
  o.progress = [&](int done, int total) {
    ++calls;
    EXPECT_EQ(total, 3);
    EXPECT_EQ(done, calls);
  };
  StudyResult r;
  ASSERT_TRUE(RunStudy(f, o, &r).ok());
  ASSERT_EQ(r.points.size(), 3u);
  EXPECT_EQ(calls, 3);
  // Intact: nothing disconnected, both route, all-to-all at N.
  for (int e = 0; e < 2; ++e) {
    EXPECT_TRUE(r.points[0].cells[e].routed);
    EXPECT_EQ(r.points[0].cells[e].disconnected_before, 0u);
  }
  EXPECT_NEAR(r.points[0].cells[1].alltoall, 16.0, 1e-9);
  // Exchange: 240 flows, the busiest channels are the HCA links with 15 each (a leaf's 4 x 12
  // remote flows spread 12 per up-link): 16.
  EXPECT_NEAR(r.points[0].cells[1].exchange, 16.0, 1e-9);
  // Degraded: dmodk refuses (it needs an intact PGFT), dfsssp routes; cut cables cut pairs.
  for (int k = 1; k <= 2; ++k) {
    EXPECT_TRUE(r.points[k].cells[0].routed) << r.points[k].cells[0].error;
    EXPECT_FALSE(r.points[k].cells[1].routed);
    EXPECT_GT(r.points[k].cells[0].disconnected_before, 0u);
    EXPECT_LE(r.points[k].cells[0].alltoall, 16.0 + 1e-9);
  }
  EXPECT_EQ(r.fit_alltoall[0].n, 3);
  EXPECT_EQ(r.fit_alltoall[1].n, 1);
  // What jobs feel, clusters as jobs: the slowest cluster's time from the study's own
  // flow-by-flow rates (MaxMinFairRates on the traced clustered flows, every channel 1) on the
  // intact tree, routed again here with dfsssp.
  {
    RoutingInput in;
    in.fabric = &f;
    RoutingOutput out;
    ASSERT_TRUE(MakeRoutingEngine("dfsssp")->Route(in, &out).ok());
    const std::vector<Flow> flows = ClusteredFlows(f.Endpoints().size(), 4, o.seed);
    std::vector<std::vector<int32_t>> paths;
    uint64_t lost = 0;
    TraceFlows(f, out.lfts, out.source_lid_offset, flows, &paths, &lost);
    ASSERT_EQ(lost, 0u);
    const std::vector<double> rates = MaxMinFairRates(paths, f.num_port_slots());
    const auto groups = ClusterGroups(f.Endpoints().size(), 4, o.seed);
    double worst = 0;
    for (const auto& g : groups) {
      double low = 1e300;
      for (size_t i = 0; i < flows.size(); ++i) {
        if (std::find(g.begin(), g.end(), flows[i].src) != g.end()) low = std::min(low, rates[i]);
      }
      worst = std::max(worst, 1 / low);
    }
    ASSERT_EQ(r.points[0].cells[0].cluster_time_max.size(), 1u);
    EXPECT_NEAR(r.points[0].cells[0].cluster_time_max[0], worst, 1e-9 * worst);
    EXPECT_GE(worst, 3.0);  // 4 hosts: 3 flows leave each host link
  }
  const std::string html = StudyReportHtml("t", r);
  // One point per routed draw and chart (all-to-all, exchange, clusters of 4): (3 + 1) * 3, in
  // the charts' point layers; and a layer of fitted lines per chart.
  const std::regex points_layer(R"(\{"data":\{"values":\[([^\]]*)\]\},"mark":\{"type":"point")");
  const std::regex row(R"(\{"x":)");
  long points = 0, layers = 0;
  for (auto m = std::sregex_iterator(html.begin(), html.end(), points_layer);
       m != std::sregex_iterator(); ++m, ++layers) {
    const std::string rows = (*m)[1];
    points +=
        std::distance(std::sregex_iterator(rows.begin(), rows.end(), row), std::sregex_iterator());
  }
  EXPECT_EQ(layers, 3);
  EXPECT_EQ(points, 12);
  EXPECT_NE(html.find("\"mark\":{\"type\":\"line\""), std::string::npos);
  // Mismatched step lists are refused.
  o.switches = {0};
  EXPECT_EQ(RunStudy(f, o, &r).code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace sar
