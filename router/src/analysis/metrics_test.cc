#include "sar/analysis/metrics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "sar/analysis/analysis.h"
#include "sar/analysis/traffic.h"
#include "test_fabrics.h"

namespace sar {
namespace {

std::vector<std::pair<PortRef, PortRef>> AllPairs(const std::vector<PortRef>& endpoints) {
  std::vector<std::pair<PortRef, PortRef>> flows;
  for (const PortRef& a : endpoints) {
    for (const PortRef& b : endpoints) flows.push_back({a, b});
  }
  return flows;
}

// Zero outside switch-to-switch channels, as Metrics reports it.
std::vector<uint64_t> InterSwitchOnly(const Fabric& f, std::vector<uint64_t> load) {
  for (PortId id = 0; id < f.num_port_slots(); ++id) {
    if (!f.is_inter_switch(id)) load[id] = 0;
  }
  return load;
}

ResolvedJob MakeJob(const Fabric& f, std::string id, const std::vector<PortRef>& endpoints) {
  ResolvedJob job;
  job.id = std::move(id);
  job.endpoints = endpoints;
  std::set<NodeId> leaves;
  for (const PortRef& e : endpoints) leaves.insert(f.peer(e).node);
  job.num_leaf_switches = static_cast<int>(leaves.size());
  return job;
}

Metrics Compute(const Fabric& f, const LftSet& lfts, const std::vector<ResolvedJob>& jobs,
                int threads = 0) {
  Metrics m;
  MetricsOptions options;
  options.threads = threads;
  EXPECT_TRUE(ComputeMetrics(f, lfts, jobs, options, &m).ok());
  return m;
}

TEST(MetricsTest, EfiAndJobsAgreeWithNaiveWalks) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(seed);
    const Fabric f = testfab::MixedFabric(seed);
    std::mt19937_64 rng(seed * 101);
    LftSet lfts = testfab::MinHopLfts(f, &rng);
    if (seed % 3 == 0) testfab::Corrupt(f, 6, &rng, &lfts);
    const std::vector<PortRef> endpoints = f.Endpoints();

    // Random jobs over whole hosts (all ports of a node), possibly overlapping, some empty.
    std::vector<ResolvedJob> jobs;
    const int num_jobs = static_cast<int>(rng() % 4);
    for (int j = 0; j < num_jobs; ++j) {
      std::set<NodeId> hosts;
      for (const PortRef& e : endpoints) {
        if (rng() % 3 == 0) hosts.insert(e.node);
      }
      std::vector<PortRef> members;
      for (const PortRef& e : endpoints) {
        if (hosts.count(e.node)) members.push_back(e);
      }
      jobs.push_back(MakeJob(f, "job" + std::to_string(j), members));
    }

    const Metrics m = Compute(f, lfts, jobs, 1);
    const std::vector<uint64_t> efi =
        InterSwitchOnly(f, testfab::NaiveLoad(f, lfts, AllPairs(endpoints)));
    EXPECT_EQ(m.efi_per_channel, efi);
    int channels = 0;
    uint64_t efi_sum = 0;
    for (PortId id = 0; id < f.num_port_slots(); ++id) {
      channels += f.is_inter_switch(id);
      efi_sum += efi[id];
    }
    EXPECT_EQ(m.channels, channels);
    EXPECT_EQ(m.efi.max, *std::max_element(efi.begin(), efi.end()));
    EXPECT_DOUBLE_EQ(m.efi.mean, channels ? static_cast<double>(efi_sum) / channels : 0);

    std::vector<uint64_t> effective(f.num_port_slots(), 0);
    ASSERT_EQ(m.jobs.size(), jobs.size());
    for (size_t j = 0; j < jobs.size(); ++j) {
      const std::vector<uint64_t> own =
          InterSwitchOnly(f, testfab::NaiveLoad(f, lfts, AllPairs(jobs[j].endpoints)));
      std::set<NodeId> hosts;
      for (const PortRef& e : jobs[j].endpoints) hosts.insert(e.node);
      EXPECT_EQ(m.jobs[j].id, jobs[j].id);
      EXPECT_EQ(m.jobs[j].hosts, static_cast<int>(hosts.size()));
      EXPECT_EQ(m.jobs[j].leaf_switches, jobs[j].num_leaf_switches);
      EXPECT_EQ(m.jobs[j].efi_max, *std::max_element(own.begin(), own.end()));
      EXPECT_EQ(m.jobs[j].channels,
                std::count_if(own.begin(), own.end(), [](uint64_t v) { return v != 0; }));
      for (PortId id = 0; id < f.num_port_slots(); ++id) effective[id] += own[id];
    }
    EXPECT_EQ(m.effective_efi_per_channel, effective);
    int dark = 0;
    for (PortId id = 0; id < f.num_port_slots(); ++id) {
      dark += f.is_inter_switch(id) && effective[id] == 0;
    }
    EXPECT_DOUBLE_EQ(m.dark_fiber, channels ? static_cast<double>(dark) / channels : 0);

    // The number of threads must not change anything.
    const Metrics m3 = Compute(f, lfts, jobs, 3);
    EXPECT_EQ(m3.efi_per_channel, m.efi_per_channel);
    EXPECT_EQ(m3.effective_efi_per_channel, m.effective_efi_per_channel);
  }
}

TEST(MetricsTest, JobOfAllHostsHasTheFullEfi) {
  const Fabric f = testfab::FatTree2(4, 2, 3);
  const LftSet lfts = testfab::MinHopLfts(f);
  const Metrics m = Compute(f, lfts, {MakeJob(f, "all", f.Endpoints())});
  EXPECT_EQ(m.effective_efi_per_channel, m.efi_per_channel);
  EXPECT_EQ(m.effective_efi.max, m.efi.max);
  EXPECT_DOUBLE_EQ(m.effective_efi.mean, m.efi.mean);
  EXPECT_EQ(m.dark_fiber, 0.0);
  ASSERT_EQ(m.jobs.size(), 1u);
  EXPECT_EQ(m.jobs[0].efi_max, m.efi.max);
  EXPECT_EQ(m.jobs[0].channels, m.channels);
  EXPECT_EQ(m.jobs[0].hosts, 12);
  EXPECT_EQ(m.jobs[0].leaf_switches, 4);
  // Each leaf -> spine channel: the leaf's 3 hosts times the remote destinations sent through
  // that spine; both spines together carry 3 * 9 per leaf.
  EXPECT_EQ(m.channels, 4 * 2 * 2);
  EXPECT_DOUBLE_EQ(m.efi.mean, 3.0 * 9 / 2);
}

TEST(MetricsTest, JobOnOneLeafLeavesAllFiberDark) {
  const Fabric f = testfab::FatTree2(3, 2, 3);
  const LftSet lfts = testfab::MinHopLfts(f);
  std::vector<PortRef> leaf0;
  for (const PortRef& e : f.Endpoints()) {
    if (f.name(f.peer(e).node) == "leaf00") leaf0.push_back(e);
  }
  ASSERT_EQ(leaf0.size(), 3u);
  const Metrics m = Compute(f, lfts, {MakeJob(f, "local", leaf0)});
  for (uint64_t v : m.effective_efi_per_channel) EXPECT_EQ(v, 0u);
  EXPECT_EQ(m.dark_fiber, 1.0);
  EXPECT_EQ(m.jobs[0].efi_max, 0u);
  EXPECT_EQ(m.jobs[0].channels, 0);
  EXPECT_EQ(m.jobs[0].leaf_switches, 1);
  EXPECT_GT(m.efi.max, 0u);
}

TEST(MetricsTest, AllToAllLinkLoadIsTheEfiOnSwitchLinks) {
  const Fabric f = testfab::FatTree2(4, 3, 4);
  const LftSet lfts = testfab::MinHopLfts(f);
  const Metrics m = Compute(f, lfts, {});
  LinkLoad load;
  ASSERT_TRUE(ComputeLinkLoad(f, lfts, TrafficSpec{}, &load).ok());
  EXPECT_DOUBLE_EQ(load.mean_load, m.efi.mean);
  // An HCA cable carries 15 flows each way (one per other host); switch links carry their EFI.
  EXPECT_EQ(load.max_load, std::max<uint64_t>(15, m.efi.max));
  EXPECT_EQ(load.flows, 16u * 15);
}

}  // namespace
}  // namespace sar
