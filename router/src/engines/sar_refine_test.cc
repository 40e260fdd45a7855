// SAR's refinement on several threads gives the sequential search's tables and statistics: the
// same moves in the same order, and the same work counted against the deterministic limit (so
// a search cut short by max_work stops at the same place).
#include "engines/sar_refine.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>

#include "engines/sssp_test_util.h"
#include "sar/engines/engine.h"
#include "sar/model/failures.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"

namespace sar::internal {
namespace {

Fabric Pgft(const std::string& spec_text, int failed_links, uint64_t seed) {
  PgftSpec spec;
  Fabric f;
  EXPECT_TRUE(ParsePgftSpec(spec_text, &spec).ok());
  EXPECT_TRUE(GeneratePgft(spec, {}, &f).ok());
  EXPECT_TRUE(AssignLids({}, &f).ok());
  if (failed_links == 0) return f;
  RandomFailureOptions fo;
  fo.num_links = failed_links;
  fo.seed = seed;
  FailureSet failed;
  Fabric degraded;
  EXPECT_TRUE(PickRandomFailures(f, fo, &failed).ok());
  EXPECT_TRUE(ApplyFailures(f, failed, &degraded).ok());
  return degraded;
}

struct Result {
  LftSet lfts;
  RefineStats stats;
};

// The tests' cases: seed's fabric (`odd` for odd seeds, `even` for even ones; intact for seeds
// 1 and 2, else with 3 x seed failed cables) and 12 random jobs on it.
struct Case {
  Fabric fabric;
  std::vector<ResolvedJob> jobs;
};
Case CaseOf(uint64_t seed, const std::string& odd, const std::string& even) {
  Case c;
  c.fabric = Pgft(seed % 2 ? odd : even, seed <= 2 ? 0 : static_cast<int>(seed) * 3, seed);
  c.jobs = sssptest::RandomJobs(c.fabric, seed, 12);
  return c;
}

// Refines the plain SSSP tables of `f` (SAR without its refinement) for `jobs`.
Result Refine(const Fabric& f, const std::vector<ResolvedJob>& jobs, uint64_t seed,
              const RefineOptions& options, bool slow_channels = true, int detours = 0) {
  RoutingInput in;
  in.fabric = &f;
  in.jobs = &jobs;
  in.sar_refine = false;
  RoutingOutput out;
  EXPECT_TRUE(MakeRoutingEngine("sar")->Route(in, &out).ok());
  const SwitchGraph g = BuildSwitchGraph(f);
  std::map<std::pair<NodeId, int>, int> dest_of;
  for (int e = 0; e < g.num_endpoint_dests; ++e) dest_of[{g.dests[e].node, g.dests[e].port}] = e;
  std::vector<std::vector<int>> members;
  for (const ResolvedJob& j : jobs) {
    if (j.num_leaf_switches < 2) continue;
    members.emplace_back();
    for (const PortRef& p : j.endpoints) members.back().push_back(dest_of.at({p.node, p.port}));
  }
  // Some slower channels (a larger unit per route), as SsspRouter::arc_units gives them.
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> units(g.arc_to.size(), 64);
  for (uint64_t& u : units) {
    if (slow_channels && rng() % 8 == 0) u = 128;
  }
  Result r{out.lfts, {}};
  // Entries turned to a random other cable: routes that are no longer min-hop, or loop.
  for (int k = 0; k < detours; ++k) {
    const Destination& d = g.dests[rng() % g.num_endpoint_dests];
    const int s = static_cast<int>(rng() % g.num_switches);
    if (s == d.sw || g.degree(s) == 0) continue;
    r.lfts.set_port(s, d.base_lid, g.arc_port[g.arc_begin[s] + rng() % g.degree(s)]);
  }
  RefineJobRoutes(g, members, units, options, &r.lfts, &r.stats);
  return r;
}

void ExpectSame(const Result& a, const Result& b, const std::string& what) {
  ASSERT_EQ(a.lfts.num_switches(), b.lfts.num_switches()) << what;
  for (int s = 0; s < a.lfts.num_switches(); ++s) {
    for (Lid lid = 0; lid <= a.lfts.max_lid(); ++lid) {
      ASSERT_EQ(a.lfts.port(s, lid), b.lfts.port(s, lid))
          << what << ": switch " << s << " lid " << lid;
    }
  }
  EXPECT_EQ(a.stats.moves, b.stats.moves) << what;
  EXPECT_EQ(a.stats.work_limited, b.stats.work_limited) << what;
  EXPECT_EQ(a.stats.effective_after, b.stats.effective_after) << what;
  EXPECT_EQ(a.stats.all_after, b.stats.all_after) << what;
}

TEST(SarRefineThreads, SameTablesAndWorkOnRandomMixesAndDegradedFabrics) {
  int moved = 0, limited = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const Case c = CaseOf(seed, "pgft:3;8,4,6;1,4,6;1,1,1", "pgft:2;8,12;1,6;1,2");
    const Fabric& f = c.fabric;
    const std::vector<ResolvedJob>& jobs = c.jobs;
    // Unlimited, and cut short by the work limit at a few places (the parts' work must add
    // up to the sequential count for the search to stop at the same move).
    for (uint64_t max_work : {uint64_t{1} << 40, uint64_t{20000}, uint64_t{150000}}) {
      for (bool capped : {false, true}) {
        RefineOptions o;
        o.max_work = max_work;
        if (capped) o.all_pairs_cap = 1;  // below any load: the all-pairs phase runs to the end
        o.threads = 1;
        const Result one = Refine(f, jobs, seed, o);
        moved += one.stats.moves > 0;
        limited += one.stats.work_limited;
        for (int threads : {2, 3}) {
          o.threads = threads;
          ExpectSame(one, Refine(f, jobs, seed, o),
                     "seed " + std::to_string(seed) + " max_work " + std::to_string(max_work) +
                         (capped ? " capped" : "") + " threads " + std::to_string(threads));
        }
      }
    }
  }
  // The comparisons are only worth something if the search moved routes and hit the limit.
  EXPECT_GT(moved, 10);
  EXPECT_GT(limited, 4);
}

// The per-switch route counts are kept in 16 bits when every HCA port fits (all these
// fabrics); the 32-bit form, which larger fabrics use, must refine alike: the same moves, work
// and tables, also when cut short by the work limit and on degraded trees.
TEST(SarRefineFlows, NarrowAndWideFlowsRefineAlike) {
  int moved = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    // 384 hosts in the first: counts past 8 bits, so a width cut too short shows.
    const Case c = CaseOf(seed, "pgft:3;8,8,6;1,4,6;1,1,1", "pgft:2;8,12;1,6;1,2");
    const Fabric& f = c.fabric;
    const std::vector<ResolvedJob>& jobs = c.jobs;
    for (uint64_t max_work : {uint64_t{1} << 40, uint64_t{20000}}) {
      RefineOptions o;
      o.max_work = max_work;
      o.all_pairs_cap = seed % 2 ? 1 : o.all_pairs_cap;
      o.threads = 1 + static_cast<int>(seed % 2);
      const Result narrow = Refine(f, jobs, seed, o, true, static_cast<int>(seed % 3) * 4);
      o.wide_flows = true;
      const Result wide = Refine(f, jobs, seed, o, true, static_cast<int>(seed % 3) * 4);
      moved += narrow.stats.moves > 0;
      ExpectSame(narrow, wide,
                 "seed " + std::to_string(seed) + " max_work " + std::to_string(max_work));
    }
  }
  EXPECT_GT(moved, 4);
}

// The refinement reads every job destination's tree and its routes' loads from the tables
// (Refiner::Load, row by row, flows passed on in BFS order). Its max loads before any move
// must be the max EFI and effective EFI the metrics compute independently from the same
// tables, and after the moves (Apply) those of the refined tables; with equal channel rates,
// disjoint jobs, degraded 3-level trees (routes of up to 4 hops) and 1-3 threads, and with
// some entries turned to other cables (trees that are not min-hop are not kept, their loads
// walked; looping routes deliver nothing in both).
TEST(SarRefineLoad, LoadsAreTheMetricsLoads) {
  int moved = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const Case c = CaseOf(seed, "pgft:3;8,4,6;1,4,6;1,1,1", "pgft:3;4,6,4;1,3,4;1,1,2");
    const Fabric& f = c.fabric;
    const std::vector<ResolvedJob>& jobs = c.jobs;
    for (int max_moves : {0, 1000000}) {
      for (int detours : {0, 40}) {
        RefineOptions o;
        o.max_moves = max_moves;
        o.threads = 1 + static_cast<int>(seed % 3);
        const Result r = Refine(f, jobs, seed, o, /*slow_channels=*/false, detours);
        const Metrics m = sssptest::Measure(f, r.lfts, jobs);
        const std::string what = "seed " + std::to_string(seed) + " moves " +
                                 std::to_string(max_moves) + " detours " + std::to_string(detours);
        ASSERT_GT(m.efi.max, 0u) << what;
        if (max_moves == 0) {
          EXPECT_EQ(r.stats.moves, 0) << what;
          EXPECT_EQ(r.stats.all_before, m.efi.max) << what;
          EXPECT_EQ(r.stats.effective_before, m.effective_efi.max) << what;
        } else {
          moved += r.stats.moves > 0;
          EXPECT_EQ(r.stats.all_after, m.efi.max) << what;
          EXPECT_EQ(r.stats.effective_after, m.effective_efi.max) << what;
        }
      }
    }
  }
  EXPECT_GT(moved, 4);  // Apply's loads were checked too
}

// Each job's bottleneck, computed apart from the refiner: every route of a pair that shares a
// job walked hop by hop over the tables, one count per switch egress channel (HCA links
// included), and per job the largest count on a channel its own routes cross.
std::vector<int> JobBottlenecks(const Fabric& f, const LftSet& lfts,
                                const std::vector<ResolvedJob>& jobs) {
  std::map<std::pair<NodeId, int>, int> load;  // (switch, egress port) -> intra-job routes
  std::vector<std::vector<std::pair<NodeId, int>>> crossed(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    for (const PortRef& a : jobs[j].endpoints) {
      for (const PortRef& b : jobs[j].endpoints) {
        if (a.node == b.node) continue;
        const Lid lid = f.base_lid(b);
        NodeId s = f.peer(a).node;
        for (int hops = 0; hops < 16 && s != b.node; ++hops) {
          const int port = lfts.port(f.switch_index(s), lid);
          ++load[{s, port}];
          crossed[j].push_back({s, port});
          s = f.peer(PortRef{s, port}).node;
        }
        EXPECT_EQ(s, b.node) << "route not delivered";
      }
    }
  }
  std::vector<int> out;
  for (const auto& channels : crossed) {
    int b = 0;
    for (const auto& c : channels) b = std::max(b, load[c]);
    out.push_back(b);
  }
  return out;
}

// The per-job objective on a hand-made case: 4 leaves of 5 hosts, 2 spines. Job C (leaves 2
// and 3, all hosts) holds the global maximum (15, its floor: 25 routes a way in chunks of 5 on
// two uplinks); job A sends 4 hosts' routes from leaf 0 to its one host on leaf 1 over one
// spine; the small job B (one host on leaf 0, one on leaf 1) is set to share that spine with
// A, so both jobs' bottleneck is 5 although the other spine is free. The effective phase only
// relieves channels at the global maximum and leaves B there; the per-job phase must move B's
// route (the move with the least new load) to the other spine.
TEST(SarRefinePerJob, MovesTheSmallJobOffTheLargeJobsChannel) {
  const Fabric f = Pgft("pgft:2;5,4;1,2;1,1", 0, 0);
  ASSERT_EQ(f.num_switches(), 6);
  std::map<NodeId, std::vector<PortRef>> on_leaf;
  for (const PortRef& e : f.Endpoints()) on_leaf[f.peer(e).node].push_back(e);
  ASSERT_EQ(on_leaf.size(), 4u);
  std::vector<std::vector<PortRef>> leaf;
  for (const auto& [sw, eps] : on_leaf) {
    ASSERT_EQ(eps.size(), 5u);
    leaf.push_back(eps);
  }
  const PortRef a1 = leaf[1][0], b0 = leaf[0][4], b1 = leaf[1][1];
  std::vector<ResolvedJob> jobs;
  jobs.push_back(sssptest::MakeJob(f, "A", {leaf[0][0], leaf[0][1], leaf[0][2], leaf[0][3], a1}));
  jobs.push_back(sssptest::MakeJob(f, "B", {b0, b1}));
  std::vector<PortRef> c = leaf[2];
  c.insert(c.end(), leaf[3].begin(), leaf[3].end());
  jobs.push_back(sssptest::MakeJob(f, "C", c));

  RoutingInput in;
  in.fabric = &f;
  in.jobs = &jobs;
  in.sar_refine = false;
  RoutingOutput out;
  ASSERT_TRUE(MakeRoutingEngine("sar")->Route(in, &out).ok());
  LftSet lfts = out.lfts;
  const int leaf0 = f.switch_index(f.peer(b0).node);
  // B's route from leaf 0 takes A's spine.
  lfts.set_port(leaf0, f.base_lid(b1), lfts.port(leaf0, f.base_lid(a1)));
  const std::vector<int> start = JobBottlenecks(f, lfts, jobs);
  ASSERT_EQ(start[0], 5);
  ASSERT_EQ(start[1], 5);
  ASSERT_EQ(start[2], 15);

  const SwitchGraph g = BuildSwitchGraph(f);
  std::map<std::pair<NodeId, int>, int> dest_of;
  for (int e = 0; e < g.num_endpoint_dests; ++e) dest_of[{g.dests[e].node, g.dests[e].port}] = e;
  std::vector<std::vector<int>> members;
  for (const ResolvedJob& j : jobs) {
    members.emplace_back();
    for (const PortRef& p : j.endpoints) members.back().push_back(dest_of.at({p.node, p.port}));
  }
  const std::vector<uint64_t> units(g.arc_to.size(), 64);
  for (bool per_job : {false, true}) {
    SCOPED_TRACE(per_job ? "per-job phase" : "without it");
    RefineOptions o;
    o.per_job = per_job;
    LftSet refined = lfts;
    RefineStats st;
    RefineJobRoutes(g, members, units, o, &refined, &st);
    const std::vector<int> now = JobBottlenecks(f, refined, jobs);
    EXPECT_EQ(st.effective_after, 15u);
    EXPECT_EQ(now[2], 15);
    if (!per_job) {
      EXPECT_EQ(now[1], 5) << "the global phases leave the small job where it is";
      EXPECT_EQ(st.job_moves, 0);
      continue;
    }
    EXPECT_GE(st.job_moves, 1);
    // 3: its route back shares a leaf-1 uplink with two of A's (new loads stay below the
    // bottleneck being relieved, so one of A's routes does not move to 3 to make room).
    EXPECT_EQ(now[1], 3) << "the small job's route left the shared spine";
    EXPECT_LE(now[0], 4) << "and the large job's bottleneck fell too";
    EXPECT_NE(refined.port(leaf0, f.base_lid(b1)), lfts.port(leaf0, f.base_lid(b1)));
    EXPECT_EQ(refined.port(leaf0, f.base_lid(a1)), lfts.port(leaf0, f.base_lid(a1)))
        << "the large job's route stays";
    std::vector<int> a = start, b = now;
    std::sort(a.rbegin(), a.rend());
    std::sort(b.rbegin(), b.rend());
    EXPECT_LT(b, a);
  }
}

// On random mixes and degraded fabrics the per-job phase never makes the sorted per-job
// bottlenecks (computed apart) worse than the phases before it left them, nor raises the
// global maxima.
TEST(SarRefinePerJob, NeverWorsensTheSortedBottlenecksOnRandomMixes) {
  int lowered = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const Case c = CaseOf(seed, "pgft:3;8,4,6;1,4,6;1,1,1", "pgft:2;8,12;1,6;1,2");
    RefineOptions o;
    o.per_job = false;
    const Result without = Refine(c.fabric, c.jobs, seed, o, /*slow_channels=*/false);
    o.per_job = true;
    const Result with = Refine(c.fabric, c.jobs, seed, o, /*slow_channels=*/false);
    std::vector<ResolvedJob> multi;
    for (const ResolvedJob& j : c.jobs) {
      if (j.num_leaf_switches >= 2) multi.push_back(j);
    }
    std::vector<int> a = JobBottlenecks(c.fabric, without.lfts, multi);
    std::vector<int> b = JobBottlenecks(c.fabric, with.lfts, multi);
    std::sort(a.rbegin(), a.rend());
    std::sort(b.rbegin(), b.rend());
    EXPECT_LE(b, a) << "seed " << seed;
    EXPECT_LE(with.stats.effective_after, without.stats.effective_after) << "seed " << seed;
    EXPECT_LE(with.stats.all_after, without.stats.all_after) << "seed " << seed;
    lowered += b < a;
  }
  EXPECT_GT(lowered, 0) << "the phase lowered no mix's bottlenecks";
}

// Where not every routed destination's tree fits the refinement's memory cap (max_state; 45k
// hosts), it keeps whole jobs' trees, the largest jobs first, and still counts every route's
// load. On a 1,024-host 3-level tree, intact and degraded, with room for a third of the job
// destinations' trees: the search moves routes (without the cap's partial mode it skipped),
// only job destinations' entries change and no more destinations than trees kept, the loads it
// reports are what the metrics compute from the refined tables, the max effective load never
// rises (nor the all-pairs max above the cap), every route is still delivered on a shortest
// path, and two threads give the same tables and work.
TEST(SarRefineMemoryCap, KeepsWholeJobsTreesAndNeverRaisesTheMax) {
  int moved = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const Fabric f =
        Pgft("pgft:3;16,8,8;1,8,8;1,1,1", seed == 1 ? 0 : static_cast<int>(seed) * 10, seed);
    const std::vector<ResolvedJob> jobs = sssptest::RandomJobs(f, seed, 60);
    std::set<Lid> job_lids;
    for (const ResolvedJob& j : jobs) {
      if (j.num_leaf_switches < 2) continue;
      for (const PortRef& p : j.endpoints) job_lids.insert(f.base_lid(p));
    }
    const size_t switches = static_cast<size_t>(f.num_switches());
    RefineOptions o;
    o.max_state = switches * (job_lids.size() / 3);
    o.max_work = uint64_t{1} << 24;
    o.all_pairs_cap = seed == 2 ? o.all_pairs_cap : 1;  // 1: the all-pairs max must not rise
    o.threads = 1;
    const std::string what = "seed " + std::to_string(seed);
    RefineOptions none = o;
    none.max_moves = 0;
    const Result before = Refine(f, jobs, seed, none, /*slow_channels=*/false);
    const Result r = Refine(f, jobs, seed, o, /*slow_channels=*/false);
    ASSERT_FALSE(r.stats.skipped) << what;
    EXPECT_TRUE(r.stats.trees_partial) << what;
    EXPECT_GT(r.stats.trees_kept, 0u) << what;
    EXPECT_LE(r.stats.trees_kept, o.max_state / switches) << what;
    moved += r.stats.moves > 0;
    EXPECT_LE(r.stats.effective_after, r.stats.effective_before) << what;
    if (o.all_pairs_cap == 1) {
      EXPECT_LE(r.stats.all_after, r.stats.all_before) << what;
    }
    // The loads of the trees not kept were counted: the reported maxima are the tables'.
    const Metrics m = sssptest::Measure(f, r.lfts, jobs);
    EXPECT_EQ(r.stats.effective_after, m.effective_efi.max) << what;
    EXPECT_EQ(r.stats.all_after, m.efi.max) << what;
    EXPECT_EQ(r.stats.effective_before, sssptest::Measure(f, before.lfts, jobs).effective_efi.max)
        << what;
    std::set<Lid> changed;
    for (int s = 0; s < r.lfts.num_switches(); ++s) {
      for (Lid lid = 0; lid <= r.lfts.max_lid(); ++lid) {
        if (r.lfts.port(s, lid) != before.lfts.port(s, lid)) changed.insert(lid);
      }
    }
    EXPECT_EQ(changed.empty(), r.stats.moves == 0) << what;
    EXPECT_LE(changed.size(), r.stats.trees_kept) << what;
    for (const Lid lid : changed) EXPECT_EQ(job_lids.count(lid), 1u) << what << " lid " << lid;
    TraceReport trace;
    ASSERT_TRUE(TraceAll(f, r.lfts, TraceOptions{}, &trace).ok());
    EXPECT_TRUE(trace.valid()) << what;
    EXPECT_EQ(trace.delivered, trace.pairs) << what;
    EXPECT_EQ(trace.non_min_hop, 0u) << what;
    o.threads = 2;
    ExpectSame(r, Refine(f, jobs, seed, o, /*slow_channels=*/false), what + " threads 2");
  }
  EXPECT_EQ(moved, 3);
}

}  // namespace
}  // namespace sar::internal
