#include "sar/analysis/analysis.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "engines/engine_test_util.h"
#include "sar/model/failures.h"
#include "sar/model/generate.h"
#include "sar/pass/routing_pass.h"
#include "sar/study/job_mix.h"
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
    o.deadlock_switch_lids = seed % 2 == 1;  // with and without switch LIDs
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
    ASSERT_TRUE(CheckDeadlock(f, lfts, &layers, &layered, o.deadlock_switch_lids).ok());
    ASSERT_TRUE(CheckDeadlock(f, lfts, nullptr, &single, o.deadlock_switch_lids).ok());
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

// --- Source LID offsets (osrm2/osrm3: each source sends to its group's LID) ------------------

// Everything the analyses report, computed pair by pair by walking the tables: source i sends to
// destination j's LID base(j) + offset[i], or base(j) when the offset is beyond j's 2^LMC LIDs.
struct BruteForce {
  std::vector<uint64_t> efi, effective;  // per port slot, switch-to-switch channels only
  std::vector<uint64_t> job_max;         // per job
  std::vector<int> job_channels;         // per job
  double dark_fiber = 0;
  uint64_t pairs = 0, delivered = 0, total_hops = 0;
  int max_hops = 0;
  std::vector<LinkLoad> loads;  // per traffic spec: flows, max_load, mean_load
};

// The channels from endpoint `src` to `lid` (uplink first, the destination's downlink last);
// false unless the route reaches `dst`.
bool Walk(const Fabric& f, const LftSet& lfts, PortRef src, PortRef dst, Lid lid,
          std::vector<PortId>* path) {
  path->clear();
  PortId c = f.port_id(src);
  for (int hops = 0; hops <= f.num_switches() + 1; ++hops) {
    path->push_back(c);
    const PortId peer = f.peer_id(c);
    if (peer == kNoPort) return false;
    const PortRef at = f.port_ref(peer);
    if (!f.is_switch(at.node)) return at == dst;
    const uint8_t port = lfts.port(f.switch_index(at.node), lid);
    if (port == 0 || port == LftSet::kNoRoute || port > f.num_ports(at.node)) return false;
    c = f.port_id(at.node, port);
  }
  return false;
}

BruteForce Brute(const Fabric& f, const LftSet& lfts, const std::vector<uint8_t>& offset,
                 const std::vector<ResolvedJob>& jobs, const std::vector<TrafficSpec>& traffic) {
  const std::vector<PortRef> ends = f.Endpoints();
  const size_t n = ends.size();
  std::vector<std::vector<std::vector<PortId>>> route(n, std::vector<std::vector<PortId>>(n));
  std::vector<std::vector<bool>> ok(n, std::vector<bool>(n, false));
  BruteForce b;
  b.efi.assign(f.num_port_slots(), 0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      const Lid base = f.base_lid(ends[j]);
      if (ends[i].node == ends[j].node || base == 0) continue;
      const int o = offset.empty() ? 0 : offset[i];
      const Lid lid = base + (o < (1 << f.lmc(ends[j])) ? o : 0);
      ++b.pairs;
      ok[i][j] = Walk(f, lfts, ends[i], ends[j], lid, &route[i][j]);
      if (!ok[i][j]) continue;
      ++b.delivered;
      const int hops = static_cast<int>(route[i][j].size());
      b.total_hops += hops;
      b.max_hops = std::max(b.max_hops, hops);
      for (PortId c : route[i][j]) b.efi[c] += f.is_inter_switch(c);
    }
  }
  b.effective.assign(f.num_port_slots(), 0);
  for (const ResolvedJob& job : jobs) {
    std::vector<size_t> members;
    for (size_t i = 0; i < n; ++i) {
      if (std::find(job.endpoints.begin(), job.endpoints.end(), ends[i]) != job.endpoints.end()) {
        members.push_back(i);
      }
    }
    std::vector<uint64_t> load(f.num_port_slots(), 0);
    for (size_t i : members) {
      for (size_t j : members) {
        if (!ok[i][j]) continue;
        for (PortId c : route[i][j]) load[c] += f.is_inter_switch(c);
      }
    }
    b.job_max.push_back(*std::max_element(load.begin(), load.end()));
    b.job_channels.push_back(
        static_cast<int>(load.size() - std::count(load.begin(), load.end(), 0)));
    for (size_t c = 0; c < load.size(); ++c) b.effective[c] += load[c];
  }
  int channels = 0, dark = 0;
  for (PortId c = 0; c < f.num_port_slots(); ++c) {
    if (!f.is_inter_switch(c)) continue;
    ++channels;
    dark += b.effective[c] == 0;
  }
  b.dark_fiber = static_cast<double>(dark) / channels;
  for (const TrafficSpec& spec : traffic) {
    std::vector<std::pair<int, int>> flows;
    EXPECT_TRUE(TrafficFlows(f, spec, &flows).ok());
    std::vector<uint64_t> load(f.num_port_slots(), 0);
    for (const auto& [i, j] : flows) {
      if (!ok[i][j]) continue;
      for (PortId c : route[i][j]) ++load[c];
    }
    LinkLoad l;
    l.flows = flows.size();
    uint64_t sum = 0;
    for (PortId c = 0; c < f.num_port_slots(); ++c) {
      l.max_load = std::max(l.max_load, load[c]);
      if (f.is_inter_switch(c)) sum += load[c];
    }
    l.mean_load = static_cast<double>(sum) / channels;
    b.loads.push_back(l);
  }
  return b;
}

void ExpectBrute(const BruteForce& b, const AnalysisResult& r) {
  const Metrics& m = r.metrics;
  EXPECT_EQ(m.efi_per_channel, b.efi);
  EXPECT_EQ(m.effective_efi_per_channel, b.effective);
  ASSERT_EQ(m.jobs.size(), b.job_max.size());
  for (size_t j = 0; j < m.jobs.size(); ++j) {
    EXPECT_EQ(m.jobs[j].efi_max, b.job_max[j]) << m.jobs[j].id;
    EXPECT_EQ(m.jobs[j].channels, b.job_channels[j]) << m.jobs[j].id;
  }
  EXPECT_DOUBLE_EQ(m.dark_fiber, b.dark_fiber);
  EXPECT_EQ(r.trace.pairs, b.pairs);
  EXPECT_EQ(r.trace.delivered, b.delivered);
  EXPECT_EQ(r.trace.max_hops, b.max_hops);
  EXPECT_DOUBLE_EQ(
      r.trace.mean_hops,
      b.delivered ? static_cast<double>(b.total_hops) / static_cast<double>(b.delivered) : 0);
  ASSERT_EQ(r.traffic.size(), b.loads.size());
  for (size_t i = 0; i < b.loads.size(); ++i) {
    SCOPED_TRACE("traffic " + std::to_string(i));
    EXPECT_EQ(r.traffic[i].flows, b.loads[i].flows);
    EXPECT_EQ(r.traffic[i].max_load, b.loads[i].max_load);
    EXPECT_DOUBLE_EQ(r.traffic[i].mean_load, b.loads[i].mean_load);
  }
}

AnalysisOptions EverythingFollowingSources(const std::vector<ResolvedJob>& jobs, uint64_t seed) {
  AnalysisOptions o;
  o.what = kAnalyseTrace | kAnalyseMetrics;
  o.trace.all_lids = false;  // each source to the LID it uses
  o.jobs = &jobs;
  for (TrafficPattern p : {TrafficPattern::kAllToAll, TrafficPattern::kShift,
                           TrafficPattern::kRandomPermutation, TrafficPattern::kClustered}) {
    TrafficSpec spec;
    spec.pattern = p;
    spec.seed = seed;
    spec.shift = static_cast<int>(seed) + 1;
    spec.cluster_size = 3 + static_cast<int>(seed % 5);
    o.traffic.push_back(spec);
  }
  return o;
}

// Random offsets (some beyond the destinations' LMC, which fall back to the base LID) on
// degraded fabrics with per-LID random min-hop tables and some corrupted entries: every metric,
// link load and the trace equal the pair-by-pair walk, on 1..3 workers; all-zero offsets are
// exactly no offsets.
TEST(AnalysisTest, SourceLidOffsetsEqualThePairByPairWalk) {
  int differ = 0;
  for (uint64_t seed = 1; seed <= 9; ++seed) {
    SCOPED_TRACE(seed);
    const Fabric f = DegradedFabric(seed);
    std::mt19937_64 rng(seed * 11);
    LftSet lfts = testfab::MinHopLfts(f, &rng);
    if (seed % 3 == 0) testfab::Corrupt(f, 2, &rng, &lfts);
    const std::vector<ResolvedJob> jobs = Jobs(f, seed);
    std::vector<uint8_t> offset(f.Endpoints().size());
    for (uint8_t& o : offset) o = static_cast<uint8_t>(rng() % 5);
    AnalysisOptions o = EverythingFollowingSources(jobs, seed);
    const BruteForce want = Brute(f, lfts, offset, jobs, o.traffic);
    o.source_lid_offset = &offset;
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(threads);
      o.threads = threads;
      AnalysisResult r;
      ASSERT_TRUE(AnalyseRouting(f, lfts, o, &r).ok());
      ExpectBrute(want, r);
    }
    // No offsets = all zero = the base-LID walk.
    AnalysisResult none, zeros;
    o.source_lid_offset = nullptr;
    ASSERT_TRUE(AnalyseRouting(f, lfts, o, &none).ok());
    ExpectBrute(Brute(f, lfts, {}, jobs, o.traffic), none);
    const std::vector<uint8_t> zero(offset.size(), 0);
    o.source_lid_offset = &zero;
    ASSERT_TRUE(AnalyseRouting(f, lfts, o, &zeros).ok());
    ExpectSame(zeros.metrics, none.metrics);
    ExpectSame(zeros.trace, none.trace);
    for (size_t i = 0; i < none.traffic.size(); ++i) ExpectSame(zeros.traffic[i], none.traffic[i]);
    differ += none.metrics.efi_per_channel != want.efi;
  }
  EXPECT_GE(differ, 5);  // the offsets matter on these fabrics
}

TEST(AnalysisTest, SourceLidOffsetsOfTheWrongSizeAreRefused) {
  const Fabric f = testfab::FatTree2(4, 2, 3);
  const std::vector<uint8_t> offset(3, 1);
  AnalysisOptions o;
  o.what = kAnalyseMetrics;
  o.source_lid_offset = &offset;
  AnalysisResult r;
  const Status s = AnalyseRouting(f, testfab::MinHopLfts(f), o, &r);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("3 source LID offsets for"), std::string::npos) << s.message();
}

// osrm2 on Yuan's FT(8,2) (LMC 1, two source groups per leaf) through the routing pass, as
// compare, replay and route see it: the metrics follow each source's group LID (the pair-by-pair
// walk), and they are not what base LIDs for every source would give.
TEST(AnalysisTest, Osrm2MetricsFollowEachSourcesGroupLid) {
  const Fabric f = enginetest::Pgft(enginetest::Spec(2, {4, 8}, {1, 4}, {1, 1}), 1);
  JobMixOptions jo;
  jo.seed = 5;
  jo.max_size = 12;
  JobMapping mix;
  ASSERT_TRUE(GenerateJobMix(f, jo, &mix).ok());
  RoutingOptions ro;
  ro.engine = "osrm2";
  RoutingInputs in;
  ASSERT_TRUE(LoadRoutingInputs(f, ro, mix, &in).ok());
  ASSERT_GE(in.jobs.size(), 3u);
  AnalysisOptions also = EverythingFollowingSources(in.jobs, 3);
  also.what = kAnalyseMetrics;
  RoutingOutput out;
  ValidationReport report;
  AnalysisResult pass;
  ASSERT_TRUE(RunRoutingPass(in, &out, &report, also, &pass).ok());
  ASSERT_EQ(out.source_lid_offset.size(), f.Endpoints().size());

  AnalysisOptions o = EverythingFollowingSources(in.jobs, 3);
  o.source_lid_offset = &out.source_lid_offset;
  AnalysisResult own;
  ASSERT_TRUE(AnalyseRouting(f, out.lfts, o, &own).ok());
  const BruteForce want = Brute(f, out.lfts, out.source_lid_offset, in.jobs, o.traffic);
  ExpectBrute(want, own);
  ExpectSame(pass.metrics, own.metrics);
  for (size_t i = 0; i < own.traffic.size(); ++i) ExpectSame(pass.traffic[i], own.traffic[i]);

  AnalysisResult base;
  o.source_lid_offset = nullptr;
  ASSERT_TRUE(AnalyseRouting(f, out.lfts, o, &base).ok());
  EXPECT_NE(base.metrics.efi_per_channel, want.efi);
  EXPECT_NE(base.metrics.effective_efi_per_channel, want.effective);
  // Group 0's routes for every source funnel each leaf into half the spines: all-to-all's
  // busiest channel carries more than with each source on its group's LID.
  EXPECT_GT(base.traffic[0].max_load, own.traffic[0].max_load);
}

}  // namespace
}  // namespace sar
