// Reader, engines and metrics on tests/data/derived-edr.ibnetdiscover: a dump in the live
// ibnetdiscover form with what production fabrics have and generated ones lack (port GUID =
// node GUID, parallel cables, LIDs in no order with holes, one cable trained down to 4xDDR).
#include <gtest/gtest.h>

#include <set>

#include "engines/sssp_test_util.h"
#include "io/test_util.h"
#include "sar/io/topology.h"

namespace sar {
namespace {

using sssptest::ExpectValid;
using sssptest::Measure;
using sssptest::RandomJobs;
using sssptest::Route;

Fabric ReadDerived() {
  Fabric f;
  const Status s = ReadTopology(io::testing::TestDataPath("derived-edr.ibnetdiscover"), &f);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return f;
}

TEST(DerivedDump, ReaderKeepsWhatProductionDumpsHave) {
  const Fabric f = ReadDerived();
  ASSERT_EQ(f.num_switches(), 5);
  ASSERT_EQ(f.hcas().size(), 12u);
  for (NodeId h : f.hcas()) {
    EXPECT_EQ(f.port_guid({h, 1}), f.node_guid(h)) << f.name(h);  // ConnectX: port = node GUID
  }
  // Parallel cables: 12 switch-to-switch cables between 6 leaf-spine pairs.
  int inter = 0;
  std::set<std::pair<NodeId, NodeId>> pairs;
  for (PortId id = 0; id < f.num_port_slots(); ++id) {
    if (!f.is_inter_switch(id)) continue;
    ++inter;
    pairs.insert({f.port_node(id), f.port_node(f.peer_id(id))});
  }
  EXPECT_EQ(inter, 24);  // directed
  EXPECT_EQ(pairs.size(), 12u);
  // LIDs as given, with holes: 17 ports hold LIDs up to 29.
  EXPECT_EQ(f.max_lid(), 29u);
  for (Lid hole : {7u, 8u, 19u}) EXPECT_FALSE(f.lid_owner(hole).valid()) << hole;
  // One cable at 4xDDR (both directions), the rest at the nominal 4xEDR.
  EXPECT_EQ(LinkRateString(f.nominal_rate()), "4xEDR");
  int slow = 0;
  for (PortId id = 0; id < f.num_port_slots(); ++id) {
    if (f.peer_id(id) != kNoPort && LinkRateString(f.link_rate(id)) == "4xDDR") ++slow;
  }
  EXPECT_EQ(slow, 2);
}

TEST(DerivedDump, EveryEngineRoutesItAndMetricsSeeTheSlowCable) {
  const Fabric f = ReadDerived();
  const std::vector<ResolvedJob> jobs = RandomJobs(f, 5, 6);
  for (const char* engine : {"minhop", "updn", "dfsssp", "sar"}) {
    RoutingOutput out;
    const Status s = Route(engine, f, &out, &jobs);
    ASSERT_TRUE(s.ok()) << engine << ": " << s.ToString();
    ExpectValid(f, out, 8, true);
    const Metrics m = Measure(f, out.lfts, jobs);
    EXPECT_EQ(m.slow_channels, 2) << engine;
    // 4xDDR is 0.16 of 4xEDR: the per-capacity figure counts the slow cable 6.25 times.
    EXPECT_GE(m.efi_per_capacity.max, static_cast<double>(m.efi.max)) << engine;
  }
}

}  // namespace
}  // namespace sar
