#include "sar/analysis/traffic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "sar/analysis/analysis.h"
#include "test_fabrics.h"

namespace sar {
namespace {

TEST(TrafficTest, TrafficPatternsHaveTheirShape) {
  const Fabric f = testfab::FatTree2(4, 2, 5);  // 20 single-port hosts
  const int n = 20;
  std::vector<std::pair<int, int>> flows;
  TrafficSpec spec;
  ASSERT_TRUE(TrafficFlows(f, spec, &flows).ok());
  EXPECT_EQ(flows.size(), static_cast<size_t>(n * (n - 1)));

  spec.pattern = TrafficPattern::kShift;
  spec.shift = -3;
  ASSERT_TRUE(TrafficFlows(f, spec, &flows).ok());
  ASSERT_EQ(flows.size(), static_cast<size_t>(n));
  for (const auto& [s, d] : flows) EXPECT_EQ(d, (s + n - 3) % n);
  spec.shift = n;
  ASSERT_TRUE(TrafficFlows(f, spec, &flows).ok());
  EXPECT_TRUE(flows.empty());

  spec.pattern = TrafficPattern::kRandomPermutation;
  std::set<std::vector<std::pair<int, int>>> distinct;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    spec.seed = seed;
    ASSERT_TRUE(TrafficFlows(f, spec, &flows).ok());
    ASSERT_EQ(flows.size(), static_cast<size_t>(n));  // nobody sends to itself
    std::set<int> sources, dests;
    for (const auto& [s, d] : flows) {
      EXPECT_NE(s, d);
      sources.insert(s);
      dests.insert(d);
    }
    EXPECT_EQ(sources.size(), static_cast<size_t>(n));
    EXPECT_EQ(dests.size(), static_cast<size_t>(n));
    std::vector<std::pair<int, int>> again;
    ASSERT_TRUE(TrafficFlows(f, spec, &again).ok());
    EXPECT_EQ(again, flows);
    distinct.insert(flows);
  }
  EXPECT_GT(distinct.size(), 15u);

  spec.pattern = TrafficPattern::kClustered;
  spec.cluster_size = 6;  // groups of 6, 6, 6, 2
  ASSERT_TRUE(TrafficFlows(f, spec, &flows).ok());
  EXPECT_EQ(flows.size(), 3u * 6 * 5 + 2 * 1);
  std::map<int, std::set<int>> peers;
  for (const auto& [s, d] : flows) peers[s].insert(d);
  std::multiset<size_t> sizes;
  std::set<int> covered;
  for (auto& [s, group] : peers) {
    group.insert(s);
    for (int member : group) {  // all-to-all inside a group: every member sees the same group
      std::set<int> theirs = peers[member];
      theirs.insert(member);
      EXPECT_EQ(theirs, group);
    }
    if (!covered.count(s)) sizes.insert(group.size());
    covered.insert(group.begin(), group.end());
  }
  EXPECT_EQ(sizes, (std::multiset<size_t>{2, 6, 6, 6}));
  spec.cluster_size = 0;
  EXPECT_FALSE(TrafficFlows(f, spec, &flows).ok());
}

TEST(TrafficTest, LinkLoadAgreesWithNaiveWalks) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE(seed);
    const Fabric f = testfab::MixedFabric(seed);
    std::mt19937_64 rng(seed * 13);
    LftSet lfts = testfab::MinHopLfts(f, &rng);
    if (seed % 3 == 0) testfab::Corrupt(f, 6, &rng, &lfts);
    const std::vector<PortRef> endpoints = f.Endpoints();
    for (TrafficPattern pattern :
         {TrafficPattern::kAllToAll, TrafficPattern::kShift, TrafficPattern::kRandomPermutation,
          TrafficPattern::kClustered}) {
      TrafficSpec spec;
      spec.pattern = pattern;
      spec.seed = seed;
      spec.shift = 1 + static_cast<int>(seed % 3);
      spec.cluster_size = 2 + static_cast<int>(seed % 4);
      std::vector<std::pair<int, int>> flows;
      ASSERT_TRUE(TrafficFlows(f, spec, &flows).ok());
      std::vector<std::pair<PortRef, PortRef>> pairs;
      for (const auto& [s, d] : flows) pairs.push_back({endpoints[s], endpoints[d]});
      const std::vector<uint64_t> load = testfab::NaiveLoad(f, lfts, pairs);

      LinkLoad got;
      ASSERT_TRUE(ComputeLinkLoad(f, lfts, spec, &got).ok());
      EXPECT_EQ(got.flows, flows.size()) << static_cast<int>(pattern);
      const auto max = std::max_element(load.begin(), load.end());
      EXPECT_EQ(got.max_load, *max) << static_cast<int>(pattern);
      if (*max > 0) {
        EXPECT_EQ(got.max_channel, max - load.begin());
      }
      uint64_t sum = 0;
      int channels = 0;
      for (PortId id = 0; id < f.num_port_slots(); ++id) {
        if (f.is_inter_switch(id)) {
          sum += load[id];
          ++channels;
        }
      }
      EXPECT_DOUBLE_EQ(got.mean_load, channels ? static_cast<double>(sum) / channels : 0)
          << static_cast<int>(pattern);
    }
  }
}

}  // namespace
}  // namespace sar
