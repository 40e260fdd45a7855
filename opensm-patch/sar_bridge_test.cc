// The C bridge against independent truths: tables walked hop by hop, the engine run directly on
// a fabric built in canonical order by this test, and the order-independence OpenSM needs.
#include "sar_bridge.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sar/engine.h"
#include "sar/fabric.h"
#include "sar/generate.h"
#include "sar/jobs.h"
#include "sar/lids.h"
#include "test_fabrics.h"

namespace {

using sar::Fabric;
using sar::NodeId;

// The bridge's flat arrays for `f`, listing nodes in `order` (a permutation of node ids).
struct Flat {
  std::vector<SarBridgeNode> nodes;
  std::vector<SarBridgePort> ports;
  std::vector<SarBridgeLink> links;
  std::vector<std::string> desc;
  std::vector<NodeId> fabric_node;  // flat index -> NodeId of f
  SarBridgeFabric view() const {
    return {nodes.data(), static_cast<int>(nodes.size()),
            ports.data(), static_cast<int>(ports.size()),
            links.data(), static_cast<int>(links.size())};
  }
};

Flat Flatten(const Fabric& f, const std::vector<NodeId>& order) {
  Flat out;
  std::vector<int> index(f.num_nodes());
  out.desc.reserve(order.size());
  for (NodeId n : order) {
    index[n] = static_cast<int>(out.nodes.size());
    out.desc.push_back(f.description(n));
    out.nodes.push_back({f.node_guid(n), f.is_switch(n), f.num_ports(n), nullptr});
    out.fabric_node.push_back(n);
  }
  for (size_t i = 0; i < out.nodes.size(); ++i) out.nodes[i].description = out.desc[i].c_str();
  for (NodeId n : order) {
    for (int p = f.is_switch(n) ? 0 : 1; p <= (f.is_switch(n) ? 0 : f.num_ports(n)); ++p) {
      if (f.base_lid({n, p}) == 0) continue;
      out.ports.push_back({index[n], p, f.port_guid({n, p}), f.base_lid({n, p}), f.lmc({n, p})});
    }
    for (int p = 1; p <= f.num_ports(n); ++p) {
      const sar::PortRef q = f.peer({n, p});
      if (q.valid() && (q.node > n || (q.node == n && q.port > p))) {
        out.links.push_back({index[n], p, index[q.node], q.port});
      }
    }
  }
  return out;
}

Fabric ThreeLevel() {
  sar::PgftSpec spec;
  EXPECT_TRUE(sar::ParsePgftSpec("pgft:3;4,2,2;1,2,2;1,1,1", &spec).ok());
  Fabric f;
  EXPECT_TRUE(sar::GeneratePgft(spec, {}, &f).ok());
  EXPECT_TRUE(sar::AssignLids({}, &f).ok());
  return f;
}

std::string TempFile(const std::string& name, const std::string& text) {
  static const std::string dir = [] {
    std::string t = "/tmp/osmsar_bridge_test.XXXXXX";
    EXPECT_NE(::mkdtemp(t.data()), nullptr);
    return t;
  }();
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// Two jobs, each spread over several leaves, from the fabric's own host names.
std::string Mapping(const Fabric& f) {
  std::string text;
  const auto& h = f.hcas();
  for (size_t i = 0; i < h.size(); ++i) {
    if (i % 3 == 2) continue;
    text += std::string(f.hostname(h[i])) + (i % 2 ? " 101\n" : " 202\n");
  }
  return text;
}

SarBridgeConfig Config(const std::string& engine, const std::string& mapping) {
  SarBridgeConfig c;
  SarBridgeConfigInit(&c);
  std::snprintf(c.engine, sizeof c.engine, "%s", engine.c_str());
  std::snprintf(c.mapping_file, sizeof c.mapping_file, "%s", mapping.c_str());
  c.threads = 1;
  return c;
}

struct Routed {
  SarBridgeResult* r = nullptr;
  std::string err;
  ~Routed() { SarBridgeFree(r); }
};

void RouteFlat(const Flat& flat, const SarBridgeConfig& c, Routed* out) {
  char err[1024] = "";
  const SarBridgeFabric view = flat.view();
  if (SarBridgeRoute(&view, &c, &out->r, err, sizeof err) != 0) out->err = err;
}

// Tables keyed by switch GUID, as the switches would hold them.
std::map<sar::Guid, std::vector<uint8_t>> TablesByGuid(const Flat& flat, const SarBridgeResult* r) {
  std::map<sar::Guid, std::vector<uint8_t>> t;
  for (size_t i = 0; i < flat.nodes.size(); ++i) {
    const uint8_t* row = SarBridgeLftRow(r, static_cast<int>(i));
    EXPECT_EQ(row == nullptr, !flat.nodes[i].is_switch);
    if (row) t[flat.nodes[i].guid].assign(row, row + SarBridgeMaxLid(r) + 1);
  }
  return t;
}

std::vector<NodeId> Identity(const Fabric& f) {
  std::vector<NodeId> order(f.num_nodes());
  for (NodeId n = 0; n < f.num_nodes(); ++n) order[n] = n;
  return order;
}

TEST(SarBridge, TablesDeliverEveryRouteWalkedHopByHop) {
  const Fabric f = ThreeLevel();
  const Flat flat = Flatten(f, Identity(f));
  Routed routed;
  RouteFlat(flat, Config("sar", TempFile("jobs_walk", Mapping(f))), &routed);
  ASSERT_NE(routed.r, nullptr) << routed.err;
  EXPECT_STREQ(SarBridgeEngineUsed(routed.r), "sar");
  // Copy the bridge's rows into an LftSet indexed by this fabric's switches and walk them.
  sar::LftSet lfts(f);
  for (size_t i = 0; i < flat.nodes.size(); ++i) {
    const NodeId n = flat.fabric_node[i];
    if (!f.is_switch(n)) continue;
    const uint8_t* row = SarBridgeLftRow(routed.r, static_cast<int>(i));
    ASSERT_NE(row, nullptr);
    for (sar::Lid l = 0; l <= f.max_lid(); ++l) lfts.set_port(f.switch_index(n), l, row[l]);
  }
  for (const sar::PortRef& src : f.Endpoints()) {
    for (const sar::PortRef& dst : f.Endpoints()) {
      if (src == dst) continue;
      const auto route = sar::testfab::NaiveWalk(f, lfts, src, f.base_lid(dst));
      EXPECT_EQ(route.fate, sar::RouteFate::kDelivered)
          << f.name(src.node) << "->" << f.name(dst.node);
    }
  }
}

// LMC 1: OpenSM hands the plugin LID ranges; every LID of every HCA must be routed.
TEST(SarBridge, EveryLidOfAnLmcRangeIsDelivered) {
  const Fabric f = sar::testfab::FatTree2(4, 2, 3, /*lmc=*/1);
  const Flat flat = Flatten(f, Identity(f));
  Routed routed;
  RouteFlat(flat, Config("dfsssp", ""), &routed);
  ASSERT_NE(routed.r, nullptr) << routed.err;
  sar::LftSet lfts(f);
  for (size_t i = 0; i < flat.nodes.size(); ++i) {
    const NodeId n = flat.fabric_node[i];
    if (!f.is_switch(n)) continue;
    const uint8_t* row = SarBridgeLftRow(routed.r, static_cast<int>(i));
    for (sar::Lid l = 0; l <= f.max_lid(); ++l) lfts.set_port(f.switch_index(n), l, row[l]);
  }
  int routes = 0;
  for (const sar::PortRef& src : f.Endpoints()) {
    for (const sar::PortRef& dst : f.Endpoints()) {
      if (src == dst) continue;
      ASSERT_EQ(f.lmc(dst), 1);
      for (sar::Lid l = f.base_lid(dst); l < f.base_lid(dst) + 2; ++l, ++routes) {
        EXPECT_EQ(sar::testfab::NaiveWalk(f, lfts, src, l).fate, sar::RouteFate::kDelivered);
      }
    }
  }
  EXPECT_EQ(routes, 12 * 11 * 2);
}

TEST(SarBridge, NodeOrderOfTheInputDoesNotChangeTheTables) {
  const Fabric f = ThreeLevel();
  const std::string jobs = TempFile("jobs_order", Mapping(f));
  std::vector<NodeId> order = Identity(f);
  const Flat a = Flatten(f, order);
  std::mt19937 rng(7);
  std::shuffle(order.begin(), order.end(), rng);
  const Flat b = Flatten(f, order);
  Routed ra, rb;
  RouteFlat(a, Config("sar", jobs), &ra);
  RouteFlat(b, Config("sar", jobs), &rb);
  ASSERT_NE(ra.r, nullptr) << ra.err;
  ASSERT_NE(rb.r, nullptr) << rb.err;
  EXPECT_EQ(TablesByGuid(a, ra.r), TablesByGuid(b, rb.r));
  for (const sar::PortRef& s : f.Endpoints()) {
    for (const sar::PortRef& d : f.Endpoints()) {
      EXPECT_EQ(SarBridgeLayer(ra.r, f.base_lid(s), f.base_lid(d)),
                SarBridgeLayer(rb.r, f.base_lid(s), f.base_lid(d)));
    }
  }
}

// What sar-route computes for the same subnet once its topology lists switches, then HCAs, each
// by GUID: built here node by node, independently of the bridge.
TEST(SarBridge, EqualsTheEngineOnTheCanonicallyOrderedFabric) {
  const Fabric f = ThreeLevel();
  const std::string jobs_path = TempFile("jobs_canon", Mapping(f));
  std::vector<NodeId> order = Identity(f);
  std::reverse(order.begin(), order.end());  // not canonical on purpose
  const Flat flat = Flatten(f, order);
  Routed routed;
  RouteFlat(flat, Config("sar", jobs_path), &routed);
  ASSERT_NE(routed.r, nullptr) << routed.err;

  std::vector<NodeId> canon = Identity(f);
  std::sort(canon.begin(), canon.end(), [&](NodeId x, NodeId y) {
    if (f.is_switch(x) != f.is_switch(y)) return f.is_switch(x);
    return f.node_guid(x) < f.node_guid(y);
  });
  Fabric g;
  std::vector<NodeId> g_of(f.num_nodes());
  for (NodeId n : canon) {
    g_of[n] = g.AddNode(f.kind(n), f.num_ports(n), f.node_guid(n), f.name(n), f.description(n));
  }
  for (NodeId n = 0; n < f.num_nodes(); ++n) {
    for (int p = 0; p <= f.num_ports(n); ++p) {
      if (f.base_lid({n, p})) {
        ASSERT_TRUE(g.SetLid({g_of[n], p}, f.base_lid({n, p}), 0).ok());
      }
      const sar::PortRef q = f.peer({n, p});
      if (p > 0 && q.valid() && q.node > n) {
        ASSERT_TRUE(g.Connect({g_of[n], p}, {g_of[q.node], q.port}).ok());
      }
    }
  }
  sar::JobMapping mapping;
  std::string text = Mapping(f);
  for (size_t pos = 0; pos < text.size();) {
    const size_t eol = text.find('\n', pos);
    const std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    const std::string host = line.substr(0, line.find(' ')), id = line.substr(line.find(' ') + 1);
    auto it = std::find_if(mapping.jobs.begin(), mapping.jobs.end(),
                           [&](const sar::Job& j) { return j.id == id; });
    if (it == mapping.jobs.end()) it = mapping.jobs.insert(mapping.jobs.end(), sar::Job{id, {}});
    it->hosts.push_back(host);
  }
  const std::vector<sar::ResolvedJob> jobs = sar::ResolveJobs(g, mapping);
  sar::RoutingInput in;
  in.fabric = &g;
  in.jobs = &jobs;
  in.threads = 1;
  sar::RoutingOutput out;
  ASSERT_TRUE(sar::MakeRoutingEngine("sar")->Route(in, &out).ok());
  for (size_t i = 0; i < flat.nodes.size(); ++i) {
    const NodeId n = g_of[flat.fabric_node[i]];
    if (!g.is_switch(n)) continue;
    const uint8_t* row = SarBridgeLftRow(routed.r, static_cast<int>(i));
    for (sar::Lid l = 0; l <= g.max_lid(); ++l) {
      ASSERT_EQ(row[l], out.lfts.port(g.switch_index(n), l)) << g.name(n) << " lid " << l;
    }
  }
  for (const sar::PortRef& s : f.Endpoints()) {
    for (const sar::PortRef& d : f.Endpoints()) {
      EXPECT_EQ(SarBridgeLayer(routed.r, f.base_lid(s), f.base_lid(d)),
                out.layers.get(f.base_lid(s), f.base_lid(d)));
    }
  }
}

TEST(SarBridge, MissingOrEmptyMappingFallsBackToDfsssp) {
  const Fabric f = ThreeLevel();
  const Flat flat = Flatten(f, Identity(f));
  Routed missing, empty, dfsssp;
  RouteFlat(flat, Config("sar", "/nonexistent/osmsar/jobs"), &missing);
  RouteFlat(flat, Config("sar", TempFile("jobs_empty", "# nothing\n")), &empty);
  RouteFlat(flat, Config("dfsssp", ""), &dfsssp);
  ASSERT_NE(missing.r, nullptr) << missing.err;
  ASSERT_NE(empty.r, nullptr) << empty.err;
  ASSERT_NE(dfsssp.r, nullptr) << dfsssp.err;
  EXPECT_STREQ(SarBridgeEngineUsed(missing.r), "dfsssp");
  EXPECT_STREQ(SarBridgeEngineUsed(empty.r), "dfsssp");
  EXPECT_EQ(TablesByGuid(flat, missing.r), TablesByGuid(flat, dfsssp.r));
  ASSERT_GE(SarBridgeNumNotes(missing.r), 1);
  EXPECT_NE(std::string(SarBridgeNote(missing.r, 0)).find("does not exist"), std::string::npos);
}

TEST(SarBridge, BrokenMappingFailsNamingFileAndLine) {
  const Fabric f = ThreeLevel();
  const Flat flat = Flatten(f, Identity(f));
  const std::string path =
      TempFile("jobs_bad", std::string(f.hostname(f.hcas()[0])) + " 1\nh a b c\n");
  Routed routed;
  RouteFlat(flat, Config("sar", path), &routed);
  EXPECT_EQ(routed.r, nullptr);
  EXPECT_NE(routed.err.find(path + ":2"), std::string::npos) << routed.err;
}

TEST(SarBridge, TooFewVirtualLanesFail) {
  // A 6-switch ring needs two layers: its shortest routes close a cycle of dependencies.
  Fabric ring = sar::testfab::Ring(6, 2);
  const Flat flat = Flatten(ring, Identity(ring));
  SarBridgeConfig c = Config("dfsssp", "");
  c.num_vls = 1;
  Routed one, two;
  RouteFlat(flat, c, &one);
  EXPECT_EQ(one.r, nullptr);
  EXPECT_FALSE(one.err.empty());
  c.num_vls = 4;
  RouteFlat(flat, c, &two);
  ASSERT_NE(two.r, nullptr) << two.err;
  EXPECT_GE(SarBridgeNumLayers(two.r), 2);
}

TEST(SarBridgeConfig, DefaultsAndEveryKey) {
  SarBridgeConfig c;
  SarBridgeConfigInit(&c);
  EXPECT_STREQ(c.engine, "sar");
  EXPECT_EQ(c.num_vls, 8);
  const std::string path = TempFile(
      "ok.conf",
      "# comment\n\nengine dfsssp\nmapping_file /run/sar/jobs  # trailing\ncn_guid_file /a\n"
      "io_guid_file /b\nnum_vls 4\nthreads 2\nallow_disconnected true\n");
  char err[512] = "";
  ASSERT_EQ(SarBridgeReadConfig(path.c_str(), &c, err, sizeof err), 0) << err;
  EXPECT_STREQ(c.engine, "dfsssp");
  EXPECT_STREQ(c.mapping_file, "/run/sar/jobs");
  EXPECT_STREQ(c.cn_guid_file, "/a");
  EXPECT_STREQ(c.io_guid_file, "/b");
  EXPECT_EQ(c.num_vls, 4);
  EXPECT_EQ(c.threads, 2);
  EXPECT_EQ(c.allow_disconnected, 1);
}

TEST(SarBridgeConfig, BadLinesNameFileAndLine) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"engine sar\nbogus_key 1\n", ":2:"},
      {"engine ftree\n", ":1:"},
      {"\nnum_vls 16\n", ":2:"},
      {"num_vls x\n", ":1:"},
      {"mapping_file\n", ":1:"},
      {"threads -1\n", ":1:"}};
  for (size_t i = 0; i < bad.size(); ++i) {
    const std::string path = TempFile("bad" + std::to_string(i) + ".conf", bad[i].first);
    SarBridgeConfig c;
    SarBridgeConfigInit(&c);
    char err[512] = "";
    EXPECT_NE(SarBridgeReadConfig(path.c_str(), &c, err, sizeof err), 0) << bad[i].first;
    EXPECT_NE(std::string(err).find(path + bad[i].second), std::string::npos) << err;
  }
}

// The shipped sample must load as it is.
TEST(SarBridgeConfig, ShippedSampleLoads) {
  std::string here = __FILE__;
  const std::string sample = here.substr(0, here.rfind("opensm-patch/")) + "config/osmsar.conf";
  SarBridgeConfig c;
  SarBridgeConfigInit(&c);
  char err[512] = "";
  EXPECT_EQ(SarBridgeReadConfig(sample.c_str(), &c, err, sizeof err), 0) << err;
}

}  // namespace
