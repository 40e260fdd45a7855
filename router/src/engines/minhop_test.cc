#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "engines/balanced_fill.h"
#include "engines/engine_test_util.h"
#include "engines/switch_graph.h"
#include "test_fabrics.h"

namespace sar {
namespace {

using enginetest::BadSwitchRoutes;
using enginetest::Pgft;
using enginetest::RouteOk;
using enginetest::Spec;
using enginetest::Trace;

TEST(MinHop, IntactFatTreesDeliverEveryLidOnShortestPaths) {
  const std::vector<PgftSpec> specs = {
      Spec(2, {4, 4}, {1, 4}, {1, 1}),           // FT(2;4,4)
      Spec(2, {4, 3}, {1, 4}, {1, 2}),           // parallel cables
      Spec(3, {2, 2, 3}, {1, 2, 2}, {1, 2, 1}),  // Dmodc Fig. 1
      Spec(3, {4, 4, 4}, {1, 4, 4}, {1, 1, 1}),  // 4-ary-3-tree
  };
  for (const PgftSpec& spec : specs) {
    for (int lmc = 0; lmc <= 2; ++lmc) {
      SCOPED_TRACE("height " + std::to_string(spec.height) + " lmc " + std::to_string(lmc));
      const Fabric f = Pgft(spec, lmc);
      const RoutingOutput out = RouteOk("minhop", f);
      EXPECT_EQ(out.num_layers, 1);
      EXPECT_EQ(out.layers.size(), 0u);
      const TraceReport r = Trace(f, out.lfts);
      EXPECT_TRUE(r.valid());
      EXPECT_EQ(r.delivered, r.pairs);
      EXPECT_EQ(r.non_min_hop, 0u);
      int longer = 0;
      EXPECT_EQ(BadSwitchRoutes(f, out.lfts, &longer), 0);
      EXPECT_EQ(longer, 0);
    }
  }
}

// Counting the tables directly: on FT(2;M0,M1) a leaf sends the base LIDs of every HCA on
// other leaves up, so its up-ports (parallel cables included) each carry the same number, +-1,
// also with LMC (the base LIDs are what the EFI and most traffic use).
TEST(MinHop, LeafUpPortsCarryEqualShares) {
  for (int parallel : {1, 2})
    for (int lmc : {0, 1, 2}) {
      Fabric f;
      ASSERT_TRUE(GenerateFatTree2(4, 5, parallel, {}, &f).ok());
      LidOptions lo;
      lo.lmc = lmc;
      ASSERT_TRUE(AssignLids(lo, &f).ok());
      const RoutingOutput out = RouteOk("minhop", f);
      for (NodeId leaf : f.switches()) {
        if (f.name(leaf).rfind("leaf", 0) != 0) continue;
        std::map<int, int> per_port;
        for (int p = 1; p <= f.num_ports(leaf); ++p) {
          const PortRef q = f.peer({leaf, p});
          if (q.valid() && f.is_switch(q.node)) per_port[p] = 0;
        }
        ASSERT_EQ(per_port.size(), 4u * parallel);
        for (const PortRef& e : f.Endpoints()) {
          if (f.peer(e).node == leaf) continue;
          ++per_port.at(out.lfts.port(f.switch_index(leaf), f.base_lid(e)));
        }
        int lo = 1 << 30, hi = 0;
        for (const auto& [port, n] : per_port) lo = std::min(lo, n), hi = std::max(hi, n);
        EXPECT_LE(hi - lo, 1) << f.name(leaf) << " parallel " << parallel << " lmc " << lmc;
      }
    }
}

// With LMC, the LIDs of one HCA port leave each remote leaf by different up-ports.
TEST(MinHop, LmcLidsTakeDifferentPorts) {
  for (int lmc = 1; lmc <= 2; ++lmc) {
    Fabric f;
    ASSERT_TRUE(GenerateFatTree2(4, 4, 1, {}, &f).ok());
    LidOptions lo;
    lo.lmc = lmc;
    ASSERT_TRUE(AssignLids(lo, &f).ok());
    const RoutingOutput out = RouteOk("minhop", f);
    for (const PortRef& e : f.Endpoints()) {
      for (NodeId leaf : f.switches()) {
        if (f.name(leaf).rfind("leaf", 0) != 0 || f.peer(e).node == leaf) continue;
        std::set<int> ports;
        for (int i = 0; i < (1 << lmc); ++i) {
          ports.insert(out.lfts.port(f.switch_index(leaf), f.base_lid(e) + i));
        }
        EXPECT_EQ(ports.size(), static_cast<size_t>(1 << lmc)) << f.name(e.node);
      }
    }
  }
}

// OpenSM fills tables destination by destination in its own order, not by LID, so with the
// same fabric and other LIDs every destination keeps its ports (and our tables equal OpenSM's
// for any guid2lid; tests/integration/test_lid_order_opensm.py checks that on the switches).
TEST(MinHop, RoutesDoNotDependOnTheLidAssignment) {
  const std::vector<PgftSpec> specs = {
      Spec(2, {4, 4}, {1, 4}, {1, 1}),
      Spec(2, {4, 3}, {1, 4}, {1, 2}),
      Spec(3, {2, 2, 3}, {1, 2, 2}, {1, 2, 1}),
  };
  for (const PgftSpec& spec : specs) {
    for (int lmc = 0; lmc <= 1; ++lmc) {
      const Fabric f = Pgft(spec, lmc);
      const RoutingOutput a = RouteOk("minhop", f);
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        const Fabric g = enginetest::ShuffleLids(f, seed);
        const RoutingOutput b = RouteOk("minhop", g);
        EXPECT_EQ(enginetest::RouteDifferencesAcrossLids(f, a.lfts, g, b.lfts), 0)
            << "height " << spec.height << " lmc " << lmc << " seed " << seed;
      }
    }
  }
  const int routed = enginetest::ForEachDegradedPgft(11, 3, [](const Fabric& f) {
    const RoutingOutput a = RouteOk("minhop", f);
    const Fabric g = enginetest::ShuffleLids(f, 5);
    EXPECT_EQ(enginetest::RouteDifferencesAcrossLids(f, a.lfts, g, RouteOk("minhop", g).lfts), 0);
  });
  EXPECT_GE(routed, 20);
}

// OpenSM's order (sort_ports_by_switch_load): switches with more HCAs first, equal ones by the
// node GUID's bytes from the least significant one (its switch map's key order on x86), on
// each switch by port; switch LIDs last. LIDs are given in the opposite order.
TEST(MinHop, FillOrderIsOpenSmsSwitchBySwitchOrder) {
  Fabric f;
  const NodeId a = f.AddNode(NodeKind::kSwitch, 8, 0x00ff, "swa", "swa");
  const NodeId b = f.AddNode(NodeKind::kSwitch, 8, 0x0100, "swb", "swb");
  const NodeId c = f.AddNode(NodeKind::kSwitch, 8, 0x0001, "swc", "swc");
  const NodeId ha = testfab::AddHost(&f, 1, "ha");
  const NodeId hb = testfab::AddHost(&f, 1, "hb");
  const NodeId hc1 = testfab::AddHost(&f, 1, "hc1");
  const NodeId hc2 = testfab::AddHost(&f, 1, "hc2");
  ASSERT_TRUE(f.Connect({c, 3}, {hc2, 1}).ok());
  ASSERT_TRUE(f.Connect({c, 1}, {hc1, 1}).ok());
  ASSERT_TRUE(f.Connect({a, 1}, {ha, 1}).ok());
  ASSERT_TRUE(f.Connect({b, 1}, {hb, 1}).ok());
  ASSERT_TRUE(f.Connect({a, 2}, {b, 2}).ok());
  ASSERT_TRUE(f.Connect({b, 3}, {c, 2}).ok());
  Lid lid = 1;
  for (NodeId n : {c, b, a, ha, hb, hc2, hc1}) {
    ASSERT_TRUE(f.SetLid({n, f.is_switch(n) ? 0 : 1}, lid++, 0).ok());
  }
  const internal::SwitchGraph g = internal::BuildSwitchGraph(f);
  std::vector<std::string> got;
  for (int i : internal::OpenSmFillOrder(g)) got.push_back(f.name(g.dests[i].node));
  EXPECT_EQ(got, (std::vector<std::string>{"hc1", "hc2", "hb", "ha", "swc", "swb", "swa"}));
}

TEST(MinHop, RandomDegradedPgftsStayValidAndMinimal) {
  const int routed = enginetest::ForEachDegradedPgft(7, 4, [](const Fabric& f) {
    const RoutingOutput out = RouteOk("minhop", f);
    const TraceReport r = Trace(f, out.lfts);
    EXPECT_TRUE(r.valid()) << (r.examples.empty() ? "" : r.examples[0]);
    EXPECT_EQ(r.non_min_hop, 0u);
    int longer = 0;
    EXPECT_EQ(BadSwitchRoutes(f, out.lfts, &longer), 0);
    EXPECT_EQ(longer, 0);
  });
  EXPECT_GE(routed, 20);  // the failure picker finds most requests possible
}

TEST(MinHop, IrregularFabricsAndThreadCountsAgree) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const Fabric f = testfab::RandomIrregular(seed);
    RoutingInput one;
    one.threads = 1;
    RoutingInput many;
    many.threads = 4;
    const RoutingOutput a = RouteOk("minhop", f, one);
    const RoutingOutput b = RouteOk("minhop", f, many);
    EXPECT_TRUE(a.lfts == b.lfts) << "seed " << seed;
    const TraceReport r = Trace(f, a.lfts);
    EXPECT_TRUE(r.valid()) << "seed " << seed;
    EXPECT_EQ(r.non_min_hop, 0u) << "seed " << seed;
  }
}

// Two fat-trees side by side share no cable.
Fabric TwoIslands() {
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
  return f;
}

TEST(MinHop, DisconnectedFabricFailsNamingAPairUnlessAllowed) {
  const Fabric f = TwoIslands();
  RoutingInput in;
  in.fabric = &f;
  RoutingOutput out;
  const Status s = MakeRoutingEngine("minhop")->Route(in, &out);
  EXPECT_EQ(s.code(), Status::Code::kFailed);
  EXPECT_NE(s.message().find("cannot reach"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("h000"), std::string::npos) << s.message();

  in.allow_disconnected = true;
  ASSERT_TRUE(MakeRoutingEngine("minhop")->Route(in, &out).ok());
  EXPECT_FALSE(out.notes.empty());
  const TraceReport r = Trace(f, out.lfts);
  EXPECT_EQ(r.loops, 0u);
  EXPECT_EQ(r.unreachable, 8u);  // 2 hosts x 2 hosts, both ways
  EXPECT_EQ(r.delivered, 4u);
}

}  // namespace
}  // namespace sar
