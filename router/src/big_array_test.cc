// big_array.h: Big's alignment (2 MB from 2 MB on, so the kernel can back it with huge pages),
// BigFilled's contents, and BigArena's copies: each stays where it was put, unchanged, while
// later copies fill the chunk and spill into new ones (also copies larger than a chunk, and
// empty ones).
#include "big_array.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace sar::internal {
namespace {

TEST(BigArray, LargeArraysAreHugePageAligned) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const BigArray<uint32_t> large = Big<uint32_t>((size_t{3} << 20) / 4);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.get()) % kHuge, 0u);
  const BigArray<uint8_t> small = Big<uint8_t>(100);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.get()) % 64, 0u);
  const BigArray<uint8_t> none = Big<uint8_t>(0);
  EXPECT_NE(none.get(), nullptr);
}

TEST(BigArray, FilledHasTheValueEverywhere) {
  const size_t n = (size_t{5} << 20) + 3;
  const BigArray<uint16_t> a = BigFilled<uint16_t>(n, 0xBEEF);
  size_t wrong = 0;
  for (size_t i = 0; i < n; ++i) wrong += a[i] != 0xBEEF;
  EXPECT_EQ(wrong, 0u);
}

TEST(BigArena, CopiesStayIntactAcrossChunks) {
  std::mt19937_64 rng(7);
  BigArena<int32_t> arena(1000);  // small chunks: most copies spill into a new one
  std::vector<std::vector<int32_t>> want;
  std::vector<const int32_t*> got;
  for (int i = 0; i < 400; ++i) {
    // Empty runs, runs that fit, and runs longer than a whole chunk.
    const size_t len = i % 50 == 0 ? 0 : i % 37 == 0 ? 2500 : rng() % 300;
    std::vector<int32_t> run(len);
    for (int32_t& v : run) v = static_cast<int32_t>(rng());
    got.push_back(arena.Copy(run.data(), run.size()));
    want.push_back(std::move(run));
  }
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    ASSERT_NE(got[i], nullptr);
    EXPECT_EQ(std::vector<int32_t>(got[i], got[i] + want[i].size()), want[i]);
  }
  // Runs do not overlap: consecutive copies in one chunk follow each other.
  for (size_t i = 1; i < want.size(); ++i) {
    const int32_t* a = got[i - 1];
    const int32_t* b = got[i];
    const bool disjoint = a + want[i - 1].size() <= b || b + want[i].size() <= a;
    EXPECT_TRUE(disjoint || want[i - 1].empty() || want[i].empty()) << i;
  }
}

}  // namespace
}  // namespace sar::internal
