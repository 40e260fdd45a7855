#include "sar/io/guid2lid.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "io/test_util.h"
#include "sar/io/topology.h"

namespace sar {
namespace {

using io::testing::DiffFabrics;
using io::testing::TestDataPath;

std::vector<std::tuple<Guid, Lid, Lid>> Sorted(const std::vector<Guid2LidEntry>& v) {
  std::vector<std::tuple<Guid, Lid, Lid>> out;
  for (const auto& e : v) out.emplace_back(e.port_guid, e.min_lid, e.max_lid);
  std::sort(out.begin(), out.end());
  return out;
}

Fabric ReadFabric(const std::string& name) {
  Fabric f;
  EXPECT_TRUE(ReadTopology(TestDataPath(name), &f).ok());
  return f;
}

TEST(Guid2LidTest, ReadsOpenSmCache) {
  std::vector<Guid2LidEntry> entries;
  ASSERT_TRUE(ReadGuid2Lid(TestDataPath("small-lmc1.guid2lid"), &entries).ok());
  ASSERT_EQ(entries.size(), 6u);  // 3 switches + 3 HCA ports, blank lines skipped
  EXPECT_EQ(entries[1].port_guid, 0x2c90000200001u);
  EXPECT_EQ(entries[1].min_lid, 2u);
  EXPECT_EQ(entries[1].max_lid, 3u);
}

// Writing the cache for the fabric ibnetdiscover saw must give OpenSM's own cache back.
TEST(Guid2LidTest, FormatMatchesOpenSmCache) {
  for (const std::string prefix : {"small", "small-lmc1", "dual"}) {
    SCOPED_TRACE(prefix);
    const Fabric live = ReadFabric(prefix + ".ibnetdiscover");
    std::vector<Guid2LidEntry> ours, osm;
    ASSERT_TRUE(ParseGuid2Lid(FormatGuid2Lid(live), "ours", &ours).ok());
    ASSERT_TRUE(ReadGuid2Lid(TestDataPath(prefix + ".guid2lid"), &osm).ok());
    EXPECT_EQ(Sorted(ours), Sorted(osm));
  }
}

TEST(Guid2LidTest, ApplySetsLmcFromRangeAndReplacesOldLids) {
  Fabric f = ReadFabric("small-lmc1.ibnetdiscover");  // has LIDs already
  const Fabric want = f;
  Fabric other = f;
  other.ClearLids();
  // Swap two LIDs first so that applying the cache must drop the old assignment.
  ASSERT_TRUE(other.SetLid({other.switches()[0], 0}, 100, 0).ok());
  std::vector<Guid2LidEntry> entries;
  ASSERT_TRUE(ReadGuid2Lid(TestDataPath("small-lmc1.guid2lid"), &entries).ok());
  entries.push_back({0xdeadbeef, 200, 200});  // not in the fabric
  int skipped = 0;
  ASSERT_TRUE(ApplyGuid2Lid(entries, &other, &skipped).ok());
  EXPECT_EQ(skipped, 1);
  EXPECT_EQ(DiffFabrics(other, want), "");
  EXPECT_EQ(other.max_lid(), 11u);
}

TEST(Guid2LidTest, ApplyRejectsBadRangesAndLeavesFabricAlone) {
  const Fabric base = ReadFabric("small.ibnetdiscover");
  const Guid hca_port = 0x2c90000200001, sw = 0x2c90000100000;
  const std::vector<std::vector<Guid2LidEntry>> bad = {
      {{hca_port, 4, 6}},              // three LIDs: not 2^LMC
      {{hca_port, 5, 6}},              // two LIDs, not aligned
      {{hca_port, 8, 8}, {sw, 8, 8}},  // clash
      {{hca_port, 0, 0}},              // LID 0
  };
  for (const auto& entries : bad) {
    Fabric f = base;
    const Status s = ApplyGuid2Lid(entries, &f);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find("port 0x0002c9000"), std::string::npos) << s.message();
    EXPECT_EQ(DiffFabrics(f, base), "");
  }
}

TEST(Guid2LidTest, MalformedInputNamesFileAndLine) {
  struct Case {
    std::string what, text;
    int line;
  } cases[] = {
      {"two words", "0x1 0x1 0x1\n\n0x2 0x2\n", 3},
      {"four words", "0x1 0x1 0x1 0x1\n", 1},
      {"not a number", "0x1 0x1 0x1\nguid 0x2 0x2\n", 2},
      {"min above max", "0x1 0x4 0x3\n", 1},
      {"beyond unicast", "0x1 0xc000 0xc000\n", 1},
      {"LID zero", "0x1 0x0 0x0\n", 1},
      {"GUID twice", "0x1 0x1 0x1\n0x1 0x2 0x2\n", 2},
      {"overflow", "0x10000000000000000 0x1 0x1\n", 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<Guid2LidEntry> out;
    const Status s = ParseGuid2Lid(c.text, "cache/guid2lid", &out);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), Status::Code::kCorruption);
    EXPECT_NE(s.message().find("cache/guid2lid:" + std::to_string(c.line) + ":"), std::string::npos)
        << s.message();
  }
}

}  // namespace
}  // namespace sar
