#include "sar/model/node_classes.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "io/test_util.h"
#include "sar/io/guid_file.h"
#include "sar/model/jobs.h"
#include "sar/study/host_allocator.h"
#include "test_fabrics.h"

namespace sar {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = io::testing::MakeTempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ReadGuidFile, ReadsHexWithAndWithoutPrefixCommentsAndBlankLines) {
  const std::string path = WriteTemp("cn.txt",
                                     "# compute nodes\n"
                                     "0x0002c90000200001\n"
                                     "\n"
                                     "  0002C90000200003   # bare hex, upper case\r\n"
                                     "0X10");
  std::vector<Guid> guids;
  ASSERT_TRUE(ReadGuidFile(path, &guids).ok());
  EXPECT_EQ(guids, (std::vector<Guid>{0x0002c90000200001ULL, 0x0002c90000200003ULL, 0x10}));
}

TEST(ReadGuidFile, MalformedLinesFailWithFileAndLine) {
  for (const std::string bad : {"0xzz", "0x1 0x2", "0x", "0x0", "12345678901234567"}) {
    const std::string path = WriteTemp("bad.txt", "0x1\n# fine\n" + bad + "\n");
    std::vector<Guid> guids;
    const Status s = ReadGuidFile(path, &guids);
    EXPECT_EQ(s.code(), Status::Code::kCorruption) << bad;
    EXPECT_NE(s.message().find(path + ":3:"), std::string::npos) << s.message();
  }
  std::vector<Guid> guids;
  EXPECT_EQ(ReadGuidFile("/nonexistent/cn.txt", &guids).code(), Status::Code::kIOError);
}

class MakeNodeClassesTest : public ::testing::Test {
 protected:
  // 2 leaves x 2 spines, 3 hosts per leaf: h0000..h0005.
  Fabric f_ = testfab::FatTree2(2, 2, 3);
  NodeId Host(int i) { return f_.FindByName(testfab::Numbered("h", i, 4)); }
  Guid PortGuidOf(int i) { return f_.port_guid({Host(i), 1}); }
};

TEST_F(MakeNodeClassesTest, NoListsMeansEveryHcaComputes) {
  NodeClasses c;
  ASSERT_TRUE(MakeNodeClasses(f_, nullptr, nullptr, &c).ok());
  ASSERT_EQ(c.of_node.size(), static_cast<size_t>(f_.num_nodes()));
  for (NodeId h : f_.hcas()) EXPECT_EQ(c.get(h), NodeClass::kCompute);
  for (NodeId s : f_.switches()) EXPECT_EQ(c.get(s), NodeClass::kOther);
  EXPECT_EQ(NodeClasses{}.get(Host(0)), NodeClass::kCompute);
}

TEST_F(MakeNodeClassesTest, IoOnlyMakesStorageAndLeavesTheRestCompute) {
  // One by node GUID, one by port GUID, one the fabric does not have (twice).
  const std::vector<Guid> io = {f_.node_guid(Host(1)), PortGuidOf(4), 0xdead, 0xdead};
  NodeClasses c;
  std::vector<std::string> unknown;
  ASSERT_TRUE(MakeNodeClasses(f_, nullptr, &io, &c, &unknown).ok());
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(c.get(Host(i)), i == 1 || i == 4 ? NodeClass::kStorage : NodeClass::kCompute) << i;
  }
  EXPECT_EQ(unknown, std::vector<std::string>{GuidString(0xdead)});
}

TEST_F(MakeNodeClassesTest, WithCnListTheUnlistedAreOther) {
  const std::vector<Guid> cn = {PortGuidOf(0), PortGuidOf(2)};
  const std::vector<Guid> io = {PortGuidOf(5)};
  NodeClasses c;
  ASSERT_TRUE(MakeNodeClasses(f_, &cn, &io, &c).ok());
  const NodeClass want[] = {NodeClass::kCompute, NodeClass::kOther, NodeClass::kCompute,
                            NodeClass::kOther,   NodeClass::kOther, NodeClass::kStorage};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(c.get(Host(i)), want[i]) << i;
}

TEST_F(MakeNodeClassesTest, AnHcaInBothListsIsAnError) {
  const std::vector<Guid> cn = {f_.node_guid(Host(3))};
  const std::vector<Guid> io = {PortGuidOf(3)};
  NodeClasses c;
  const Status s = MakeNodeClasses(f_, &cn, &io, &c);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("h0003"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sar

namespace sar {
namespace {

TEST(NodeDescriptions, AggregationNodesAndNamelessHcasAreToldApart) {
  EXPECT_TRUE(IsAggregationNodeDescription("Mellanox Technologies Aggregation Node"));
  EXPECT_FALSE(IsAggregationNodeDescription("h0001 HCA-1"));
  EXPECT_FALSE(IsAggregationNodeDescription("Mellanox Technologies"));
  for (const char* nameless : {"MT4129 ConnectX7   Mellanox Technologies",
                               "MT23108 InfiniHost Mellanox Technologies", "", "   "}) {
    EXPECT_TRUE(IsNamelessDescription(nameless)) << nameless;
  }
  for (const char* named :
       {"h0001 HCA-1", "MTX mlx5_0", "MT mlx5_0", "MT41x9 a", "dgx01 mlx5_3", "ubuntu mlx5_1"}) {
    EXPECT_FALSE(IsNamelessDescription(named)) << named;
  }
  EXPECT_EQ(NamelessHostName(0xe09d730300858468ULL), "H-e09d730300858468");
  EXPECT_EQ(NamelessHostName(0x10), "H-0000000000000010");
  EXPECT_EQ(FirstWord("  h01 HCA-1"), "h01");
  EXPECT_EQ(FirstWord(""), "");
}

// One leaf with two named hosts (one with two HCAs), two nameless HCAs and an Aggregation Node.
class NodeRolesTest : public ::testing::Test {
 protected:
  NodeRolesTest() {
    const NodeId leaf = testfab::AddSwitch(&f_, 8, "leaf");
    auto add = [&](Guid guid, const std::string& name, const std::string& description) {
      const NodeId n = f_.AddNode(NodeKind::kHca, 1, guid, name, description);
      EXPECT_NE(n, kNoNode);
      testfab::Cable(&f_, n, leaf);
      return n;
    };
    a1_ = add(0x100, "H-a1", "alpha mlx5_0");
    a2_ = add(0x110, "H-a2", "alpha mlx5_1");
    b_ = add(0x120, "H-b", "beta mlx5_0");
    n1_ = add(0xe09d730300858468ULL, "H-n1", "MT4129 ConnectX7   Mellanox Technologies");
    n2_ = add(0xe09d730300858470ULL, "H-n2", "MT4129 ConnectX7   Mellanox Technologies");
    an_ = add(0x200, "H-an", "Mellanox Technologies Aggregation Node");
    testfab::AssignTestLids(&f_, 0);
  }
  Fabric f_;
  NodeId a1_, a2_, b_, n1_, n2_, an_;
};

TEST_F(NodeRolesTest, HostNamesFollowTheRule) {
  EXPECT_EQ(f_.hostname(a1_), "alpha");
  EXPECT_EQ(f_.hostname(a2_), "alpha");
  EXPECT_EQ(f_.hostname(b_), "beta");
  EXPECT_EQ(f_.hostname(n1_), "H-e09d730300858468");  // not one host "MT4129"
  EXPECT_EQ(f_.hostname(n2_), "H-e09d730300858470");
  EXPECT_EQ(f_.hostname(an_), "");  // no host at all
  EXPECT_TRUE(f_.is_aggregation_node(an_));
  EXPECT_FALSE(f_.is_aggregation_node(n1_));
  EXPECT_FALSE(f_.is_aggregation_node(f_.switches()[0]));
  const NodeClassCounts c = CountNodeClasses(f_);
  EXPECT_EQ(c.hosts, 4);  // alpha, beta and the two nameless
  EXPECT_EQ(c.host_hcas, 5);
  EXPECT_EQ(c.nameless_hcas, 2);
  EXPECT_EQ(c.aggregation_nodes, 1);
}

// An Aggregation Node is an endpoint (routed and validated) but never a host: no job maps to
// it (not even by its description's first word), and job mixes never place a job on it.
TEST_F(NodeRolesTest, AggregationNodesAreEndpointsButNeverHosts) {
  int endpoints_on_an = 0;
  for (const PortRef& e : f_.Endpoints()) endpoints_on_an += e.node == an_;
  EXPECT_EQ(endpoints_on_an, 1);
  EXPECT_NE(f_.base_lid({an_, 1}), 0u);

  JobMapping mapping;
  mapping.jobs.push_back({"7", {"Mellanox", "alpha", "H-e09d730300858468"}});
  std::vector<std::string> unknown;
  const std::vector<ResolvedJob> jobs = ResolveJobs(f_, mapping, &unknown);
  ASSERT_EQ(jobs.size(), 1u);
  std::vector<NodeId> nodes;
  for (const PortRef& p : jobs[0].endpoints) nodes.push_back(p.node);
  EXPECT_EQ(nodes, (std::vector<NodeId>{a1_, a2_, n1_}));
  EXPECT_EQ(unknown, (std::vector<std::string>{"Mellanox"}));

  const HostAllocator hosts(f_);
  EXPECT_EQ(hosts.total(), 4);
  for (int h = 0; h < hosts.total(); ++h) EXPECT_FALSE(hosts.host(h).empty());
}

}  // namespace
}  // namespace sar
