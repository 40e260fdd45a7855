// The switch multigraph every engine starts from, checked against the Fabric it came from.
#include "engines/switch_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "engines/engine_test_util.h"
#include "sar/model/generate.h"
#include "test_fabrics.h"

namespace sar::internal {
namespace {

// Fabrics with parallel cables, degraded trees, rings and irregular graphs.
std::vector<Fabric> Fabrics() {
  std::vector<Fabric> out;
  Fabric ft;
  EXPECT_TRUE(GenerateFatTree2(4, 3, 2, GenerateOptions{}, &ft).ok());  // 2 cables leaf-spine
  out.push_back(std::move(ft));
  out.push_back(testfab::Ring(5, 2));
  for (uint64_t seed = 1; seed <= 6; ++seed) out.push_back(testfab::RandomIrregular(seed));
  std::mt19937_64 rng(7);
  for (int i = 0; i < 4; ++i) {
    const Fabric intact = enginetest::Pgft(enginetest::RandomSpec(&rng), i % 3);
    Fabric degraded;
    if (enginetest::Degrade(intact, 2, i % 2, 100 + i, &degraded)) {
      out.push_back(std::move(degraded));
    }
  }
  return out;
}

TEST(SwitchGraph, ArcsAreExactlyTheInterSwitchCablesParallelOnesIncluded) {
  for (const Fabric& f : Fabrics()) {
    const SwitchGraph g = BuildSwitchGraph(f);
    ASSERT_EQ(g.num_switches, f.num_switches());
    ASSERT_EQ(g.arc_begin.size(), static_cast<size_t>(f.num_switches() + 1));
    size_t inter_switch_channels = 0;
    for (int s = 0; s < g.num_switches; ++s) {
      const NodeId n = f.switches()[s];
      // Expected from the fabric: (port, neighbour switch index) of every switch-switch cable.
      std::map<int, int> want;
      int hcas = 0;
      for (int p = 1; p <= f.num_ports(n); ++p) {
        const PortRef q = f.peer({n, p});
        if (!q.valid()) continue;
        if (f.is_switch(q.node)) {
          want[p] = f.switch_index(q.node);
        } else {
          ++hcas;
        }
      }
      std::map<int, int> got;
      for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
        EXPECT_TRUE(got.emplace(g.arc_port[a], g.arc_to[a]).second) << "port listed twice";
        EXPECT_EQ(g.arc_channel[a], f.port_id(n, g.arc_port[a]));
        EXPECT_TRUE(f.is_inter_switch(g.arc_channel[a]));
        // The reverse arc is the same cable seen from the other end.
        const int r = g.arc_reverse[a];
        ASSERT_GE(r, 0);
        EXPECT_EQ(g.arc_reverse[r], a);
        EXPECT_EQ(g.arc_to[r], s);
        EXPECT_EQ(g.arc_channel[r], f.peer_id(g.arc_channel[a]));
      }
      EXPECT_EQ(got, want) << f.name(n);
      EXPECT_EQ(g.degree(s), static_cast<int>(want.size()));
      EXPECT_EQ(g.hcas_on_switch[s], hcas) << f.name(n);
      inter_switch_channels += want.size();
    }
    EXPECT_EQ(g.arc_to.size(), inter_switch_channels);
  }
}

TEST(SwitchGraph, ParallelCablesAreSeparateArcs) {
  Fabric f;
  EXPECT_TRUE(GenerateFatTree2(2, 1, 3, GenerateOptions{}, &f).ok());  // 3 cables per pair
  const SwitchGraph g = BuildSwitchGraph(f);
  for (int s = 0; s < g.num_switches; ++s) {
    std::map<int, int> per_neighbour;
    for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) ++per_neighbour[g.arc_to[a]];
    for (const auto& [nb, count] : per_neighbour) {
      EXPECT_EQ(count, 3) << f.name(f.switches()[s]) << " -> " << f.name(f.switches()[nb]);
    }
  }
}

TEST(SwitchGraph, DestinationsAreEndpointsThenSwitchesWithTheirLids) {
  for (const Fabric& f : Fabrics()) {
    const SwitchGraph g = BuildSwitchGraph(f);
    const std::vector<PortRef> eps = f.Endpoints();
    ASSERT_EQ(g.num_endpoint_dests, static_cast<int>(eps.size()));
    ASSERT_EQ(g.dests.size(), eps.size() + f.num_switches());
    for (size_t i = 0; i < eps.size(); ++i) {
      const Destination& d = g.dests[i];
      const PortRef leaf = f.peer(eps[i]);
      EXPECT_FALSE(d.is_switch);
      EXPECT_EQ(d.node, eps[i].node);
      EXPECT_EQ(d.port, eps[i].port);
      EXPECT_EQ(d.base_lid, f.base_lid(eps[i]));
      EXPECT_EQ(d.num_lids, 1 << f.lmc(eps[i]));
      EXPECT_EQ(d.sw, f.switch_index(leaf.node));
      EXPECT_EQ(d.sw_port, leaf.port);  // the leaf delivers through the HCA's cable
    }
    for (int s = 0; s < f.num_switches(); ++s) {
      const Destination& d = g.dests[eps.size() + s];
      EXPECT_TRUE(d.is_switch);
      EXPECT_EQ(d.node, f.switches()[s]);
      EXPECT_EQ(d.sw, s);
      EXPECT_EQ(d.sw_port, 0);
      EXPECT_EQ(d.base_lid, f.switch_lid(f.switches()[s]));
      EXPECT_EQ(d.num_lids, 1);
    }
  }
}

TEST(SwitchGraph, HopsToMatchesABreadthFirstSearchOverTheFabric) {
  for (const Fabric& f : Fabrics()) {
    const SwitchGraph g = BuildSwitchGraph(f);
    std::vector<int> hops;
    for (int t = 0; t < g.num_switches; ++t) {
      HopsTo(g, t, &hops);
      ASSERT_EQ(hops.size(), static_cast<size_t>(g.num_switches));
      for (int s = 0; s < g.num_switches; ++s) {
        EXPECT_EQ(hops[s], testfab::SwitchDistance(f, f.switches()[s], f.switches()[t]));
      }
    }
  }
}

// sw0-sw1 with hosts, sw2-sw3 with hosts, sw4 alone without cables or hosts.
Fabric Islands() {
  Fabric f;
  std::vector<NodeId> sw;
  for (int i = 0; i < 5; ++i)
    sw.push_back(testfab::AddSwitch(&f, 6, testfab::Numbered("sw", i, 1)));
  for (int i = 0; i < 4; ++i) {
    testfab::Cable(&f, testfab::AddHost(&f, 1, testfab::Numbered("h", i, 1)), sw[i]);
  }
  testfab::Cable(&f, testfab::AddHost(&f, 1, "h4"), sw[3]);
  testfab::Cable(&f, sw[0], sw[1]);
  testfab::Cable(&f, sw[2], sw[3]);
  testfab::AssignTestLids(&f, 0);
  return f;
}

TEST(SwitchGraph, ComponentsCountOnlyPartsWithHosts) {
  const Fabric f = Islands();
  const SwitchGraph g = BuildSwitchGraph(f);
  std::vector<int> c;
  EXPECT_EQ(SwitchComponents(g, &c), 2);
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c[0], c[1]);
  EXPECT_EQ(c[2], c[3]);
  EXPECT_NE(c[0], c[2]);
  EXPECT_NE(c[4], c[0]);
  EXPECT_NE(c[4], c[2]);
  // A connected fabric is one part.
  const SwitchGraph tree = BuildSwitchGraph(testfab::FatTree2(3, 2, 1));
  EXPECT_EQ(SwitchComponents(tree, &c), 1);
  EXPECT_EQ(std::count(c.begin(), c.end(), 0), 5);
}

TEST(SwitchGraph, CheckEndpointReachNamesAPairOrCountsThem) {
  const Fabric f = Islands();
  const SwitchGraph g = BuildSwitchGraph(f);
  std::vector<int> c;
  SwitchComponents(g, &c);
  auto same = [&](int s, int t) { return c[s] == c[t]; };
  std::vector<std::string> notes;
  const Status s = CheckEndpointReach(f, g, same, false, "no cable path", &notes);
  EXPECT_EQ(s.code(), Status::Code::kFailed);
  EXPECT_NE(s.message().find("cannot reach"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find(": no cable path from sw"), std::string::npos) << s.message();
  EXPECT_TRUE(notes.empty());

  ASSERT_TRUE(CheckEndpointReach(f, g, same, true, "no cable path", &notes).ok());
  ASSERT_EQ(notes.size(), 1u);
  // 2 hosts on one island, 3 on the other: 2 * 3 pairs, both ways.
  EXPECT_EQ(notes[0].rfind("12 endpoint pairs have no route, e.g. ", 0), 0u) << notes[0];

  notes.clear();
  EXPECT_TRUE(CheckEndpointReach(
                  f, g, [](int, int) { return true; }, false, "x", &notes)
                  .ok());
  EXPECT_TRUE(notes.empty());
}

}  // namespace
}  // namespace sar::internal
