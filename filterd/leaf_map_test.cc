#include "leaf_map.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "sar/io/topology.h"
#include "test_util.h"

namespace sar::filterd {
namespace {

TEST(LeafMap, TopologyConfLeavesAndUpperLevels) {
  LeafMap map;
  Status s = ParseTopologyConf(
      "# comment\nSwitchName=leaf00 Nodes=n[001-004]\nswitchname=leaf01 nodes=n[005-008]\n\n"
      "SwitchName=spine Switches=leaf[00-01]\n",
      "t.conf", &map);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(map.num_leaves(), 2);  // the spine holds no nodes
  EXPECT_EQ(map.num_hosts(), 8);
  EXPECT_EQ(map.leaf_name(map.LeafOf("n003")), "leaf00");
  EXPECT_EQ(map.leaf_name(map.LeafOf("n005")), "leaf01");
  EXPECT_EQ(map.LeafOf("n009"), LeafMap::kUnknown);
}

TEST(LeafMap, TopologyConfErrorsNameTheLine) {
  LeafMap map;
  Status s = ParseTopologyConf("SwitchName=a Nodes=n[1-2]\nNodes=n3\n", "t.conf", &map);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("t.conf:2:"), std::string::npos) << s.message();
  s = ParseTopologyConf("SwitchName=a Nodes=n[2-1]\n", "t.conf", &map);
  EXPECT_NE(s.message().find("t.conf:1:"), std::string::npos) << s.message();
}

// TwoLeafFabric plus an HCA that is not cabled (so not a host).
Fabric TwoLeafFabricWithLooseHca() {
  Fabric f = TwoLeafFabric();
  f.AddNode(NodeKind::kHca, 1, 0x9000, "loose", "loose HCA-1");
  return f;
}

TEST(LeafMap, FromFabricFollowsTheCables) {
  const Fabric f = TwoLeafFabricWithLooseHca();
  const LeafMap map = LeafMapFromFabric(f, {});
  EXPECT_EQ(map.num_hosts(), 4);
  EXPECT_EQ(map.leaf_name(map.LeafOf("h0")), "leaf0");
  EXPECT_EQ(map.leaf_name(map.LeafOf("h1")), "leaf0");
  EXPECT_EQ(map.leaf_name(map.LeafOf("h3")), "leaf1");
  EXPECT_EQ(map.LeafOf("loose"), LeafMap::kUnknown);
}

TEST(LeafMap, NodeNameMapRenamesHosts) {
  char path[] = "/tmp/sarf_nnm_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << "# OpenSM node-name-map\n0x1000 \"cn-a HCA-1\"\n0x1010 \"cn-b\"\n";
  std::unordered_map<Guid, std::string> names;
  ASSERT_TRUE(ReadNodeNameMap(path, &names).ok());
  const LeafMap map = LeafMapFromFabric(TwoLeafFabricWithLooseHca(), names);
  EXPECT_EQ(map.leaf_name(map.LeafOf("cn-a")), "leaf0");
  EXPECT_EQ(map.leaf_name(map.LeafOf("cn-b")), "leaf0");
  EXPECT_EQ(map.LeafOf("h0"), LeafMap::kUnknown);  // renamed away
  std::ofstream(path) << "0x1000 cn-a\n";
  Status s = ReadNodeNameMap(path, &names);
  EXPECT_NE(s.message().find(":1:"), std::string::npos) << s.message();
  unlink(path);
}

// The same small fabric seen two ways: OpenSM's own subnet dump (captured from the real OpenSM
// routing tests/data/small.topo on ibsim) and libsar's reader of the topology file.
TEST(LeafMap, OpenSmSubnetDumpAgreesWithTheTopologyFile) {
  LeafMap from_dump;
  Status s = ReadSubnetLst(
      std::string(SAR_SOURCE_DIR) + "/filterd/testdata/small.opensm-subnet.lst", {}, &from_dump);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Fabric fabric;
  ASSERT_TRUE(ReadTopology(std::string(SAR_SOURCE_DIR) + "/tests/data/small.topo", &fabric).ok());
  const LeafMap from_topo = LeafMapFromFabric(fabric, {});
  ASSERT_EQ(from_dump.num_hosts(), from_topo.num_hosts());
  ASSERT_GT(from_topo.num_hosts(), 0);
  for (const std::string& host : from_topo.Hosts()) {
    ASSERT_NE(from_dump.LeafOf(host), LeafMap::kUnknown) << host;
    // Leaf names differ in form ("leaf01/0x..." vs "leaf01"); the switch description matches.
    EXPECT_EQ(from_dump.leaf_name(from_dump.LeafOf(host))
                  .rfind(from_topo.leaf_name(from_topo.LeafOf(host)) + "/", 0),
              0u)
        << host;
  }
  LeafMap bad;
  s = ParseSubnetLst("{ SW Ports:08 NodeGUID:zz {x} }\n", "s.lst", {}, &bad);
  EXPECT_NE(s.message().find("s.lst:1:"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sar::filterd
