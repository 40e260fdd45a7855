#include "sar/model/failures.h"

#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sar/model/generate.h"
#include "sar/model/lids.h"

namespace sar {
namespace {

Fabric Kary(int k, int n) {
  Fabric f;
  EXPECT_TRUE(GenerateKaryNTree(k, n, {}, &f).ok());
  return f;
}

// A second, independent connectivity check: union-find over cables, HCAs never joining two
// switches (an HCA does not forward). True if all HCAs of `original` are still cabled in `f` and
// in one component.
bool AllHostsStillTogether(const Fabric& original, const Fabric& f) {
  std::vector<int> parent(f.num_nodes());
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  std::vector<NodeId> attach(f.num_nodes(), kNoNode);  // a switch the HCA hangs on, if any
  for (PortId id = 0; id < f.num_port_slots(); ++id) {
    const PortId peer = f.peer_id(id);
    if (peer == kNoPort) continue;
    const NodeId a = f.port_node(id), b = f.port_node(peer);
    if (f.is_switch(a) && f.is_switch(b)) parent[find(a)] = find(b);
    if (!f.is_switch(a) && attach[a] == kNoNode) attach[a] = b;
  }
  int root = -1;
  for (NodeId h : original.hcas()) {
    const NodeId n = f.FindByName(original.name(h));
    if (n == kNoNode || attach[n] == kNoNode) return false;
    // Stricter than needed for multi-homed HCAs: every cabled port must land in that component.
    for (int p = 1; p <= f.num_ports(n); ++p) {
      const PortRef q = f.peer({n, p});
      if (!q.valid()) continue;
      const int r = find(q.node);
      if (root < 0) root = r;
      if (r != root) return false;
    }
  }
  return true;
}

std::set<std::pair<std::string, int>> CanonicalCables(
    const Fabric& f, const std::vector<std::pair<std::string, int>>& links) {
  std::set<std::pair<std::string, int>> out;
  for (const auto& [name, port] : links) {
    const NodeId n = f.FindByName(name);
    const PortRef q = f.peer({n, port});
    out.insert(std::min(std::pair{name, port}, std::pair{f.name(q.node), q.port}));
  }
  return out;
}

TEST(PickRandomFailures, SameSeedSameSetOtherSeedsDiffer) {
  const Fabric f = Kary(4, 3), g = Kary(4, 3);
  RandomFailureOptions options;
  options.num_links = 5;
  options.num_switches = 2;
  options.seed = 7;
  FailureSet a, b;
  ASSERT_TRUE(PickRandomFailures(f, options, &a).ok());
  ASSERT_TRUE(PickRandomFailures(g, options, &b).ok());  // a separately built, equal fabric
  EXPECT_EQ(a.links, b.links);
  EXPECT_EQ(a.switches, b.switches);
  std::set<std::vector<std::pair<std::string, int>>> distinct_links;
  std::set<std::vector<std::string>> distinct_switches;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    options.seed = seed;
    FailureSet s;
    ASSERT_TRUE(PickRandomFailures(f, options, &s).ok());
    distinct_links.insert(s.links);
    distinct_switches.insert(s.switches);
  }
  // 10 draws of 5 of 128 cables (2 of 32 eligible switches) collide with negligible chance.
  EXPECT_EQ(distinct_links.size(), 10u);
  EXPECT_GE(distinct_switches.size(), 8u);
}

TEST(PickRandomFailures, CountsAndKindsAreRight) {
  const Fabric f = Kary(4, 3);
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    RandomFailureOptions options;
    options.num_links = 6;
    options.num_switches = 3;
    options.seed = seed;
    FailureSet s;
    ASSERT_TRUE(PickRandomFailures(f, options, &s).ok());
    ASSERT_EQ(s.links.size(), 6u);
    ASSERT_EQ(s.switches.size(), 3u);
    EXPECT_EQ(std::set<std::string>(s.switches.begin(), s.switches.end()).size(), 3u);
    std::set<std::string> removed(s.switches.begin(), s.switches.end());
    for (const std::string& name : s.switches) {
      const NodeId n = f.FindByName(name);
      ASSERT_NE(n, kNoNode);
      EXPECT_TRUE(f.is_switch(n));
      EXPECT_NE(name.rfind("leaf", 0), 0u) << "leaves hold hosts and must stay";
    }
    for (const auto& [name, port] : s.links) {
      const NodeId n = f.FindByName(name);
      ASSERT_NE(n, kNoNode);
      const PortRef q = f.peer({n, port});
      ASSERT_TRUE(q.valid());
      EXPECT_TRUE(f.is_switch(n) && f.is_switch(q.node)) << name << " port " << port;
      EXPECT_FALSE(removed.count(name) || removed.count(f.name(q.node)))
          << "cable on a removed switch";
    }
    EXPECT_EQ(CanonicalCables(f, s.links).size(), 6u) << "a cable picked twice";

    // Expected counts after applying, computed from the original fabric.
    int lost = 0;
    for (PortId id = 0; id < f.num_port_slots(); ++id) {
      const PortId peer = f.peer_id(id);
      if (peer == kNoPort || peer < id) continue;
      if (removed.count(f.name(f.port_node(id))) || removed.count(f.name(f.port_node(peer)))) {
        ++lost;
      }
    }
    Fabric degraded;
    ASSERT_TRUE(ApplyFailures(f, s, &degraded).ok());
    EXPECT_EQ(degraded.num_switches(), f.num_switches() - 3);
    EXPECT_EQ(degraded.hcas().size(), f.hcas().size());
    EXPECT_EQ(degraded.num_links(), f.num_links() - lost - 6);
  }
}

TEST(PickRandomFailures, KeepsHostsConnectedOverManySeeds) {
  const Fabric f = Kary(3, 3);  // 27 hosts, 27 switches, 54 switch-to-switch cables
  int succeeded = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    RandomFailureOptions options;
    options.num_links = 14;
    options.num_switches = 3;
    options.seed = seed;
    FailureSet s;
    const Status st = PickRandomFailures(f, options, &s);
    if (!st.ok()) {
      // Allowed only as a clean refusal: the picks made so far can block the rest.
      EXPECT_EQ(st.code(), Status::Code::kFailed) << st.ToString();
      continue;
    }
    Fabric degraded;
    ASSERT_TRUE(ApplyFailures(f, s, &degraded).ok());
    EXPECT_TRUE(AllHostsStillTogether(f, degraded)) << "seed " << seed;
    EXPECT_TRUE(HcasConnected(degraded)) << "seed " << seed;
    ++succeeded;
  }
  EXPECT_GE(succeeded, 40) << "too few seeds exercise the property";
}

TEST(PickRandomFailures, WithoutTheGuardAnythingGoes) {
  Fabric f;
  ASSERT_TRUE(GenerateFatTree2(3, 3, 1, {}, &f).ok());
  RandomFailureOptions options;
  options.num_switches = f.num_switches();
  options.keep_hcas_connected = false;
  FailureSet s;
  ASSERT_TRUE(PickRandomFailures(f, options, &s).ok());
  EXPECT_EQ(static_cast<int>(s.switches.size()), f.num_switches());

  options.num_switches = 0;
  options.num_links = 9;  // every leaf-spine cable
  ASSERT_TRUE(PickRandomFailures(f, options, &s).ok());
  Fabric degraded;
  ASSERT_TRUE(ApplyFailures(f, s, &degraded).ok());
  EXPECT_EQ(degraded.num_links(), 9);  // only host cables left
  EXPECT_FALSE(HcasConnected(degraded));
}

TEST(PickRandomFailures, FailsClearlyWhenImpossible) {
  Fabric f;  // 2 leaves, 2 spines, 4 leaf-spine cables
  ASSERT_TRUE(GenerateFatTree2(2, 2, 1, {}, &f).ok());
  FailureSet s;
  RandomFailureOptions options;
  options.num_links = 5;
  EXPECT_EQ(PickRandomFailures(f, options, &s).code(), Status::Code::kInvalidArgument);
  options.num_links = 3;  // any 3 of the 4 cut a leaf off
  EXPECT_EQ(PickRandomFailures(f, options, &s).code(), Status::Code::kFailed);
  options.num_links = 2;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    options.seed = seed;
    const Status st = PickRandomFailures(f, options, &s);
    if (!st.ok()) {
      EXPECT_EQ(st.code(), Status::Code::kFailed);  // two cuts on one leaf block the rest
      continue;
    }
    Fabric degraded;
    ASSERT_TRUE(ApplyFailures(f, s, &degraded).ok());
    EXPECT_TRUE(AllHostsStillTogether(f, degraded));
  }
  options.num_links = 0;
  options.num_switches = 2;  // only the spines are removable, and not both
  EXPECT_EQ(PickRandomFailures(f, options, &s).code(), Status::Code::kFailed);
  options.num_switches = 1;
  ASSERT_TRUE(PickRandomFailures(f, options, &s).ok());
  ASSERT_EQ(s.switches.size(), 1u);
  EXPECT_EQ(s.switches[0].rfind("spine", 0), 0u);
  options.num_switches = 5;
  EXPECT_EQ(PickRandomFailures(f, options, &s).code(), Status::Code::kInvalidArgument);
  options.num_switches = -1;
  EXPECT_FALSE(PickRandomFailures(f, options, &s).ok());
}

TEST(ApplyFailures, KeepsIdentityAndLidsOfSurvivors) {
  Fabric f;
  ASSERT_TRUE(GenerateFatTree2(4, 3, 2, {}, &f).ok());
  ASSERT_TRUE(AssignLids({1, false}, &f).ok());
  FailureSet s;
  s.switches = {"spine001"};
  s.links = {{"leaf000", 5}, {"spine003", 4}};  // leaf000-spine000 and spine003-leaf001
  Fabric d;
  ASSERT_TRUE(ApplyFailures(f, s, &d).ok());
  EXPECT_EQ(d.FindByName("spine001"), kNoNode);
  EXPECT_EQ(d.num_nodes(), f.num_nodes() - 1);
  EXPECT_EQ(d.num_links(), f.num_links() - 3 * 2 - 2);
  for (NodeId n = 0; n < f.num_nodes(); ++n) {
    if (f.name(n) == "spine001") continue;
    const NodeId m = d.FindByName(f.name(n));
    ASSERT_NE(m, kNoNode) << f.name(n);
    EXPECT_EQ(d.kind(m), f.kind(n));
    EXPECT_EQ(d.node_guid(m), f.node_guid(n));
    EXPECT_EQ(d.description(m), f.description(n));
    ASSERT_EQ(d.num_ports(m), f.num_ports(n));
    for (int p = 0; p <= f.num_ports(n); ++p) {
      EXPECT_EQ(d.port_guid({m, p}), f.port_guid({n, p}));
      EXPECT_EQ(d.base_lid({m, p}), f.base_lid({n, p}));
      EXPECT_EQ(d.lmc({m, p}), f.lmc({n, p}));
      const PortRef q = f.peer({n, p}), r = d.peer({m, p});
      const bool cut = (f.name(n) == "leaf000" && p == 5) || (f.name(n) == "spine003" && p == 4) ||
                       (q.valid() && f.name(q.node) == "spine001");
      const bool cut_far = q.valid() && ((f.name(q.node) == "leaf000" && q.port == 5) ||
                                         (f.name(q.node) == "spine003" && q.port == 4));
      if (!q.valid() || cut || cut_far) {
        EXPECT_FALSE(r.valid()) << f.name(n) << " port " << p;
      } else {
        ASSERT_TRUE(r.valid()) << f.name(n) << " port " << p;
        EXPECT_EQ(d.name(r.node), f.name(q.node));
        EXPECT_EQ(r.port, q.port);
      }
    }
  }
  for (Lid l = 1; l <= f.max_lid(); ++l) {
    const PortRef o = f.lid_owner(l);
    if (!o.valid() || f.name(o.node) == "spine001") continue;
    EXPECT_EQ(d.name(d.lid_owner(l).node), f.name(o.node));
  }
  EXPECT_EQ(d.FindByPortGuid(f.port_guid({f.FindByName("h00003"), 1})).node,
            d.FindByName("h00003"));
}

TEST(ApplyFailures, UnknownNamesAreErrors) {
  Fabric f;
  ASSERT_TRUE(GenerateFatTree2(2, 2, 1, {}, &f).ok());
  Fabric d;
  EXPECT_EQ(ApplyFailures(f, {{}, {"spine009"}}, &d).code(), Status::Code::kNotFound);
  EXPECT_FALSE(ApplyFailures(f, {{}, {"h00000"}}, &d).ok());  // an HCA, not a switch
  EXPECT_EQ(ApplyFailures(f, {{{"leaf007", 3}}, {}}, &d).code(), Status::Code::kNotFound);
  EXPECT_FALSE(ApplyFailures(f, {{{"leaf000", 9}}, {}}, &d).ok());
  EXPECT_FALSE(ApplyFailures(f, {{{"leaf000", 0}}, {}}, &d).ok());
  Fabric g;
  ASSERT_TRUE(GenerateFatTree2(2, 2, 1, {{1, 2}, 0}, &g).ok());  // leaf000 port 2 empty
  EXPECT_FALSE(ApplyFailures(g, {{{"leaf000", 2}}, {}}, &d).ok());
  // Naming a cable by both ends is the same cut.
  ASSERT_TRUE(ApplyFailures(f, {{{"leaf000", 3}, {"spine000", 1}}, {}}, &d).ok());
  EXPECT_EQ(d.num_links(), f.num_links() - 1);
}

TEST(HcasConnected, SeesCutsAndDoesNotRouteThroughHcas) {
  Fabric f;
  ASSERT_TRUE(GenerateFatTree2(3, 2, 1, {}, &f).ok());
  EXPECT_TRUE(HcasConnected(f));
  const NodeId leaf = f.FindByName("leaf001");
  for (int p = 4; p <= 6; ++p) f.Disconnect({leaf, p});
  EXPECT_FALSE(HcasConnected(f));

  // Two switches joined only through a dual-ported HCA: not a path.
  Fabric g;
  const NodeId a = g.AddNode(NodeKind::kSwitch, 4, 0x100, "a", "a");
  const NodeId b = g.AddNode(NodeKind::kSwitch, 4, 0x101, "b", "b");
  const NodeId x = g.AddNode(NodeKind::kHca, 2, 0x200, "x", "x HCA-1");
  const NodeId y = g.AddNode(NodeKind::kHca, 1, 0x210, "y", "y HCA-1");
  const NodeId z = g.AddNode(NodeKind::kHca, 1, 0x220, "z", "z HCA-1");
  ASSERT_TRUE(g.Connect({x, 1}, {a, 1}).ok());
  ASSERT_TRUE(g.Connect({x, 2}, {b, 1}).ok());
  ASSERT_TRUE(g.Connect({y, 1}, {a, 2}).ok());
  ASSERT_TRUE(g.Connect({z, 1}, {b, 2}).ok());
  EXPECT_FALSE(HcasConnected(g));
  ASSERT_TRUE(g.Connect({a, 3}, {b, 3}).ok());
  EXPECT_TRUE(HcasConnected(g));
}

}  // namespace
}  // namespace sar
