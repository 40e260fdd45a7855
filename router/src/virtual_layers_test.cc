#include "sar/virtual_layers.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

#include "sar/deadlock.h"
#include "test_fabrics.h"

namespace sar {
namespace {

bool InterSwitch(const Fabric& f, PortId c) {
  const PortRef a = f.port_ref(c), b = f.peer(a);
  return b.valid() && f.is_switch(a.node) && f.is_switch(b.node);
}

// The (source LID, destination LID) pairs of distinct nodes whose route crosses a
// switch-to-switch channel, walked one by one.
std::set<std::pair<Lid, Lid>> CrossingPairs(const Fabric& f, const LftSet& lfts) {
  std::set<std::pair<Lid, Lid>> pairs;
  for (const PortRef& src : f.Endpoints()) {
    for (const PortRef& dst : f.Endpoints()) {
      if (src.node == dst.node) continue;
      for (Lid d = f.base_lid(dst); d < f.base_lid(dst) + (Lid{1} << f.lmc(dst)); ++d) {
        const testfab::NaiveRoute r = testfab::NaiveWalk(f, lfts, src, d);
        bool crosses = false;
        for (PortId c : r.channels) crosses |= InterSwitch(f, c);
        if (!crosses) continue;
        for (Lid s = f.base_lid(src); s < f.base_lid(src) + (Lid{1} << f.lmc(src)); ++s) {
          pairs.insert({s, d});
        }
      }
    }
  }
  return pairs;
}

TEST(VirtualLayers, RingWithMinHopNeedsTwoLayers) {
  const Fabric f = testfab::Ring(5, 2);
  const LftSet lfts = testfab::MinHopLfts(f);
  DeadlockReport single;
  ASSERT_TRUE(CheckDeadlock(f, lfts, nullptr, &single).ok());
  ASSERT_FALSE(single.deadlock_free);  // the premise: one layer is cyclic

  VirtualLayers layers;
  LayerOptions opts;
  opts.max_layers = 1;
  const Status st = AssignVirtualLayers(f, lfts, opts, &layers);
  EXPECT_EQ(st.code(), Status::Code::kFailed);
  EXPECT_NE(st.message().find("virtual layers"), std::string::npos) << st.message();

  opts.max_layers = 8;
  LayerStats stats;
  ASSERT_TRUE(AssignVirtualLayers(f, lfts, opts, &layers, &stats).ok());
  DeadlockReport report;
  ASSERT_TRUE(CheckDeadlock(f, lfts, &layers, &report).ok());
  EXPECT_TRUE(report.deadlock_free);
  EXPECT_GE(stats.layers_needed, 2);
  EXPECT_GE(stats.cycles_broken, 1u);
  EXPECT_EQ(stats.layers_used, 8);  // balancing fills the spare layers
  EXPECT_LE(layers.num_layers(), 8);
}

TEST(VirtualLayers, RandomFabricsBecomeDeadlockFreeAndEveryCrossingPairIsListed) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(seed);
    const Fabric f = testfab::RandomIrregular(seed, 3, 10);
    std::mt19937_64 rng(seed);
    const LftSet lfts = testfab::MinHopLfts(f, &rng);
    for (bool balance : {false, true}) {
      VirtualLayers layers;
      LayerOptions opts;
      opts.max_layers = 15;
      opts.balance = balance;
      LayerStats stats;
      ASSERT_TRUE(AssignVirtualLayers(f, lfts, opts, &layers, &stats).ok());
      DeadlockReport report;
      ASSERT_TRUE(CheckDeadlock(f, lfts, &layers, &report).ok());
      EXPECT_TRUE(report.deadlock_free) << "layer " << report.cyclic_layer;
      EXPECT_LE(layers.num_layers(), stats.layers_used);
      if (!balance) {
        EXPECT_EQ(stats.layers_used, stats.layers_needed);
      }
      const auto pairs = CrossingPairs(f, lfts);
      EXPECT_EQ(layers.size(), pairs.size());
      for (const auto& e : layers.Entries()) EXPECT_TRUE(pairs.count({e.src, e.dst}));
    }
  }
}

// The rows are filled in parallel (LayerOptions::threads); every thread count must give the
// sequential result, entry for entry, with and without the balancing spread.
TEST(VirtualLayers, ThreadCountDoesNotChangeTheLayers) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE(seed);
    const Fabric f = seed % 3 == 0 ? testfab::FatTree2(8, 4, 8, /*lmc=*/static_cast<int>(seed % 3))
                                   : testfab::RandomIrregular(seed, 6, 30);
    std::mt19937_64 rng(seed);
    const LftSet lfts = testfab::MinHopLfts(f, &rng);
    for (bool balance : {false, true}) {
      LayerOptions opts;
      opts.max_layers = 15;
      opts.balance = balance;
      opts.threads = 1;
      VirtualLayers sequential;
      ASSERT_TRUE(AssignVirtualLayers(f, lfts, opts, &sequential).ok());
      ASSERT_GT(sequential.size(), 0u);
      const std::vector<VirtualLayers::Entry> want = sequential.Entries();
      for (int threads : {2, 3, 7}) {
        opts.threads = threads;
        VirtualLayers parallel;
        ASSERT_TRUE(AssignVirtualLayers(f, lfts, opts, &parallel).ok());
        ASSERT_EQ(parallel.size(), sequential.size()) << threads << " threads";
        const std::vector<VirtualLayers::Entry> got = parallel.Entries();
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i) {
          ASSERT_EQ(got[i].src, want[i].src) << i;
          ASSERT_EQ(got[i].dst, want[i].dst) << i;
          ASSERT_EQ(got[i].layer, want[i].layer) << i;
        }
      }
    }
  }
}

TEST(VirtualLayers, FatTreeNeedsOneLayer) {
  const Fabric f = testfab::FatTree2(4, 3, 3, /*lmc=*/1);
  const LftSet lfts = testfab::MinHopLfts(f);
  VirtualLayers layers;
  LayerOptions opts;
  opts.max_layers = 1;
  LayerStats stats;
  ASSERT_TRUE(AssignVirtualLayers(f, lfts, opts, &layers, &stats).ok());
  EXPECT_EQ(stats.layers_needed, 1);
  EXPECT_EQ(stats.cycles_broken, 0u);
  EXPECT_EQ(layers.num_layers(), 1);
  // 4 leaves, 3 hosts each, 2 LIDs each: routes per (leaf, destination LID) on another leaf.
  EXPECT_EQ(stats.routes, 4u * 3 * 3 * 2);
}

TEST(VirtualLayers, LoopingTablesFail) {
  const Fabric f = testfab::Ring(3, 1);
  LftSet lfts = testfab::MinHopLfts(f);
  const Lid lid = f.base_lid(f.Endpoints()[0]);
  // Every switch forwards this LID to its clockwise neighbour: a loop.
  for (int s = 0; s < f.num_switches(); ++s) {
    const NodeId node = f.switches()[s];
    const NodeId next = f.switches()[(s + 1) % f.num_switches()];
    for (int p = 1; p <= f.num_ports(node); ++p) {
      if (f.peer({node, p}).node == next) lfts.set_port(s, lid, static_cast<uint8_t>(p));
    }
  }
  VirtualLayers layers;
  EXPECT_EQ(AssignVirtualLayers(f, lfts, LayerOptions{}, &layers).code(), Status::Code::kFailed);
}

TEST(VirtualLayers, MaxLayersOutOfRangeIsInvalid) {
  const Fabric f = testfab::FatTree2(2, 2, 2);
  const LftSet lfts = testfab::MinHopLfts(f);
  for (int n : {0, 16}) {
    VirtualLayers layers;
    LayerOptions opts;
    opts.max_layers = n;
    EXPECT_EQ(AssignVirtualLayers(f, lfts, opts, &layers).code(), Status::Code::kInvalidArgument);
  }
}

}  // namespace
}  // namespace sar
