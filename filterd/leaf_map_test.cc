#include "leaf_map.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

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

// Two leaves under a spine, two hosts per leaf; the truth is the cabling built here.
Fabric TwoLeafFabric() {
  Fabric f;
  const NodeId leaf0 = f.AddNode(NodeKind::kSwitch, 4, 0x100, "leaf0", "leaf0");
  const NodeId leaf1 = f.AddNode(NodeKind::kSwitch, 4, 0x200, "leaf1", "leaf1");
  const NodeId spine = f.AddNode(NodeKind::kSwitch, 4, 0x300, "spine", "spine");
  EXPECT_TRUE(f.Connect({leaf0, 4}, {spine, 1}).ok());
  EXPECT_TRUE(f.Connect({leaf1, 4}, {spine, 2}).ok());
  for (int i = 0; i < 4; ++i) {
    const std::string host = "h" + std::to_string(i);
    const NodeId h = f.AddNode(NodeKind::kHca, 1, 0x1000 + 16 * i, host, host + " HCA-1");
    EXPECT_TRUE(f.Connect({h, 1}, {i < 2 ? leaf0 : leaf1, 1 + i % 2}).ok());
  }
  f.AddNode(NodeKind::kHca, 1, 0x9000, "loose", "loose HCA-1");  // not cabled: not a host
  return f;
}

TEST(LeafMap, FromFabricFollowsTheCables) {
  const Fabric f = TwoLeafFabric();
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
  const LeafMap map = LeafMapFromFabric(TwoLeafFabric(), names);
  EXPECT_EQ(map.leaf_name(map.LeafOf("cn-a")), "leaf0");
  EXPECT_EQ(map.leaf_name(map.LeafOf("cn-b")), "leaf0");
  EXPECT_EQ(map.LeafOf("h0"), LeafMap::kUnknown);  // renamed away
  std::ofstream(path) << "0x1000 cn-a\n";
  Status s = ReadNodeNameMap(path, &names);
  EXPECT_NE(s.message().find(":1:"), std::string::npos) << s.message();
  unlink(path);
}

}  // namespace
}  // namespace sar::filterd
