#include "sar/analysis/deadlock.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <utility>

#include "engines/engine_test_util.h"
#include "sar/analysis/analysis.h"
#include "sar/engines/virtual_layers.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"
#include "sar/pass/routing_pass.h"
#include "test_fabrics.h"

namespace sar {
namespace {

using Edge = std::pair<PortId, PortId>;
using Cdg = std::map<int, std::set<Edge>>;  // layer -> dependencies

bool InterSwitch(const Fabric& f, PortId c) {
  const PortRef a = f.port_ref(c), b = f.peer(a);
  return b.valid() && f.is_switch(a.node) && f.is_switch(b.node);
}

// The route terminals: endpoints and, with switch_lids, every switch's port 0 with a LID.
std::vector<PortRef> Terminals(const Fabric& f, bool switch_lids) {
  std::vector<PortRef> t = f.Endpoints();
  for (NodeId s : f.switches()) {
    if (switch_lids && f.base_lid({s, 0}) != 0) t.push_back({s, 0});
  }
  return t;
}

// Every route between terminals (all LIDs), walked hop by hop; a looping route also gets the
// dependency that closes its loop.
Cdg NaiveCdg(const Fabric& f, const LftSet& lfts, const VirtualLayers* layers,
             bool switch_lids = true) {
  Cdg cdg;
  const std::vector<PortRef> endpoints = Terminals(f, switch_lids);
  for (const PortRef& src : endpoints) {
    for (const PortRef& dst : endpoints) {
      if (src.node == dst.node) continue;
      for (Lid d = f.base_lid(dst); d < f.base_lid(dst) + (Lid{1} << f.lmc(dst)); ++d) {
        testfab::NaiveRoute route = testfab::NaiveWalk(f, lfts, src, d);
        if (route.fate == RouteFate::kLoop) {
          const NodeId again = f.peer(f.port_ref(route.channels.back())).node;
          route.channels.push_back(f.port_id(again, lfts.port(f.switch_index(again), d)));
        }
        for (Lid s = f.base_lid(src); s < f.base_lid(src) + (Lid{1} << f.lmc(src)); ++s) {
          const int layer = layers ? layers->get(s, d) : 0;
          for (size_t i = 0; i + 1 < route.channels.size(); ++i) {
            const PortId a = route.channels[i], b = route.channels[i + 1];
            if (InterSwitch(f, a) && InterSwitch(f, b)) cdg[layer].insert({a, b});
          }
        }
      }
    }
  }
  return cdg;
}

// Kahn's algorithm: a graph is acyclic iff repeatedly removing sources removes every node.
bool Acyclic(const std::set<Edge>& edges) {
  std::map<PortId, int> indegree;
  std::map<PortId, std::vector<PortId>> succ;
  for (const auto& [a, b] : edges) {
    indegree[a];
    ++indegree[b];
    succ[a].push_back(b);
  }
  std::vector<PortId> ready;
  for (const auto& [v, d] : indegree) {
    if (d == 0) ready.push_back(v);
  }
  size_t removed = 0;
  while (!ready.empty()) {
    const PortId v = ready.back();
    ready.pop_back();
    ++removed;
    for (PortId u : succ[v]) {
      if (--indegree[u] == 0) ready.push_back(u);
    }
  }
  return removed == indegree.size();
}

// The reported cycle must consist of real dependencies of its layer, closing on itself.
void ExpectRealCycle(const DeadlockReport& r, const Cdg& cdg) {
  ASSERT_FALSE(r.cycle.empty());
  const std::set<Edge>& edges = cdg.at(r.cyclic_layer);
  for (size_t i = 0; i < r.cycle.size(); ++i) {
    const Edge e{r.cycle[i], r.cycle[(i + 1) % r.cycle.size()]};
    EXPECT_TRUE(edges.count(e)) << "not a dependency: " << e.first << " -> " << e.second;
  }
  EXPECT_EQ(std::set<PortId>(r.cycle.begin(), r.cycle.end()).size(), r.cycle.size());
}

// The cycle the check's depth-first search meets first in `edges`: roots are the inter-switch
// channels in port-slot order, each channel's successors in port order (the next switch's port
// slots are in port order). Empty if acyclic. Written against the set of edges only.
std::vector<PortId> FirstCycle(const Fabric& f, const std::set<Edge>& edges) {
  std::map<PortId, std::vector<PortId>> succ;
  for (const auto& [a, b] : edges) succ[a].push_back(b);  // sorted: edges are
  std::map<PortId, int> color;                            // absent = white, 1 gray, 2 black
  for (PortId root = 0; root < f.num_port_slots(); ++root) {
    if (!InterSwitch(f, root) || color.count(root)) continue;
    std::vector<std::pair<PortId, size_t>> stack{{root, 0}};
    color[root] = 1;
    while (!stack.empty()) {
      auto& [v, next] = stack.back();
      const std::vector<PortId>& out = succ[v];
      if (next == out.size()) {
        color[v] = 2;
        stack.pop_back();
        continue;
      }
      const PortId u = out[next++];
      if (!color.count(u)) {
        color[u] = 1;
        stack.push_back({u, 0});
      } else if (color[u] == 1) {
        size_t start = stack.size() - 1;
        while (stack[start].first != u) --start;
        std::vector<PortId> cycle;
        for (size_t i = start; i < stack.size(); ++i) cycle.push_back(stack[i].first);
        return cycle;
      }
    }
  }
  return {};
}

// The first layer of `cdg` whose dependencies close a cycle (-1: none), and that cycle.
int FirstCyclicLayer(const Fabric& f, const Cdg& cdg, std::vector<PortId>* cycle) {
  cycle->clear();
  for (const auto& [layer, edges] : cdg) {
    *cycle = FirstCycle(f, edges);
    if (!cycle->empty()) return layer;
  }
  return -1;
}

uint64_t EdgeCount(const Cdg& cdg) {
  uint64_t n = 0;
  for (const auto& [layer, edges] : cdg) n += edges.size();
  return n;
}

TEST(DeadlockTest, UpDownOnTwoLevelFatTreeIsAcyclic) {
  const Fabric f = testfab::FatTree2(4, 3, 2, /*lmc=*/1);
  const LftSet lfts = testfab::MinHopLfts(f);  // leaf -> spine -> leaf: up, then down
  DeadlockReport r;
  ASSERT_TRUE(CheckDeadlock(f, lfts, nullptr, &r, /*switch_lids=*/false).ok());
  EXPECT_TRUE(r.deadlock_free);
  EXPECT_EQ(r.cyclic_layer, -1);
  EXPECT_TRUE(r.cycle.empty());
  EXPECT_EQ(r.dependencies, EdgeCount(NaiveCdg(f, lfts, nullptr, false)));
  EXPECT_GT(r.dependencies, 0u);
  // Switch LIDs counted: min-hop spine-to-spine routes go down and up and close a cycle.
  ASSERT_TRUE(CheckDeadlock(f, lfts, nullptr, &r).ok());
  EXPECT_FALSE(r.deadlock_free);
  EXPECT_EQ(r.dependencies, EdgeCount(NaiveCdg(f, lfts, nullptr)));
}

// Switch LIDs close cycles that routes between HCAs never show: on a 2-level fat tree with
// up/down routes between hosts, spine 0 reaching spine 1's LID through leaf 0 and spine 1
// reaching spine 0's through leaf 1 add (s0->l0)->(l0->s1) and (s1->l1)->(l1->s0), which with
// the hosts' (l0->s1)->(s1->l1) and (l1->s0)->(s0->l0) make a cycle. The check counts them by
// default (as OpenSM's dfsssp does), and the HCA-only check (switch_lids = false) does not.
TEST(DeadlockTest, SwitchLidRoutesCloseACycleThatHcaRoutesDoNot) {
  const Fabric f = testfab::FatTree2(2, 2, 1);
  LftSet lfts = testfab::MinHopLfts(f);
  const NodeId l0 = f.FindByName("leaf00"), l1 = f.FindByName("leaf01");
  const NodeId s0 = f.FindByName("spine00"), s1 = f.FindByName("spine01");
  auto port_to = [&](NodeId a, NodeId b) {
    for (int p = 1; p <= f.num_ports(a); ++p) {
      if (f.peer({a, p}).node == b) return static_cast<uint8_t>(p);
    }
    return uint8_t{0};
  };
  // The hosts' routes must use both spines for the cycle: h0 -> h1 via s1, h1 -> h0 via s0.
  const Lid h0 = f.base_lid({f.FindByName("h0000"), 1}),
            h1 = f.base_lid({f.FindByName("h0001"), 1});
  lfts.set_port(f.switch_index(l0), h1, port_to(l0, s1));
  lfts.set_port(f.switch_index(l1), h0, port_to(l1, s0));
  lfts.set_port(f.switch_index(s0), f.switch_lid(s1), port_to(s0, l0));
  lfts.set_port(f.switch_index(l0), f.switch_lid(s1), port_to(l0, s1));
  lfts.set_port(f.switch_index(s1), f.switch_lid(s0), port_to(s1, l1));
  lfts.set_port(f.switch_index(l1), f.switch_lid(s0), port_to(l1, s0));

  DeadlockReport hca_only;
  ASSERT_TRUE(CheckDeadlock(f, lfts, nullptr, &hca_only, /*switch_lids=*/false).ok());
  EXPECT_TRUE(hca_only.deadlock_free);
  EXPECT_FALSE(hca_only.switch_lids);
  EXPECT_EQ(hca_only.dependencies, EdgeCount(NaiveCdg(f, lfts, nullptr, false)));
  EXPECT_TRUE(Acyclic(NaiveCdg(f, lfts, nullptr, false)[0]));

  DeadlockReport full;
  ASSERT_TRUE(CheckDeadlock(f, lfts, nullptr, &full).ok());
  const Cdg cdg = NaiveCdg(f, lfts, nullptr);
  EXPECT_FALSE(Acyclic(cdg.at(0)));
  EXPECT_FALSE(full.deadlock_free);
  EXPECT_TRUE(full.switch_lids);
  EXPECT_EQ(full.dependencies, EdgeCount(cdg));
  EXPECT_EQ(full.cycle.size(), 4u);
  for (size_t i = 0; i < full.cycle.size(); ++i) {
    EXPECT_TRUE(cdg.at(0).count({full.cycle[i], full.cycle[(i + 1) % full.cycle.size()]}));
  }

  // The validation's verdict is the full check's, and layers separate the routes again: the
  // spine-to-spine routes in layer 1 leave layer 0 acyclic, the CDG of layer 1 has one edge each.
  ValidationReport report;
  const Status v = ValidateRouting(f, lfts, nullptr, 1, ValidationOptions(), &report);
  EXPECT_FALSE(v.ok());
  EXPECT_NE(v.message().find("cyclic channel dependency"), std::string::npos) << v.message();
  VirtualLayers layers;
  layers.set(f.switch_lid(s0), f.switch_lid(s1), 1);
  layers.set(f.switch_lid(s1), f.switch_lid(s0), 1);
  EXPECT_TRUE(ValidateRouting(f, lfts, &layers, 2, ValidationOptions(), &report).ok());
  EXPECT_TRUE(report.deadlock.deadlock_free);
  EXPECT_EQ(report.deadlock.dependencies, EdgeCount(NaiveCdg(f, lfts, &layers)));

  // AssignVirtualLayers finds that too; without switch LIDs it lists no switch-LID route.
  VirtualLayers assigned;
  LayerStats stats;
  ASSERT_TRUE(AssignVirtualLayers(f, lfts, LayerOptions(), &assigned, &stats).ok());
  EXPECT_EQ(stats.layers_needed, 2);
  EXPECT_TRUE(
      ValidateRouting(f, lfts, &assigned, assigned.num_layers(), ValidationOptions(), &report)
          .ok());
  LayerOptions hca_pairs;
  hca_pairs.switch_lids = false;
  ASSERT_TRUE(AssignVirtualLayers(f, lfts, hca_pairs, &assigned, &stats).ok());
  EXPECT_EQ(stats.layers_needed, 1);
  EXPECT_FALSE(
      ValidateRouting(f, lfts, &assigned, assigned.num_layers(), ValidationOptions(), &report)
          .ok());
}

// Ring of 4 switches, one host each; shortest paths, the 2-hop tie going clockwise (i -> i+1).
class RingTest : public ::testing::Test {
 protected:
  RingTest() : f_(testfab::Ring(4, 1)), lfts_(f_) {
    for (int i = 0; i < 4; ++i) {
      const NodeId sw = f_.switches()[i];
      for (int j = 0; j < 4; ++j) {
        const NodeId host = f_.FindByName(testfab::Numbered("h", j, 4));
        const Lid lid = f_.base_lid({host, 1});
        const int d = (j - i + 4) % 4;
        const NodeId to = d == 0 ? host : f_.switches()[(i + (d == 3 ? 3 : 1)) % 4];
        lfts_.set_port(i, lid, static_cast<uint8_t>(PortTo(sw, to)));
      }
    }
  }
  int PortTo(NodeId a, NodeId b) const {
    for (int p = 1; p <= f_.num_ports(a); ++p) {
      if (f_.peer({a, p}).node == b) return p;
    }
    return 0;
  }
  Fabric f_;
  LftSet lfts_;
};

TEST_F(RingTest, ClockwiseRoutingHasACycle) {
  DeadlockReport r;
  ASSERT_TRUE(CheckDeadlock(f_, lfts_, nullptr, &r).ok());
  EXPECT_FALSE(r.deadlock_free);
  EXPECT_EQ(r.cyclic_layer, 0);
  const Cdg cdg = NaiveCdg(f_, lfts_, nullptr);
  EXPECT_EQ(r.dependencies, EdgeCount(cdg));
  ExpectRealCycle(r, cdg);
  EXPECT_EQ(r.cycle.size(), 4u);  // the four clockwise channels
  for (PortId c : r.cycle) {
    const int from = f_.switch_index(f_.port_node(c));
    EXPECT_EQ(f_.switch_index(f_.peer(f_.port_ref(c)).node), (from + 1) % 4);
  }
}

TEST_F(RingTest, DatelineLayersBreakTheCycle) {
  // Routes crossing the dateline channel sw03 -> sw00 use layer 1, all others layer 0.
  const PortId dateline = f_.port_id(f_.switches()[3], PortTo(f_.switches()[3], f_.switches()[0]));
  VirtualLayers layers;
  VirtualLayers all_zero;
  int crossing = 0;
  for (const PortRef& src : f_.Endpoints()) {
    for (const PortRef& dst : f_.Endpoints()) {
      if (src.node == dst.node) continue;
      const auto route = testfab::NaiveWalk(f_, lfts_, src, f_.base_lid(dst));
      const bool crosses =
          std::find(route.channels.begin(), route.channels.end(), dateline) != route.channels.end();
      layers.set(f_.base_lid(src), f_.base_lid(dst), crosses ? 1 : 0);
      all_zero.set(f_.base_lid(src), f_.base_lid(dst), 0);
      crossing += crosses;
    }
  }
  EXPECT_EQ(crossing, 3);  // sw02->sw00, sw03->sw00, sw03->sw01
  DeadlockReport r;
  // The layers are the hosts' (the switches' own routes stay in layer 0): between CAs only.
  ASSERT_TRUE(CheckDeadlock(f_, lfts_, &layers, &r, /*switch_lids=*/false).ok());
  EXPECT_TRUE(r.deadlock_free);
  EXPECT_EQ(r.layers, 2);
  const Cdg cdg = NaiveCdg(f_, lfts_, &layers, false);
  EXPECT_EQ(r.dependencies, EdgeCount(cdg));
  EXPECT_EQ(cdg.at(0).size(), 2u);
  EXPECT_EQ(cdg.at(1).size(), 2u);

  ASSERT_TRUE(CheckDeadlock(f_, lfts_, &all_zero, &r, false).ok());
  EXPECT_FALSE(r.deadlock_free);
  EXPECT_EQ(r.cyclic_layer, 0);

  // Everything in layer 1 by default: the cycle is found there.
  VirtualLayers shifted;
  shifted.default_layer = 1;
  ASSERT_TRUE(CheckDeadlock(f_, lfts_, &shifted, &r).ok());
  EXPECT_FALSE(r.deadlock_free);
  EXPECT_EQ(r.cyclic_layer, 1);
  EXPECT_EQ(r.layers, 2);
}

TEST(DeadlockTest, AgreesWithNaiveCdgOnRandomFabricsAndLayers) {
  int cyclic = 0, acyclic = 0;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    SCOPED_TRACE(seed);
    const Fabric f = testfab::RandomIrregular(seed);
    std::mt19937_64 rng(seed * 31);
    LftSet lfts = testfab::MinHopLfts(f, &rng);
    if (seed % 4 == 0) testfab::Corrupt(f, 5, &rng, &lfts);
    VirtualLayers layers;
    const int num_layers = 1 + static_cast<int>(seed % 3);
    for (const PortRef& src : f.Endpoints()) {
      for (const PortRef& dst : f.Endpoints()) {
        for (Lid s = f.base_lid(src); s < f.base_lid(src) + (Lid{1} << f.lmc(src)); ++s) {
          for (Lid d = f.base_lid(dst); d < f.base_lid(dst) + (Lid{1} << f.lmc(dst)); ++d) {
            if (rng() % 2) layers.set(s, d, static_cast<int>(rng() % num_layers));
          }
        }
      }
    }
    for (const VirtualLayers* l :
         {static_cast<const VirtualLayers*>(nullptr), static_cast<const VirtualLayers*>(&layers)}) {
      DeadlockReport r;
      ASSERT_TRUE(CheckDeadlock(f, lfts, l, &r).ok());
      const Cdg cdg = NaiveCdg(f, lfts, l);
      EXPECT_EQ(r.dependencies, EdgeCount(cdg));
      bool free = true;
      int first_cyclic = -1;
      for (const auto& [layer, edges] : cdg) {
        if (!Acyclic(edges) && free) {
          free = false;
          first_cyclic = layer;
        }
      }
      EXPECT_EQ(r.deadlock_free, free);
      EXPECT_EQ(r.cyclic_layer, first_cyclic);
      if (!free) ExpectRealCycle(r, cdg);
      (free ? acyclic : cyclic)++;
    }
  }
  // The random cases must exercise both answers.
  EXPECT_GT(cyclic, 5);
  EXPECT_GT(acyclic, 5);
}

// Valleys that close a cycle while every route is still delivered: leaves A, B, E and upper
// switches X, Y, each leaf cabled to both. Hosts h1, h2 on E: at B, h1 goes up to X, X sends it
// down to A, A up to Y, Y down to E (B -> X -> A -> Y); h2 goes A -> Y -> B -> X -> E. The
// dependencies (B->X)->(X->A)->(A->Y)->(Y->B)->(B->X) form a cycle in any layer holding a route
// of each. Returns false if the fabric has no such switches.
bool AddValleyCycle(const Fabric& f, LftSet* lfts) {
  auto port_to = [&](NodeId a, NodeId b) {
    for (int p = 1; p <= f.num_ports(a); ++p) {
      if (f.peer({a, p}).node == b) return p;
    }
    return 0;
  };
  std::map<NodeId, std::vector<PortRef>> hosts;  // leaf -> its hosts with LIDs
  for (const PortRef& e : f.Endpoints()) {
    const PortRef sw = f.peer(e);
    if (sw.valid() && f.is_switch(sw.node) && f.base_lid(e) != 0) hosts[sw.node].push_back(e);
  }
  for (const auto& [e, on_e] : hosts) {
    if (on_e.size() < 2) continue;
    for (int px = 1; px <= f.num_ports(e); ++px) {
      for (int py = px + 1; py <= f.num_ports(e); ++py) {
        const NodeId x = f.peer({e, px}).node, y = f.peer({e, py}).node;
        if (!f.peer({e, px}).valid() || !f.peer({e, py}).valid() || x == y || !f.is_switch(x) ||
            !f.is_switch(y) || hosts.count(x) || hosts.count(y)) {
          continue;
        }
        std::vector<NodeId> both;  // other leaves cabled to x and y
        for (const auto& [l, unused] : hosts) {
          if (l != e && port_to(l, x) && port_to(l, y)) both.push_back(l);
        }
        if (both.size() < 2) continue;
        const NodeId a = both[0], b = both[1];
        auto set = [&](NodeId sw, const PortRef& host, NodeId to) {
          for (Lid d = f.base_lid(host); d < f.base_lid(host) + (Lid{1} << f.lmc(host)); ++d) {
            lfts->set_port(f.switch_index(sw), d, static_cast<uint8_t>(port_to(sw, to)));
          }
        };
        set(b, on_e[0], x), set(x, on_e[0], a), set(a, on_e[0], y), set(y, on_e[0], e);
        set(a, on_e[1], y), set(y, on_e[1], b), set(b, on_e[1], x), set(x, on_e[1], e);
        return true;
      }
    }
  }
  return false;
}

// Layered mode reads each destination's layers from a copy of up to 64 columns of the layer
// matrix (VirtualLayers::CopyColumns) and seeds them a run of source LIDs at a time. On degraded
// PGFTs with LMC 0..3 (source LIDs over several 64-LID blocks, the last block partial), random
// min-hop tables with valleys that close a cycle in some (AddValleyCycle) and random layers,
// the verdict, the dependency count, the cyclic layer and the cycle (and so the validation's
// message) must equal a walk per (source LID, destination LID), with one thread and with two.
TEST(DeadlockTest, LayeredAgreesWithAWalkPerPairOnDegradedPgfts) {
  int cyclic = 0, acyclic = 0, partial = 0, validated = 0;
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE(seed);
    PgftSpec spec;
    ASSERT_TRUE(
        ParsePgftSpec(seed % 2 ? "pgft:3;4,4,4;1,4,2;1,1,1" : "pgft:3;3,4,5;1,3,2;1,1,1", &spec)
            .ok());
    Fabric intact, f;
    ASSERT_TRUE(GeneratePgft(spec, {}, &intact).ok());
    LidOptions lid_options;
    lid_options.lmc = static_cast<int>(seed % 4);
    lid_options.lmc_switches = seed % 3 == 0;
    ASSERT_TRUE(AssignLids(lid_options, &intact).ok());
    ASSERT_TRUE(enginetest::Degrade(intact, 2 + static_cast<int>(seed % 5), 0, seed, &f));
    ASSERT_GT(f.max_lid(), 64u);  // several blocks
    partial += (f.max_lid() + 1) % 64 != 0;
    std::mt19937_64 rng(seed * 7919);
    LftSet lfts = testfab::MinHopLfts(f, &rng);
    if (seed % 4 != 0) {
      ASSERT_TRUE(AddValleyCycle(f, &lfts));
    }
    VirtualLayers layers;
    layers.default_layer = static_cast<int>(seed % 2);
    const int num_layers = 1 + static_cast<int>(seed % 3);
    for (const PortRef& src : f.Endpoints()) {
      for (Lid s = f.base_lid(src); s < f.base_lid(src) + (Lid{1} << f.lmc(src)); ++s) {
        for (const PortRef& dst : f.Endpoints()) {
          for (Lid d = f.base_lid(dst); d < f.base_lid(dst) + (Lid{1} << f.lmc(dst)); ++d) {
            if (rng() % 4) layers.set(s, d, static_cast<int>(rng() % num_layers));
          }
        }
      }
    }
    // Both checks; the seeds without valleys (seed % 4 == 0) check between CAs, acyclic.
    const bool switch_lids = seed % 2 == 1;
    const Cdg cdg = NaiveCdg(f, lfts, &layers, switch_lids);
    std::vector<PortId> cycle;
    const int first_cyclic = FirstCyclicLayer(f, cdg, &cycle);
    for (int threads : {1, 2}) {
      SCOPED_TRACE(threads);
      AnalysisOptions o;
      o.what = kAnalyseDeadlock;
      o.layers = &layers;
      o.threads = threads;
      o.deadlock_switch_lids = switch_lids;
      AnalysisResult r;
      ASSERT_TRUE(AnalyseRouting(f, lfts, o, &r).ok());
      EXPECT_EQ(r.deadlock.layers, layers.num_layers());
      EXPECT_EQ(r.deadlock.dependencies, EdgeCount(cdg));
      EXPECT_EQ(r.deadlock.deadlock_free, first_cyclic < 0);
      EXPECT_EQ(r.deadlock.cyclic_layer, first_cyclic);
      EXPECT_EQ(r.deadlock.cycle, cycle);
      ValidationOptions vo;
      vo.threads = threads;
      vo.switch_lids = switch_lids;
      ValidationReport report;
      const Status v = ValidateRouting(f, lfts, &layers, layers.num_layers(), vo, &report);
      if (report.trace.unreachable > 0 || report.trace.loops > 0) continue;
      ++validated;
      EXPECT_EQ(v.ok(), first_cyclic < 0) << v.message();
      if (first_cyclic >= 0) {
        EXPECT_EQ(
            v.message().rfind("invalid routing: virtual layer " + std::to_string(first_cyclic) +
                                  " has a cyclic channel dependency: ",
                              0),
            0u)
            << v.message();
        EXPECT_EQ(report.deadlock.cycle, cycle);
      }
    }
    (first_cyclic >= 0 ? cyclic : acyclic)++;
  }
  // Both verdicts, validation's messages, and tables whose last block of LIDs is partial.
  EXPECT_GT(validated, 12);
  EXPECT_GT(cyclic, 3);
  EXPECT_GT(acyclic, 3);
  EXPECT_GT(partial, 3);
}

// The single-layer check (no layers, or layers with no entries: every route in the default
// layer) adds each source switch's first step alone and walks only from switches without
// sources behind them. On degraded PGFTs with valleys, LMC 0..2 and some switches without a LID
// (spines with no source when switch LIDs count, every upper switch when they do not), the
// verdict, dependency count, cyclic layer and cycle must equal a walk per (source, destination
// LID), with one thread and two.
TEST(DeadlockTest, SingleLayerAgreesWithAWalkPerPairOnDegradedPgfts) {
  int cyclic = 0, acyclic = 0, lidless_switches = 0;
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE(seed);
    PgftSpec spec;
    ASSERT_TRUE(
        ParsePgftSpec(seed % 2 ? "pgft:3;4,4,4;1,4,2;1,1,1" : "pgft:3;3,4,5;1,3,2;1,1,1", &spec)
            .ok());
    Fabric intact, f;
    ASSERT_TRUE(GeneratePgft(spec, {}, &intact).ok());
    ASSERT_TRUE(enginetest::Degrade(intact, 1 + static_cast<int>(seed % 5), 0, seed, &f));
    // LIDs by hand: endpoints in order, then the switches, every third one left without a LID.
    f.ClearLids();
    const int lmc = static_cast<int>(seed % 3);
    Lid next = Lid{1} << lmc;
    for (const PortRef& e : f.Endpoints()) {
      ASSERT_TRUE(f.SetLid(e, next, lmc).ok());
      next += Lid{1} << lmc;
    }
    for (size_t s = 0; s < f.switches().size(); ++s) {
      if ((s + seed) % 3 == 0) {
        ++lidless_switches;
        continue;
      }
      ASSERT_TRUE(f.SetLid({f.switches()[s], 0}, next++, 0).ok());
    }
    std::mt19937_64 rng(seed * 104729);
    LftSet lfts = testfab::MinHopLfts(f, &rng);
    if (seed % 4 != 0) {
      ASSERT_TRUE(AddValleyCycle(f, &lfts));
    }
    VirtualLayers no_entries;  // every route in its default layer
    no_entries.default_layer = 2;
    for (const VirtualLayers* layers : {static_cast<const VirtualLayers*>(nullptr),
                                        static_cast<const VirtualLayers*>(&no_entries)}) {
      for (const bool switch_lids : {true, false}) {
        SCOPED_TRACE(switch_lids);
        const Cdg cdg = NaiveCdg(f, lfts, layers, switch_lids);
        std::vector<PortId> cycle;
        const int first_cyclic = FirstCyclicLayer(f, cdg, &cycle);
        for (int threads : {1, 2}) {
          AnalysisOptions o;
          o.what = kAnalyseDeadlock;
          o.layers = layers;
          o.threads = threads;
          o.deadlock_switch_lids = switch_lids;
          AnalysisResult r;
          ASSERT_TRUE(AnalyseRouting(f, lfts, o, &r).ok());
          EXPECT_EQ(r.deadlock.dependencies, EdgeCount(cdg));
          EXPECT_EQ(r.deadlock.deadlock_free, first_cyclic < 0);
          EXPECT_EQ(r.deadlock.cyclic_layer, first_cyclic);
          EXPECT_EQ(r.deadlock.cycle, cycle);
        }
        (first_cyclic >= 0 ? cyclic : acyclic)++;
      }
    }
  }
  EXPECT_GT(cyclic, 10);
  EXPECT_GT(acyclic, 10);
  EXPECT_GT(lidless_switches, 24);
}

}  // namespace
}  // namespace sar
