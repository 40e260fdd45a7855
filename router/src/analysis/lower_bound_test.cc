#include "sar/analysis/lower_bound.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engines/engine_test_util.h"
#include "engines/sssp_test_util.h"
#include "sar/analysis/metrics.h"
#include "sar/engines/engine.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"
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

// The rule written plainly, as the first version computed it: every item expanded, sorted,
// prefix sums over all of them.
uint64_t PlainMakespan(std::vector<uint64_t> p, int channels) {
  if (channels < 1 || p.empty()) return 0;
  std::sort(p.begin(), p.end(), std::greater<>());
  std::vector<uint64_t> prefix(p.size() + 1, 0);
  for (size_t i = 0; i < p.size(); ++i) prefix[i + 1] = prefix[i] + p[i];
  const uint64_t c = static_cast<uint64_t>(channels);
  uint64_t bound = (prefix.back() + c - 1) / c;
  for (uint64_t k = 0; k * c + 1 <= p.size(); ++k) {
    bound = std::max(bound, prefix[k * c + 1] - prefix[k * c - k]);
  }
  return bound;
}

// Many ties (the run-length walk's case), long runs, single items, 0 and 1 channels, and weights
// near 2^64 whose sums wrap (the walk then steps every k, as the plain rule does).
TEST(MakespanLowerBound, EqualsThePlainRuleOnRandomItems) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 3000; ++trial) {
    const int n = static_cast<int>(rng() % (trial % 10 == 0 ? 400 : 40));
    const uint64_t range = trial % 3 == 0 ? 3 : trial % 3 == 1 ? 20 : 1000;
    const bool huge = trial % 50 == 7;
    std::vector<uint64_t> v(n);
    for (uint64_t& x : v) x = huge ? ~uint64_t{0} - rng() % 3 : rng() % range;
    const int channels = static_cast<int>(rng() % 9);
    std::vector<uint64_t> w = v;
    EXPECT_EQ(MakespanLowerBound(&w, channels), PlainMakespan(v, channels))
        << "trial " << trial << " n " << n << " channels " << channels;
  }
}

// EffectiveEfiLowerBound as the first version computed it, plainly: per destination port the
// routes from every other node's ports in its jobs, summed per source switch; per cut every
// item into its groups' lists.
EffectiveEfiBound PlainBound(const Fabric& f, const std::vector<ResolvedJob>& jobs) {
  EffectiveEfiBound out;
  const int n = f.num_switches();
  auto sw = [&f](const PortRef& e) {
    const PortRef peer = f.peer(e);
    return peer.valid() && f.is_switch(peer.node) ? f.switch_index(peer.node) : -1;
  };
  std::map<PortId, std::map<int, uint64_t>> routes;  // destination port -> source switch -> routes
  for (const ResolvedJob& j : jobs) {
    if (j.num_leaf_switches < 2) continue;
    for (const PortRef& d : j.endpoints) {
      if (sw(d) < 0) continue;
      for (const PortRef& e : j.endpoints) {
        if (sw(e) >= 0 && e.node != d.node) ++routes[f.port_id(d)][sw(e)];
      }
    }
  }
  struct PlainItem {
    int dst, src;
    uint64_t weight;
  };
  std::vector<PlainItem> items;
  for (const auto& [port, from] : routes) {
    const int dst = sw(f.port_ref(port));
    for (const auto& [src, w] : from) {
      if (src != dst) items.push_back({dst, src, w});
    }
  }
  if (n == 0 || items.empty()) return out;
  std::vector<std::pair<int, int>> arcs;
  std::vector<int> level(n, -1), queue;
  for (int s = 0; s < n; ++s) {
    const NodeId node = f.switches()[s];
    for (int p = 1; p <= f.num_ports(node); ++p) {
      const PortRef peer = f.peer({node, p});
      if (!peer.valid()) continue;
      if (f.is_switch(peer.node)) {
        arcs.emplace_back(s, f.switch_index(peer.node));
      } else if (level[s] < 0) {
        level[s] = 0;
        queue.push_back(s);
      }
    }
  }
  for (size_t h = 0; h < queue.size(); ++h) {
    for (const auto& [a, b] : arcs) {
      if (a == queue[h] && level[b] < 0) {
        level[b] = level[a] + 1;
        queue.push_back(b);
      }
    }
  }
  const int top = *std::max_element(level.begin(), level.end());
  for (int cut = 0; cut <= std::max(0, top); ++cut) {
    std::vector<int> parent(n);
    std::iota(parent.begin(), parent.end(), 0);
    auto root = [&parent](int x) {
      while (parent[x] != x) x = parent[x];
      return x;
    };
    for (const auto& [a, b] : arcs) {
      if (level[a] >= 0 && level[a] < cut && level[b] >= 0 && level[b] < cut) {
        parent[root(a)] = root(b);
      }
    }
    int groups = 0;
    for (int s = 0; s < n; ++s) groups += root(s) == s;
    if (cut > 0 && groups == n) continue;
    std::vector<int> channels(n, 0);
    for (const auto& [a, b] : arcs) channels[root(a)] += root(a) != root(b);
    std::vector<std::vector<uint64_t>> lists[2] = {std::vector<std::vector<uint64_t>>(n),
                                                   std::vector<std::vector<uint64_t>>(n)};
    for (const PlainItem& it : items) {
      if (root(it.src) == root(it.dst)) continue;
      lists[0][root(it.src)].push_back(it.weight);
      lists[1][root(it.dst)].push_back(it.weight);
    }
    for (int g = 0; g < n; ++g) {
      for (int dir = 0; dir < 2; ++dir) {
        const std::vector<uint64_t>& v = lists[dir][g];
        if (v.empty()) continue;
        if (cut == 0) {
          const uint64_t c = static_cast<uint64_t>(std::max(1, channels[g]));
          out.leaf_avg = std::max(out.leaf_avg,
                                  (std::accumulate(v.begin(), v.end(), uint64_t{0}) + c - 1) / c);
        }
        const uint64_t b = PlainMakespan(v, channels[g]);
        (cut == 0 ? out.leaf : out.level) = std::max(cut == 0 ? out.leaf : out.level, b);
        if (b > out.value) {
          out.value = b;
          out.where = (cut == 0 ? "" : "level " + std::to_string(cut) + " group of ") +
                      f.name(f.switches()[g]) + (dir == 0 ? " up" : " down");
        }
      }
    }
  }
  return out;
}

// Odd cabling: dual-port HCAs on two switches and on one, an HCA port left uncabled (Fabric
// refuses HCAs cabled to each other), parallel cables, a switch without hosts.
Fabric OddFabric() {
  using testfab::AddHost;
  using testfab::AddSwitch;
  using testfab::Cable;
  Fabric f;
  std::vector<NodeId> sw;
  for (int i = 0; i < 4; ++i) sw.push_back(AddSwitch(&f, 12, testfab::Numbered("sw", i, 2)));
  Cable(&f, sw[0], sw[1]);
  Cable(&f, sw[1], sw[2]);
  Cable(&f, sw[1], sw[2]);
  Cable(&f, sw[2], sw[3]);
  Cable(&f, sw[0], sw[3]);
  int h = 0;
  for (int s : {0, 0, 1, 2, 2, 2}) Cable(&f, AddHost(&f, 1, testfab::Numbered("h", h++, 4)), sw[s]);
  const NodeId two = AddHost(&f, 2, testfab::Numbered("h", h++, 4));  // on sw00 and sw02
  Cable(&f, two, sw[0]);
  Cable(&f, two, sw[2]);
  const NodeId same = AddHost(&f, 2, testfab::Numbered("h", h++, 4));  // twice on sw01
  Cable(&f, same, sw[1]);
  Cable(&f, same, sw[1]);
  Cable(&f, AddHost(&f, 2, testfab::Numbered("h", h++, 4)), sw[3]);  // port 2 uncabled
  return f;
}

// Job sets that reach every case: disjoint random jobs, one job of every endpoint (also with its
// switch count set by hand, as the SAR engine does), jobs on one switch (skipped), a job whose
// count says one switch, ports in two jobs, ports twice in one job, a node's ports together,
// ports not cabled to a switch.
std::vector<std::vector<ResolvedJob>> JobSets(const Fabric& f, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<PortRef> ports;  // every HCA port, cabled or not
  for (NodeId h : f.hcas()) {
    for (int p = 1; p <= f.num_ports(h); ++p) ports.push_back({h, p});
  }
  const std::vector<PortRef> eps = f.Endpoints();
  std::vector<std::vector<ResolvedJob>> sets;
  sets.push_back(RandomJobs(f, seed, 4));
  sets.push_back(RandomJobs(f, seed + 1, 12));
  sets.push_back({MakeJob(f, "all", eps)});
  ResolvedJob forced;
  forced.endpoints = eps;
  forced.num_leaf_switches = 2;
  sets.push_back({forced});
  // Per switch, a job of its endpoints (one switch: skipped); the same job claiming one switch.
  std::vector<ResolvedJob> mixed = RandomJobs(f, seed + 2, 6);
  std::map<NodeId, std::vector<PortRef>> by_switch;
  for (const PortRef& e : eps) by_switch[f.peer(e).node].push_back(e);
  for (const auto& [s, on] : by_switch) mixed.push_back(MakeJob(f, "leaf", on));
  ResolvedJob liar = MakeJob(f, "liar", eps);
  liar.num_leaf_switches = 1;
  mixed.push_back(liar);
  sets.push_back(mixed);
  // Random jobs drawn with replacement from every port: overlaps and repeats.
  for (int round = 0; round < 3; ++round) {
    std::vector<ResolvedJob> jobs;
    const int count = 1 + static_cast<int>(rng() % 5);
    for (int j = 0; j < count; ++j) {
      std::vector<PortRef> members;
      const size_t size = 1 + rng() % (ports.size() + 2);
      for (size_t k = 0; k < size; ++k) members.push_back(ports[rng() % ports.size()]);
      jobs.push_back(MakeJob(f, "r" + std::to_string(j), members));
    }
    if (round == 2) jobs.push_back(MakeJob(f, "all", eps));
    sets.push_back(jobs);
  }
  // Every port of each multi-port HCA, alone and with one other endpoint.
  for (NodeId h : f.hcas()) {
    if (f.num_ports(h) < 2) continue;
    std::vector<PortRef> own;
    for (int p = 1; p <= f.num_ports(h); ++p) own.push_back({h, p});
    sets.push_back({MakeJob(f, "node", own)});
    own.push_back(eps[rng() % eps.size()]);
    sets.push_back({MakeJob(f, "node+1", own)});
  }
  return sets;
}

void ExpectSameBound(const Fabric& f, const std::vector<ResolvedJob>& jobs, int* nonzero,
                     int* levels) {
  const EffectiveEfiBound want = PlainBound(f, jobs);
  const EffectiveEfiBound got = EffectiveEfiLowerBound(f, jobs);
  EXPECT_EQ(got.value, want.value);
  EXPECT_EQ(got.leaf, want.leaf);
  EXPECT_EQ(got.level, want.level);
  EXPECT_EQ(got.leaf_avg, want.leaf_avg);
  EXPECT_EQ(got.where, want.where);
  *nonzero += want.value > 0;
  *levels += want.level > 0;
}

// The fast bound (items merged per switch with counts, run-length makespan) equals the plain one
// in every field, on intact and degraded PGFTs, multi-homed PGFTs, irregular fabrics with
// dual-port HCAs, and odd cabling.
TEST(EffectiveEfiLowerBound, EqualsThePlainComputation) {
  std::vector<std::pair<std::string, Fabric>> fabrics;
  std::mt19937_64 rng(11);
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    const Fabric intact = enginetest::Pgft(enginetest::RandomSpec(&rng), 0);
    Fabric f;
    if (seed % 2 == 0 && enginetest::Degrade(intact, 1 + static_cast<int>(seed % 5),
                                             static_cast<int>(seed % 3 == 0), seed, &f)) {
      fabrics.emplace_back("degraded pgft " + std::to_string(seed), std::move(f));
    } else {
      fabrics.emplace_back("pgft " + std::to_string(seed), intact);
    }
  }
  // Multi-homed hosts (w_1 = 2: every host on two leaves), intact and degraded.
  for (const PgftSpec& spec : {enginetest::Spec(2, {4, 3}, {2, 3}, {1, 1}),
                               enginetest::Spec(3, {3, 2, 3}, {2, 2, 2}, {1, 2, 1})}) {
    const Fabric intact = enginetest::Pgft(spec, 0);
    fabrics.emplace_back("multi-homed pgft", intact);
    Fabric f;
    if (enginetest::Degrade(intact, 2, 0, 3, &f)) {
      fabrics.emplace_back("degraded multi-homed pgft", std::move(f));
    }
  }
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    fabrics.emplace_back("irregular " + std::to_string(seed), testfab::RandomIrregular(seed));
  }
  fabrics.emplace_back("odd", OddFabric());
  int cases = 0, nonzero = 0, levels = 0;
  for (size_t i = 0; i < fabrics.size(); ++i) {
    const auto& [name, f] = fabrics[i];
    const std::vector<std::vector<ResolvedJob>> sets = JobSets(f, 100 + i);
    for (size_t s = 0; s < sets.size(); ++s) {
      SCOPED_TRACE(name + ", job set " + std::to_string(s));
      ExpectSameBound(f, sets[s], &nonzero, &levels);
      ++cases;
    }
  }
  EXPECT_GT(cases, 300);
  EXPECT_GT(nonzero, cases / 2);  // the cases bound something
  EXPECT_GT(levels, 20);          // and reach the level cuts
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
