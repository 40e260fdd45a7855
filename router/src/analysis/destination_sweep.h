// One sweep over the destination LIDs for all analyses of a routing (private to libsar).
//
// Every analysis (trace, deadlock check, metrics, link loads) reads the same per-destination
// tree of routes (RouteTracer::Build). RunSweep builds each destination's tree once, on a pool
// of workers, and hands it to every visitor; the visitors keep per-worker partial results that
// they merge by sums, maxima and ORs, so nothing depends on which worker saw which destination.
//
// Jobs: a job's effective EFI needs the loads of all its destinations summed before it can be
// judged (its maximum over channels). The sweep therefore visits each job's destinations as one
// unit (SweepDestination::job) and then calls EndJob. A job of ordinary size is one work item,
// done by one worker with no waiting; a job holding a large share of all destinations is spread
// over all workers and judged once they are done.
#pragma once

#include <cstdint>
#include <vector>

#include "sar/analysis/route_tracer.h"
#include "sar/model/fabric.h"
#include "sar/model/jobs.h"
#include "sar/model/lft.h"

namespace sar::internal {

struct SweepDestination;

/// What every analysis needs to know about the endpoints, computed once per sweep.
struct SweepContext {
  /// `jobs` may be nullptr (no job phases). `source_lid_offset` (per endpoint, nullptr or empty =
  /// every source sends to base LIDs) says which LID of a destination each source sends to
  /// (RoutingOutput::source_lid_offset, SourceLid in sar/model/lids.h); its size must be the
  /// endpoints' (AnalyseRouting checks).
  SweepContext(const Fabric& fabric, const LftSet& lfts, const std::vector<ResolvedJob>* jobs,
               const std::vector<uint8_t>* source_lid_offset = nullptr);

  /// Whether endpoint `source` sends to `d.lid` (to reach d's endpoint). Every visitor that
  /// counts routes a source uses asks this (or Senders), so all follow one rule.
  bool Sends(int source, const SweepDestination& d) const;
  /// Whether the sources with LID offset `o` send to `d.lid` (SourceLid in sar/model/lids.h).
  bool OffsetSends(int o, const SweepDestination& d) const;
  int OffsetOf(int endpoint) const { return offset.empty() ? 0 : offset[endpoint]; }
  /// How many endpoints on switch `s` send to `d.lid`.
  uint64_t Senders(int s, const SweepDestination& d) const;

  const Fabric& fabric;
  const LftSet& lfts;
  RouteTracer tracer;
  std::vector<PortRef> endpoints;           // fabric.Endpoints()
  std::vector<int> leaf;                    // per endpoint: switch index it hangs off, or < 0
  std::vector<std::vector<int>> of_node;    // per node: endpoint indices
  std::vector<std::vector<int>> on_switch;  // per switch: endpoint indices, in order
  std::vector<int> leaves;                  // switches with endpoints, by first endpoint
  /// Per job: indices of its endpoints, each once, in the job's order, and each one's index
  /// into the job's endpoints (for ResolvedJob::Sends, the pair rule).
  std::vector<std::vector<int>> job_members;
  std::vector<std::vector<int>> job_member_pos;
  /// Per endpoint: its source LID offset; empty = 0 for all.
  std::vector<uint8_t> offset;
  int offsets = 1;                            // 1 + the largest offset
  std::vector<uint32_t> on_switch_by_offset;  // [switch * offsets + offset]: endpoints
};

/// One destination LID as the sweep visits it.
struct SweepDestination {
  Lid lid = 0;
  int endpoint = -1;  // the endpoint owning the LID
  int leaf = -1;      // its switch index (< 0: cabled to no switch, which Fabric never allows)
  bool base = true;   // lid is the endpoint's base LID
  /// Some source may send to lid (SweepContext::Sends): the base LID, and base + each source
  /// LID offset in use. The other LIDs (visited with SweepOptions::lmc_lids) carry no traffic.
  bool sent = true;
  /// The first visit of this LID. Only a LID whose endpoint is in several jobs is visited more
  /// than once (once per job); analyses that are not per job skip the repeats.
  bool first = true;
  int job = -1;     // >= 0: visited as one of this job's destinations (sent LIDs only)
  int member = -1;  // with job >= 0: the endpoint's index into ctx.job_members[job]
};

class SweepVisitor {
 public:
  static constexpr int kAllWorkers = -1;

  virtual ~SweepVisitor() = default;
  /// Before the sweep, on the calling thread: size the per-worker state.
  virtual void Start(int workers) = 0;
  /// One destination's tree, on worker `worker`'s thread (workers run concurrently; one worker
  /// visits one destination at a time).
  virtual void Visit(int worker, const SweepDestination& d, const DestinationTree& tree) = 0;
  /// Every destination of job `job` has been visited: all by `worker`, on its thread, or, with
  /// kAllWorkers, by any of them, and this runs on the calling thread while no worker runs.
  /// Called once per job, also for jobs without destinations.
  virtual void EndJob(int /*job*/, int /*worker*/) {}
  /// After the sweep, on the calling thread.
  virtual void Finish() = 0;
};

struct SweepOptions {
  bool lmc_lids = false;    // every LID of each endpoint (2^LMC), not only the sent LIDs
  bool job_phases = false;  // visit each job's destinations as that job's (needs ctx jobs)
  /// Trace every switch's route, not only those of switches with endpoints (ctx.leaves): the
  /// deadlock check with switch LIDs has a source on every switch.
  bool from_all_switches = false;
  int threads = 0;  // 0 = hardware concurrency
  /// Per LID: visit only these destination LIDs (AnalysisOptions::only_lids); null = all.
  const std::vector<uint8_t>* only_lids = nullptr;
};

/// Builds the tree of every endpoint LID that `options` asks for (endpoints without a LID have
/// none; by default the LIDs sources send to) once, and of a LID in several jobs once per job,
/// and calls Start, Visit, EndJob and Finish of every visitor.
void RunSweep(const SweepContext& ctx, const SweepOptions& options,
              const std::vector<SweepVisitor*>& visitors);

}  // namespace sar::internal
