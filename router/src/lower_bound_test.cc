#include "sar/lower_bound.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <set>
#include <vector>

#include "engines/engine_test_util.h"
#include "engines/sssp_test_util.h"
#include "sar/engine.h"
#include "sar/generate.h"
#include "sar/lids.h"
#include "sar/metrics.h"
#include "test_fabrics.h"

namespace sar {
namespace {

using sssptest::MakeJob;
using sssptest::Measure;
using sssptest::RandomJobs;

TEST(MakespanLowerBound, AverageLargestAndPigeonhole) {
  std::vector<uint64_t> v = {5, 5, 5};
  EXPECT_EQ(MakespanLowerBound(&v, 2), 10u);  // two of three items share a channel
  v = {3, 3, 2, 2};
  EXPECT_EQ(MakespanLowerBound(&v, 2), 5u);  // the average; also 3 + 2 of the top three
  v = {9, 1, 1};
  EXPECT_EQ(MakespanLowerBound(&v, 4), 9u);  // the largest item
  v = {4, 4, 4, 4, 4, 4, 4};
  EXPECT_EQ(MakespanLowerBound(&v, 3), 12u);  // ceil(7 / 3) items of 4 on one channel
  v = {1};
  EXPECT_EQ(MakespanLowerBound(&v, 0), 0u);
  v.clear();
  EXPECT_EQ(MakespanLowerBound(&v, 3), 0u);
  EXPECT_NEAR(BoundGap(11, 10), 0.1, 1e-12);
  EXPECT_DOUBLE_EQ(BoundGap(0, 0), 0.0);
}

// One job over leaves of a 2-level tree: the per-leaf argument by hand.
TEST(EffectiveEfiLowerBound, PerLeafByHand) {
  const Fabric f = testfab::FatTree2(4, 2, 4);  // 4 leaves x 4 hosts, 2 spines
  const std::vector<PortRef> eps = f.Endpoints();
  // 3 hosts on leaf 0, 1 host on each of leaves 1..3: leaf 0 sends 3 destinations' routes of
  // weight 3 each over 2 up channels (two share one: 6); leaf 1 receives from leaf 0 (3 per
  // destination, one destination) and 1 each from leaves 2, 3: items 3,1,1 on 2 channels -> 3.
  std::vector<ResolvedJob> jobs = {
      MakeJob(f, "a", {eps[0], eps[1], eps[2], eps[4], eps[8], eps[12]})};
  const EffectiveEfiBound b = EffectiveEfiLowerBound(f, jobs);
  EXPECT_EQ(b.value, 6u);
  EXPECT_EQ(b.leaf, 6u);
  EXPECT_EQ(b.leaf_avg, 5u);  // ceil(9 / 2)
  EXPECT_EQ(b.where, "leaf00 up");
  // Jobs on one leaf add nothing.
  EXPECT_EQ(EffectiveEfiLowerBound(f, {MakeJob(f, "b", {eps[0], eps[1]})}).value, 0u);
}

// Brute force on tiny trees: the best of every destination-based routing (every next-hop
// choice of every switch for every job destination that delivers all routes, loops excluded)
// is never below the bound.
uint64_t BruteForceOptimum(const Fabric& f, const std::vector<ResolvedJob>& jobs) {
  const int n = f.num_switches();
  std::vector<std::vector<PortId>> arcs(n);  // per switch: its inter-switch channels
  for (int s = 0; s < n; ++s) {
    const NodeId sw = f.switches()[s];
    for (int p = 1; p <= f.num_ports(sw); ++p) {
      if (f.is_inter_switch(f.port_id(sw, p))) arcs[s].push_back(f.port_id(sw, p));
    }
  }
  auto to = [&](PortId c) { return f.switch_index(f.port_node(f.peer_id(c))); };
  // Per job destination: the effective load vector of every delivering tree.
  std::vector<std::vector<std::vector<uint64_t>>> options;
  for (const ResolvedJob& j : jobs) {
    for (const PortRef& d : j.endpoints) {
      const int root = f.switch_index(f.peer(d).node);
      std::vector<uint64_t> src(n, 0);
      for (const PortRef& e : j.endpoints) {
        if (e.node != d.node) ++src[f.switch_index(f.peer(e).node)];
      }
      std::vector<std::vector<uint64_t>> trees;
      std::vector<int> choice(n, 0);
      std::function<void(int)> rec = [&](int s) {
        if (s == n) {
          std::vector<uint64_t> load(f.num_port_slots(), 0);
          for (int u = 0; u < n; ++u) {
            if (src[u] == 0) continue;
            int v = u, steps = 0;
            while (v != root && steps++ <= n) {
              load[arcs[v][choice[v]]] += src[u];
              v = to(arcs[v][choice[v]]);
            }
            if (v != root) return;  // a loop: not a routing that delivers
          }
          trees.push_back(std::move(load));
          return;
        }
        if (s == root) return rec(s + 1);
        for (choice[s] = 0; choice[s] < static_cast<int>(arcs[s].size()); ++choice[s]) rec(s + 1);
      };
      rec(0);
      options.push_back(std::move(trees));
    }
  }
  uint64_t best = ~uint64_t{0};
  std::vector<uint64_t> load(f.num_port_slots(), 0);
  std::function<void(size_t, uint64_t)> pick = [&](size_t i, uint64_t worst) {
    if (worst >= best) return;
    if (i == options.size()) {
      best = worst;
      return;
    }
    for (const std::vector<uint64_t>& t : options[i]) {
      uint64_t w = worst;
      for (size_t c = 0; c < t.size(); ++c) {
        load[c] += t[c];
        w = std::max(w, load[c]);
      }
      pick(i + 1, w);
      for (size_t c = 0; c < t.size(); ++c) load[c] -= t[c];
    }
  };
  pick(0, 0);
  return best;
}

TEST(EffectiveEfiLowerBound, NeverAboveTheBruteForceOptimum) {
  struct Case {
    int leaves, spines, hosts;
  };
  int tight = 0, cases = 0;
  for (const Case c : {Case{2, 2, 3}, Case{3, 2, 2}, Case{2, 3, 3}}) {
    const Fabric f = testfab::FatTree2(c.leaves, c.spines, c.hosts);
    const std::vector<PortRef> eps = f.Endpoints();
    std::mt19937_64 rng(c.leaves * 10 + c.spines);
    for (int trial = 0; trial < 6; ++trial) {
      // One job of 3 or 4 random hosts (brute force stays small: a few trees per destination).
      std::vector<PortRef> pool = eps;
      std::shuffle(pool.begin(), pool.end(), rng);
      pool.resize(3 + trial % 2);
      const std::vector<ResolvedJob> jobs = {MakeJob(f, "j", pool)};
      if (jobs[0].num_leaf_switches < 2) continue;
      const uint64_t bound = EffectiveEfiLowerBound(f, jobs).value;
      const uint64_t best = BruteForceOptimum(f, jobs);
      SCOPED_TRACE(testing::Message() << c.leaves << "x" << c.spines << " trial " << trial);
      EXPECT_LE(bound, best);
      EXPECT_GT(bound, 0u);
      tight += bound == best;
      ++cases;
    }
  }
  EXPECT_GT(cases, 10);
  EXPECT_GT(tight, cases / 2) << "the bound should be exact on most tiny cases";
}

// No engine beats the bound, on random (degraded) trees, irregular fabrics and random mixes.
TEST(EffectiveEfiLowerBound, NeverAboveAnyEngine) {
  int checked = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    std::mt19937_64 rng(seed);
    Fabric f;
    if (seed % 3 == 0) {
      f = testfab::RandomIrregular(seed, 3, 9);
    } else {
      const Fabric base = enginetest::Pgft(enginetest::RandomSpec(&rng), 0);
      if (seed % 3 == 2 && enginetest::Degrade(base, 2, 0, seed, &f)) {
        ASSERT_TRUE(AssignLids(LidOptions{}, &f).ok());
      } else {
        f = base;
      }
    }
    for (int max_size : {4, 12}) {
      const std::vector<ResolvedJob> jobs = RandomJobs(f, seed * 7 + max_size, max_size);
      const uint64_t bound = EffectiveEfiLowerBound(f, jobs).value;
      for (const std::string& name : RoutingEngineNames()) {
        RoutingInput in;
        in.fabric = &f;
        in.num_vls = 15;
        in.jobs = &jobs;
        RoutingOutput out;
        if (!MakeRoutingEngine(name)->Route(in, &out).ok()) continue;  // e.g. dmodc off trees
        EXPECT_LE(bound, Measure(f, out.lfts, jobs).effective_efi.max)
            << name << " seed " << seed << " max_size " << max_size;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 100);
}

// On a 3-level tree the pods' up-links give a bound of their own.
TEST(EffectiveEfiLowerBound, PerLevelOnThreeLevelTrees) {
  const Fabric f = enginetest::Pgft(enginetest::Spec(3, {4, 4, 4}, {1, 2, 2}, {1, 1, 1}), 0);
  const std::vector<ResolvedJob> jobs = RandomJobs(f, 3, 40);
  const EffectiveEfiBound b = EffectiveEfiLowerBound(f, jobs);
  EXPECT_GT(b.level, 0u);
  EXPECT_EQ(b.value, std::max(b.leaf, b.level));
}

}  // namespace
}  // namespace sar
