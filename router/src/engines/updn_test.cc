#include <gtest/gtest.h>

#include <random>
#include <set>
#include <sstream>

#include "engines/engine_test_util.h"
#include "sar/analysis/analysis.h"
#include "test_fabrics.h"

namespace sar {
namespace {

using enginetest::BadSwitchRoutes;
using enginetest::Pgft;
using enginetest::RouteOk;
using enginetest::Spec;
using enginetest::Trace;

// The root names from the engine's note "updn: N root(s), how: a b c".
std::vector<NodeId> RootsFromNotes(const Fabric& f, const std::vector<std::string>& notes) {
  std::vector<NodeId> roots;
  for (const std::string& note : notes) {
    if (note.rfind("updn: ", 0) != 0) continue;
    std::istringstream words(note.substr(note.rfind(':') + 1));
    std::string w;
    while (words >> w) {
      const NodeId n = f.FindByName(w);
      EXPECT_NE(n, kNoNode) << "root '" << w << "' in note: " << note;
      if (n != kNoNode) roots.push_back(n);
    }
  }
  return roots;
}

// Counts endpoint routes (walked hop by hop) that take an up channel after a down channel.
// Ranks are a BFS from the roots written here; a cable between equal ranks points up towards
// the lower switch index, the rule docs/engines.md states.
uint64_t DownThenUpRoutes(const Fabric& f, const LftSet& lfts, const std::vector<NodeId>& roots) {
  std::vector<int> rank(f.num_nodes(), -1);
  std::vector<NodeId> queue;
  for (NodeId r : roots) rank[r] = 0, queue.push_back(r);
  for (size_t i = 0; i < queue.size(); ++i) {
    for (int p = 1; p <= f.num_ports(queue[i]); ++p) {
      const PortRef q = f.peer({queue[i], p});
      if (q.valid() && f.is_switch(q.node) && rank[q.node] < 0) {
        rank[q.node] = rank[queue[i]] + 1;
        queue.push_back(q.node);
      }
    }
  }
  auto is_up = [&](NodeId from, NodeId to) {
    return rank[to] < rank[from] ||
           (rank[to] == rank[from] && f.switch_index(to) < f.switch_index(from));
  };
  uint64_t bad = 0;
  for (const PortRef& src : f.Endpoints()) {
    for (const PortRef& dst : f.Endpoints()) {
      if (src.node == dst.node) continue;
      const testfab::NaiveRoute r = testfab::NaiveWalk(f, lfts, src, f.base_lid(dst));
      bool went_down = false;
      for (PortId c : r.channels) {
        if (!f.is_inter_switch(c)) continue;
        const NodeId from = f.port_node(c), to = f.port_node(f.peer_id(c));
        if (is_up(from, to)) {
          if (went_down) {
            ++bad;
            break;
          }
        } else {
          went_down = true;
        }
      }
    }
  }
  return bad;
}

bool DeadlockFree(const Fabric& f, const LftSet& lfts) {
  DeadlockReport d;
  // Between CAs: updn also fills the switch-LID entries OpenSM leaves empty for want of a legal
  // route, and those may go down and then up.
  EXPECT_TRUE(CheckDeadlock(f, lfts, nullptr, &d, /*switch_lids=*/false).ok());
  return d.deadlock_free;
}

TEST(UpDown, IntactFatTreesRootAtTheTopAndRouteMinimally) {
  const std::vector<PgftSpec> specs = {
      Spec(2, {4, 4}, {1, 4}, {1, 1}),
      Spec(2, {4, 3}, {1, 4}, {1, 2}),
      Spec(3, {2, 2, 3}, {1, 2, 2}, {1, 2, 1}),
      Spec(3, {4, 4, 4}, {1, 4, 4}, {1, 1, 1}),
  };
  for (const PgftSpec& spec : specs) {
    for (int lmc = 0; lmc <= 2; ++lmc) {
      SCOPED_TRACE("height " + std::to_string(spec.height) + " lmc " + std::to_string(lmc));
      const Fabric f = Pgft(spec, lmc);
      const RoutingOutput out = RouteOk("updn", f);
      EXPECT_EQ(out.num_layers, 1);
      EXPECT_EQ(out.layers.size(), 0u);
      // The generator names the top level "spine*": exactly those are the automatic roots.
      std::set<NodeId> want;
      for (NodeId s : f.switches()) {
        if (f.name(s).rfind("spine", 0) == 0) want.insert(s);
      }
      const std::vector<NodeId> roots = RootsFromNotes(f, out.notes);
      EXPECT_EQ(std::set<NodeId>(roots.begin(), roots.end()), want);
      const TraceReport r = Trace(f, out.lfts);
      EXPECT_TRUE(r.valid());
      EXPECT_EQ(r.non_min_hop, 0u);  // on a fat-tree every shortest path is up*/down*
      EXPECT_EQ(DownThenUpRoutes(f, out.lfts, roots), 0u);
      EXPECT_TRUE(DeadlockFree(f, out.lfts));
      int longer = 0;
      EXPECT_EQ(BadSwitchRoutes(f, out.lfts, &longer), 0);
    }
  }
}

// Like OpenSM's updn (the same table fill as minhop), routes follow the destinations, not
// their LIDs: other LIDs on the same fabric give every destination the same ports.
TEST(UpDown, RoutesDoNotDependOnTheLidAssignment) {
  for (int lmc = 0; lmc <= 1; ++lmc) {
    const Fabric f = enginetest::Pgft(PgftSpec{3, {2, 2, 3}, {1, 2, 2}, {1, 2, 1}}, lmc);
    const RoutingOutput a = RouteOk("updn", f);
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      const Fabric g = enginetest::ShuffleLids(f, seed);
      EXPECT_EQ(enginetest::RouteDifferencesAcrossLids(f, a.lfts, g, RouteOk("updn", g).lfts), 0)
          << "lmc " << lmc << " seed " << seed;
    }
  }
  const int routed = enginetest::ForEachDegradedPgft(13, 3, [](const Fabric& f) {
    const RoutingOutput a = RouteOk("updn", f);
    const Fabric g = enginetest::ShuffleLids(f, 5);
    EXPECT_EQ(enginetest::RouteDifferencesAcrossLids(f, a.lfts, g, RouteOk("updn", g).lfts), 0);
  });
  EXPECT_GE(routed, 20);
}

TEST(UpDown, RandomDegradedPgftsAreLegalAndDeadlockFree) {
  const int routed = enginetest::ForEachDegradedPgft(11, 5, [](const Fabric& f) {
    const RoutingOutput out = RouteOk("updn", f);
    const TraceReport r = Trace(f, out.lfts);
    EXPECT_TRUE(r.valid()) << (r.examples.empty() ? "" : r.examples[0]);
    EXPECT_EQ(DownThenUpRoutes(f, out.lfts, RootsFromNotes(f, out.notes)), 0u);
    EXPECT_TRUE(DeadlockFree(f, out.lfts));
    int longer = 0;
    EXPECT_EQ(BadSwitchRoutes(f, out.lfts, &longer), 0);
  });
  EXPECT_GE(routed, 20);
}

// Irregular fabrics, where MinHop's shortest paths can close a cycle of channel dependencies
// (a ring of 5 switches does), stay deadlock-free under Up*/Down*.
TEST(UpDown, IrregularFabricsAndRingsAreDeadlockFree) {
  const Fabric ring = testfab::Ring(5, 2);
  const LftSet ring_minhop = RouteOk("minhop", ring).lfts;
  EXPECT_FALSE(DeadlockFree(ring, ring_minhop));  // both checks can fail
  EXPECT_GT(DownThenUpRoutes(ring, ring_minhop, {ring.switches()[0]}), 0u);
  const RoutingOutput ring_out = RouteOk("updn", ring);
  EXPECT_TRUE(DeadlockFree(ring, ring_out.lfts));
  EXPECT_TRUE(Trace(ring, ring_out.lfts).valid());
  for (uint64_t seed = 1; seed <= 25; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Fabric f = testfab::RandomIrregular(seed);
    const RoutingOutput out = RouteOk("updn", f);
    EXPECT_TRUE(Trace(f, out.lfts).valid());
    EXPECT_EQ(DownThenUpRoutes(f, out.lfts, RootsFromNotes(f, out.notes)), 0u);
    EXPECT_TRUE(DeadlockFree(f, out.lfts));
  }
}

// Leaf A hangs only off spine00, leaf B only off spine01, leaf C off both: with both spines as
// roots A cannot reach B legally (it would go down through C and up again), so the engine
// must fall back to one root and still route everything.
TEST(UpDown, FallsBackToOneRootWhenTheTopLevelIsSplit) {
  Fabric f;
  const NodeId a = testfab::AddSwitch(&f, 8, "leafA");
  const NodeId b = testfab::AddSwitch(&f, 8, "leafB");
  const NodeId c = testfab::AddSwitch(&f, 8, "leafC");
  const NodeId s0 = testfab::AddSwitch(&f, 8, "spine00");
  const NodeId s1 = testfab::AddSwitch(&f, 8, "spine01");
  int h = 0;
  for (NodeId leaf : {a, b, c}) {
    for (int k = 0; k < 2; ++k) {
      testfab::Cable(&f, testfab::AddHost(&f, 1, testfab::Numbered("h", h++, 4)), leaf);
    }
  }
  testfab::Cable(&f, a, s0);
  testfab::Cable(&f, c, s0);
  testfab::Cable(&f, b, s1);
  testfab::Cable(&f, c, s1);
  testfab::AssignTestLids(&f, 0);

  // Given both spines as roots: A->B has no legal route, which is an error naming the pair.
  RoutingInput in;
  in.fabric = &f;
  in.roots = {s0, s1};
  RoutingOutput out;
  const Status s = MakeRoutingEngine("updn")->Route(in, &out);
  EXPECT_EQ(s.code(), Status::Code::kFailed);
  EXPECT_NE(s.message().find("cannot reach"), std::string::npos) << s.message();

  const RoutingOutput fallback = RouteOk("updn", f);
  const std::vector<NodeId> roots = RootsFromNotes(f, fallback.notes);
  EXPECT_EQ(roots.size(), 1u);
  EXPECT_TRUE(Trace(f, fallback.lfts).valid());
  EXPECT_EQ(DownThenUpRoutes(f, fallback.lfts, roots), 0u);
  EXPECT_TRUE(DeadlockFree(f, fallback.lfts));
}

TEST(UpDown, GivenRootsAreUsedAndCheckedForBeingSwitches) {
  const Fabric f = Pgft(Spec(2, {4, 4}, {1, 4}, {1, 1}), 0);
  const NodeId leaf = f.switches()[0];
  RoutingInput in;
  in.roots = {leaf};
  const RoutingOutput out = RouteOk("updn", f, in);
  EXPECT_EQ(RootsFromNotes(f, out.notes), std::vector<NodeId>{leaf});
  EXPECT_TRUE(Trace(f, out.lfts).valid());
  EXPECT_EQ(DownThenUpRoutes(f, out.lfts, {leaf}), 0u);
  EXPECT_TRUE(DeadlockFree(f, out.lfts));

  in.fabric = &f;
  in.roots = {f.hcas()[0]};
  RoutingOutput bad;
  EXPECT_EQ(MakeRoutingEngine("updn")->Route(in, &bad).code(), Status::Code::kInvalidArgument);
}

TEST(UpDown, DisconnectedFabricFailsUnlessAllowed) {
  Fabric f;
  std::vector<NodeId> sw;
  for (int i = 0; i < 4; ++i)
    sw.push_back(testfab::AddSwitch(&f, 8, testfab::Numbered("sw", i, 2)));
  for (int i = 0; i < 4; ++i) {
    testfab::Cable(&f, testfab::AddHost(&f, 1, testfab::Numbered("h", i, 4)), sw[i]);
  }
  testfab::Cable(&f, sw[0], sw[1]);
  testfab::Cable(&f, sw[2], sw[3]);
  testfab::AssignTestLids(&f, 0);
  RoutingInput in;
  in.fabric = &f;
  RoutingOutput out;
  const Status s = MakeRoutingEngine("updn")->Route(in, &out);
  EXPECT_EQ(s.code(), Status::Code::kFailed);
  EXPECT_NE(s.message().find("cannot reach"), std::string::npos) << s.message();
  in.allow_disconnected = true;
  ASSERT_TRUE(MakeRoutingEngine("updn")->Route(in, &out).ok());
  const TraceReport r = Trace(f, out.lfts);
  EXPECT_EQ(r.loops, 0u);
  EXPECT_EQ(r.delivered, 4u);
  EXPECT_EQ(r.unreachable, 8u);
  EXPECT_TRUE(DeadlockFree(f, out.lfts));
}

}  // namespace
}  // namespace sar
