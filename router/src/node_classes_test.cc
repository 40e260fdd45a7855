#include "sar/node_classes.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "io/test_util.h"
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
