// Trace replay: a job history played on a fabric, routed by each engine at every change of the
// set of running jobs that span two or more leaf switches (the only jobs whose traffic crosses
// switch-to-switch channels, so the only ones SAR routes for and the metrics count).
//
//   1. Placement. Histories with host lists (trace, sacct) keep their hosts; hosts the fabric
//      lacks are dropped (counted). Size-only histories (SWF) are placed by HostAllocator
//      (SLURM topology/tree best fit, never two jobs on one host) in time order, ends before
//      starts at equal times, each size scaled by fabric hosts / machine nodes (floor, at least
//      1: a history that never overfilled its machine never overfills the fabric when the fabric
//      has at least as many hosts); a job that finds too few free hosts is not placed (counted).
//      Jobs that end when they start hold no host and are left out (counted).
//   2. Events. The state at the window's start is event 0; then one event per time at which the
//      multi-leaf job set differs from the previous event's.
//   3. Routing. Per engine, in one routing pass (routing_pass.h) whose validating sweep also
//      measures: an engine whose tables depend on the jobs (RoutingEngine::uses_jobs) is rerouted
//      at every event; any other is routed once and re-measured per event. Per event and
//      engine: max effective EFI, dark fiber, worst per-job EFI, all-pairs max EFI, reroute time
//      and LFT entries and 64-LID blocks changed against the previous event's tables, and which
//      continuing jobs had their own routes changed (stability); for rerouted engines also the
//      max effective EFI the previous tables would have given (what the reroute bought). With
//      ReplayOptions::delta each reroute starts from the previous event's tables.
//   A shard (ReplayOptions::event_begin/event_end) fills the samples of its events only, after
//   rebuilding the tables the unsplit run has before its first event; put together, the shards'
//   samples are the unsplit run's (cmd `replay --shard`, `merge`).
// Thread-safety: pure functions of their arguments (the engines use options.routing.threads).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "sar/analysis/flows.h"
#include "sar/model/fabric.h"
#include "sar/pass/routing_pass.h"
#include "sar/status.h"
#include "sar/study/job_history.h"

namespace sar {

struct ReplayOptions {
  std::vector<std::string> engines = {"sar", "dfsssp"};
  /// The options every reroute gets (sar/pass/routing_pass.h), its engine replaced by each of
  /// `engines` and its job set by the event's; num_vls, threads, sar_no_regret are the ones
  /// replay sets.
  RoutingOptions routing;
  /// Window in seconds after the history's first job start: events in [from_s, to_s).
  double from_s = 0;
  double to_s = std::numeric_limits<double>::infinity();
  /// Size-only histories: the machine they were recorded on (0 = the history's header).
  int machine_nodes = 0;
  /// Size-only histories: scale sizes to the fabric (false: sizes as recorded).
  bool scale = true;
  /// Minimal-delta updates: each reroute gets the previous event's tables of the same engine
  /// (RoutingInputs::previous; sar and dfsssp keep what costs no quality). False: every reroute
  /// is a full recompute.
  bool delta = false;
  /// With delta: also give each reroute the previous event's job set
  /// (RoutingInputs::previous_jobs), so jobs running across the event keep their own routes.
  /// False: the previous tables only (the stage as it was before the stability rule).
  bool delta_stable = true;
  /// Per-job max-min fair throughput at every event (sar/analysis/flows.h: each multi-leaf job
  /// sending all-to-all, alltoall jobs in their FORS phases where the routing pass gave them FORS),
  /// and per event how many jobs are slower than under `flow_baseline` ("" = dfsssp if it is one of
  /// the engines, else the first).
  bool flows = true;
  std::string flow_baseline;
  /// Shard (sar/study/shards.h): fill only the samples of events [event_begin, event_end) (clamped
  /// to the events); the others stay default. The tables at event_begin are first rebuilt as the
  /// unsplit run has them: engines that ignore jobs route event 0; job-aware engines route
  /// event_begin - 1, or with `delta` every event before event_begin (each reroute starts from
  /// the previous tables), without metrics. The filled samples equal the unsplit run's (but
  /// reroute_ms, a time).
  size_t event_begin = 0;
  size_t event_end = std::numeric_limits<size_t>::max();
  /// Called after each (engine, event) with done and total; may be empty.
  std::function<void(size_t done, size_t total)> progress;
};

/// A placed job that spans two or more leaf switches.
struct ReplayJob {
  std::string id;
  double start_s = 0, end_s = 0;  // seconds after the history's first start
  std::vector<std::string> hosts;
  int leaves = 0;
  /// As the history says (trace admin comment, sacct AdminComment); the routing pass gives
  /// alltoall jobs FORS routes where it can, as in service.
  JobPattern pattern = JobPattern::kDefault;
};

struct ReplayEvent {
  double time_s = 0;  // seconds after the history's first start
  int running = 0;    // placed jobs running
  int busy_hosts = 0;
  std::vector<int> jobs;  // ReplayResult::jobs running (the multi-leaf set), ascending
};

struct ReplaySample {
  uint64_t effective_efi_max = 0;
  double dark_fiber = 0;            // 0..1
  uint64_t worst_job_efi = 0;       // max over jobs of the job's own max EFI
  uint64_t efi_max = 0;             // all pairs
  double reroute_ms = 0;            // routing + validation; 0 when not rerouted
  uint64_t lft_changed = 0;         // entries that differ from the previous event's tables
  uint64_t lft_blocks_changed = 0;  // 64-LID LFT blocks that differ (what OpenSM sends)
  /// Stability: multi-leaf jobs running at both this event and the previous one, and how many
  /// of them had one of their own routes (between members, each source to the LID it sends to:
  /// RoutingOutput::source_lid_offset) changed.
  int jobs_continuing = 0;
  int jobs_rerouted = 0;
  /// Max effective EFI of the previous event's tables carrying this event's jobs: what the
  /// event would see without the reroute (= effective_efi_max when not rerouted, and at 0).
  uint64_t stale_effective_efi_max = 0;
  bool rerouted = false;
  /// Per-job throughput (ReplayOptions::flows): exchange time (message / line rate) of the
  /// median and the slowest job, the median and the lowest job's slowest flow (line rate).
  double job_time_median = 0, job_time_max = 0;
  double slowest_median = 0, slowest_min = 0;
  /// Against the baseline engine at the same event: jobs faster / slower (and by more than 2%),
  /// and the median of baseline time / time over the jobs.
  int jobs_faster = 0, jobs_slower = 0, jobs_slower_2pct = 0;
  double speedup_median = 0;
  /// The per-job figures of the jobs with flows (FlowReport::jobs; the baseline comparison reads
  /// them through CompareJobFlows).
  std::vector<JobFlows> job_flows;
  /// job_flows.size() (kept when a shard's samples are read back without the per-job figures).
  int flow_jobs = 0;
  std::string engine_used;  // "dfsssp" for "sar" without multi-leaf jobs (the empty-mapping rule)
  /// What the reroute's routing pass noted (RoutingResult::Notes; FORS plans, the empty-mapping
  /// rule); empty for an event without reroute. Not kept in shards.
  std::vector<std::string> notes;
};

struct ReplayResult {
  std::vector<std::string> engines;
  std::vector<ReplayJob> jobs;
  std::vector<ReplayEvent> events;
  std::vector<std::vector<ReplaySample>> samples;  // [engine][event]
  int history_jobs = 0;                            // jobs the history lists (that ran)
  int placed = 0;
  int zero_length = 0;    // jobs that end when they start: they hold no host, not replayed
  int not_placed = 0;     // size-only: too few free hosts at start; host lists: none known
  int unknown_hosts = 0;  // host lists: hosts not in the fabric (each occurrence)
  double scale = 1;       // size-only: fabric hosts / machine nodes (1 = not scaled)
  int fabric_hosts = 0;
  std::string flow_baseline;  // the engine the per-job throughput is compared with ("" = none)
};

/// Steps 1 and 2 (placement and events) only.
Status PlanReplay(const Fabric& fabric, const JobHistory& history, const ReplayOptions& options,
                  ReplayResult* out);
/// All three steps. InvalidArgument for an unknown engine (naming the known ones), or for a
/// size-only history without machine size when scaling. Routing failures name the event.
Status Replay(const Fabric& fabric, const JobHistory& history, const ReplayOptions& options,
              ReplayResult* out);

/// One engine's samples summarised over the events (p95: nearest rank).
struct ReplaySummary {
  double eff_efi_mean = 0, eff_efi_p95 = 0;
  uint64_t eff_efi_max = 0;
  double stale_eff_efi_mean = 0;       // mean of stale_effective_efi_max: without the reroutes
  double dark_mean = 0, dark_p95 = 0;  // 0..1
  double worst_job_efi_mean = 0;
  uint64_t efi_max = 0;  // max over events
  int reroutes = 0;
  double reroute_ms_mean = 0, reroute_ms_p95 = 0;  // over reroutes
  double lft_changed_mean = 0;                     // over reroutes after the first
  double lft_blocks_changed_mean = 0, lft_blocks_changed_median = 0;  // the same
  double lft_changed_median = 0;
  /// Over events after the first with continuing jobs: median and mean share (0..1) of them
  /// whose own routes changed.
  double jobs_rerouted_share_median = 0, jobs_rerouted_share_mean = 0;
  /// Per-job throughput over the events: mean of the median job's and max of the slowest job's
  /// exchange time; jobs (summed over events) slower than the baseline, by more than 2%, and
  /// events with any; the median over events of the median speedup.
  double job_time_median_mean = 0, job_time_max = 0;
  int jobs_slower = 0, jobs_slower_2pct = 0, jobs_faster = 0, events_with_slower = 0;
  double speedup_median = 0;
};
ReplaySummary SummarizeReplay(const ReplayResult& result, size_t engine);

/// Effective EFI per channel (PortId) at `event` for `engine`: with the tables of the previous
/// event (before the reroute) and with the event's own (after); both judged on the event's jobs.
/// For engines that ignore jobs both are the same. REQUIRES: 0 < event < result.events.size().
Status ReplayLinkLoads(const Fabric& fabric, const ReplayResult& result,
                       const ReplayOptions& options, const std::string& engine, int event,
                       std::vector<uint64_t>* before, std::vector<uint64_t>* after);

}  // namespace sar
