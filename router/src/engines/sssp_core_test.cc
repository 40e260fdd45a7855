// SsspRouter, the core of dfsssp and sar, on its own: every step routes its LID on shortest
// paths from every switch (checked by walking the tables against an independent BFS), and the
// weights it raises steer later steps the way sssp_core.h documents.
#include "engines/sssp_core.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "engines/engine_test_util.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"
#include "test_fabrics.h"

namespace sar::internal {
namespace {

// Every LID of every destination, in graph order.
std::vector<SsspStep> AllSteps(const SwitchGraph& g) {
  std::vector<SsspStep> steps;
  for (int e = 0; e < static_cast<int>(g.dests.size()); ++e) {
    for (int k = 0; k < g.dests[e].num_lids; ++k) steps.push_back({e, k, false});
  }
  return steps;
}

Fabric Generated(const std::string& spec, int lmc) {
  PgftSpec s;
  EXPECT_TRUE(ParsePgftSpec(spec, &s).ok()) << spec;
  Fabric f;
  EXPECT_TRUE(GeneratePgft(s, {}, &f).ok()) << spec;
  LidOptions lo;
  lo.lmc = lmc;
  EXPECT_TRUE(AssignLids(lo, &f).ok());
  return f;
}

void ExpectShortestEverywhere(const Fabric& f) {
  SsspRouter router(f);
  for (const SsspStep& step : AllSteps(router.graph())) router.Run(step);
  const LftSet lfts = router.TakeLfts();
  ASSERT_TRUE(lfts.CheckFits(f).ok());
  int longer = 0;
  // Walks every switch to every LID and compares the hops with a BFS over the fabric.
  EXPECT_EQ(enginetest::BadSwitchRoutes(f, lfts, &longer), 0);
  EXPECT_EQ(longer, 0);
}

TEST(SsspRouter, GeneratedFatTreesGetShortestPathsToEveryLid) {
  for (const char* spec : {"ft2:6,4", "kary:3,3", "pgft:3;3,2,2;1,2,2;1,2,1"}) {
    for (int lmc : {0, 1}) {
      SCOPED_TRACE(std::string(spec) + " lmc " + std::to_string(lmc));
      ExpectShortestEverywhere(Generated(spec, lmc));
    }
  }
}

TEST(SsspRouter, DegradedTreesGetShortestPathsToEveryLid) {
  const int built =
      enginetest::ForEachDegradedPgft(11, 4, [](const Fabric& f) { ExpectShortestEverywhere(f); });
  EXPECT_GE(built, 20);
}

TEST(SsspRouter, AStepWritesOnlyItsOwnLid) {
  const Fabric f = Generated("ft2:4,2", 1);
  SsspRouter router(f);
  const SwitchGraph& g = router.graph();
  const Destination& d = g.dests[3];
  router.Run({3, 1, false});
  const LftSet lfts = router.TakeLfts();
  const Lid lid = d.base_lid + 1;
  for (int s = 0; s < f.num_switches(); ++s) {
    for (Lid l = 0; l <= lfts.max_lid(); ++l) {
      if (l == lid) {
        EXPECT_NE(lfts.port(s, l), LftSet::kNoRoute) << "switch " << s;
      } else {
        EXPECT_EQ(lfts.port(s, l), LftSet::kNoRoute) << "switch " << s << " lid " << l;
      }
    }
  }
  // The destination's own switch delivers on the HCA's cable.
  EXPECT_EQ(lfts.port(d.sw, lid), d.sw_port);
}

// Two leaves, `spines` spines, one cable each way; leaf00 has `left` hosts, leaf01 `right`.
// testfab cables a leaf's hosts first, then spine 0, 1, ..: both leaves list their spine arcs in
// the same order, so the round-robin tie-break makes the same choice on both.
Fabric TwoLeaves(int spines, int left, int right) {
  Fabric f;
  const NodeId l0 = testfab::AddSwitch(&f, 8, "leaf00");
  const NodeId l1 = testfab::AddSwitch(&f, 8, "leaf01");
  std::vector<NodeId> sp;
  for (int i = 0; i < spines; ++i)
    sp.push_back(testfab::AddSwitch(&f, 4, testfab::Numbered("spine", i, 2)));
  for (int i = 0; i < left; ++i)
    testfab::Cable(&f, testfab::AddHost(&f, 1, "a" + std::to_string(i)), l0);
  for (int i = 0; i < right; ++i)
    testfab::Cable(&f, testfab::AddHost(&f, 1, "b" + std::to_string(i)), l1);
  for (NodeId s : sp) {
    testfab::Cable(&f, l0, s);
    testfab::Cable(&f, l1, s);
  }
  testfab::AssignTestLids(&f, 0);
  return f;
}

int DestOf(const SwitchGraph& g, const Fabric& f, const std::string& host) {
  for (int e = 0; e < g.num_endpoint_dests; ++e) {
    if (f.name(g.dests[e].node) == host) return e;
  }
  ADD_FAILURE() << "no destination " << host;
  return -1;
}

// The spine switch a leaf sends `lid` to.
NodeId NextHop(const Fabric& f, const LftSet& lfts, const std::string& leaf, Lid lid) {
  const NodeId n = f.FindByName(leaf);
  const int port = lfts.port(f.switch_index(n), lid);
  EXPECT_NE(port, LftSet::kNoRoute);
  return port == LftSet::kNoRoute ? kNoNode : f.peer({n, port}).node;
}

TEST(SsspRouter, LaterDestinationsAvoidChannelsEarlierRoutesLoaded) {
  // a0..a2 on leaf00, b0 b1 on leaf01, two spines. Step 0 routes b0: leaf00's 3 sources go up
  // one spine (the tie-break's first, spine00), raising that path's weights by 3. Step 2 routes
  // b1 with the tie-break pointing at spine00 again (key 2 mod 2 = 0): the weights must win.
  const Fabric f = TwoLeaves(2, 3, 2);
  SsspRouter router(f);
  const SwitchGraph& g = router.graph();
  const int b0 = DestOf(g, f, "b0"), b1 = DestOf(g, f, "b1"), a0 = DestOf(g, f, "a0");
  router.Run({b0, 0, false});
  router.Run({a0, 0, false});  // leaf01's single remote source, the other way
  router.Run({b1, 0, false});
  const LftSet lfts = router.TakeLfts();
  const NodeId first = NextHop(f, lfts, "leaf00", g.dests[b0].base_lid);
  const NodeId third = NextHop(f, lfts, "leaf00", g.dests[b1].base_lid);
  EXPECT_EQ(f.name(first), "spine00");
  EXPECT_EQ(f.name(third), "spine01") << "b1 followed the tie-break onto the loaded spine";
}

TEST(SsspRouter, WithoutLoadTheTieBreakPicksTheFirstSpine) {
  // The control for the test above: on a fresh router (no weights) b1 goes where an even
  // tie-break key points, spine00; so spine01 there is the weights' doing.
  const Fabric f = TwoLeaves(2, 3, 2);
  SsspRouter router(f);
  const SwitchGraph& g = router.graph();
  const int b1 = DestOf(g, f, "b1");
  router.Run({b1, 0, false});
  const LftSet lfts = router.TakeLfts();
  EXPECT_EQ(f.name(NextHop(f, lfts, "leaf00", g.dests[b1].base_lid)), "spine00");
}

TEST(SsspRouter, AJobStepRaisesTheDfssspWeightOnlyByIntraJobRoutes) {
  // a0..a2 on leaf00, b0..b2 on leaf01, two spines. Paths from leaf00 to leaf01: P0 via spine00,
  // P1 via spine01. Costs compare the DFSSSP weight w first, then all routes t.
  const Fabric f = TwoLeaves(2, 3, 3);
  SsspRouter router(f);
  const SwitchGraph& g = router.graph();
  const int a0 = DestOf(g, f, "a0"), b0 = DestOf(g, f, "b0"), b1 = DestOf(g, f, "b1"),
            b2 = DestOf(g, f, "b2");
  router.SetJobs({{b0, a0}});
  // Key 0, job step for b0: leaf00 takes P0; of its 3 routes only a0's is intra-job, so P0
  // gets w 1 and t 3 per hop.
  router.Run({b0, 0, true});
  // Key 1, plain: b1 avoids P0 (w 2 against 0) and loads P1 with w 3 and t 3 per hop.
  router.Run({b1, 0, false});
  // Key 2: leaf00's switch LID, loading only the leaf01 -> leaf00 direction.
  router.Run({g.num_endpoint_dests + f.switch_index(f.FindByName("leaf00")), 0, false});
  // Key 3, plain: P0 costs (w 2, t 6), P1 (w 6, t 6). The tie-break (odd key) points at P1 and
  // so would t alone, or a job step that had counted all 3 routes in w: only w says P0.
  router.Run({b2, 0, false});
  const LftSet lfts = router.TakeLfts();
  EXPECT_EQ(f.name(NextHop(f, lfts, "leaf00", g.dests[b0].base_lid)), "spine00");
  EXPECT_EQ(f.name(NextHop(f, lfts, "leaf00", g.dests[b1].base_lid)), "spine01");
  EXPECT_EQ(f.name(NextHop(f, lfts, "leaf00", g.dests[b2].base_lid)), "spine00");
}

TEST(SsspRouter, IntraJobStepsSpreadOneDestinationsLeavesOverSpines) {
  // Three leaves, two spines; a job on c0 (leaf00), x (leaf01) and y (leaf02). In an ordinary
  // step both remote leaves take the tie-break's spine; in a job step the tree grows one source
  // switch at a time and each raises the weights first, so the second leaf takes the other spine.
  Fabric f;
  std::vector<NodeId> leaf, spine;
  for (int i = 0; i < 3; ++i)
    leaf.push_back(testfab::AddSwitch(&f, 6, testfab::Numbered("leaf", i, 2)));
  for (int i = 0; i < 2; ++i)
    spine.push_back(testfab::AddSwitch(&f, 4, testfab::Numbered("spine", i, 2)));
  const char* hosts[] = {"c0", "x", "y"};
  for (int i = 0; i < 3; ++i) testfab::Cable(&f, testfab::AddHost(&f, 1, hosts[i]), leaf[i]);
  for (NodeId l : leaf) {
    for (NodeId s : spine) testfab::Cable(&f, l, s);
  }
  testfab::AssignTestLids(&f, 0);

  for (bool intra_job : {false, true}) {
    SCOPED_TRACE(intra_job ? "job step" : "plain step");
    SsspRouter router(f);
    const SwitchGraph& g = router.graph();
    const int c0 = DestOf(g, f, "c0");
    router.SetJobs({{c0, DestOf(g, f, "x"), DestOf(g, f, "y")}});
    router.Run({c0, 0, intra_job});
    const LftSet lfts = router.TakeLfts();
    const Lid lid = g.dests[c0].base_lid;
    const NodeId from_x = NextHop(f, lfts, "leaf01", lid);
    const NodeId from_y = NextHop(f, lfts, "leaf02", lid);
    if (intra_job) {
      EXPECT_NE(from_x, from_y);
    } else {
      EXPECT_EQ(from_x, from_y);
    }
    // Either way the spine hands the packet down to c0's leaf.
    for (NodeId sp : {from_x, from_y}) {
      EXPECT_EQ(f.peer({sp, lfts.port(f.switch_index(sp), lid)}).node, leaf[0]);
    }
  }
}

// The packed loads (one word w << 32 | t per arc) give way to two words per arc once a half would
// pass 2^32, which needs ~67M routes on one channel: far beyond a test fabric. Forced
// halfway (after some job steps), the two-word loads and the two-word arc choice must give the
// same tables, in plain and in job steps (which compare t before w).
TEST(SsspRouter, WideLoadsRouteAsThePackedOnes) {
  const Fabric intact = Generated("pgft:3;4,6,6;1,6,6;1,1,1", 1);
  Fabric f;
  ASSERT_TRUE(enginetest::Degrade(intact, 9, 1, 3, &f));
  auto route = [&f](bool wide) {
    SsspRouter router(f);
    const SwitchGraph& g = router.graph();
    // Two jobs over every third and every fifth host; their members go first as job steps.
    std::vector<int> a, b;
    for (int e = 0; e < g.num_endpoint_dests; ++e) {
      if (e % 3 == 0) a.push_back(e);
      if (e % 5 == 1) b.push_back(e);
    }
    router.SetJobs({a, b});
    for (int e : a) router.Run({e, 0, true});
    // Switched with loads in place, as a fabric switches halfway through its steps.
    if (wide) router.UseWideLoads();
    for (int e : b) router.Run({e, 0, true});
    for (const SsspStep& step : AllSteps(g)) router.Run(step);
    return router.TakeLfts();
  };
  const LftSet packed = route(false), wide = route(true);
  ASSERT_TRUE(packed.CheckFits(f).ok());
  EXPECT_TRUE(packed == wide) << "the two-word loads chose other arcs";
}

// The job phase keeps its switch costs across the source switches of one destination and
// computes again only those that read a raised arc (SsspRouter::Invalidate). On a degraded tree
// with fragmented jobs (many source switches per destination) the tables must be those of
// computing every cost again for each source, with fewer costs computed.
TEST(SsspRouter, JobPhaseMemoRoutesAsRecomputingPerSource) {
  const Fabric intact = Generated("pgft:3;4,6,6;1,6,6;1,1,1", 1);
  Fabric f;
  ASSERT_TRUE(enginetest::Degrade(intact, 9, 1, 3, &f));
  uint64_t computed[2] = {0, 0};
  auto route = [&f, &computed](bool per_source) {
    SsspRouter router(f);
    if (per_source) router.RecomputeJobCostsPerSource();
    const SwitchGraph& g = router.graph();
    // Three interleaved jobs: every leaf holds members of each, so a destination has many
    // source switches.
    std::vector<std::vector<int>> jobs(3);
    for (int e = 0; e < g.num_endpoint_dests; ++e) jobs[e % 3].push_back(e);
    router.SetJobs(jobs);
    for (const auto& job : jobs) {
      for (int e : job) router.Run({e, 0, true});
    }
    for (const SsspStep& step : AllSteps(g)) router.Run(step);
    computed[per_source] = router.cost_computations();
    return router.TakeLfts();
  };
  const LftSet kept = route(false), per_source = route(true);
  ASSERT_TRUE(kept.CheckFits(f).ok());
  int longer = 0;
  EXPECT_EQ(enginetest::BadSwitchRoutes(f, kept, &longer), 0);
  EXPECT_TRUE(kept == per_source) << "keeping the memo chose other arcs";
  EXPECT_GT(computed[0], 0u);
  EXPECT_LT(computed[0], computed[1]) << "the memo saved nothing";
}

}  // namespace
}  // namespace sar::internal
