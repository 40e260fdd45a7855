// The analyses as visitors of the destination sweep (private to libsar). Each writes its result
// to `out` in Finish(); AnalyseRouting (analysis.cc) runs any set of them in one sweep.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "analysis/destination_sweep.h"
#include "sar/model/jobs.h"
#include "sar/model/lft.h"
#include "sar/status.h"

namespace sar {

// Declared, not included: each analysis includes this header (its place in the sweep) and its
// own result types, never another analysis's (scripts/dev/include_layers.py).
struct TraceOptions;
struct TraceReport;
struct DeadlockReport;
struct DependencyGraphs;
struct Metrics;
struct TrafficSpec;
struct LinkLoad;

}  // namespace sar

namespace sar::internal {

// A worker's share of a TraceReport's counts (the sweep's trace visitor and the block check):
// everything merges by sum or max, so the report does not depend on the number of threads.
struct TraceCounts {
  uint64_t pairs = 0, delivered = 0, unreachable = 0, loops = 0, non_min_hop = 0;
  uint64_t total_hops = 0;
  int max_hops = 0;
};

/// The report's (a TraceReport, declared only here) counts and mean hops from the workers'
/// shares; its examples are left as they are.
template <class Workers, class CountsOf, class Report>
void MergeTraceCounts(const Workers& workers, CountsOf counts_of, Report* report) {
  uint64_t total_hops = 0;
  for (const auto& w : workers) {
    const TraceCounts& c = counts_of(w);
    report->pairs += c.pairs;
    report->delivered += c.delivered;
    report->unreachable += c.unreachable;
    report->loops += c.loops;
    report->non_min_hop += c.non_min_hop;
    report->max_hops = std::max(report->max_hops, c.max_hops);
    total_hops += c.total_hops;
  }
  report->mean_hops = report->delivered
                          ? static_cast<double>(total_hops) / static_cast<double>(report->delivered)
                          : 0;
}

/// trace.cc. Needs the sweep's lmc_lids when options.all_lids.
std::unique_ptr<SweepVisitor> NewTraceVisitor(const SweepContext& ctx, const TraceOptions& options,
                                              TraceReport* out);

/// deadlock.cc. Needs lmc_lids.
/// `switch_lids`: switch port-0 LIDs are sources and destinations too (the sweep must then trace
/// from every switch: SweepOptions::from_all_switches).
/// `only_lids`, `base`, `keep`: AnalysisOptions::only_lids, dependency_base, keep_dependencies
/// (`base` checked by CheckDependencyBase first).
std::unique_ptr<SweepVisitor> NewDeadlockVisitor(const SweepContext& ctx,
                                                 const VirtualLayers* layers, bool switch_lids,
                                                 DeadlockReport* out,
                                                 const std::vector<uint8_t>* only_lids = nullptr,
                                                 const DependencyGraphs* base = nullptr,
                                                 DependencyGraphs* keep = nullptr);
/// Bitmap words per channel of the dependency graphs (DependencyGraphs::words) on `fabric`.
int DependencyWords(const Fabric& fabric);
/// Per switch index: the first word of its port 1 in the dense dependency bitmaps (per switch in
/// order, its ports 1..num_ports, `words` each); *total: the bitmaps' size in words.
std::vector<size_t> DenseDependencyOffsets(const Fabric& fabric, int words, size_t* total);
/// The deadlock check's end: ORs `base` (may be null) into each layer's dense bitmap
/// (*dense_layers, one per layer, consumed), counts the dependencies, searches each layer for a
/// cycle and keeps the graphs in `keep` (may be null). The same for every way of collecting the
/// dependencies, so equal bitmaps give equal reports (cycle included).
void FinishDependencyCheck(const Fabric& fabric, const RouteTracer& tracer, int words,
                           bool switch_lids, const DependencyGraphs* base, DependencyGraphs* keep,
                           std::vector<std::vector<uint64_t>>* dense_layers, DeadlockReport* out);
/// OK if `base` fits `fabric`'s switch ports with `layers` (their layer count).
Status CheckDependencyBase(const Fabric& fabric, const VirtualLayers* layers,
                           const DependencyGraphs& base);

/// metrics.cc. Needs job_phases when there are jobs (ctx made with `jobs`).
std::unique_ptr<SweepVisitor> NewMetricsVisitor(const SweepContext& ctx,
                                                const std::vector<ResolvedJob>& jobs, Metrics* out);

/// traffic.cc. Fails on an invalid spec.
Status NewLinkLoadVisitor(const SweepContext& ctx, const TrafficSpec& spec, LinkLoad* out,
                          std::unique_ptr<SweepVisitor>* visitor);

}  // namespace sar::internal
