#include "sar/engines/virtual_layers.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <tuple>

#include "engines/engine_test_util.h"
#include "sar/analysis/analysis.h"
#include "sar/analysis/deadlock.h"
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
      if (src.node == dst.node || f.base_lid(src) == 0 || f.base_lid(dst) == 0) continue;
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
  ASSERT_TRUE(CheckDeadlock(f, lfts, nullptr, &single, false).ok());
  ASSERT_FALSE(single.deadlock_free);  // the premise: one layer is cyclic

  VirtualLayers layers;
  LayerOptions opts;
  opts.switch_lids = false;  // these tests model routes between CAs
  opts.max_layers = 1;
  const Status st = AssignVirtualLayers(f, lfts, opts, &layers);
  EXPECT_EQ(st.code(), Status::Code::kFailed);
  EXPECT_NE(st.message().find("virtual layers"), std::string::npos) << st.message();

  opts.max_layers = 8;
  LayerStats stats;
  ASSERT_TRUE(AssignVirtualLayers(f, lfts, opts, &layers, &stats).ok());
  DeadlockReport report;
  ASSERT_TRUE(CheckDeadlock(f, lfts, &layers, &report, false).ok());
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
      opts.switch_lids = false;  // these tests model routes between CAs
      opts.max_layers = 15;
      opts.balance = balance;
      LayerStats stats;
      ASSERT_TRUE(AssignVirtualLayers(f, lfts, opts, &layers, &stats).ok());
      DeadlockReport report;
      ASSERT_TRUE(CheckDeadlock(f, lfts, &layers, &report, false).ok());
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
      opts.switch_lids = false;  // these tests model routes between CAs
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
  opts.switch_lids = false;  // these tests model routes between CAs
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
    opts.switch_lids = false;  // these tests model routes between CAs
    opts.max_layers = n;
    EXPECT_EQ(AssignVirtualLayers(f, lfts, opts, &layers).code(), Status::Code::kInvalidArgument);
  }
}

// The loop check on a longer route: on a ring of 6 with LMC 1, only the extra LID of one port
// loops, between two switches away from its owner; the routes from the other switches reach the
// loop after a few hops. The failure names that LID; the same tables with the loop undone get
// their layers.
TEST(VirtualLayers, ALoopOnOneExtraLidFarFromItsOwnerFailsNamingIt) {
  Fabric f = testfab::Ring(6, 1);
  testfab::AssignTestLids(&f, 1);
  const LftSet good = testfab::MinHopLfts(f);
  const Lid lid = f.base_lid(f.Endpoints()[0]) + 1;
  ASSERT_EQ(f.peer(f.Endpoints()[0]).node, f.switches()[0]);
  LftSet lfts = good;
  // Switches 2 and 3 (three hops from the owner's switch 0 the long way) send it to each other.
  auto port_to = [&f](int from, int to) {
    const NodeId a = f.switches()[from], b = f.switches()[to];
    for (int p = 1; p <= f.num_ports(a); ++p) {
      if (f.peer({a, p}).node == b) return static_cast<uint8_t>(p);
    }
    return uint8_t{0};
  };
  lfts.set_port(2, lid, port_to(2, 3));
  lfts.set_port(3, lid, port_to(3, 2));
  VirtualLayers layers;
  const Status st = AssignVirtualLayers(f, lfts, LayerOptions{}, &layers);
  EXPECT_EQ(st.code(), Status::Code::kFailed);
  EXPECT_NE(st.message().find("the route to LID " + std::to_string(lid) + " loops"),
            std::string::npos)
      << st.message();
  ASSERT_TRUE(AssignVirtualLayers(f, good, LayerOptions{}, &layers).ok());
  DeadlockReport report;
  ASSERT_TRUE(CheckDeadlock(f, good, &layers, &report, false).ok());
  EXPECT_TRUE(report.deadlock_free);
}

// The ends of the layer range are valid: 1 (a single layer, enough for a fat tree) and 15.
TEST(VirtualLayers, MaxLayersAtTheEndsOfTheRangeIsValid) {
  const Fabric f = testfab::FatTree2(2, 2, 2);
  const LftSet lfts = testfab::MinHopLfts(f);
  for (int n : {1, 15}) {
    VirtualLayers layers;
    LayerOptions opts;
    opts.switch_lids = false;  // these tests model routes between CAs
    opts.max_layers = n;
    LayerStats stats;
    EXPECT_TRUE(AssignVirtualLayers(f, lfts, opts, &layers, &stats).ok()) << n;
    EXPECT_EQ(stats.layers_needed, 1) << n;
    EXPECT_GE(layers.num_layers(), 1) << n;
    EXPECT_LE(layers.num_layers(), n);
  }
}

// The layer-count check at its edge, on fabrics that need 2 or more layers (rings of 5 to 8
// switches and random irregular ones with min-hop tables): exactly the layers needed succeed,
// deadlock-free by CheckDeadlock; one fewer fails naming the count.
TEST(VirtualLayers, ExactlyTheLayersNeededSucceedOneFewerFails) {
  int checked = 0;
  for (uint64_t seed = 0; seed < 40 && checked < 6; ++seed) {
    const Fabric f = seed < 4 ? testfab::Ring(5 + static_cast<int>(seed), 2)
                              : testfab::RandomIrregular(seed, 6, 12);
    std::mt19937_64 rng(seed);
    const LftSet lfts = testfab::MinHopLfts(f, &rng);
    VirtualLayers layers;
    LayerOptions opts;
    opts.switch_lids = false;  // these tests model routes between CAs
    opts.max_layers = 15;
    LayerStats stats;
    ASSERT_TRUE(AssignVirtualLayers(f, lfts, opts, &layers, &stats).ok()) << seed;
    if (stats.layers_needed < 2) continue;
    ++checked;
    opts.max_layers = stats.layers_needed;
    ASSERT_TRUE(AssignVirtualLayers(f, lfts, opts, &layers).ok()) << seed;
    DeadlockReport report;
    ASSERT_TRUE(CheckDeadlock(f, lfts, &layers, &report, false).ok());
    EXPECT_TRUE(report.deadlock_free) << seed;
    EXPECT_LE(layers.num_layers(), stats.layers_needed) << seed;
    opts.max_layers = stats.layers_needed - 1;
    const Status st = AssignVirtualLayers(f, lfts, opts, &layers);
    EXPECT_EQ(st.code(), Status::Code::kFailed) << seed;
    EXPECT_NE(st.message().find("virtual layers"), std::string::npos) << st.message();
  }
  EXPECT_GE(checked, 4);
}

// LIDs with holes: some endpoints get none (LID 0), gaps of unowned LIDs between the others,
// switch LIDs after them with a few left out.
void AssignGappyLids(std::mt19937_64* rng, int lmc, Fabric* f) {
  f->ClearLids();
  const Lid step = Lid{1} << lmc;
  Lid next = step;
  for (const PortRef& e : f->Endpoints()) {
    if ((*rng)() % 8 == 0) continue;
    next += step * static_cast<Lid>((*rng)() % 3);
    ASSERT_TRUE(f->SetLid(e, next, lmc).ok());
    next += step;
  }
  for (NodeId s : f->switches()) {
    if ((*rng)() % 4 == 0) continue;
    ASSERT_TRUE(f->SetLid({s, 0}, next++, 0).ok());
  }
}

// The dense layers the Layerer's decisions stand for, written entry by entry through set(): the
// class of each (source leaf switch, destination LID) and the classes' spreads, with which LIDs
// share a leaf switch or a node taken from the Fabric, not from the factored parts.
VirtualLayers DenseFromDecisions(const Fabric& f, const VirtualLayers::Factored& fac) {
  VirtualLayers dense;
  std::vector<int32_t> slot_of_leaf(f.num_nodes(), -1);
  for (Lid src = 0; src <= f.max_lid(); ++src) {
    const PortRef owner = f.lid_owner(src);
    const PortRef leaf = owner.valid() ? f.peer(owner) : PortRef{};
    if (!owner.valid() || f.is_switch(owner.node) || !leaf.valid() || !f.is_switch(leaf.node)) {
      EXPECT_TRUE(src >= fac.lids || fac.source_slot[src] < 0) << "LID " << src;
      continue;
    }
    EXPECT_LT(src, fac.lids);
    if (src >= fac.lids) continue;
    const int32_t slot = fac.source_slot[src];
    EXPECT_GE(slot, 0) << "LID " << src;
    if (slot < 0) continue;
    if (slot_of_leaf[leaf.node] < 0) slot_of_leaf[leaf.node] = slot;
    EXPECT_EQ(slot_of_leaf[leaf.node], slot) << "LIDs on one leaf switch share one slot";
    for (Lid dst = 0; dst < fac.lids; ++dst) {
      const uint8_t c = fac.layer_class[static_cast<size_t>(slot) * fac.lids + dst];
      if (c == VirtualLayers::kUnlisted) continue;
      const PortRef to = f.lid_owner(dst);
      EXPECT_TRUE(to.valid() && !f.is_switch(to.node)) << "a class for LID " << dst;
      if (!to.valid() || to.node == owner.node) continue;
      dense.set(src, dst, fac.base[c] + static_cast<int>((src + dst) % fac.spread[c]));
    }
  }
  // Every leaf switch has its own slot.
  std::set<int32_t> slots;
  int leaves = 0;
  for (int32_t s : slot_of_leaf) {
    if (s < 0) continue;
    slots.insert(s);
    ++leaves;
  }
  EXPECT_EQ(static_cast<int>(slots.size()), leaves);
  return dense;
}

void ExpectSameLayers(const VirtualLayers& got, const VirtualLayers& want, Lid lids) {
  ASSERT_EQ(got.size(), want.size());
  EXPECT_EQ(got.num_layers(), want.num_layers());
  for (Lid src = 0; src < lids; ++src) {
    for (Lid dst = 0; dst < lids; ++dst) {
      ASSERT_EQ(got.get(src, dst), want.get(src, dst)) << "(" << src << ", " << dst << ")";
    }
  }
  const std::vector<VirtualLayers::Entry> a = got.Entries(), b = want.Entries();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].src, b[i].src) << i;
    ASSERT_EQ(a[i].dst, b[i].dst) << i;
    ASSERT_EQ(a[i].layer, b[i].layer) << i;
  }
  size_t i = 0;
  got.ForEachEntry([&](const VirtualLayers::Entry& e) {
    ASSERT_LT(i, b.size());
    EXPECT_TRUE(e.src == b[i].src && e.dst == b[i].dst && e.layer == b[i].layer) << i;
    ++i;
  });
  EXPECT_EQ(i, b.size());
}

// CopyColumns of random windows, partial ones past the last LID included, equals get() per pair.
void ExpectCopyColumnsReadsAsGet(const VirtualLayers& v, Lid lids, std::mt19937_64* rng) {
  for (int trial = 0; trial < 20; ++trial) {
    const Lid first = static_cast<Lid>((*rng)() % (lids + 2));
    const Lid count = 1 + static_cast<Lid>((*rng)() % 40);
    const Lid num_src = 1 + static_cast<Lid>((*rng)() % (lids + 3));
    std::vector<uint8_t> out(static_cast<size_t>(num_src) * count, 0xEE);
    v.CopyColumns(first, count, num_src, out.data());
    for (Lid src = 0; src < num_src; ++src) {
      for (Lid k = 0; k < count; ++k) {
        ASSERT_EQ(out[static_cast<size_t>(src) * count + k], v.get(src, first + k))
            << "src " << src << " dst " << first + k << " window " << first << "+" << count;
      }
    }
  }
}

// AssignVirtualLayers hands its result over factored (one class per leaf switch and destination
// LID). On random degraded PGFTs (LMC 0..3) and irregular fabrics with dual-port HCAs, LIDs with
// holes, layers spread by balancing: every read of the factored result equals the dense layers
// its decisions stand for, for every pair (beyond the LID range too), and so do both after the
// same mutations.
TEST(VirtualLayers, FactoredResultReadsAsTheDenseLayersOfItsDecisions) {
  std::mt19937_64 rng(16);
  int spread = 0, cases = 0;
  for (uint64_t seed = 1; seed <= 36; ++seed) {
    SCOPED_TRACE(seed);
    Fabric f;
    const int lmc = static_cast<int>(seed % 4);
    if (seed % 3 == 0) {
      f = testfab::RandomIrregular(seed, 3, 12);
    } else {
      const Fabric intact = enginetest::Pgft(enginetest::RandomSpec(&rng), 0);
      if (!enginetest::Degrade(intact, 1 + static_cast<int>(seed % 5), static_cast<int>(seed % 2),
                               seed, &f)) {
        continue;
      }
    }
    AssignGappyLids(&rng, lmc, &f);
    const LftSet lfts = testfab::MinHopLfts(f, &rng);
    LayerOptions opts;
    opts.switch_lids = false;  // these tests model routes between CAs
    opts.max_layers = seed % 4 == 1 ? 15 : 3 + static_cast<int>(seed % 12);
    opts.balance = seed % 5 != 0;
    opts.threads = 1 + static_cast<int>(seed % 3);
    VirtualLayers got;
    LayerStats stats;
    const Status st = AssignVirtualLayers(f, lfts, opts, &got, &stats);
    if (st.code() == Status::Code::kFailed) continue;  // too few layers for this fabric
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_NE(got.factored(), nullptr);
    spread += stats.layers_used > stats.layers_needed;
    ++cases;
    VirtualLayers want = DenseFromDecisions(f, *got.factored());
    ASSERT_EQ(want.factored(), nullptr);
    // The decisions list exactly the crossing pairs of distinct nodes.
    std::set<std::pair<Lid, Lid>> listed;
    for (const auto& e : want.Entries()) listed.insert({e.src, e.dst});
    EXPECT_EQ(listed, CrossingPairs(f, lfts));
    const Lid lids = f.max_lid() + 4;
    ExpectSameLayers(got, want, lids);
    ExpectCopyColumnsReadsAsGet(got, lids, &rng);
    ExpectCopyColumnsReadsAsGet(want, lids, &rng);
    got.default_layer = want.default_layer = 9;
    ExpectSameLayers(got, want, lids);
    ExpectCopyColumnsReadsAsGet(got, lids, &rng);
    ExpectCopyColumnsReadsAsGet(want, lids, &rng);

    // Mutations expand the factored form first.
    VirtualLayers g2 = got, w2 = want;
    const Lid a = static_cast<Lid>(rng() % lids), b = static_cast<Lid>(rng() % lids);
    g2.set(a, b, 14);
    w2.set(a, b, 14);
    EXPECT_EQ(g2.factored(), nullptr);
    ExpectSameLayers(g2, w2, lids);
    VirtualLayers g3 = got, w3 = want;
    std::vector<uint8_t> row(b + 1, VirtualLayers::kUnlisted);
    row[b] = 3;
    g3.SetRow(a, row);
    w3.SetRow(a, row);
    ExpectSameLayers(g3, w3, lids);
  }
  EXPECT_GE(cases, 24);
  EXPECT_GE(spread, 10);  // balancing spread layers in most fabrics
}

// The layerer counts routes per dependency only when the dependencies its walk marked close a
// cycle; an acyclic first layer is kept as it is. On random degraded PGFTs (LMC 0..3) and
// irregular fabrics, that decision must agree with an independent CDG check of the unlayered
// routes: one layer and nothing broken exactly when the single-layer routing is deadlock-free.
// The layered result must be deadlock-free too, read as CheckDeadlock reads it: the endpoints
// these gappy LIDs leave without a LID send in the default layer, so their leaves' routes must
// not leave a cycle there (seeds 11 and 33 did, before the layerer pinned those routes).
// Whether the routes of the endpoints without a LID close a cycle on their own: every source
// with a LID is put in layer 1, so layer 0 holds just the routes no layering can move.
bool LidlessRoutesAreCyclic(const Fabric& f, const LftSet& lfts) {
  VirtualLayers layers;
  for (const PortRef& s : f.Endpoints()) {
    const Lid src = f.base_lid(s);
    if (src == 0) continue;
    for (Lid k = 0; k < (Lid{1} << f.lmc(s)); ++k) {
      for (const PortRef& d : f.Endpoints()) {
        const Lid dst = f.base_lid(d);
        if (dst == 0) continue;
        for (Lid j = 0; j < (Lid{1} << f.lmc(d)); ++j) layers.set(src + k, dst + j, 1);
      }
    }
  }
  DeadlockReport report;
  EXPECT_TRUE(CheckDeadlock(f, lfts, &layers, &report, false).ok());
  return !report.deadlock_free && report.cyclic_layer == 0;
}

TEST(VirtualLayers, FirstLayerIsCountedExactlyWhenItsDependenciesHaveACycle) {
  std::mt19937_64 rng(61);
  int acyclic = 0, cyclic = 0, unbreakable = 0;
  for (uint64_t seed = 1; seed <= 72; ++seed) {
    SCOPED_TRACE(seed);
    Fabric f;
    const int lmc = static_cast<int>(seed % 4);
    if (seed % 4 == 0) {
      f = testfab::RandomIrregular(seed, 3, 12);
    } else {
      const Fabric intact = enginetest::Pgft(enginetest::RandomSpec(&rng), 0);
      if (!enginetest::Degrade(intact, static_cast<int>(seed % 6), static_cast<int>(seed % 2), seed,
                               &f)) {
        continue;
      }
    }
    AssignGappyLids(&rng, lmc, &f);
    const LftSet lfts = testfab::MinHopLfts(f, &rng);
    DeadlockReport single;
    ASSERT_TRUE(CheckDeadlock(f, lfts, nullptr, &single, false).ok());
    LayerOptions opts;
    opts.switch_lids = false;  // these tests model routes between CAs
    opts.max_layers = 15;
    opts.threads = 1 + static_cast<int>(seed % 3);
    VirtualLayers layers;
    LayerStats stats;
    const Status st = AssignVirtualLayers(f, lfts, opts, &layers, &stats);
    // It may refuse only when the routes no layer can move are cyclic by themselves.
    EXPECT_EQ(st.ok(), !LidlessRoutesAreCyclic(f, lfts)) << st.ToString();
    if (!st.ok()) {
      EXPECT_NE(st.message().find("without a LID"), std::string::npos) << st.ToString();
      ++unbreakable;
      continue;
    }
    EXPECT_EQ(stats.layers_needed == 1, single.deadlock_free);
    EXPECT_EQ(stats.cycles_broken == 0, single.deadlock_free);
    DeadlockReport layered;
    ASSERT_TRUE(CheckDeadlock(f, lfts, &layers, &layered, false).ok());
    EXPECT_TRUE(layered.deadlock_free) << "layer " << layered.cyclic_layer;
    (single.deadlock_free ? acyclic : cyclic) += 1;
  }
  EXPECT_GE(acyclic, 8);
  EXPECT_GE(cyclic, 4) << unbreakable;
  EXPECT_LE(unbreakable, 4);
}

// Switch LIDs on 3-level fat-trees with random min-hop tables: the valleys of switch-to-switch
// routes make hundreds of cycles. Where breaking them one at a time needs more layers than the
// fabric has, up*/down* routes stay in layer 0 and the rest are layered above them; whatever
// layers come out must be deadlock-free as CheckDeadlock reads them, switch LIDs counted, and
// a refusal must name both tries.
TEST(VirtualLayers, UpDownRoutesFirstWhereCycleByCycleNeedsTooMany) {
  int rescued = 0;
  for (const PgftSpec& spec : {enginetest::Spec(3, {8, 4, 4}, {1, 4, 4}, {1, 1, 1}),
                               enginetest::Spec(3, {8, 8, 4}, {1, 8, 4}, {1, 1, 1})}) {
    const Fabric f = enginetest::Pgft(spec, 0);
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      std::mt19937_64 rng(seed);
      const LftSet lfts = testfab::MinHopLfts(f, &rng);
      LayerOptions opts;
      opts.max_layers = 15;
      LayerStats stats;
      VirtualLayers layers;
      ASSERT_TRUE(AssignVirtualLayers(f, lfts, opts, &layers, &stats).ok());
      ASSERT_FALSE(stats.up_down_first);  // 15 are enough cycle by cycle
      for (int max = stats.layers_needed - 1; max >= 2; --max) {
        opts.max_layers = max;
        LayerStats s2;
        const Status st = AssignVirtualLayers(f, lfts, opts, &layers, &s2);
        if (!st.ok()) {
          EXPECT_NE(st.message().find("also with up*/down* routes kept in layer 0"),
                    std::string::npos)
              << st.message();
          break;
        }
        EXPECT_TRUE(s2.up_down_first) << max;
        EXPECT_LE(s2.layers_used, max);
        DeadlockReport report;
        ASSERT_TRUE(CheckDeadlock(f, lfts, &layers, &report, true).ok());
        EXPECT_TRUE(report.deadlock_free) << "max_layers " << max << " seed " << seed;
        ++rescued;
      }
    }
  }
  EXPECT_GT(rescued, 0);  // some case needed the second way and got it
}

// Route shapes under the order the fallback uses, computed here on their own: switches ranked by
// hops from the switches that carry an HCA, ties by switch index; a channel is up when it enters
// a later switch. 0: no down-up turn (up*/down*); 1: a down-up turn but no up-down one
// (down*/up*); 2: both, an up-down one first; 3: both, a down-up one first. -1: the route
// crosses no switch-to-switch channel (unlisted).
class RouteShapes {
 public:
  explicit RouteShapes(const Fabric& f) : f_(f), rank_(f.num_switches(), -1) {
    std::vector<int> queue;
    for (const PortRef& e : f.Endpoints()) {
      const PortRef peer = f.peer(e);
      if (!peer.valid() || !f.is_switch(peer.node)) continue;
      const int s = f.switch_index(peer.node);
      if (rank_[s] < 0) {
        rank_[s] = 0;
        queue.push_back(s);
      }
    }
    for (size_t i = 0; i < queue.size(); ++i) {
      const NodeId u = f.switches()[queue[i]];
      for (int p = 1; p <= f.num_ports(u); ++p) {
        const PortRef q = f.peer({u, p});
        if (!q.valid() || !f.is_switch(q.node)) continue;
        const int t = f.switch_index(q.node);
        if (rank_[t] < 0) {
          rank_[t] = rank_[queue[i]] + 1;
          queue.push_back(t);
        }
      }
    }
    for (int& r : rank_) {
      if (r < 0) r = f.num_switches();
    }
  }
  int Shape(const LftSet& lfts, PortRef src, Lid dst) const {
    const testfab::NaiveRoute r = testfab::NaiveWalk(f_, lfts, src, dst);
    std::string turns;  // 'v' down-up, 'p' up-down, in route order
    int last = -1;
    for (PortId c : r.channels) {
      if (!InterSwitch(f_, c)) continue;
      const int a = f_.switch_index(f_.port_ref(c).node);
      const int b = f_.switch_index(f_.peer(f_.port_ref(c)).node);
      const int up = rank_[b] > rank_[a] || (rank_[b] == rank_[a] && b > a);
      if (last >= 0 && last != up) turns += up ? 'v' : 'p';
      last = up;
    }
    if (last < 0) return -1;
    const bool valley = turns.find('v') != std::string::npos;
    const bool peak = turns.find('p') != std::string::npos;
    return !valley ? 0 : !peak ? 1 : turns[0] == 'p' ? 2 : 3;
  }

 private:
  const Fabric& f_;
  std::vector<int> rank_;
};

// Every terminal with a LID: endpoints and switch port 0s (switch LIDs).
std::vector<PortRef> Terminals(const Fabric& f) {
  std::vector<PortRef> t;
  for (const PortRef& e : f.Endpoints()) {
    if (f.base_lid(e) != 0) t.push_back(e);
  }
  for (NodeId s : f.switches()) {
    if (f.base_lid({s, 0}) != 0) t.push_back({s, 0});
  }
  return t;
}

// The fallback's split by route shape on random degraded PGFTs with switch LIDs and random
// min-hop tables. Independently of the layerer: giving every route the layer of its shape leaves
// layers 0 and 1 acyclic on every fabric (the argument the split rests on), and all four on an
// intact 3-level tree. Of the layerer (the split forced, no balancing): the up*/down* and
// down*/up* routes get layers 0 and 1 (with such of the others as fit there), no cycle is cut
// on intact trees, and the result is deadlock-free as CheckDeadlock reads it.
TEST(VirtualLayers, ShapeSplitKeepsUpDownAndValleyLayersAcyclicOnDegradedFabrics) {
  int fabrics = 0, shapes_seen[4] = {0, 0, 0, 0};
  auto check = [&](const Fabric& f, bool intact) {
    std::mt19937_64 rng(f.num_switches() * 7919 + f.max_lid());
    const LftSet lfts = testfab::MinHopLfts(f, &rng);
    const RouteShapes shapes(f);
    const std::vector<PortRef> terminals = Terminals(f);
    VirtualLayers by_shape;
    std::vector<std::tuple<Lid, Lid, int>> routes;  // (src LID, dst LID, shape)
    for (const PortRef& src : terminals) {
      for (const PortRef& dst : terminals) {
        if (src.node == dst.node) continue;
        for (Lid d = f.base_lid(dst); d < f.base_lid(dst) + (Lid{1} << f.lmc(dst)); ++d) {
          const int shape = shapes.Shape(lfts, src, d);
          if (shape < 0) continue;
          for (Lid s = f.base_lid(src); s < f.base_lid(src) + (Lid{1} << f.lmc(src)); ++s) {
            by_shape.set(s, d, shape);
            routes.emplace_back(s, d, shape);
          }
        }
      }
    }
    DeadlockReport shaped;
    ASSERT_TRUE(CheckDeadlock(f, lfts, &by_shape, &shaped, true).ok());
    EXPECT_TRUE(shaped.deadlock_free || shaped.cyclic_layer >= 2) << shaped.cyclic_layer;
    EXPECT_TRUE(!intact || shaped.deadlock_free) << shaped.cyclic_layer;

    LayerOptions opts;
    opts.max_layers = 15;
    opts.balance = false;
    opts.split_first = true;
    opts.threads = 1 + static_cast<int>(f.num_switches() % 2);
    VirtualLayers layers;
    LayerStats stats;
    ASSERT_TRUE(AssignVirtualLayers(f, lfts, opts, &layers, &stats).ok());
    DeadlockReport single;
    ASSERT_TRUE(CheckDeadlock(f, lfts, nullptr, &single, true).ok());
    EXPECT_EQ(stats.up_down_first, !single.deadlock_free);
    if (single.deadlock_free) return;  // one layer: nothing split
    ++fabrics;
    for (const auto& [s, d, shape] : routes) {
      ++shapes_seen[shape];
      // up*/down* routes in layer 0, down*/up* ones in layer 1; the others wherever they fit.
      if (shape < 2) {
        ASSERT_EQ(layers.get(s, d), shape) << "route " << s << " -> " << d;
      }
    }
    EXPECT_TRUE(!intact || stats.cycles_broken == 0) << stats.cycles_broken;
    DeadlockReport layered;
    ASSERT_TRUE(CheckDeadlock(f, lfts, &layers, &layered, true).ok());
    EXPECT_TRUE(layered.deadlock_free) << "layer " << layered.cyclic_layer;
  };
  const int built =
      enginetest::ForEachDegradedPgft(36, 6, [&](const Fabric& f) { check(f, false); });
  EXPECT_GE(built, 15);
  // Larger 3-level trees, intact and with failed cables and a failed switch.
  for (const PgftSpec& spec : {enginetest::Spec(3, {8, 4, 4}, {1, 4, 4}, {1, 1, 1}),
                               enginetest::Spec(3, {4, 4, 6}, {1, 4, 2}, {1, 1, 2})}) {
    const Fabric intact = enginetest::Pgft(spec, 0);
    check(intact, true);
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE("seed " + std::to_string(seed));
      Fabric f;
      if (enginetest::Degrade(intact, 2 * static_cast<int>(seed), seed == 3 ? 1 : 0, seed, &f)) {
        check(f, false);
      }
    }
  }
  EXPECT_GE(fabrics, 16);  // switch LIDs make most of them cyclic in one layer
  for (int k = 0; k < 4; ++k) EXPECT_GT(shapes_seen[k], 0) << "shape " << k;
}

// Where cycle by cycle runs out of layers on an intact 3-level tree with switch LIDs, the split by
// shape needs no cut at all: four layers (up*/down*, down*/up*, and the routes with both turns
// placed where their dependencies stay acyclic) make it deadlock-free. With all routes with a
// down-up turn layered cycle by cycle above layer 0 (the split before) four were not enough.
TEST(VirtualLayers, ShapeSplitRoutesIntactThreeLevelTreesInFourLayers) {
  int routed = 0;
  for (const PgftSpec& spec : {enginetest::Spec(3, {8, 4, 4}, {1, 4, 4}, {1, 1, 1}),
                               enginetest::Spec(3, {8, 8, 4}, {1, 8, 4}, {1, 1, 1})}) {
    const Fabric f = enginetest::Pgft(spec, 0);
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE(seed);
      std::mt19937_64 rng(seed);
      const LftSet lfts = testfab::MinHopLfts(f, &rng);
      LayerOptions opts;
      opts.max_layers = 4;
      LayerStats stats;
      VirtualLayers layers;
      const Status st = AssignVirtualLayers(f, lfts, opts, &layers, &stats);
      ASSERT_TRUE(st.ok()) << st.message();
      DeadlockReport report;
      ASSERT_TRUE(CheckDeadlock(f, lfts, &layers, &report, true).ok());
      EXPECT_TRUE(report.deadlock_free) << "layer " << report.cyclic_layer;
      EXPECT_LE(layers.num_layers(), 4);
      if (!stats.up_down_first) continue;  // cycle by cycle was enough
      EXPECT_EQ(stats.cycles_broken, 0u);
      EXPECT_EQ(stats.layers_needed, 4);
      ++routed;
    }
  }
  EXPECT_GT(routed, 0);  // some case needed the split
}

// The split with endpoints without a LID (their routes pinned in layer 0): it refuses only where
// the pinned routes are cyclic by themselves, and what it returns is deadlock-free as
// CheckDeadlock reads it (lidless sources in the default layer).
TEST(VirtualLayers, ShapeSplitKeepsPinnedRoutesInLayerZero) {
  std::mt19937_64 rng(67);
  int routed = 0;
  for (uint64_t seed = 1; seed <= 48; ++seed) {
    SCOPED_TRACE(seed);
    Fabric f;
    if (seed % 2 == 0) {
      f = testfab::RandomIrregular(seed, 3, 12);
    } else {
      const Fabric intact = enginetest::Pgft(enginetest::RandomSpec(&rng), 0);
      if (!enginetest::Degrade(intact, static_cast<int>(seed % 5), 1, seed, &f)) continue;
    }
    AssignGappyLids(&rng, static_cast<int>(seed % 3), &f);
    const LftSet lfts = testfab::MinHopLfts(f, &rng);
    LayerOptions opts;
    opts.switch_lids = false;  // LidlessRoutesAreCyclic models routes between CAs
    opts.max_layers = 15;
    opts.split_first = true;
    VirtualLayers layers;
    LayerStats stats;
    const Status st = AssignVirtualLayers(f, lfts, opts, &layers, &stats);
    EXPECT_EQ(st.ok(), !LidlessRoutesAreCyclic(f, lfts)) << st.ToString();
    if (!st.ok()) continue;
    DeadlockReport layered;
    ASSERT_TRUE(CheckDeadlock(f, lfts, &layers, &layered, false).ok());
    EXPECT_TRUE(layered.deadlock_free) << "layer " << layered.cyclic_layer;
    routed += stats.up_down_first;
  }
  EXPECT_GE(routed, 4);
}

}  // namespace
}  // namespace sar
