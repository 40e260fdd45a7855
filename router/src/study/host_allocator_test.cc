// HostAllocator against its documented rule, checked by brute force over a random history.
#include "sar/study/host_allocator.h"

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "sar/model/generate.h"

namespace sar {
namespace {

// The fewest leaves whose free hosts add up to `size` (largest first): what the rule must use.
int FewestLeaves(std::vector<int> free, int size) {
  std::sort(free.rbegin(), free.rend());
  int k = 0, sum = 0;
  while (sum < size) sum += free[k++];
  return k;
}

TEST(HostAllocator, NeverTwoJobsOnOneHostAndFitsAsDocumented) {
  Fabric f;
  ASSERT_TRUE(GenerateFatTree2(4, 6, 1, GenerateOptions(), &f).ok());  // 6 leaves x 4 hosts
  HostAllocator m(f);
  ASSERT_EQ(m.total(), 24);
  ASSERT_EQ(m.num_leaves(), 6);
  std::mt19937 rng(7);
  std::vector<std::vector<int>> running;
  std::vector<int> owner(24, -1);  // independent record of who holds each host
  int placed = 0, refused = 0;
  for (int step = 0; step < 2000; ++step) {
    if (!running.empty() && rng() % 3 == 0) {
      const size_t k = rng() % running.size();
      for (int h : running[k]) owner[h] = -1;
      m.Release(running[k]);
      running.erase(running.begin() + k);
      continue;
    }
    const int size = 1 + static_cast<int>(rng() % 10);
    std::vector<int> free(6, 0);
    for (int l = 0; l < 6; ++l) free[l] = m.FreeOn(l);
    int free_total = 0;
    for (int h = 0; h < 24; ++h) free_total += owner[h] < 0;
    std::vector<int> hosts;
    const bool ok = m.Place(size, &hosts);
    ASSERT_EQ(ok, size <= free_total) << "placed iff enough hosts are free";
    if (!ok) {
      ++refused;
      EXPECT_TRUE(hosts.empty());
      continue;
    }
    ++placed;
    ASSERT_EQ(static_cast<int>(hosts.size()), size);
    std::set<int> leaves;
    for (int h : hosts) {
      ASSERT_EQ(owner[h], -1) << "host " << h << " given to two jobs";
      owner[h] = static_cast<int>(running.size());
      leaves.insert(m.leaf_of(h));
    }
    int best_fit = -1;  // the fitting leaf with the fewest free hosts (first such)
    for (int l = 0; l < 6; ++l) {
      if (free[l] >= size && (best_fit < 0 || free[l] < free[best_fit])) best_fit = l;
    }
    if (best_fit >= 0) {
      ASSERT_EQ(leaves, std::set<int>{best_fit}) << "a job that fits one leaf gets the best fit";
    } else {
      ASSERT_EQ(static_cast<int>(leaves.size()), FewestLeaves(free, size))
          << "a larger job spans as few leaves as possible";
    }
    running.push_back(hosts);
    int busy = 0;
    for (int h = 0; h < 24; ++h) busy += owner[h] >= 0;
    ASSERT_EQ(m.busy(), busy);
  }
  EXPECT_GT(placed, 100);
  EXPECT_GT(refused, 10);  // the history did fill the machine
}

}  // namespace
}  // namespace sar
