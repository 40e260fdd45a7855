#include "sar/model/fabric.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sar {
namespace {

// A switch with 4 ports and two HCAs (one single-, one dual-port), nothing cabled yet.
struct Small {
  Fabric f;
  NodeId sw, a, b;
  Small() {
    sw = f.AddNode(NodeKind::kSwitch, 4, 0x100, "sw", "sw switch");
    a = f.AddNode(NodeKind::kHca, 1, 0x200, "a", "hosta HCA-1");
    b = f.AddNode(NodeKind::kHca, 2, 0x300, "b", "  hostb\tHCA-2 extra");
  }
};

TEST(Fabric, AddNodeKeepsKindsIndicesAndLookups) {
  Small s;
  ASSERT_NE(s.sw, kNoNode);
  ASSERT_NE(s.a, kNoNode);
  ASSERT_NE(s.b, kNoNode);
  const Fabric& f = s.f;
  EXPECT_EQ(f.num_nodes(), 3);
  EXPECT_TRUE(f.is_switch(s.sw));
  EXPECT_FALSE(f.is_switch(s.a));
  EXPECT_EQ(f.kind(s.b), NodeKind::kHca);
  EXPECT_EQ(f.switches(), std::vector<NodeId>{s.sw});
  EXPECT_EQ(f.hcas(), (std::vector<NodeId>{s.a, s.b}));
  EXPECT_EQ(f.switch_index(s.sw), 0);
  EXPECT_EQ(f.switch_index(s.a), -1);
  EXPECT_EQ(f.num_switches(), 1);
  EXPECT_EQ(f.num_ports(s.b), 2);
  // Slot 0 on every node: 5 + 2 + 3 slots.
  EXPECT_EQ(f.num_port_slots(), 10);
  EXPECT_EQ(f.name(s.a), "a");
  EXPECT_EQ(f.description(s.a), "hosta HCA-1");

  EXPECT_EQ(f.FindByName("b"), s.b);
  EXPECT_EQ(f.FindByName("nope"), kNoNode);
  EXPECT_EQ(f.FindByNodeGuid(0x100), s.sw);
  EXPECT_EQ(f.FindByNodeGuid(0x300), s.b);
  EXPECT_EQ(f.FindByNodeGuid(0x999), kNoNode);
  // Port GUIDs: a switch's node GUID on port 0, an HCA's node GUID + port number.
  EXPECT_EQ(f.FindByPortGuid(0x100), (PortRef{s.sw, 0}));
  EXPECT_EQ(f.FindByPortGuid(0x302), (PortRef{s.b, 2}));
  EXPECT_EQ(f.FindByPortGuid(0x201), (PortRef{s.a, 1}));
  EXPECT_FALSE(f.FindByPortGuid(0x200).valid());  // an HCA's node GUID is not a port GUID
  EXPECT_EQ(f.port_guid({s.b, 1}), 0x301u);

  // Port ids and refs are inverse.
  for (PortId id = 0; id < f.num_port_slots(); ++id) {
    EXPECT_EQ(f.port_id(f.port_ref(id)), id);
    EXPECT_EQ(f.port_node(id), f.port_ref(id).node);
  }
}

TEST(Fabric, AddNodeRejectsDuplicatesAndBadPortCounts) {
  Small s;
  std::string err;
  EXPECT_EQ(s.f.AddNode(NodeKind::kHca, 1, 0x900, "a", "", &err), kNoNode);
  EXPECT_NE(err.find("duplicate node name 'a'"), std::string::npos) << err;
  EXPECT_EQ(s.f.AddNode(NodeKind::kHca, 1, 0x200, "c", "", &err), kNoNode);
  EXPECT_NE(err.find("duplicate node GUID"), std::string::npos) << err;
  EXPECT_EQ(s.f.AddNode(NodeKind::kSwitch, 0, 0x400, "sw3", "", &err), kNoNode);
  EXPECT_NE(err.find("0 ports"), std::string::npos) << err;
  EXPECT_EQ(s.f.AddNode(NodeKind::kSwitch, kMaxPorts + 1, 0x400, "sw3", "", &err), kNoNode);
  // Nothing of the rejected nodes stayed behind.
  EXPECT_EQ(s.f.num_nodes(), 3);
  EXPECT_EQ(s.f.FindByName("sw3"), kNoNode);
  EXPECT_NE(s.f.AddNode(NodeKind::kSwitch, kMaxPorts, 0x400, "sw3", ""), kNoNode);
}

TEST(Fabric, ConnectJoinsBothEndsAndDisconnectUndoesIt) {
  Small s;
  Fabric& f = s.f;
  ASSERT_TRUE(f.Connect({s.a, 1}, {s.sw, 3}).ok());
  ASSERT_TRUE(f.Connect({s.sw, 1}, {s.b, 2}).ok());
  EXPECT_EQ(f.num_links(), 2);
  EXPECT_EQ(f.peer({s.a, 1}), (PortRef{s.sw, 3}));
  EXPECT_EQ(f.peer({s.sw, 3}), (PortRef{s.a, 1}));
  EXPECT_EQ(f.peer({s.b, 2}), (PortRef{s.sw, 1}));
  EXPECT_EQ(f.peer_id(f.port_id(s.sw, 1)), f.port_id(s.b, 2));
  EXPECT_FALSE(f.peer({s.b, 1}).valid());
  EXPECT_FALSE(f.peer({s.sw, 0}).valid());
  // Endpoints: cabled HCA ports only, in HCA order.
  EXPECT_EQ(f.Endpoints(), (std::vector<PortRef>{{s.a, 1}, {s.b, 2}}));
  EXPECT_FALSE(f.is_inter_switch(f.port_id(s.sw, 3)));

  f.Disconnect({s.sw, 3});  // from either end
  EXPECT_EQ(f.num_links(), 1);
  EXPECT_FALSE(f.peer({s.a, 1}).valid());
  EXPECT_FALSE(f.peer({s.sw, 3}).valid());
  f.Disconnect({s.sw, 3});  // no-op
  EXPECT_EQ(f.num_links(), 1);
  EXPECT_EQ(f.Endpoints(), (std::vector<PortRef>{{s.b, 2}}));
  // The port is free again.
  EXPECT_TRUE(f.Connect({s.sw, 3}, {s.a, 1}).ok());
}

TEST(Fabric, ConnectRejectsBadPortsAndDoubleCables) {
  Small s;
  Fabric& f = s.f;
  ASSERT_TRUE(f.Connect({s.a, 1}, {s.sw, 1}).ok());
  const NodeId sw2 = f.AddNode(NodeKind::kSwitch, 2, 0x500, "sw2", "");
  struct Case {
    PortRef x, y;
    const char* why;
  };
  const Case cases[] = {
      {{s.sw, 0}, {s.b, 1}, "has no port 0"},
      {{s.sw, 5}, {s.b, 1}, "has no port 5"},
      {{s.b, 1}, {s.b, 3}, "'b' has no port 3"},
      {{99, 1}, {s.b, 1}, "no node with id 99"},
      {{s.sw, 2}, {s.sw, 2}, "cabled to itself"},
      {{s.b, 1}, {s.sw, 1}, "port 1 of 'sw' is already cabled to port 1 of 'a'"},
      {{s.a, 1}, {sw2, 1}, "port 1 of 'a' is already cabled"},
      {{s.a, 1}, {s.b, 1}, "already cabled"},
      {{s.b, 1}, {s.b, 2}, "HCA 'b' cabled directly to HCA 'b'"},
  };
  for (const Case& c : cases) {
    const Status st = f.Connect(c.x, c.y);
    EXPECT_EQ(st.code(), Status::Code::kInvalidArgument) << c.why;
    EXPECT_NE(st.message().find(c.why), std::string::npos) << st.message();
  }
  // A rejected Connect changes nothing.
  EXPECT_EQ(f.num_links(), 1);
  EXPECT_FALSE(f.peer({s.b, 1}).valid());
  EXPECT_FALSE(f.peer({sw2, 1}).valid());
  // Parallel cables between two switches are fine and are separate channels.
  ASSERT_TRUE(f.Connect({s.sw, 2}, {sw2, 1}).ok());
  ASSERT_TRUE(f.Connect({s.sw, 3}, {sw2, 2}).ok());
  EXPECT_EQ(f.num_links(), 3);
  EXPECT_TRUE(f.is_inter_switch(f.port_id(s.sw, 2)));
  EXPECT_TRUE(f.is_inter_switch(f.port_id(sw2, 2)));
  EXPECT_FALSE(f.is_inter_switch(f.port_id(s.sw, 1)));
  EXPECT_FALSE(f.is_inter_switch(f.port_id(s.sw, 4)));
}

TEST(Fabric, LidOwnerCoversEveryLidOfAnLmcRange) {
  Small s;
  Fabric& f = s.f;
  ASSERT_TRUE(f.SetLid({s.sw, 0}, 1, 0).ok());
  ASSERT_TRUE(f.SetLid({s.b, 2}, 8, 2).ok());  // 8..11
  ASSERT_TRUE(f.SetLid({s.a, 1}, 4, 1).ok());  // 4..5
  EXPECT_EQ(f.switch_lid(s.sw), 1u);
  EXPECT_EQ(f.base_lid({s.b, 2}), 8u);
  EXPECT_EQ(f.lmc({s.b, 2}), 2);
  EXPECT_EQ(f.max_lid(), 11u);
  for (Lid l = 8; l <= 11; ++l) EXPECT_EQ(f.lid_owner(l), (PortRef{s.b, 2})) << l;
  EXPECT_EQ(f.lid_owner(4), (PortRef{s.a, 1}));
  EXPECT_EQ(f.lid_owner(5), (PortRef{s.a, 1}));
  EXPECT_EQ(f.lid_owner(1), (PortRef{s.sw, 0}));
  for (Lid l : {0u, 2u, 3u, 6u, 7u, 12u, 1000u}) EXPECT_FALSE(f.lid_owner(l).valid()) << l;

  // Moving a port's LIDs releases the old range; max_lid follows the highest one left.
  ASSERT_TRUE(f.SetLid({s.b, 2}, 6, 1).ok());  // 6..7
  for (Lid l = 8; l <= 11; ++l) EXPECT_FALSE(f.lid_owner(l).valid()) << l;
  EXPECT_EQ(f.lid_owner(7), (PortRef{s.b, 2}));
  EXPECT_EQ(f.max_lid(), 7u);
  // Re-setting an overlapping range on the same port is not a clash with itself.
  EXPECT_TRUE(f.SetLid({s.b, 2}, 6, 0).ok());
  EXPECT_FALSE(f.lid_owner(7).valid());
  EXPECT_EQ(f.max_lid(), 6u);

  f.ClearLids();
  EXPECT_EQ(f.max_lid(), 0u);
  EXPECT_EQ(f.base_lid({s.a, 1}), 0u);
  EXPECT_FALSE(f.lid_owner(4).valid());
  EXPECT_TRUE(f.SetLid({s.a, 1}, 4, 1).ok());
}

TEST(Fabric, SetLidRejectsClashesMisalignmentAndRange) {
  Small s;
  Fabric& f = s.f;
  ASSERT_TRUE(f.SetLid({s.a, 1}, 4, 2).ok());  // 4..7
  const Status clash = f.SetLid({s.b, 1}, 6, 0);
  EXPECT_EQ(clash.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(clash.message().find("LID 6 of 'b' already belongs to 'a' port 1"), std::string::npos)
      << clash.message();
  EXPECT_FALSE(f.SetLid({s.b, 1}, 2, 2).ok());  // 2..5 overlaps, and misaligned
  EXPECT_NE(f.SetLid({s.b, 1}, 10, 2).message().find("not aligned"), std::string::npos);
  EXPECT_FALSE(f.SetLid({s.b, 1}, 0, 0).ok());
  EXPECT_FALSE(f.SetLid({s.b, 1}, kMaxUnicastLid, 1).ok());  // the range would leave unicast
  EXPECT_TRUE(f.SetLid({s.b, 2}, kMaxUnicastLid, 0).ok());
  EXPECT_FALSE(f.SetLid({s.b, 1}, 16, 8).ok());
  // Failed calls changed nothing.
  EXPECT_EQ(f.base_lid({s.b, 1}), 0u);
  EXPECT_EQ(f.lid_owner(6), (PortRef{s.a, 1}));
}

TEST(Fabric, SetPortGuidMovesTheLookup) {
  Small s;
  s.f.set_port_guid({s.a, 1}, 0xabc);
  EXPECT_EQ(s.f.port_guid({s.a, 1}), 0xabcu);
  EXPECT_EQ(s.f.FindByPortGuid(0xabc), (PortRef{s.a, 1}));
  EXPECT_FALSE(s.f.FindByPortGuid(0x201).valid());
}

// Real dumps: a dual-port ConnectX shows each port as its own CA, the second's node GUID the
// first's + 1, and each port's GUID equal to its node GUID. The defaults (node GUID + port)
// overlap the neighbour's node GUID and each other; they must not stop the node from being added,
// and the GUIDs given later decide.
TEST(Fabric, DefaultPortGuidsYieldToTheGivenOnes) {
  Fabric f;
  const NodeId sw = f.AddNode(NodeKind::kSwitch, 4, 0x100, "sw", "sw");
  std::string err;
  const NodeId a = f.AddNode(NodeKind::kHca, 2, 0x10, "a", "host HCA-1", &err);  // 0x11, 0x12
  const NodeId b = f.AddNode(NodeKind::kHca, 2, 0x11, "b", "host HCA-2", &err);  // 0x12, 0x13
  ASSERT_NE(a, kNoNode) << err;
  ASSERT_NE(b, kNoNode) << err;
  f.set_port_guid({a, 1}, 0x10);
  f.set_port_guid({b, 1}, 0x11);
  ASSERT_TRUE(f.Connect({a, 1}, {sw, 1}).ok());
  ASSERT_TRUE(f.Connect({b, 1}, {sw, 2}).ok());
  EXPECT_TRUE(f.CheckPortGuids().ok()) << f.CheckPortGuids().ToString();
  EXPECT_EQ(f.FindByPortGuid(0x10), (PortRef{a, 1}));
  EXPECT_EQ(f.FindByPortGuid(0x11), (PortRef{b, 1}));
  EXPECT_EQ(f.FindByPortGuid(0x12), (PortRef{a, 2}));  // a's unused default, b's moved away
  EXPECT_EQ(f.FindByPortGuid(0x13), (PortRef{b, 2}));

  // A node added after a port was given its GUID may carry it as a default: the port in use
  // is the one found, and only when both are in use is it a clash.
  const NodeId c = f.AddNode(NodeKind::kHca, 1, 0x1f, "c", "c", &err);  // default 0x20
  ASSERT_NE(c, kNoNode) << err;
  const NodeId d = f.AddNode(NodeKind::kHca, 1, 0x30, "d", "d");
  f.set_port_guid({d, 1}, 0x20);
  ASSERT_TRUE(f.Connect({d, 1}, {sw, 3}).ok());
  EXPECT_EQ(f.FindByPortGuid(0x20), (PortRef{d, 1}));
  EXPECT_TRUE(f.CheckPortGuids().ok());
  ASSERT_TRUE(f.Connect({c, 1}, {sw, 4}).ok());
  PortRef clash;
  const Status s = f.CheckPortGuids(&clash);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "port GUID 0x0000000000000020 of 'd' port 1 is also that of 'c' port 1");
  EXPECT_EQ(clash, (PortRef{d, 1}));  // the later port slot
  // A switch's node GUID as another node's default: still the switch's port 0 that is found.
  ASSERT_NE(f.AddNode(NodeKind::kHca, 1, 0xff, "e", "e"), kNoNode);  // default 0x100
  EXPECT_EQ(f.FindByPortGuid(0x100), (PortRef{sw, 0}));
}

// A switch's external ports share port 0's GUID; setting it on them (as copies of a fabric do)
// must not move the lookup off port 0.
TEST(Fabric, SwitchExternalPortsDoNotTakePortZerosGuid) {
  Small s;
  for (int p = 0; p <= 4; ++p) s.f.set_port_guid({s.sw, p}, 0x100);
  EXPECT_EQ(s.f.FindByPortGuid(0x100), (PortRef{s.sw, 0}));
  s.f.set_port_guid({s.sw, 2}, 0x777);
  EXPECT_EQ(s.f.port_guid({s.sw, 2}), 0x777u);
  EXPECT_FALSE(s.f.FindByPortGuid(0x777).valid());
  EXPECT_EQ(s.f.FindByPortGuid(0x100), (PortRef{s.sw, 0}));
}

TEST(Fabric, HostnameIsTheFirstWordOfTheDescription) {
  Small s;
  EXPECT_EQ(s.f.hostname(s.a), "hosta");
  EXPECT_EQ(s.f.hostname(s.b), "hostb");
  // A blank description names no host: the node GUID does (docs/formats.md, node classes).
  const NodeId blank = s.f.AddNode(NodeKind::kHca, 1, 0x600, "blank", "   ");
  EXPECT_EQ(s.f.hostname(blank), "H-0000000000000600");
}

TEST(Fabric, GuidStringIsHexWithSixteenDigits) {
  EXPECT_EQ(GuidString(0x2c90000100000ULL), "0x0002c90000100000");
  EXPECT_EQ(GuidString(0), "0x0000000000000000");
  EXPECT_EQ(GuidString(~0ULL), "0xffffffffffffffff");
}

}  // namespace
}  // namespace sar
