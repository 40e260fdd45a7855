// SAR's refinement stage: a local search over the finished path tables that moves single
// destinations' routes off the channels with the highest effective (intra-job) load, and off
// channels whose all-pairs load exceeds a cap (the price the rest of the traffic pays).
//
// The SSSP phase places each destination's tree greedily, one destination after the other, so
// the last trees pay for the first ones' choices and the result depends on the node order. The
// refinement fixes that afterwards: while some channel carries the maximum effective load M, it
// looks, for each such channel, at every job destination whose routes cross it, and at every
// switch upstream of it in that destination's tree, for another next hop one hop nearer the
// destination (so the route stays min-hop and loop-free) whose new channels all stay below M
// after taking the moved routes (and within the all-pairs cap). The best such move is made;
// when no channel at M can be relieved, it stops. The all-pairs phases do the same for the plain
// EFI above the cap, with the max effective load as the limit. A fourth, per-job phase then
// lowers the sorted vector of per-job bottlenecks lexicographically (docs/dfsssp-sar.md). Only
// base LIDs of HCA ports move (extra LMC LIDs and switch LIDs keep the SSSP routes); the virtual
// layers are assigned afterwards, so deadlock freedom is checked as before.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "engines/switch_graph.h"
#include "sar/model/lft.h"

namespace sar::internal {

struct RefineOptions {
  /// The all-pairs load (plain EFI) the search aims at and keeps: the effective phase raises no
  /// channel's all-pairs load above max(cap, the max before); then routes (of any destination)
  /// move off channels above the cap without raising the max effective load; then the effective
  /// phase again. max() = no cap (only the effective phase runs, with no all-pairs limit).
  uint64_t all_pairs_cap = std::numeric_limits<uint64_t>::max();
  /// Give up after this many moves (a guard; the search stops far earlier in practice).
  int max_moves = 1000000;
  /// And after this many search steps (candidate trees, switches and channels looked at): a
  /// limit on time that gives the same tables on every machine, unlike a clock (the plugin's
  /// tables must equal offline routing). About two seconds of work; only fabrics of thousands of
  /// hosts reach it (10k hosts: the effective phase, then the limit).
  uint64_t max_work = uint64_t{1} << 28;
  /// The most per-switch tree entries (kept trees x switches) the refinement holds in memory:
  /// 9 bytes each (next hop 1, two flows 4, the per-arc tree lists 4; 13 with 32-bit flows,
  /// from 65,536 HCA ports on), and 1 more while Refiner::Load runs. Where every routed HCA
  /// destination's tree fits, all are kept (any destination may move); else only whole jobs'
  /// destinations' trees, the largest jobs first, as many as fit (the other routes keep their
  /// SSSP entries, their loads still counted). 10k hosts fit; 45k hosts keep ~16,400 of 45,056.
  size_t max_state = size_t{60} << 20;
  /// Entries the search must not move, [endpoint dest * num_switches + switch] (the running
  /// jobs' routes, delta_keep.h's RunningPins); null = none. Routes of other destinations and
  /// switches move around them.
  const std::vector<uint8_t>* pinned = nullptr;
  /// Threads for the candidate search (0 = hardware concurrency). The result, the moves and
  /// the work counted against max_work do not depend on it: the trees are split in tree order
  /// and the parts' best moves reduced in that order.
  int threads = 1;
  /// Per-switch route counts in 32 bits even where 16 bits hold every HCA port of the fabric
  /// (fewer than 65,536; the narrow form halves the largest arrays). The tables and statistics
  /// do not depend on it; tests check that they are the same.
  bool wide_flows = false;
  /// The per-job phase (docs/dfsssp-sar.md, "Per-job objective"): after the three phases, moves
  /// that lower the vector of per-job bottlenecks lexicographically (worst job first), each
  /// taking routes off the one channel at a job's bottleneck onto channels below it. It counts
  /// its own work against max_work (the phases before may have used theirs up).
  bool per_job = true;
};

struct RefineStats {
  uint64_t effective_before = 0, effective_after = 0;  // max effective load
  uint64_t all_before = 0, all_after = 0;              // max all-pairs load (EFI)
  int moves = 0;
  int job_moves = 0;           // of `moves`, made by the per-job phase
  int jobs_lowered = 0;        // jobs whose bottleneck the per-job phase lowered
  bool skipped = false;        // not one job's trees fit in max_state
  bool trees_partial = false;  // only some jobs' trees kept (max_state)
  size_t trees_kept = 0;       // destinations' trees the search could move
  bool work_limited = false;   // stopped by max_work before a local optimum
};

/// Refines `lfts` (one LftSet row per switch of the graph's fabric) in place. `jobs` lists each
/// multi-switch job as endpoint destination indices of `g` (as SsspRouter::SetJobs takes them).
/// `arc_units`: per arc of `g`, what one route adds to its load (SsspRouter::arc_units), so the
/// search balances load per unit of capacity; the stats are in routes at the nominal rate.
void RefineJobRoutes(const SwitchGraph& g, const std::vector<std::vector<int>>& jobs,
                     const std::vector<uint64_t>& arc_units, const RefineOptions& options,
                     LftSet* lfts, RefineStats* stats);

}  // namespace sar::internal
