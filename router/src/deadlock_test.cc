#include "sar/deadlock.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <utility>

#include "test_fabrics.h"

namespace sar {
namespace {

using Edge = std::pair<PortId, PortId>;
using Cdg = std::map<int, std::set<Edge>>;  // layer -> dependencies

bool InterSwitch(const Fabric& f, PortId c) {
  const PortRef a = f.port_ref(c), b = f.peer(a);
  return b.valid() && f.is_switch(a.node) && f.is_switch(b.node);
}

// Every route between endpoints (all LIDs), walked hop by hop; a looping route also gets the
// dependency that closes its loop.
Cdg NaiveCdg(const Fabric& f, const LftSet& lfts, const VirtualLayers* layers) {
  Cdg cdg;
  const std::vector<PortRef> endpoints = f.Endpoints();
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

uint64_t EdgeCount(const Cdg& cdg) {
  uint64_t n = 0;
  for (const auto& [layer, edges] : cdg) n += edges.size();
  return n;
}

TEST(DeadlockTest, UpDownOnTwoLevelFatTreeIsAcyclic) {
  const Fabric f = testfab::FatTree2(4, 3, 2, /*lmc=*/1);
  const LftSet lfts = testfab::MinHopLfts(f);  // leaf -> spine -> leaf: up, then down
  DeadlockReport r;
  ASSERT_TRUE(CheckDeadlock(f, lfts, nullptr, &r).ok());
  EXPECT_TRUE(r.deadlock_free);
  EXPECT_EQ(r.cyclic_layer, -1);
  EXPECT_TRUE(r.cycle.empty());
  EXPECT_EQ(r.dependencies, EdgeCount(NaiveCdg(f, lfts, nullptr)));
  EXPECT_GT(r.dependencies, 0u);
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
  ASSERT_TRUE(CheckDeadlock(f_, lfts_, &layers, &r).ok());
  EXPECT_TRUE(r.deadlock_free);
  EXPECT_EQ(r.layers, 2);
  const Cdg cdg = NaiveCdg(f_, lfts_, &layers);
  EXPECT_EQ(r.dependencies, EdgeCount(cdg));
  EXPECT_EQ(cdg.at(0).size(), 2u);
  EXPECT_EQ(cdg.at(1).size(), 2u);

  ASSERT_TRUE(CheckDeadlock(f_, lfts_, &all_zero, &r).ok());
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

}  // namespace
}  // namespace sar
