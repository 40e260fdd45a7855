// The validation's check a block of LIDs at a time (private to libsar).
//
// What ValidateRouting asks of the sweep for tables with one layer (dmodc, minhop, updn, every
// check with `layers == nullptr`): the trace's counts and the single layer's channel
// dependencies. The per-destination sweep (RunSweep + the trace and deadlock visitors) builds a
// DestinationTree per LID and sets each dependency bit in a bitmap of megabytes: a cache miss
// per switch and LID at 45k hosts. The block check reads the tables 64 LIDs (one cache line of
// each row) at a time: the next switch of every (switch, LID) transposed once, then per LID one
// memoized walk over the switches (each switch once: its hops to the destination or its fate,
// and whether a source's route reaches it, with its dependency coded as it is walked), then per
// switch the dependencies of all 64 LIDs together, into that switch's own words of the bitmap. Same
// counts and the same bitmaps as the visitors (so the same cycle); the reference is the sweep
// (AnalysisOptions::block_check = false), compared in block_check_test.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/destination_sweep.h"

namespace sar {
struct TraceReport;
struct DeadlockReport;
struct DependencyGraphs;
}  // namespace sar

namespace sar::internal {

struct BlockCheckRequest {
  bool trace = false;    // TraceReport's counts (no min-hop check, no examples)
  bool all_lids = true;  // TraceOptions::all_lids
  bool deadlock = false;
  int layer = 0;       // the one layer every route is in
  int num_layers = 1;  // the layers the report has (VirtualLayers::num_layers)
  bool switch_lids = true;
  int threads = 0;
  const std::vector<uint8_t>* only_lids = nullptr;  // AnalysisOptions::only_lids
  const DependencyGraphs* base = nullptr;           // AnalysisOptions::dependency_base
  DependencyGraphs* keep = nullptr;                 // AnalysisOptions::keep_dependencies
};

/// Computes *trace (counts only: pairs, delivered, unreachable, loops, hops) and *deadlock as
/// the sweep's visitors would for `request`, with no source LID offsets and no jobs (`ctx` made
/// without them). Returns false, computing nothing, where it does not apply: more switches than
/// LftColumns holds, a LID owned twice or not by its terminal, or destinations so sparse (fewer
/// than 4 per block on average) that the sweep's per-LID reads cost less.
bool RunBlockCheck(const SweepContext& ctx, const BlockCheckRequest& request, TraceReport* trace,
                   DeadlockReport* deadlock);

}  // namespace sar::internal
