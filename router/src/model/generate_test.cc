#include "sar/model/generate.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define SAR_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SAR_TEST_SANITIZED 1
#endif
#endif

namespace sar {
namespace {

// The level of a node, read back from its documented name alone.
int LevelOf(const Fabric& f, NodeId n, int height) {
  const std::string& name = f.name(n);
  if (name.rfind("h", 0) == 0) return 0;
  if (name.rfind("leaf", 0) == 0) return 1;
  if (name.rfind("spine", 0) == 0) return height;
  if (name.rfind("l", 0) == 0) return std::atoi(name.c_str() + 1);
  return -1;
}

// The index in a name: the digits at its end.
int64_t IndexOf(const Fabric& f, NodeId n) {
  const std::string& name = f.name(n);
  size_t i = name.size();
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') --i;
  return std::atoll(name.c_str() + i);
}

int64_t Product(const std::vector<int>& v, int from, int to) {  // v[from..to), 0-based
  int64_t r = 1;
  for (int i = from; i < to; ++i) r *= v[i];
  return r;
}

// Closed forms: level-l nodes = prod_{i>l} m_i * prod_{i<=l} w_i (1-based levels);
// cables between levels l-1 and l = nodes(l-1) * w_l * p_l.
int64_t NodesAt(const PgftSpec& s, int l) { return Product(s.m, l, s.height) * Product(s.w, 0, l); }
int64_t CablesInto(const PgftSpec& s, int l) { return NodesAt(s, l - 1) * s.w[l - 1] * s.p[l - 1]; }

PgftSpec Spec(int h, std::vector<int> m, std::vector<int> w, std::vector<int> p) {
  return PgftSpec{h, std::move(m), std::move(w), std::move(p)};
}

std::vector<PgftSpec> ManySpecs() {
  return {
      Spec(3, {2, 2, 3}, {1, 2, 2}, {1, 2, 1}),  // Fig. 1 of the Dmodc paper
      Spec(2, {4, 3}, {1, 4}, {1, 1}),           // FT(2;4,3)
      Spec(2, {4, 3}, {1, 4}, {1, 2}),           // FT(2;4,3), 2 cables per leaf-spine pair
      Spec(3, {2, 2, 2}, {1, 2, 2}, {1, 1, 1}),  // 2-ary-3-tree
      Spec(3, {3, 3, 3}, {1, 3, 3}, {1, 1, 1}),  // 3-ary-3-tree
      Spec(2, {3, 4}, {2, 2}, {1, 3}),           // dual-homed hosts
      Spec(1, {4}, {1}, {1}),                    // one switch
      Spec(1, {3}, {2}, {2}),                    // hosts on two switches, two cables each
      Spec(4, {2, 2, 2, 2}, {1, 2, 2, 2}, {1, 1, 1, 1}),
      Spec(3, {3, 2, 2}, {1, 3, 2}, {2, 1, 2}),
  };
}

std::string Describe(const PgftSpec& s) {
  std::string out = "PGFT(" + std::to_string(s.height);
  for (const auto* v : {&s.m, &s.w, &s.p}) {
    out += ";";
    for (size_t i = 0; i < v->size(); ++i) out += (i ? "," : "") + std::to_string((*v)[i]);
  }
  return out + ")";
}

TEST(GeneratePgft, CountsMatchClosedForms) {
  for (const PgftSpec& spec : ManySpecs()) {
    SCOPED_TRACE(Describe(spec));
    Fabric f;
    ASSERT_TRUE(GeneratePgft(spec, {}, &f).ok());
    std::vector<int64_t> nodes(spec.height + 1, 0), cables(spec.height + 1, 0);
    for (NodeId n = 0; n < f.num_nodes(); ++n) {
      const int l = LevelOf(f, n, spec.height);
      ASSERT_GE(l, 0) << f.name(n);
      ASSERT_EQ(l == 0, !f.is_switch(n)) << f.name(n);
      ++nodes[l];
    }
    for (PortId id = 0; id < f.num_port_slots(); ++id) {
      const PortId peer = f.peer_id(id);
      if (peer == kNoPort || peer < id) continue;
      const int la = LevelOf(f, f.port_node(id), spec.height);
      const int lb = LevelOf(f, f.port_node(peer), spec.height);
      ASSERT_EQ(std::abs(la - lb), 1) << "cable skips a level";
      ++cables[std::max(la, lb)];
    }
    int64_t total_cables = 0;
    for (int l = 0; l <= spec.height; ++l) {
      EXPECT_EQ(nodes[l], NodesAt(spec, l)) << "level " << l;
      if (l > 0) {
        EXPECT_EQ(cables[l], CablesInto(spec, l)) << "level " << l;
        total_cables += CablesInto(spec, l);
      }
    }
    EXPECT_EQ(f.hcas().size(), static_cast<size_t>(Product(spec.m, 0, spec.height)));
    EXPECT_EQ(f.num_links(), total_cables);
  }
}

// Every level-l node has m_l children and w_{l+1} parents, each joined by p cables.
TEST(GeneratePgft, EveryNodeHasTheRightNeighbours) {
  for (const PgftSpec& spec : ManySpecs()) {
    SCOPED_TRACE(Describe(spec));
    Fabric f;
    ASSERT_TRUE(GeneratePgft(spec, {}, &f).ok());
    const int h = spec.height;
    for (NodeId n = 0; n < f.num_nodes(); ++n) {
      const int l = LevelOf(f, n, h);
      std::map<NodeId, int> down, up;
      for (int p = 1; p <= f.num_ports(n); ++p) {
        const PortRef q = f.peer({n, p});
        if (!q.valid()) continue;
        (LevelOf(f, q.node, h) < l ? down : up)[q.node]++;
      }
      EXPECT_EQ(static_cast<int>(down.size()), l == 0 ? 0 : spec.m[l - 1]) << f.name(n);
      EXPECT_EQ(static_cast<int>(up.size()), l == h ? 0 : spec.w[l]) << f.name(n);
      for (const auto& [peer, count] : down) EXPECT_EQ(count, spec.p[l - 1]) << f.name(n);
      for (const auto& [peer, count] : up) EXPECT_EQ(count, spec.p[l]) << f.name(n);
    }
  }
}

// Hosts s and t share the level-l sub-tree iff s / prod_{i<=l} m_i == t / prod_{i<=l} m_i, so the
// shortest path climbs to the lowest such level and back down.
TEST(GeneratePgft, HostDistancesAreTwiceTheLowestCommonLevel) {
  for (const PgftSpec& spec : ManySpecs()) {
    SCOPED_TRACE(Describe(spec));
    Fabric f;
    ASSERT_TRUE(GeneratePgft(spec, {}, &f).ok());
    for (NodeId src : f.hcas()) {
      std::vector<int> dist(f.num_nodes(), -1);
      std::vector<NodeId> queue = {src};
      dist[src] = 0;
      for (size_t head = 0; head < queue.size(); ++head) {
        const NodeId n = queue[head];
        if (n != src && !f.is_switch(n)) continue;  // HCAs do not forward
        for (int p = 1; p <= f.num_ports(n); ++p) {
          const PortRef q = f.peer({n, p});
          if (q.valid() && dist[q.node] < 0) {
            dist[q.node] = dist[n] + 1;
            queue.push_back(q.node);
          }
        }
      }
      const int64_t s = IndexOf(f, src);
      for (NodeId dst : f.hcas()) {
        if (dst == src) continue;
        const int64_t t = IndexOf(f, dst);
        int lcl = 1;
        while (s / Product(spec.m, 0, lcl) != t / Product(spec.m, 0, lcl)) ++lcl;
        ASSERT_EQ(dist[dst], 2 * lcl) << f.name(src) << " -> " << f.name(dst);
      }
    }
  }
}

// The documented index: node (a_{l+1..h}; b_1..l) is b + W_l * a with W_l = prod_{i<=l} w_i,
// b_1 and a_{l+1} least significant. So the hosts below a level-l switch i form the block
// i / W_l of size prod_{i<=l} m_i, and its parents are (i mod W_l) + W_l * b + W_{l+1} * a'.
TEST(GeneratePgft, IndicesFollowTheDocumentedLabels) {
  for (const PgftSpec& spec : ManySpecs()) {
    SCOPED_TRACE(Describe(spec));
    Fabric f;
    ASSERT_TRUE(GeneratePgft(spec, {}, &f).ok());
    const int h = spec.height;
    for (NodeId n : f.switches()) {
      const int l = LevelOf(f, n, h);
      const int64_t i = IndexOf(f, n), wl = Product(spec.w, 0, l), ml = Product(spec.m, 0, l);
      // Hosts below: walk down through lower levels only.
      std::set<int64_t> below;
      std::vector<NodeId> stack = {n};
      while (!stack.empty()) {
        const NodeId x = stack.back();
        stack.pop_back();
        for (int p = 1; p <= f.num_ports(x); ++p) {
          const PortRef q = f.peer({x, p});
          if (!q.valid() || LevelOf(f, q.node, h) >= LevelOf(f, x, h)) continue;
          if (f.is_switch(q.node)) {
            stack.push_back(q.node);
          } else {
            below.insert(IndexOf(f, q.node));
          }
        }
      }
      ASSERT_EQ(static_cast<int64_t>(below.size()), ml) << f.name(n);
      EXPECT_EQ(*below.begin(), (i / wl) * ml) << f.name(n);
      EXPECT_EQ(*below.rbegin(), (i / wl) * ml + ml - 1) << f.name(n);
      if (l == h) continue;
      std::set<int64_t> parents, expected;
      for (int p = 1; p <= f.num_ports(n); ++p) {
        const PortRef q = f.peer({n, p});
        if (q.valid() && LevelOf(f, q.node, h) == l + 1) parents.insert(IndexOf(f, q.node));
      }
      const int64_t parent_a = (i / wl) / spec.m[l];
      for (int b = 0; b < spec.w[l]; ++b) {
        expected.insert(i % wl + wl * b + wl * spec.w[l] * parent_a);
      }
      EXPECT_EQ(parents, expected) << f.name(n);
    }
  }
}

TEST(GeneratePgft, PortOrderIsDownThenUpWithParallelCablesAdjacent) {
  for (const PgftSpec& spec : ManySpecs()) {
    SCOPED_TRACE(Describe(spec));
    GenerateOptions options;
    options.switch_ports = 60;  // spare ports must stay empty, at the end
    Fabric f;
    ASSERT_TRUE(GeneratePgft(spec, options, &f).ok());
    const int h = spec.height;
    for (NodeId n = 0; n < f.num_nodes(); ++n) {
      const int l = LevelOf(f, n, h);
      if (f.is_switch(n)) {
        EXPECT_EQ(f.num_ports(n), 60);
      } else {
        EXPECT_EQ(f.num_ports(n), spec.w[0] * spec.p[0]);
      }
      // Expected layout: groups of p_l ports per child, then groups of p_{l+1} per parent.
      struct Group {
        int level_delta, size, count;
      };
      std::vector<Group> groups;
      if (l > 0) groups.push_back({-1, spec.p[l - 1], spec.m[l - 1]});
      if (l < h) groups.push_back({+1, spec.p[l], spec.w[l]});
      int port = 1;
      for (const Group& g : groups) {
        int64_t previous = -1;
        for (int c = 0; c < g.count; ++c) {
          const PortRef first = f.peer({n, port});
          ASSERT_TRUE(first.valid()) << f.name(n) << " port " << port;
          EXPECT_EQ(LevelOf(f, first.node, h), l + g.level_delta) << f.name(n) << " port " << port;
          EXPECT_GT(IndexOf(f, first.node), previous) << f.name(n) << " port " << port;
          previous = IndexOf(f, first.node);
          for (int k = 0; k < g.size; ++k, ++port) {
            EXPECT_EQ(f.peer({n, port}).node, first.node) << f.name(n) << " port " << port;
          }
        }
      }
      for (; port <= f.num_ports(n); ++port) EXPECT_FALSE(f.peer({n, port}).valid());
    }
  }
}

// ibsim numbers a file written switches (level 1..h) first, then hosts: a switch takes the
// switch counter and adds 1; a CA takes the CA counter and adds its port count + 1; CA port N
// has node GUID + N (see the testbed note; checked against ibnetdiscover output).
TEST(GeneratePgft, GuidsFollowCreationOrderLikeIbsim) {
  for (const PgftSpec& spec : ManySpecs()) {
    SCOPED_TRACE(Describe(spec));
    GenerateOptions options;
    Fabric f;
    ASSERT_TRUE(GeneratePgft(spec, options, &f).ok());
    std::set<Guid> seen;
    Guid next_switch = options.switch_guid_base, next_hca = options.hca_guid_base;
    int previous_level = 1;
    bool in_hosts = false;
    for (NodeId n = 0; n < f.num_nodes(); ++n) {
      EXPECT_TRUE(seen.insert(f.node_guid(n)).second);
      if (f.is_switch(n)) {
        EXPECT_FALSE(in_hosts) << "switch " << f.name(n) << " created after a host";
        const int l = LevelOf(f, n, spec.height);
        EXPECT_GE(l, previous_level);
        previous_level = l;
        EXPECT_EQ(f.node_guid(n), next_switch++);
        EXPECT_EQ(f.port_guid({n, 0}), f.node_guid(n));
      } else {
        in_hosts = true;
        EXPECT_EQ(f.node_guid(n), next_hca);
        for (int p = 1; p <= f.num_ports(n); ++p) {
          EXPECT_EQ(f.port_guid({n, p}), f.node_guid(n) + p);
          EXPECT_TRUE(seen.insert(f.port_guid({n, p})).second);
          EXPECT_EQ(f.FindByPortGuid(f.port_guid({n, p})), (PortRef{n, p}));
        }
        next_hca += f.num_ports(n) + 1;
      }
    }
  }
}

// FORS numbering: server s = gamma*M0 + alpha sits on leaf gamma at position alpha.
TEST(GenerateFatTree2, HostNumberingMatchesFors) {
  const int m0 = 5, m1 = 3, parallel = 2;
  Fabric f;
  ASSERT_TRUE(GenerateFatTree2(m0, m1, parallel, {}, &f).ok());
  ASSERT_EQ(static_cast<int>(f.hcas().size()), m0 * m1);
  ASSERT_EQ(f.num_switches(), m0 + m1);
  for (int leaf = 0; leaf < m1; ++leaf) {
    char name[16];
    std::snprintf(name, sizeof name, "leaf%03d", leaf);
    const NodeId l = f.FindByName(name);
    ASSERT_NE(l, kNoNode) << name;
    for (int alpha = 0; alpha < m0; ++alpha) {
      char host[16];
      std::snprintf(host, sizeof host, "h%05d", leaf * m0 + alpha);
      const PortRef q = f.peer({l, alpha + 1});
      ASSERT_TRUE(q.valid());
      EXPECT_EQ(f.name(q.node), host);
      EXPECT_EQ(f.description(q.node), std::string(host) + " HCA-1");
      EXPECT_EQ(f.hostname(q.node), host);
    }
    // Every leaf reaches every spine with `parallel` cables.
    std::map<std::string, int> spines;
    for (int p = m0 + 1; p <= f.num_ports(l); ++p) spines[f.name(f.peer({l, p}).node)]++;
    ASSERT_EQ(static_cast<int>(spines.size()), m0);
    for (const auto& [spine, count] : spines) {
      EXPECT_EQ(spine.rfind("spine", 0), 0u);
      EXPECT_EQ(count, parallel);
    }
  }
}

TEST(GenerateFatTree2, HostsPerLeafKeepSlotNumbers) {
  GenerateOptions options;
  options.hosts_per_leaf = {4, 2, 0};
  Fabric f;
  ASSERT_TRUE(GenerateFatTree2(4, 3, 1, options, &f).ok());
  EXPECT_EQ(f.hcas().size(), 6u);
  for (const char* present : {"h00000", "h00003", "h00004", "h00005"}) {
    EXPECT_NE(f.FindByName(present), kNoNode) << present;
  }
  for (const char* absent : {"h00006", "h00007", "h00008", "h00011"}) {
    EXPECT_EQ(f.FindByName(absent), kNoNode) << absent;
  }
  EXPECT_EQ(f.name(f.peer({f.FindByName("leaf001"), 2}).node), "h00005");
  EXPECT_FALSE(f.peer({f.FindByName("leaf001"), 3}).valid());
  const NodeId leaf2 = f.FindByName("leaf002");
  for (int p = 1; p <= 4; ++p) EXPECT_FALSE(f.peer({leaf2, p}).valid());
  EXPECT_TRUE(f.peer({leaf2, 5}).valid());  // still cabled to the spines
  EXPECT_EQ(f.num_links(), 6 + 3 * 4);
}

TEST(GeneratePgft, RejectsBadOptions) {
  Fabric f;
  GenerateOptions options;
  options.hosts_per_leaf = {4, 4};  // 3 leaves
  EXPECT_EQ(GenerateFatTree2(4, 3, 1, options, &f).code(), Status::Code::kInvalidArgument);
  options.hosts_per_leaf = {4, 5, 1};  // more than m_1
  EXPECT_FALSE(GenerateFatTree2(4, 3, 1, options, &f).ok());
  options.hosts_per_leaf = {4, -1, 1};
  EXPECT_FALSE(GenerateFatTree2(4, 3, 1, options, &f).ok());
  options.hosts_per_leaf = {1, 1, 1};  // dual-homed hosts cannot be counted per leaf
  EXPECT_FALSE(GeneratePgft(Spec(2, {3, 3}, {2, 3}, {1, 1}), options, &f).ok());

  GenerateOptions small_switch;
  small_switch.switch_ports = 7;  // FT(2;4,3) leaves need 8
  EXPECT_FALSE(GenerateFatTree2(4, 3, 1, small_switch, &f).ok());
  EXPECT_FALSE(GenerateFatTree2(200, 3, 1, {}, &f).ok());  // 400 ports
  EXPECT_FALSE(GeneratePgft(Spec(2, {2, 2}, {1}, {1, 1}), {}, &f).ok());
  EXPECT_FALSE(GeneratePgft(Spec(2, {2, 0}, {1, 2}, {1, 1}), {}, &f).ok());
  EXPECT_FALSE(GeneratePgft(Spec(0, {}, {}, {}), {}, &f).ok());
  EXPECT_FALSE(GenerateKaryNTree(64, 6, {}, &f).ok());  // 64^6 hosts

  GenerateOptions clash;
  clash.hca_guid_base = clash.switch_guid_base + 2;  // overlaps the switch GUIDs
  EXPECT_FALSE(GenerateFatTree2(4, 3, 1, clash, &f).ok());
}

TEST(GenerateKaryNTree, IsTheExpectedPgft) {
  Fabric f;
  ASSERT_TRUE(GenerateKaryNTree(4, 3, {}, &f).ok());
  EXPECT_EQ(f.hcas().size(), 64u);
  EXPECT_EQ(f.num_switches(), 3 * 16);  // n * k^(n-1)
  EXPECT_EQ(f.num_links(), 3 * 64);     // n * k^n
}

TEST(ParsePgftSpec, AcceptsTheThreeForms) {
  PgftSpec s;
  ASSERT_TRUE(ParsePgftSpec("ft2:20,18", &s).ok());
  EXPECT_EQ(s.height, 2);
  EXPECT_EQ(s.m, (std::vector<int>{20, 18}));
  EXPECT_EQ(s.w, (std::vector<int>{1, 20}));
  EXPECT_EQ(s.p, (std::vector<int>{1, 1}));
  ASSERT_TRUE(ParsePgftSpec("kary:4,3", &s).ok());
  EXPECT_EQ(s.height, 3);
  EXPECT_EQ(s.m, (std::vector<int>{4, 4, 4}));
  EXPECT_EQ(s.w, (std::vector<int>{1, 4, 4}));
  EXPECT_EQ(s.p, (std::vector<int>{1, 1, 1}));
  ASSERT_TRUE(ParsePgftSpec("pgft:3;2,2,3;1,2,2;1,2,1", &s).ok());
  EXPECT_EQ(s.height, 3);
  EXPECT_EQ(s.m, (std::vector<int>{2, 2, 3}));
  EXPECT_EQ(s.w, (std::vector<int>{1, 2, 2}));
  EXPECT_EQ(s.p, (std::vector<int>{1, 2, 1}));
  ASSERT_TRUE(ParsePgftSpec("pgft:3; 2, 2, 3; 1,2,2; 1,2,1", &s).ok());
  EXPECT_EQ(s.m, (std::vector<int>{2, 2, 3}));
}

TEST(ParsePgftSpec, ExplainsWhatWasExpected) {
  struct Case {
    const char* text;
    const char* expect;  // part of the message
  };
  for (const Case& c : std::vector<Case>{
           {"", "expected"},
           {"ft2", "expected"},
           {"fat:4,3", "ft2:M0,M1"},
           {"ft2:4", "ft2:M0,M1"},
           {"ft2:4,3,2", "ft2:M0,M1"},
           {"ft2:a,3", "positive integers"},
           {"ft2:4,", "positive integers"},
           {"kary:4", "kary:K,N"},
           {"kary:4,0", "N in"},
           {"kary:0,3", "m_1"},
           {"pgft:3;2,2,3;1,2,2", "four"},
           {"pgft:3;2,2;1,2,2;1,2,1", "values of m"},
           {"pgft:x;2,2;1,2;1,1", "height"},
           {"pgft:2;2,-2;1,2;1,1", "positive integers"},
       }) {
    PgftSpec s;
    const Status st = ParsePgftSpec(c.text, &s);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << c.text;
    EXPECT_NE(st.message().find(c.expect), std::string::npos)
        << "'" << c.text << "' gave: " << st.message();
  }
}

// About 50k hosts and 4k switches must build in well under a second.
TEST(GeneratePgft, LargeFabricIsFast) {
  const PgftSpec spec = Spec(3, {32, 32, 48}, {1, 32, 32}, {1, 1, 1});
  Fabric f;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(GeneratePgft(spec, {}, &f).ok());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  RecordProperty("seconds", std::to_string(seconds));
  EXPECT_EQ(f.hcas().size(), 49152u);
  EXPECT_EQ(f.num_switches(), 1536 + 1536 + 1024);
  EXPECT_EQ(f.num_links(), 49152 + 1536 * 32 + 1536 * 32);
#ifndef SAR_TEST_SANITIZED  // sanitizers slow everything down several times
  EXPECT_LT(seconds, 1.0);
#endif
}

}  // namespace
}  // namespace sar

namespace sar {
namespace {

// --aggregation-nodes: one AN per switch on its last port (one port more than the tree needs);
// the tree itself (hosts, their names and GUIDs, switch cables) is that of the plain fabric.
TEST(GeneratePgft, AggregationNodeOnEverySwitch) {
  PgftSpec spec;
  ASSERT_TRUE(ParsePgftSpec("pgft:3;4,4,4;1,4,2;1,1,1", &spec).ok());
  Fabric plain, with;
  ASSERT_TRUE(GeneratePgft(spec, {}, &plain).ok());
  GenerateOptions o;
  o.aggregation_nodes = true;
  ASSERT_TRUE(GeneratePgft(spec, o, &with).ok());
  ASSERT_EQ(with.num_switches(), plain.num_switches());
  ASSERT_EQ(with.hcas().size(), plain.hcas().size() + plain.switches().size());
  for (size_t i = 0; i < plain.hcas().size(); ++i) {
    const NodeId a = plain.hcas()[i], b = with.hcas()[i];
    EXPECT_EQ(plain.name(a), with.name(b));
    EXPECT_EQ(plain.node_guid(a), with.node_guid(b));
    EXPECT_EQ(plain.name(plain.peer({a, 1}).node), with.name(with.peer({b, 1}).node));
    EXPECT_FALSE(with.is_aggregation_node(b));
  }
  EXPECT_EQ(with.num_links(), plain.num_links() + plain.num_switches());
  std::set<Guid> guids;
  for (NodeId n = 0; n < with.num_nodes(); ++n) guids.insert(with.node_guid(n));
  EXPECT_EQ(guids.size(), static_cast<size_t>(with.num_nodes()));
  for (int s = 0; s < with.num_switches(); ++s) {
    const NodeId sw = with.switches()[s];
    EXPECT_EQ(with.num_ports(sw), plain.num_ports(plain.switches()[s]) + 1);
    const PortRef an = with.peer({sw, with.num_ports(sw)});
    ASSERT_TRUE(an.valid());
    EXPECT_FALSE(with.is_switch(an.node));
    EXPECT_TRUE(with.is_aggregation_node(an.node));
    EXPECT_EQ(with.name(an.node), "an-" + with.name(sw));
    EXPECT_EQ(with.description(an.node), "Mellanox Technologies Aggregation Node");
    EXPECT_EQ(with.hostname(an.node), "");
  }
  // An explicit port count must leave room for the AN.
  o.switch_ports = plain.num_ports(plain.switches()[0]);
  EXPECT_FALSE(GeneratePgft(spec, o, &with).ok());
}

}  // namespace
}  // namespace sar
