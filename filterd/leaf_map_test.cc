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

// A host with several HCAs (rails): every HCA port is kept with its leaf, and its rail follows
// the router's rule (RailsOfPorts): HCA-1,2,5,6 and mlx5_0,1,4,5 are both rails 0..3.
TEST(LeafMap, SubnetDumpKeepsEveryHcaPortOfAHostWithItsRail) {
  std::string text;
  const char* names[2][4] = {{"HCA-1", "HCA-2", "HCA-5", "HCA-6"},
                             {"mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5"}};
  for (int h = 0; h < 2; ++h) {
    for (int r = 0; r < 4; ++r) {
      text += "{ SW Ports:08 NodeGUID:00000000000001" + std::to_string(r) + "0 {rail" +
              std::to_string(r) + "} LID:0002 PN:0" + std::to_string(h + 1) +
              " } { CA Ports:01 NodeGUID:0000000000000" + std::to_string(h) + std::to_string(r) +
              "0 {dgx" + std::to_string(h) + " " + names[h][r] + "} LID:0001 PN:01 } PHY=4x\n";
    }
  }
  LeafMap map;
  ASSERT_TRUE(ParseSubnetLst(text, "s.lst", {}, &map).ok());
  EXPECT_EQ(map.num_hosts(), 2);
  EXPECT_EQ(map.num_leaves(), 4);
  for (const char* host : {"dgx0", "dgx1"}) {
    const std::vector<LeafMap::Port>* ports = map.PortsOf(host);
    ASSERT_NE(ports, nullptr);
    ASSERT_EQ(ports->size(), 4u);
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ((*ports)[r].rail, r) << host;
      EXPECT_EQ(map.leaf_name((*ports)[r].leaf).rfind("rail" + std::to_string(r) + "/", 0), 0u);
    }
  }
}

}  // namespace
}  // namespace sar::filterd
