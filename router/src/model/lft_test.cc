#include "sar/model/lft.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "test_fabrics.h"

namespace sar {
namespace {

TEST(LftSet, StartsEmptyWithOneRowOfMaxLidPlusOnePerSwitch) {
  LftSet t(3, 10);
  EXPECT_EQ(t.num_switches(), 3);
  EXPECT_EQ(t.max_lid(), 10u);
  for (int s = 0; s < 3; ++s) {
    for (Lid l = 0; l <= 10; ++l) EXPECT_EQ(t.port(s, l), LftSet::kNoRoute);
    // Rows are contiguous and max_lid + 1 long: the next row starts right after.
    if (s + 1 < 3) {
      EXPECT_EQ(t.row(s + 1) - t.row(s), 11);
    }
  }
  const LftSet none;
  EXPECT_EQ(none.num_switches(), 0);
  EXPECT_EQ(none.max_lid(), 0u);
}

TEST(LftSet, SetAndGetTouchOnlyTheirEntry) {
  LftSet t(2, 5);
  t.set_port(1, 5, 7);
  t.set_port(0, 0, 0);
  EXPECT_EQ(t.port(1, 5), 7);
  EXPECT_EQ(t.port(0, 0), 0);
  int set = 0;
  for (int s = 0; s < 2; ++s) {
    for (Lid l = 0; l <= 5; ++l) set += t.port(s, l) != LftSet::kNoRoute;
  }
  EXPECT_EQ(set, 2);
  // The row views see the same entries, and writes through mutable_row are seen by port().
  EXPECT_EQ(t.row(1)[5], 7);
  t.mutable_row(0)[3] = 2;
  EXPECT_EQ(t.port(0, 3), 2);
  // A LID beyond the table has no route rather than reading another switch's row.
  EXPECT_EQ(t.port(0, 6), LftSet::kNoRoute);
  EXPECT_EQ(t.port(0, 1000), LftSet::kNoRoute);
}

TEST(LftSet, EqualityComparesEveryEntryAndTheShape) {
  LftSet a(2, 4), b(2, 4);
  EXPECT_EQ(a, b);
  b.set_port(1, 4, 3);
  EXPECT_NE(a, b);
  a.set_port(1, 4, 3);
  EXPECT_EQ(a, b);
  EXPECT_NE(LftSet(2, 4), LftSet(2, 5));
  EXPECT_NE(LftSet(2, 4), LftSet(3, 4));
}

TEST(LftSet, SizedForAFabricAndCheckFitsIt) {
  const Fabric f = testfab::FatTree2(3, 2, 2, 1);
  const LftSet t(f);
  EXPECT_EQ(t.num_switches(), f.num_switches());
  EXPECT_EQ(t.max_lid(), f.max_lid());
  EXPECT_TRUE(t.CheckFits(f).ok());
  const Status bad = LftSet(f.num_switches() - 1, f.max_lid()).CheckFits(f);
  EXPECT_EQ(bad.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(bad.message().find("LFTs have 4 switches, fabric has 5"), std::string::npos)
      << bad.message();
}

TEST(VirtualLayers, UnlistedRoutesUseTheDefaultLayer) {
  VirtualLayers v;
  EXPECT_EQ(v.size(), 0u);
  EXPECT_EQ(v.get(1, 2), 0);
  EXPECT_EQ(v.num_layers(), 1);
  v.default_layer = 3;
  EXPECT_EQ(v.get(1, 2), 3);
  EXPECT_EQ(v.num_layers(), 4);
  EXPECT_TRUE(v.Entries().empty());
}

TEST(VirtualLayers, SetGetSizeAndEntries) {
  VirtualLayers v;
  v.set(5, 1, 2);
  v.set(1, 900, 15);
  v.set(5, 0, 0);
  v.set(5, 1, 4);  // overwrite: still one route
  EXPECT_EQ(v.size(), 3u);
  EXPECT_EQ(v.get(5, 1), 4);
  EXPECT_EQ(v.get(1, 900), 15);
  EXPECT_EQ(v.get(5, 0), 0);
  // Neighbours of listed routes, and sources/destinations past every row, stay unlisted.
  EXPECT_EQ(v.get(5, 2), 0);
  EXPECT_EQ(v.get(1, 899), 0);
  EXPECT_EQ(v.get(2, 1), 0);
  EXPECT_EQ(v.get(100, 1), 0);
  v.default_layer = 1;
  EXPECT_EQ(v.get(5, 2), 1);
  EXPECT_EQ(v.get(5, 0), 0);  // a listed layer 0 is not the default
  EXPECT_EQ(v.num_layers(), 16);

  const std::vector<VirtualLayers::Entry> e = v.Entries();
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].src, 1u);
  EXPECT_EQ(e[0].dst, 900u);
  EXPECT_EQ(e[0].layer, 15);
  EXPECT_EQ(e[1].src, 5u);
  EXPECT_EQ(e[1].dst, 0u);
  EXPECT_EQ(e[1].layer, 0);
  EXPECT_EQ(e[2].src, 5u);
  EXPECT_EQ(e[2].dst, 1u);
  EXPECT_EQ(e[2].layer, 4);
}

TEST(VirtualLayers, SetRowEqualsSetPerListedEntry) {
  std::mt19937_64 rng(7);
  VirtualLayers by_set, by_row;
  for (Lid s : {3, 1, 9}) {
    std::vector<uint8_t> row(200 + s, VirtualLayers::kUnlisted);
    for (Lid d = 0; d < row.size(); ++d) {
      if (rng() % 3 == 0) continue;
      row[d] = static_cast<uint8_t>(rng() % 16);
      by_set.set(s, d, row[d]);
    }
    by_row.SetRow(s, row);
  }
  EXPECT_EQ(by_row.size(), by_set.size());
  EXPECT_EQ(by_row.num_layers(), by_set.num_layers());
  const auto a = by_set.Entries(), b = by_row.Entries();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].src, b[i].src);
    EXPECT_EQ(a[i].dst, b[i].dst);
    EXPECT_EQ(a[i].layer, b[i].layer);
  }
  // Replacing a row replaces its count too.
  by_row.SetRow(3, {VirtualLayers::kUnlisted, 4});
  EXPECT_EQ(by_row.get(3, 1), 4);
  EXPECT_EQ(by_row.get(3, 2), 0);
  size_t listed = 1;
  for (const auto& e : a) listed += e.src != 3;
  EXPECT_EQ(by_row.size(), listed);
}

TEST(VirtualLayers, ManyRoutesInIncreasingOrderAllKept) {
  VirtualLayers v;
  for (Lid s = 1; s <= 40; ++s) {
    for (Lid d = 1; d <= 300; ++d) v.set(s, d, static_cast<int>((s + d) % 16));
  }
  EXPECT_EQ(v.size(), 40u * 300u);
  for (Lid s = 1; s <= 40; ++s) {
    for (Lid d = 1; d <= 300; ++d) ASSERT_EQ(v.get(s, d), static_cast<int>((s + d) % 16));
  }
  EXPECT_EQ(v.num_layers(), 16);
  EXPECT_EQ(v.Entries().size(), v.size());
}

}  // namespace
}  // namespace sar
