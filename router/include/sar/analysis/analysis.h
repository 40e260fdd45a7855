// Several analyses of one routing in one sweep over the destinations.
//
// Tracing, the deadlock check, the metrics and the link loads all look at the same thing: the
// tree of routes the LFTs define towards each destination LID. AnalyseRouting builds each tree
// once (in parallel over destinations) and lets every requested analysis read it, instead of
// each analysis building all trees again. The results are exactly those of TraceAll,
// CheckDeadlock, ComputeMetrics and ComputeLinkLoad (which are this function with one analysis
// requested).
#pragma once

#include <vector>

#include "sar/analysis/deadlock.h"
#include "sar/analysis/metrics.h"
#include "sar/analysis/trace.h"
#include "sar/analysis/traffic.h"
#include "sar/model/fabric.h"
#include "sar/model/jobs.h"
#include "sar/model/lft.h"
#include "sar/status.h"

namespace sar {

/// What to compute (bit set).
enum AnalysisKind : unsigned {
  kAnalyseTrace = 1u << 0,                // AnalysisResult::trace (TraceAll)
  kAnalyseDeadlock = 1u << 1,             // ::deadlock: CheckDeadlock with options.layers
  kAnalyseSingleLayerDeadlock = 1u << 2,  // ::single_layer: CheckDeadlock with no layers
  kAnalyseMetrics = 1u << 3,              // ::metrics (ComputeMetrics with options.jobs)
  // Link loads are computed for each of options.traffic (ComputeLinkLoad), no flag needed.
};

struct AnalysisOptions {
  unsigned what = 0;   // AnalysisKind bits
  TraceOptions trace;  // its `threads` is not used: `threads` below is
  /// kAnalyseDeadlock: the virtual layer of each route; nullptr = every route in layer 0.
  const VirtualLayers* layers = nullptr;
  /// Deadlock checks: switch port-0 LIDs are sources and destinations too (CheckDeadlock).
  /// False: routes between endpoints only (the check before issue 33, for comparison).
  bool deadlock_switch_lids = true;
  /// kAnalyseMetrics: the jobs whose effective EFI is wanted; nullptr = none.
  const std::vector<ResolvedJob>* jobs = nullptr;
  std::vector<TrafficSpec> traffic;  // one LinkLoad each
  int threads = 0;                   // 0 = hardware concurrency
  /// Per endpoint (Fabric::Endpoints() order): which LID of each destination the source sends
  /// to (RoutingOutput::source_lid_offset, SourceLid in sar/model/lids.h; osrm2/osrm3 route per
  /// source group). Null or empty = base LIDs. Every analysis follows it: the metrics, link loads
  /// and the trace (without trace.all_lids) count each source's route to the LID it uses. Its size
  /// must be the number of endpoints.
  const std::vector<uint8_t>* source_lid_offset = nullptr;
  /// Per LID (size max_lid + 1, or null = all): the destination LIDs analysed; the others are
  /// skipped (the delta validation re-checks only the destinations whose routes changed).
  const std::vector<uint8_t>* only_lids = nullptr;
  /// kAnalyseDeadlock: dependencies added to those of the analysed routes before the cycle
  /// search (the delta validation: the last valid tables' graphs); null = none. Must be the
  /// same fabric's ports and the same layer count (else InvalidArgument).
  const DependencyGraphs* dependency_base = nullptr;
  /// kAnalyseDeadlock: receives the graphs searched (with dependency_base's); null = not kept.
  DependencyGraphs* keep_dependencies = nullptr;
  /// Where only the trace (without its min-hop check) and the deadlock check of one layer are
  /// asked for (the validation of tables without layers), they read the tables a block of LIDs
  /// at a time (src/analysis/block_check.h): the same results, several times faster. False: the
  /// per-destination sweep, the reference the block check is tested against.
  bool block_check = true;
};

struct AnalysisResult {
  TraceReport trace;
  DeadlockReport deadlock;
  DeadlockReport single_layer;
  Metrics metrics;
  std::vector<LinkLoad> traffic;  // per options.traffic
};

/// Fills the parts of *out that options.what (and options.traffic) ask for; the others are left
/// default. Fails, computing nothing, when the tables do not fit the fabric or a traffic spec is
/// invalid.
Status AnalyseRouting(const Fabric& fabric, const LftSet& lfts, const AnalysisOptions& options,
                      AnalysisResult* out);

// The analyses one at a time: AnalyseRouting with one analysis requested.

/// Traces every (endpoint, other endpoint's LID) pair.
Status TraceAll(const Fabric& fabric, const LftSet& lfts, const TraceOptions& options,
                TraceReport* out);

/// With layers == nullptr every route is in layer 0. Routes between terminals count: endpoints
/// (base and LMC LIDs) and, with `switch_lids` (the default, as OpenSM's dfsssp counts them),
/// every switch's port 0 with a LID, whose routes start at the switch itself. A route's layer is
/// layers->get(source LID, destination LID) for each LID of the source. Looping routes add the
/// dependencies of their loop. Runs on all hardware threads.
Status CheckDeadlock(const Fabric& fabric, const LftSet& lfts, const VirtualLayers* layers,
                     DeadlockReport* out, bool switch_lids = true);

/// Routes that are not delivered (holes, loops) add nothing. Use TraceAll() for validity, or
/// AnalyseRouting for validity and metrics in one sweep. Link loads of
/// synthetic traffic: sar/analysis/traffic.h.
Status ComputeMetrics(const Fabric& fabric, const LftSet& lfts,
                      const std::vector<ResolvedJob>& jobs, const MetricsOptions& options,
                      Metrics* out);

/// Flows between endpoints on the same node are left out of every pattern (as in the EFI).
/// Threads: hardware concurrency. Several patterns at once, with other analyses in the same
/// sweep: AnalyseRouting.
Status ComputeLinkLoad(const Fabric& fabric, const LftSet& lfts, const TrafficSpec& spec,
                       LinkLoad* out);

}  // namespace sar
