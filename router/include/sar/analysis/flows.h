// What jobs feel: per-job max-min fair throughput of the routes the LFTs define.
//
// Every job sends at once; each flow follows its single route (from the source's HCA port to the
// LID it sends to, as the tables say); every channel, HCA links included, carries at most its
// capacity (the link's rate after line coding, as a fraction of the fabric's line rate: a 4xDDR
// cable in a 4xEDR fabric carries 0.16); rates are shared max-min fairly (progressive filling,
// exact up to rounding: every flow crosses a saturated channel on which no flow is faster).
//
// A job's figure is its slowest flow: a bulk-synchronous exchange of equal messages finishes
// when its slowest flow does, so the job's exchange time, in units of (message / line rate), is
// 1 / slowest. A job with phases (a FORS schedule) exchanges one phase after another: its time is
// the sum over phases of 1 / the phase's slowest flow. The same is computed for each job alone on
// the same tables, so a job's slowdown (time / time alone) says what the other jobs cost it.
//
// Rounds: when some jobs have phases, round r runs every job without phases (all its flows) and
// phase r of every phased job; a job without phases gets its worst round (its slowest flow over
// all rounds), the conservative figure. Without phased jobs there is one round.
//
// Speed: routes are destination-based, so all sources on one switch share the switch path to a
// destination LID (a bundle). Flows are stored as (source HCA channel, bundle); freezing a
// channel's flows walks each bundle's path once for all its flows, so the cost is about
// flows x (1 + path length / sources per bundle) plus a heap of channels.
//
// Thread-safety: plain functions over const inputs.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/model/jobs.h"
#include "sar/model/lft.h"
#include "sar/status.h"

namespace sar {

/// One job as the flow model sees it.
struct FlowJob {
  std::string id;
  std::vector<PortRef> endpoints;  // its HCA ports (ResolvedJob::endpoints); duplicates ignored
  /// Empty: all-to-all, every ordered pair of endpoints on distinct nodes at once. Otherwise the
  /// phases it exchanges in, one after the other (a FORS schedule): pairs of indices into
  /// `endpoints`, (source, destination).
  std::vector<std::vector<std::pair<int32_t, int32_t>>> phases;
};

/// FlowJobs of ResolveJobs' jobs, all-to-all (phases are added by the caller where a job has a
/// schedule). A job with a host of several HCA ports gets one phase: the pairs that
/// ResolvedJob::Sends (rail-aligned by default), all at once.
std::vector<FlowJob> AllToAllFlowJobs(const std::vector<ResolvedJob>& jobs);

/// Endpoint pairs (Fabric::Endpoints() order, i != j) as flows along `lfts` to the LID each
/// source uses (`source_lid_offset` per endpoint, empty = base LIDs): each flow's channels from
/// the source's HCA port to the destination's. Pairs whose route is not delivered (no entry,
/// loop, dead end) are left out and counted in *undelivered.
struct Flow {
  uint32_t src, dst;
};
void TraceFlows(const Fabric& fabric, const LftSet& lfts,
                const std::vector<uint8_t>& source_lid_offset, const std::vector<Flow>& flows,
                std::vector<std::vector<int32_t>>* paths, uint64_t* undelivered);
/// One flow of TraceFlows: true and its channels in *path if delivered. `ends`:
/// Fabric::Endpoints().
bool TraceFlow(const Fabric& fabric, const LftSet& lfts, const std::vector<PortRef>& ends,
               const std::vector<uint8_t>& source_lid_offset, Flow flow,
               std::vector<int32_t>* path);

struct JobFlowFigures {
  double slowest = 0;  // the job's slowest flow, fraction of line rate (min over phases/rounds)
  double mean = 0;     // mean rate of its flows (over all phases/rounds)
  double time = 0;     // exchange time, message / line rate: 1/slowest, or the sum over phases
};

struct JobFlows {
  std::string id;
  int endpoints = 0;
  int leaf_switches = 0;
  int phases = 0;            // 0 = all-to-all at once
  uint64_t flows = 0;        // delivered flows (over all phases)
  uint64_t undelivered = 0;  // pairs whose route is not delivered (hole, loop, misdelivery)
  JobFlowFigures shared;     // every job sending at once
  JobFlowFigures alone;      // the job alone on the same tables
  /// time / alone.time (>= 1 up to rounding); 0 when the job has no flows.
  double slowdown() const { return alone.time > 0 ? shared.time / alone.time : 0; }
};

struct FlowSummary {
  int jobs = 0;                                // jobs with at least one delivered flow
  double median_slowest = 0, min_slowest = 0;  // of JobFlows::shared.slowest
  double median_time = 0, p95_time = 0, max_time = 0;
  double median_slowdown = 0, p95_slowdown = 0, max_slowdown = 0;
};

/// One flow of the shared run (FlowOptions::record_rates).
struct FlowRate {
  uint32_t job = 0;      // index into the jobs given
  int src = 0, dst = 0;  // endpoint indices (Fabric::Endpoints() order)
  double rate = 0;       // fraction of line rate
};

struct FlowReport {
  std::vector<JobFlows> jobs;  // in the order given
  FlowSummary summary;
  int rounds = 0;
  uint64_t flows = 0;           // delivered flows of the shared run, summed over rounds
  uint64_t bundles = 0;         // switch paths they share
  std::vector<FlowRate> rates;  // FlowOptions::record_rates: the flows of the first round
};

struct FlowOptions {
  /// Per endpoint (Fabric::Endpoints() order): the LID offset each source sends to
  /// (RoutingOutput::source_lid_offset, SourceLid in sar/model/lids.h). Null or empty = base LIDs.
  const std::vector<uint8_t>* source_lid_offset = nullptr;
  bool alone = true;          // also each job alone (JobFlows::alone)
  int threads = 0;            // 0 = hardware concurrency (the jobs' alone runs in parallel)
  bool record_rates = false;  // FlowReport::rates (tests, small fabrics: memory per flow)
  /// Bound on time and memory (about 50 bytes and a few hundred ns per flow): more pairs than
  /// this in all (all-to-all pairs plus phase pairs) is Status::Failed, computing nothing.
  uint64_t max_flows = uint64_t{32} << 20;
};

/// Fails (computing nothing) when the tables do not fit the fabric, a job names a port that is
/// not a cabled HCA port, or a phase names an endpoint index out of range (InvalidArgument), or
/// when the jobs have more pairs than options.max_flows (Failed: callers report the figures as
/// not computed). Routes that are not
/// delivered are counted per job (JobFlows::undelivered), never silently dropped.
Status ComputeJobFlows(const Fabric& fabric, const LftSet& lfts, const std::vector<FlowJob>& jobs,
                       const FlowOptions& options, FlowReport* out);

/// Per-job comparison of one routing's figures with a baseline's, jobs matched by id; by the
/// job's exchange time (shared.time: its slowest flow).
struct FlowComparison {
  int jobs = 0;                           // jobs with flows in both
  int faster = 0, equal = 0, slower = 0;  // equal: within `tolerance` (relative)
  int slower_2pct = 0;                    // more than 2% slower than under the baseline
  /// baseline time / time per compared job: > 1 is faster than the baseline.
  double median_speedup = 0, min_speedup = 0, max_speedup = 0;
  std::vector<double> speedup;  // per job of `run` in its order; 0 = not compared
};
FlowComparison CompareJobFlows(const FlowReport& run, const FlowReport& baseline,
                               double tolerance = 1e-9);

/// The value at quantile q (0..1) of `values` (nearest rank on the sorted values); 0 if empty.
double FlowQuantile(std::vector<double> values, double q);

}  // namespace sar
