// Trace replay against hand-computed events and metrics, and the three history readers.
#include "sar/study/replay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "io/test_util.h"
#include "sar/analysis/analysis.h"
#include "sar/engines/engine.h"
#include "sar/io/file_util.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"
#include "sar/pass/routing_pass.h"
#include "sar/study/job_history.h"
#include "sar/study/shards.h"

namespace sar {
namespace {

// FT(2;2,3): leaves leaf000..leaf002 with hosts h00000-h00001, h00002-h00003, h00004-h00005;
// two spines; 6 cables = 12 switch-to-switch channels.
Fabric Small() {
  Fabric f;
  EXPECT_TRUE(GenerateFatTree2(2, 3, 1, GenerateOptions(), &f).ok());
  EXPECT_TRUE(AssignLids({}, &f).ok());
  return f;
}

// Hand-computed: a is on one leaf (never an event by itself), b spans leaves 0-1, c leaves 0-2
// (sharing h00000 with a, as a recorded history may), d one leaf, e one leaf.
constexpr const char* kTrace =
    "# start end id hosts\n"
    "1000 1100 a h[00000-00001]\n"
    "1010 1050 b h00001,h00002 batch 60\n"
    "1020 1030 c h00000,h00002,h00004\n"
    "1030 1040 d h00003\n"
    "1060 - e h[00004-00005] batch 60 sar-pattern=alltoall\n";

// Issue 37: every reroute is one routing pass, so an alltoall job gets FORS and an event
// without jobs gets dfsssp, with the notes RunRoutingPass itself gives for the event's jobs.
TEST(Replay, ReroutesThroughTheRoutingPass) {
  const Fabric f = Small();
  JobHistory h;
  ASSERT_TRUE(
      ParseJobTrace("1000 1100 x h00000,h00002,h00004 batch 60 sar-pattern=alltoall\n", "t", &h)
          .ok());
  ReplayOptions o;
  o.engines = {"sar"};
  o.routing.threads = 1;
  ReplayResult r;
  ASSERT_TRUE(Replay(f, h, o, &r).ok());
  ASSERT_EQ(r.events.size(), 2u);  // x starts with the window, x ends
  for (int k = 0; k < 2; ++k) {
    const ReplaySample& s = r.samples[0][k];
    const bool has_x = !r.events[k].jobs.empty();
    EXPECT_EQ(has_x, k == 0);
    RoutingRequest request;
    request.fabric = &f;
    request.options = o.routing;
    request.mapping = JobMapping();
    if (has_x)
      request.mapping->jobs.push_back({"x", {"h00000", "h00002", "h00004"}, JobPattern::kAllToAll});
    RoutingResult pass;
    ASSERT_TRUE(RunRoutingPass(request, &pass).ok());
    EXPECT_EQ(s.notes, pass.Notes()) << k;
    EXPECT_EQ(s.engine_used, has_x ? "sar" : "dfsssp");
    EXPECT_EQ(pass.fors.size(), has_x ? 1u : 0u);
    const std::string want =
        has_x ? "fors job x: 3 hosts" : "job mapping (none given): routing with plain dfsssp";
    bool noted = false;
    for (const std::string& n : s.notes) noted = noted || n.rfind(want, 0) == 0;
    EXPECT_TRUE(noted) << want;
  }
}

TEST(Replay, HandMadeTraceGivesHandComputedEventsAndMetrics) {
  const Fabric f = Small();
  JobHistory h;
  ASSERT_TRUE(ParseJobTrace(kTrace, "t", &h).ok());
  ASSERT_EQ(h.jobs.size(), 5u);
  EXPECT_TRUE(std::isinf(h.jobs[4].end_s));
  EXPECT_EQ(h.jobs[4].pattern, JobPattern::kAllToAll);
  ReplayOptions o;
  o.engines = {"sar", "dfsssp"};
  o.routing.threads = 1;
  ReplayResult r;
  ASSERT_TRUE(Replay(f, h, o, &r).ok());
  EXPECT_EQ(r.placed, 5);
  ASSERT_EQ(r.jobs.size(), 2u);  // b and c
  EXPECT_EQ(r.jobs[0].id, "b");
  EXPECT_EQ(r.jobs[1].id, "c");
  EXPECT_EQ(r.jobs[1].leaves, 3);
  // Events: window start (t 0, no multi-leaf job), b starts (10), c starts (20), c ends while d
  // starts (30), b ends (50). d's end (40) and e's start (60) leave the multi-leaf set alone.
  const std::vector<double> times = {0, 10, 20, 30, 50};
  const std::vector<std::vector<int>> sets = {{}, {0}, {0, 1}, {0}, {}};
  const std::vector<int> running = {1, 2, 3, 3, 1};
  ASSERT_EQ(r.events.size(), times.size());
  for (size_t k = 0; k < times.size(); ++k) {
    EXPECT_EQ(r.events[k].time_s, times[k]) << k;
    EXPECT_EQ(r.events[k].jobs, sets[k]) << k;
    EXPECT_EQ(r.events[k].running, running[k]) << k;
  }
  // Every pair of a multi-leaf job crosses exactly 2 switch-to-switch channels on a minimal
  // route (up, down): the effective EFIs sum to 2 * pairs; b alone uses 4 of the 12 channels
  // once each (max 1, dark 8/12).
  const std::vector<int> pairs = {0, 2, 2 + 6, 2, 0};
  ASSERT_EQ(r.samples.size(), 2u);
  for (size_t e = 0; e < 2; ++e) {
    for (size_t k = 0; k < times.size(); ++k) {
      const ReplaySample& s = r.samples[e][k];
      EXPECT_LE(s.effective_efi_max, static_cast<uint64_t>(2 * pairs[k])) << e << " " << k;
      EXPECT_EQ(s.worst_job_efi <= s.effective_efi_max, true);
      if (pairs[k] == 0) {
        EXPECT_EQ(s.effective_efi_max, 0u);
        EXPECT_EQ(s.dark_fiber, 1.0);
      }
      if (k == 1 || k == 3) {
        EXPECT_EQ(s.effective_efi_max, 1u);
        EXPECT_EQ(s.worst_job_efi, 1u);
        EXPECT_DOUBLE_EQ(s.dark_fiber, 8.0 / 12.0);
      }
    }
  }
  // c alone is 6 pairs over 12 channel uses; with b the sum is 16 over at most 12 channels, so
  // some channel carries 2.
  EXPECT_GE(r.samples[0][2].effective_efi_max, 2u);
  // dfsssp ignores jobs: routed once, never changed. sar reroutes at every event, as dfsssp when
  // no multi-leaf job runs (the empty-mapping rule), and returns to the same tables for the same
  // job set.
  for (size_t k = 0; k < times.size(); ++k) {
    EXPECT_EQ(r.samples[1][k].rerouted, k == 0);
    EXPECT_EQ(r.samples[1][k].lft_changed, 0u);
    EXPECT_TRUE(r.samples[0][k].rerouted);
    EXPECT_EQ(r.samples[0][k].engine_used, pairs[k] == 0 ? "dfsssp" : "sar");
  }
  EXPECT_EQ(r.samples[0][0].efi_max, r.samples[1][0].efi_max);
  EXPECT_EQ(r.samples[0][4].lft_changed, r.samples[0][1].lft_changed)
      << "event 4 undoes what event 1 changed (sar's tables for {} are dfsssp's)";

  const ReplaySummary s = SummarizeReplay(r, 1);
  EXPECT_EQ(s.reroutes, 1);
  EXPECT_DOUBLE_EQ(s.dark_mean, (1 + 8.0 / 12 + r.samples[1][2].dark_fiber + 8.0 / 12 + 1) / 5);
  EXPECT_EQ(s.dark_p95, 1.0);

  // The window: from t 25 only the state at 25 and the later changes.
  o.from_s = 25;
  o.to_s = 50;
  ASSERT_TRUE(Replay(f, h, o, &r).ok());
  ASSERT_EQ(r.events.size(), 2u);
  EXPECT_EQ(r.events[0].time_s, 25);
  EXPECT_EQ(r.events[0].jobs, (std::vector<int>{0, 1}));
  EXPECT_EQ(r.events[1].time_s, 30);

  // Before/after a reroute: judged on the same jobs, both sum to 2 * pairs.
  o.from_s = 0;
  o.to_s = 1e18;
  ASSERT_TRUE(Replay(f, h, o, &r).ok());
  std::vector<uint64_t> before, after;
  ASSERT_TRUE(ReplayLinkLoads(f, r, o, "sar", 2, &before, &after).ok());
  uint64_t sb = 0, sa = 0;
  for (uint64_t v : before) sb += v;
  for (uint64_t v : after) sa += v;
  EXPECT_EQ(sb, 16u);
  EXPECT_EQ(sa, 16u);
  // The replay's own "without the reroute" is the same judgement of the same stale tables.
  EXPECT_EQ(*std::max_element(before.begin(), before.end()),
            r.samples[0][2].stale_effective_efi_max);
  EXPECT_EQ(*std::max_element(after.begin(), after.end()), r.samples[0][2].effective_efi_max);
  for (size_t k = 0; k < r.events.size(); ++k) {
    EXPECT_EQ(r.samples[1][k].stale_effective_efi_max, r.samples[1][k].effective_efi_max)
        << "an engine that ignores jobs never reroutes";
  }
  EXPECT_EQ(r.samples[0][4].stale_effective_efi_max, 0u) << "no multi-leaf job: nothing to carry";
  EXPECT_FALSE(ReplayLinkLoads(f, r, o, "sar", 0, &before, &after).ok());
}

// Stability counts on the hand-made trace: jobs running across each event (b across 2 and 3).
TEST(Replay, CountsContinuingJobs) {
  const Fabric f = Small();
  JobHistory h;
  ASSERT_TRUE(ParseJobTrace(kTrace, "t", &h).ok());
  ReplayOptions o;
  o.engines = {"sar"};
  o.routing.threads = 1;
  ReplayResult r;
  ASSERT_TRUE(Replay(f, h, o, &r).ok());
  const std::vector<int> continuing = {0, 0, 1, 1, 0};
  for (size_t k = 0; k < r.events.size(); ++k) {
    EXPECT_EQ(r.samples[0][k].jobs_continuing, continuing[k]) << "event " << k;
    EXPECT_LE(r.samples[0][k].jobs_rerouted, r.samples[0][k].jobs_continuing);
    EXPECT_LE(r.samples[0][k].lft_blocks_changed, r.samples[0][k].lft_changed);
  }
}

// Delta replay against full recomputes on a busier trace: per event never more entries or
// blocks changed, never a higher max effective EFI or max EFI (a full recompute at an event does
// not depend on earlier tables, so the two replays compare event by event), fewer changes in all.
TEST(Replay, DeltaChangesLessAtEqualQuality) {
  Fabric f;
  ASSERT_TRUE(GenerateFatTree2(6, 5, 1, GenerateOptions(), &f).ok());
  ASSERT_TRUE(AssignLids({}, &f).ok());
  // 30 hosts on 5 leaves; jobs of 4 hosts over 2-3 leaves, overlapping in time.
  std::string trace;
  for (int j = 0; j < 10; ++j) {
    const int start = 100 + 10 * j, end = start + 35;
    std::string hosts;
    for (int k = 0; k < 4; ++k) {
      char name[16];
      std::snprintf(name, sizeof name, "h%05d", (j * 7 + k * 5) % 30);
      hosts += (hosts.empty() ? "" : ",") + std::string(name);
    }
    trace += std::to_string(start) + " " + std::to_string(end) + " j" + std::to_string(j) + " " +
             hosts + "\n";
  }
  JobHistory h;
  ASSERT_TRUE(ParseJobTrace(trace, "t", &h).ok());
  ReplayOptions o;
  o.engines = {"sar", "dfsssp"};
  o.routing.threads = 1;
  ReplayResult full, delta;
  ASSERT_TRUE(Replay(f, h, o, &full).ok());
  o.delta = true;
  ASSERT_TRUE(Replay(f, h, o, &delta).ok());
  ASSERT_EQ(full.events.size(), delta.events.size());
  ASSERT_GT(full.events.size(), 10u);
  uint64_t full_entries = 0, delta_entries = 0;
  for (size_t k = 1; k < full.events.size(); ++k) {
    const ReplaySample &a = full.samples[0][k], &b = delta.samples[0][k];
    EXPECT_LE(b.effective_efi_max, a.effective_efi_max) << "event " << k;
    EXPECT_LE(b.efi_max, a.efi_max) << "event " << k;
    full_entries += a.lft_changed;
    delta_entries += b.lft_changed;
  }
  EXPECT_LT(delta_entries * 2, full_entries) << delta_entries << " vs " << full_entries;
  const ReplaySummary sf = SummarizeReplay(full, 0), sd = SummarizeReplay(delta, 0);
  EXPECT_LT(sd.lft_blocks_changed_mean, sf.lft_blocks_changed_mean);
  EXPECT_LE(sd.jobs_rerouted_share_mean, sf.jobs_rerouted_share_mean);
}

// Every field but reroute_ms (a time): what a split run must give event for event.
void ExpectSameSample(const ReplaySample& a, const ReplaySample& b, const std::string& where) {
  EXPECT_EQ(a.effective_efi_max, b.effective_efi_max) << where;
  EXPECT_EQ(a.dark_fiber, b.dark_fiber) << where;
  EXPECT_EQ(a.worst_job_efi, b.worst_job_efi) << where;
  EXPECT_EQ(a.efi_max, b.efi_max) << where;
  EXPECT_EQ(a.lft_changed, b.lft_changed) << where;
  EXPECT_EQ(a.lft_blocks_changed, b.lft_blocks_changed) << where;
  EXPECT_EQ(a.jobs_continuing, b.jobs_continuing) << where;
  EXPECT_EQ(a.jobs_rerouted, b.jobs_rerouted) << where;
  EXPECT_EQ(a.stale_effective_efi_max, b.stale_effective_efi_max) << where;
  EXPECT_EQ(a.rerouted, b.rerouted) << where;
  EXPECT_EQ(a.job_time_median, b.job_time_median) << where;
  EXPECT_EQ(a.job_time_max, b.job_time_max) << where;
  EXPECT_EQ(a.slowest_median, b.slowest_median) << where;
  EXPECT_EQ(a.slowest_min, b.slowest_min) << where;
  EXPECT_EQ(a.jobs_faster, b.jobs_faster) << where;
  EXPECT_EQ(a.jobs_slower, b.jobs_slower) << where;
  EXPECT_EQ(a.jobs_slower_2pct, b.jobs_slower_2pct) << where;
  EXPECT_EQ(a.speedup_median, b.speedup_median) << where;
  EXPECT_EQ(a.flow_jobs, b.flow_jobs) << where;
  EXPECT_EQ(a.engine_used, b.engine_used) << where;
}

// Shards (contiguous event ranges, sar/study/shards.h) put together equal the unsplit run, with
// full recomputes and with --delta (where each reroute starts from the previous event's tables, so
// a shard must rebuild the chain before its first event), for a job-aware engine and one that
// ignores jobs.
TEST(Replay, ShardsPutTogetherEqualTheUnsplitRun) {
  Fabric f;
  ASSERT_TRUE(GenerateFatTree2(6, 5, 1, GenerateOptions(), &f).ok());
  ASSERT_TRUE(AssignLids({}, &f).ok());
  std::string trace;
  for (int j = 0; j < 14; ++j) {
    const int start = 100 + 10 * j, end = start + 35 + (j % 3) * 10;
    std::string hosts;
    for (int k = 0; k < 4 + j % 3; ++k) {
      char name[16];
      std::snprintf(name, sizeof name, "h%05d", (j * 7 + k * 5) % 30);
      hosts += (hosts.empty() ? "" : ",") + std::string(name);
    }
    trace += std::to_string(start) + " " + std::to_string(end) + " j" + std::to_string(j) + " " +
             hosts + "\n";
  }
  JobHistory h;
  ASSERT_TRUE(ParseJobTrace(trace, "t", &h).ok());
  for (const bool delta : {false, true}) {
    ReplayOptions o;
    o.engines = {"sar", "minhop"};
    o.routing.threads = 1;
    o.delta = delta;
    ReplayResult whole;
    ASSERT_TRUE(Replay(f, h, o, &whole).ok());
    const size_t events = whole.events.size();
    ASSERT_GT(events, 12u);
    for (const int shards : {3, 5}) {
      std::vector<bool> covered(events, false);
      for (int k = 0; k < shards; ++k) {
        const ShardRange range = ShardOf(events, k, shards);
        ReplayOptions so = o;
        so.event_begin = range.begin;
        so.event_end = range.end;
        size_t calls = 0;
        so.progress = [&](size_t, size_t total) {
          ++calls;
          EXPECT_EQ(total, 2 * (range.end - range.begin));
        };
        ReplayResult part;
        ASSERT_TRUE(Replay(f, h, so, &part).ok());
        EXPECT_EQ(calls, 2 * (range.end - range.begin));
        for (size_t e = 0; e < 2; ++e) {
          for (size_t x = range.begin; x < range.end; ++x) {
            covered[x] = true;
            ExpectSameSample(part.samples[e][x], whole.samples[e][x],
                             (delta ? "delta " : "full ") + o.engines[e] + " event " +
                                 std::to_string(x) + " shard " + std::to_string(k) + "/" +
                                 std::to_string(shards));
          }
        }
      }
      EXPECT_EQ(std::count(covered.begin(), covered.end(), true), static_cast<long>(events));
    }
    if (delta) {
      // The chain the delta shards rebuild matters: its LFT changes differ from full recomputes'
      // at some event, so a shard that only recomputed the event before would not match.
      ReplayOptions full = o;
      full.delta = false;
      ReplayResult nodelta;
      ASSERT_TRUE(Replay(f, h, full, &nodelta).ok());
      uint64_t differ = 0;
      for (size_t x = 1; x < events; ++x) {
        differ += nodelta.samples[0][x].lft_changed != whole.samples[0][x].lft_changed;
      }
      EXPECT_GT(differ, 0u);
    }
  }
}

TEST(Replay, UnknownEngineNamesTheKnownOnes) {
  const Fabric f = Small();
  JobHistory h;
  ASSERT_TRUE(ParseJobTrace(kTrace, "t", &h).ok());
  ReplayOptions o;
  o.engines = {"nosuch"};
  ReplayResult r;
  const Status s = Replay(f, h, o, &r);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("dfsssp"), std::string::npos) << s.message();
}

std::string SwfLine(int id, int submit, int wait, int run, int procs) {
  return std::to_string(id) + " " + std::to_string(submit) + " " + std::to_string(wait) + " " +
         std::to_string(run) + " " + std::to_string(procs) + " -1 -1 " + std::to_string(procs) +
         " 100 -1 1 1 1 -1 -1 -1 -1 -1\n";
}

TEST(Replay, SwfSizesArePlacedByTheAllocatorScaledToTheFabric) {
  const Fabric f = Small();  // 6 hosts; the history's machine has 3: scale 2
  const std::string swf = "; MaxNodes: 3\n; MaxProcs: 3\n" + SwfLine(1, 0, 0, 100, 1) +
                          SwfLine(2, 5, 5, 50, 2) +   // starts at 10, ends 60: 4 hosts
                          SwfLine(3, 20, 0, 10, 1) +  // no host free: not placed
                          SwfLine(4, 70, 0, 10, 1) +  // 2 hosts on one free leaf
                          SwfLine(5, 80, 0, 0, 1) +   // no duration
                          SwfLine(6, 80, 0, -1, 1);   // never ran: skipped record
  JobHistory h;
  ASSERT_TRUE(ParseSwf(swf, "x.swf", &h).ok());
  EXPECT_EQ(h.machine_nodes, 3);
  EXPECT_EQ(h.skipped, 1);
  ASSERT_EQ(h.jobs.size(), 5u);
  EXPECT_EQ(h.jobs[1].start_s, 10);
  EXPECT_EQ(h.jobs[1].end_s, 60);
  ReplayOptions o;
  ReplayResult r;
  ASSERT_TRUE(PlanReplay(f, h, o, &r).ok());
  EXPECT_EQ(r.scale, 2);
  EXPECT_EQ(r.placed, 3);
  EXPECT_EQ(r.not_placed, 1);
  EXPECT_EQ(r.zero_length, 1);
  // Job 1 (2 hosts) best-fits leaf 0; job 2 (4 hosts) fits no leaf and takes leaves 1 and 2.
  ASSERT_EQ(r.jobs.size(), 1u);
  EXPECT_EQ(r.jobs[0].id, "2");
  EXPECT_EQ(r.jobs[0].hosts, (std::vector<std::string>{"h00002", "h00003", "h00004", "h00005"}));
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.events[1].time_s, 10);
  EXPECT_EQ(r.events[1].busy_hosts, 6);
  EXPECT_EQ(r.events[2].time_s, 60);

  h.machine_nodes = 0;
  EXPECT_EQ(PlanReplay(f, h, o, &r).code(), Status::Code::kInvalidArgument);
  o.scale = false;
  ASSERT_TRUE(PlanReplay(f, h, o, &r).ok());
  EXPECT_EQ(r.scale, 1);
}

TEST(Replay, KthSliceKeepsHostsDisjointAndEventsMatchTheJobs) {
  Fabric f;
  ASSERT_TRUE(GenerateFatTree2(20, 18, 1, GenerateOptions(), &f).ok());
  ASSERT_TRUE(AssignLids({}, &f).ok());
  JobHistory h;
  ASSERT_TRUE(
      ReadJobHistory(io::testing::TestDataPath("kth-sp2-slice.swf"), HistoryFormat::kSwf, &h).ok());
  EXPECT_EQ(h.machine_nodes, 100);
  EXPECT_EQ(h.jobs.size() + h.skipped, 400u);
  ReplayOptions o;
  o.engines = {"sar", "minhop"};
  o.to_s = 2 * 86400;
  ReplayResult r;
  ASSERT_TRUE(Replay(f, h, o, &r).ok());
  EXPECT_DOUBLE_EQ(r.scale, 3.6);
  EXPECT_GT(r.events.size(), 20u);
  for (size_t k = 0; k < r.events.size(); ++k) {
    const ReplayEvent& e = r.events[k];
    // The multi-leaf set is exactly the jobs running at the event's time (independent of the
    // replay's own bookkeeping), and no host is in two of them.
    std::vector<int> expect;
    for (size_t j = 0; j < r.jobs.size(); ++j) {
      if (r.jobs[j].start_s <= e.time_s && e.time_s < r.jobs[j].end_s) {
        expect.push_back(static_cast<int>(j));
      }
    }
    ASSERT_EQ(e.jobs, expect) << "event " << k;
    if (k > 0) {
      ASSERT_NE(e.jobs, r.events[k - 1].jobs) << "an event is a change";
    }
    std::set<std::string> hosts;
    for (int j : e.jobs) {
      for (const std::string& host : r.jobs[j].hosts) {
        ASSERT_TRUE(hosts.insert(host).second) << host << " in two jobs at event " << k;
      }
    }
    EXPECT_LE(e.busy_hosts, 360);
    for (size_t en = 0; en < 2; ++en) {
      EXPECT_EQ(r.samples[en][k].effective_efi_max == 0, e.jobs.empty()) << en << " " << k;
    }
  }
}

// osrm2 routes per source group (one LID per group, LMC 1 on Yuan's FT(8,2)): every event's
// metrics are those of its tables with each source on its group's LID, not the base-LID reading
// (which funnels each leaf into half the spines), both at the first event (the routing pass) and
// at the later ones (osrm2 ignores jobs: the same tables measured against each event's jobs).
TEST(Replay, OsrmEventsFollowEachSourcesGroupLid) {
  Fabric f;
  ASSERT_TRUE(GeneratePgft({2, {4, 8}, {1, 4}, {1, 1}}, GenerateOptions(), &f).ok());
  LidOptions lo;
  lo.lmc = 1;
  ASSERT_TRUE(AssignLids(lo, &f).ok());
  const std::vector<PortRef> ends = f.Endpoints();
  ASSERT_EQ(ends.size(), 32u);
  auto host = [&](int i) { return std::string(f.hostname(ends[i].node)); };
  // Jobs over several leaves (4 hosts a leaf), starting and ending at different times.
  std::string trace = "# start end id hosts\n";
  trace +=
      "0 100 a " + host(0) + "," + host(1) + "," + host(4) + "," + host(9) + "," + host(13) + "\n";
  trace += "10 60 b " + host(2) + "," + host(6) + "," + host(10) + "," + host(14) + "," + host(18) +
           "," + host(22) + "\n";
  trace += "20 80 c " + host(16) + "," + host(17) + "," + host(21) + "," + host(25) + "," +
           host(29) + "," + host(30) + "\n";
  JobHistory h;
  ASSERT_TRUE(ParseJobTrace(trace, "t", &h).ok());
  ReplayOptions o;
  o.engines = {"osrm2"};
  o.routing.threads = 1;
  ReplayResult r;
  ASSERT_TRUE(Replay(f, h, o, &r).ok());
  ASSERT_GE(r.events.size(), 4u);

  RoutingInput in;
  in.fabric = &f;
  RoutingOutput routed;
  ASSERT_TRUE(MakeRoutingEngine("osrm2")->Route(in, &routed).ok());
  ASSERT_EQ(routed.source_lid_offset.size(), ends.size());
  int base_differs = 0;
  for (size_t k = 0; k < r.events.size(); ++k) {
    SCOPED_TRACE("event " + std::to_string(k));
    JobMapping m;
    for (int j : r.events[k].jobs) m.jobs.push_back({r.jobs[j].id, r.jobs[j].hosts, {}});
    const std::vector<ResolvedJob> jobs = ResolveJobs(f, m);
    AnalysisOptions ao;
    ao.what = kAnalyseMetrics;
    ao.jobs = &jobs;
    ao.source_lid_offset = &routed.source_lid_offset;
    AnalysisResult want, base;
    ASSERT_TRUE(AnalyseRouting(f, routed.lfts, ao, &want).ok());
    ao.source_lid_offset = nullptr;
    ASSERT_TRUE(AnalyseRouting(f, routed.lfts, ao, &base).ok());
    const ReplaySample& s = r.samples[0][k];
    EXPECT_EQ(s.efi_max, want.metrics.efi.max);
    EXPECT_EQ(s.effective_efi_max, want.metrics.effective_efi.max);
    EXPECT_DOUBLE_EQ(s.dark_fiber, want.metrics.dark_fiber);
    uint64_t worst = 0;
    for (const JobMetrics& jm : want.metrics.jobs) worst = std::max(worst, jm.efi_max);
    EXPECT_EQ(s.worst_job_efi, worst);
    base_differs +=
        base.metrics.efi.max != want.metrics.efi.max ||
        base.metrics.effective_efi_per_channel != want.metrics.effective_efi_per_channel;
  }
  EXPECT_EQ(base_differs, static_cast<int>(r.events.size()));
}

TEST(JobHistory, SacctParsable2KeepsJobsSkipsStepsAndPending) {
  const std::string text =
      "JobID|JobName|Partition|Start|End|NodeList|AdminComment\n"
      "101|x|batch|2024-03-01T10:00:00|2024-03-01T11:00:00|n[01-03]|\n"
      "101.batch|batch||2024-03-01T10:00:00|2024-03-01T11:00:00|n01|\n"
      "102|y|batch|2024-03-01T10:30:00|Unknown|n04,n05|sar-pattern=alltoall\n"
      "103|z|batch|Unknown|Unknown|None assigned|\n";
  JobHistory h;
  ASSERT_TRUE(ParseSacct(text, "s.txt", &h).ok());
  ASSERT_EQ(h.jobs.size(), 2u);
  EXPECT_EQ(h.skipped, 1);
  EXPECT_EQ(h.jobs[0].hosts, (std::vector<std::string>{"n01", "n02", "n03"}));
  EXPECT_EQ(h.jobs[0].end_s - h.jobs[0].start_s, 3600);
  EXPECT_EQ(h.jobs[1].start_s - h.jobs[0].start_s, 1800);
  EXPECT_TRUE(std::isinf(h.jobs[1].end_s));
  EXPECT_EQ(h.jobs[1].pattern, JobPattern::kAllToAll);
  EXPECT_EQ(h.jobs[0].partition, "batch");

  JobHistory bad;
  Status s = ParseSacct("JobID|Start|End\n", "s.txt", &bad);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("s.txt:1:"), std::string::npos) << s.message();
  s = ParseSacct("JobID|Start|End|NodeList\n1|2024-01-01T00:00:00|x|n1\n", "s.txt", &bad);
  EXPECT_NE(s.message().find("s.txt:2:"), std::string::npos) << s.message();
  s = ParseSacct("JobID|Start|End|NodeList\n1|2024-01-01T00:00:00\n", "s.txt", &bad);
  EXPECT_NE(s.message().find("s.txt:2:"), std::string::npos) << s.message();
}

// Issue 34: timegm normalised 2026-13-45T99:99:99 into a day of 2027 and the replay went on.
TEST(JobHistory, SacctImpossibleTimesAreRejectedWithFileAndLine) {
  const std::string header =
      "JobID|Start|End|NodeList\n1|2024-01-01T00:00:00|2024-01-01T01:00:00|n1\n";
  const struct {
    std::string start, end, what;
  } cases[] = {
      {"2026-13-45T99:99:99", "Unknown", "bad Start '2026-13-45T99:99:99'"},
      {"2026-02-29T00:00:00", "Unknown", "bad Start '2026-02-29T00:00:00'"},  // not a leap year
      {"2024-04-31T00:00:00", "Unknown", "bad Start"},
      {"2024-01-01T24:00:00", "Unknown", "bad Start"},
      {"2024-01-01T00:60:00", "Unknown", "bad Start"},
      {"2024-01-01T00:00:60", "Unknown", "bad Start"},
      {"2024-1-01T00:00:00", "Unknown", "bad Start"},   // sscanf's %2d took one digit
      {"2024-+1-01T00:00:00", "Unknown", "bad Start"},  // and a sign
      {"2024-01-01T00:00:00", "2024-00-10T00:00:00", "bad End '2024-00-10T00:00:00'"},
      {"2024-01-02T00:00:00", "2024-01-01T00:00:00", "End '2024-01-01T00:00:00' before Start"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.start + " " + c.end);
    JobHistory h;
    const Status s = ParseSacct(header + "2|" + c.start + "|" + c.end + "|n2\n", "s.txt", &h);
    EXPECT_EQ(s.code(), Status::Code::kCorruption);
    EXPECT_NE(s.message().find("s.txt:3: " + c.what), std::string::npos) << s.message();
  }
  // Leap days and the last second of a day are real.
  JobHistory h;
  ASSERT_TRUE(
      ParseSacct(header + "2|2000-02-29T23:59:59|2024-02-29T00:00:00|n2\n", "s.txt", &h).ok());
  EXPECT_EQ(h.jobs.size(), 2u);
}

TEST(JobHistory, MalformedInputNamesFileAndLine) {
  JobHistory h;
  Status s = ParseSwf("; MaxNodes: 4\n1 2 3\n", "a.swf", &h);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("a.swf:2:"), std::string::npos) << s.message();
  s = ParseSwf("1 0 0 10 x -1 -1 1\n", "a.swf", &h);
  EXPECT_NE(s.message().find("a.swf:1:"), std::string::npos) << s.message();
  s = ParseJobTrace("\n0 5 a n[1-\n", "t.trace", &h);
  EXPECT_NE(s.message().find("t.trace:2:"), std::string::npos) << s.message();
  s = ParseJobTrace("5 1 a n1\n", "t.trace", &h);
  EXPECT_NE(s.message().find("bad end time"), std::string::npos) << s.message();
  HistoryFormat fmt;
  EXPECT_TRUE(ParseHistoryFormat("swf", &fmt));
  EXPECT_EQ(fmt, HistoryFormat::kSwf);
  EXPECT_FALSE(ParseHistoryFormat("csv", &fmt));
}

}  // namespace
}  // namespace sar
