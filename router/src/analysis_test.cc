#include "sar/analysis.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "sar/failures.h"
#include "sar/generate.h"
#include "sar/job_mix.h"
#include "test_fabrics.h"

namespace sar {
namespace {

void ExpectSame(const TraceReport& a, const TraceReport& b) {
  EXPECT_EQ(a.pairs, b.pairs);
  EXPECT_EQ(a.delivered, b.delivered);
  EXPECT_EQ(a.unreachable, b.unreachable);
  EXPECT_EQ(a.loops, b.loops);
  EXPECT_EQ(a.non_min_hop, b.non_min_hop);
  EXPECT_EQ(a.max_hops, b.max_hops);
  EXPECT_EQ(a.mean_hops, b.mean_hops);  // bit for bit, not nearly
  EXPECT_EQ(a.examples, b.examples);
}

void ExpectSame(const DeadlockReport& a, const DeadlockReport& b) {
  EXPECT_EQ(a.deadlock_free, b.deadlock_free);
  EXPECT_EQ(a.layers, b.layers);
  EXPECT_EQ(a.cyclic_layer, b.cyclic_layer);
  EXPECT_EQ(a.cycle, b.cycle);
  EXPECT_EQ(a.dependencies, b.dependencies);
}

void ExpectSame(const Metrics& a, const Metrics& b) {
  EXPECT_EQ(a.channels, b.channels);
  EXPECT_EQ(a.efi.max, b.efi.max);
  EXPECT_EQ(a.efi.mean, b.efi.mean);
  EXPECT_EQ(a.effective_efi.max, b.effective_efi.max);
  EXPECT_EQ(a.effective_efi.mean, b.effective_efi.mean);
  EXPECT_EQ(a.dark_fiber, b.dark_fiber);
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t j = 0; j < a.jobs.size(); ++j) {
    EXPECT_EQ(a.jobs[j].id, b.jobs[j].id);
    EXPECT_EQ(a.jobs[j].hosts, b.jobs[j].hosts);
    EXPECT_EQ(a.jobs[j].leaf_switches, b.jobs[j].leaf_switches);
    EXPECT_EQ(a.jobs[j].efi_max, b.jobs[j].efi_max);
    EXPECT_EQ(a.jobs[j].channels, b.jobs[j].channels);
  }
  EXPECT_EQ(a.efi_per_channel, b.efi_per_channel);
  EXPECT_EQ(a.effective_efi_per_channel, b.effective_efi_per_channel);
}

void ExpectSame(const LinkLoad& a, const LinkLoad& b) {
  EXPECT_EQ(a.flows, b.flows);
  EXPECT_EQ(a.max_load, b.max_load);
  EXPECT_EQ(a.max_channel, b.max_channel);
  EXPECT_EQ(a.mean_load, b.mean_load);
}

// A degraded fat tree of about a hundred hosts: cut cables, sometimes removed switches and hosts
// cut off, LMC 0..2.
Fabric DegradedFabric(uint64_t seed) {
  Fabric whole;
  PgftSpec spec;
  switch (seed % 3) {
    case 0:
      spec = {2, {12, 10}, {1, 6}, {1, 1}};  // 120 hosts
      break;
    case 1:
      spec = {3, {6, 5, 4}, {1, 6, 3}, {1, 1, 1}};  // 120 hosts
      break;
    default:
      spec = {3, {4, 4, 4}, {1, 4, 4}, {1, 1, 1}};  // k-ary-3-tree, 64 hosts
      break;
  }
  EXPECT_TRUE(GeneratePgft(spec, {}, &whole).ok());
  RandomFailureOptions ro;
  ro.num_links = 2 + static_cast<int>(seed % 5);
  ro.num_switches = seed % 4 == 0 ? 1 : 0;
  ro.keep_hcas_connected = seed % 2 == 0;  // else some routes may have nowhere to go
  ro.seed = seed;
  FailureSet failures;
  EXPECT_TRUE(PickRandomFailures(whole, ro, &failures).ok());
  Fabric f;
  EXPECT_TRUE(ApplyFailures(whole, failures, &f).ok());
  testfab::AssignTestLids(&f, static_cast<int>(seed % 3));
  return f;
}

// A job mix, plus a job overlapping others, a job of every host (large enough to be spread over
// the workers) and a job with no endpoint.
std::vector<ResolvedJob> Jobs(const Fabric& f, uint64_t seed) {
  JobMixOptions o;
  o.seed = seed;
  o.max_size = 24;
  JobMapping mix;
  EXPECT_TRUE(GenerateJobMix(f, o, &mix).ok());
  Job overlap{"overlap", {}, JobPattern::kDefault};
  Job all{"all", {}, JobPattern::kDefault};
  std::mt19937_64 rng(seed);
  for (const PortRef& e : f.Endpoints()) {
    all.hosts.emplace_back(f.hostname(e.node));
    if (rng() % 4 == 0) overlap.hosts.emplace_back(f.hostname(e.node));
  }
  mix.jobs.push_back(overlap);
  mix.jobs.push_back(all);
  mix.jobs.push_back({"nobody", {"no-such-host"}, JobPattern::kDefault});
  return ResolveJobs(f, mix);
}

TEST(AnalysisTest, OneSweepEqualsTheSeparateAnalyses) {
  int invalid = 0, cyclic = 0, acyclic = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    SCOPED_TRACE(seed);
    const Fabric f = DegradedFabric(seed);
    std::mt19937_64 rng(seed * 7);
    LftSet lfts = testfab::MinHopLfts(f, &rng);
    if (seed % 3 != 1) testfab::Corrupt(f, 2 + static_cast<int>(seed % 4), &rng, &lfts);
    const std::vector<ResolvedJob> jobs = Jobs(f, seed);
    VirtualLayers layers;
    for (const PortRef& src : f.Endpoints()) {
      for (const PortRef& dst : f.Endpoints()) {
        if (rng() % 3 == 0) {
          layers.set(f.base_lid(src), f.base_lid(dst), static_cast<int>(rng() % 3));
        }
      }
    }

    AnalysisOptions o;
    o.what = kAnalyseTrace | kAnalyseDeadlock | kAnalyseSingleLayerDeadlock | kAnalyseMetrics;
    o.trace.check_min_hop = seed % 4 != 3;
    o.trace.all_lids = seed % 5 != 2;
    o.trace.max_examples = 1 + static_cast<int>(seed % 6);
    o.layers = &layers;
    o.jobs = &jobs;
    for (TrafficPattern p : {TrafficPattern::kAllToAll, TrafficPattern::kShift,
                             TrafficPattern::kRandomPermutation, TrafficPattern::kClustered}) {
      TrafficSpec spec;
      spec.pattern = p;
      spec.seed = seed;
      spec.shift = static_cast<int>(seed);
      spec.cluster_size = 3 + static_cast<int>(seed % 5);
      o.traffic.push_back(spec);
    }

    TraceReport trace;
    ASSERT_TRUE(TraceAll(f, lfts, o.trace, &trace).ok());
    DeadlockReport layered, single;
    ASSERT_TRUE(CheckDeadlock(f, lfts, &layers, &layered).ok());
    ASSERT_TRUE(CheckDeadlock(f, lfts, nullptr, &single).ok());
    Metrics metrics;
    ASSERT_TRUE(ComputeMetrics(f, lfts, jobs, MetricsOptions{}, &metrics).ok());
    std::vector<LinkLoad> loads(o.traffic.size());
    for (size_t i = 0; i < o.traffic.size(); ++i) {
      ASSERT_TRUE(ComputeLinkLoad(f, lfts, o.traffic[i], &loads[i]).ok());
    }
    invalid += !trace.valid();
    (layered.deadlock_free ? acyclic : cyclic)++;

    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(threads);
      o.threads = threads;
      AnalysisResult r;
      ASSERT_TRUE(AnalyseRouting(f, lfts, o, &r).ok());
      ExpectSame(r.trace, trace);
      ExpectSame(r.deadlock, layered);
      ExpectSame(r.single_layer, single);
      ExpectSame(r.metrics, metrics);
      ASSERT_EQ(r.traffic.size(), loads.size());
      for (size_t i = 0; i < loads.size(); ++i) ExpectSame(r.traffic[i], loads[i]);
    }
  }
  // The fabrics must exercise broken and cyclic routings, not only clean ones.
  EXPECT_GT(invalid, 3);
  EXPECT_GE(cyclic, 2);
  EXPECT_GE(acyclic, 2);
}

TEST(AnalysisTest, LeavesWhatWasNotAskedForEmpty) {
  const Fabric f = testfab::FatTree2(4, 2, 3);
  const LftSet lfts = testfab::MinHopLfts(f);
  AnalysisOptions o;
  o.what = kAnalyseSingleLayerDeadlock;
  AnalysisResult r;
  ASSERT_TRUE(AnalyseRouting(f, lfts, o, &r).ok());
  EXPECT_GT(r.single_layer.dependencies, 0u);
  EXPECT_EQ(r.trace.pairs, 0u);
  EXPECT_EQ(r.deadlock.dependencies, 0u);
  EXPECT_EQ(r.metrics.channels, 0);
  EXPECT_TRUE(r.traffic.empty());
}

TEST(AnalysisTest, BadInputFailsBeforeComputingAnything) {
  const Fabric f = testfab::FatTree2(4, 2, 3);
  AnalysisOptions o;
  o.what = kAnalyseTrace;
  AnalysisResult r;
  EXPECT_EQ(AnalyseRouting(f, LftSet(2, f.max_lid()), o, &r).code(),
            Status::Code::kInvalidArgument);
  TrafficSpec bad;
  bad.pattern = TrafficPattern::kClustered;
  bad.cluster_size = 0;
  o.traffic = {bad};
  EXPECT_EQ(AnalyseRouting(f, testfab::MinHopLfts(f), o, &r).code(),
            Status::Code::kInvalidArgument);
  EXPECT_EQ(r.trace.pairs, 0u);
}

}  // namespace
}  // namespace sar
