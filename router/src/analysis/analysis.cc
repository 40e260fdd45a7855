#include "sar/analysis/analysis.h"

#include <memory>
#include <utility>

#include "analysis/block_check.h"
#include "analysis/destination_sweep.h"
#include "analysis/sweep_visitors.h"

namespace sar {

Status AnalyseRouting(const Fabric& fabric, const LftSet& lfts, const AnalysisOptions& options,
                      AnalysisResult* out) {
  SAR_RETURN_IF_ERROR(lfts.CheckFits(fabric));
  const std::vector<uint8_t>* offsets = options.source_lid_offset;
  if (offsets != nullptr && !offsets->empty()) {
    const size_t n = fabric.Endpoints().size();
    if (offsets->size() != n) {
      return Status::InvalidArgument(std::to_string(offsets->size()) + " source LID offsets for " +
                                     std::to_string(n) + " endpoints");
    }
  }
  const bool trace = options.what & kAnalyseTrace;
  const bool deadlock = options.what & (kAnalyseDeadlock | kAnalyseSingleLayerDeadlock);
  const bool jobs = (options.what & kAnalyseMetrics) && options.jobs && !options.jobs->empty();
  const internal::SweepContext ctx(fabric, lfts, jobs ? options.jobs : nullptr, offsets);
  if (options.what & kAnalyseDeadlock && options.dependency_base != nullptr) {
    SAR_RETURN_IF_ERROR(
        internal::CheckDependencyBase(fabric, options.layers, *options.dependency_base));
  }

  // The validation's analyses of tables with one layer: a block of LIDs at a time.
  const VirtualLayers* layers = options.layers;
  if (options.block_check && (trace || (options.what & kAnalyseDeadlock)) &&
      (options.what & ~(kAnalyseTrace | kAnalyseDeadlock)) == 0 && options.traffic.empty() &&
      (offsets == nullptr || offsets->empty()) && !(trace && options.trace.check_min_hop) &&
      (layers == nullptr || layers->size() == 0)) {
    internal::BlockCheckRequest request;
    request.trace = trace;
    request.all_lids = options.trace.all_lids;
    request.deadlock = options.what & kAnalyseDeadlock;
    if (layers != nullptr) {
      request.layer = layers->default_layer;
      request.num_layers = layers->num_layers();
    }
    request.switch_lids = options.deadlock_switch_lids;
    request.threads = options.threads;
    request.only_lids = options.only_lids;
    request.base = options.dependency_base;
    request.keep = options.keep_dependencies;
    AnalysisResult result;
    if (internal::RunBlockCheck(ctx, request, &result.trace, &result.deadlock)) {
      if (trace && !result.trace.valid()) {
        // The examples: the sweep's trace picks and describes them (same counts).
        std::unique_ptr<internal::SweepVisitor> visitor =
            internal::NewTraceVisitor(ctx, options.trace, &result.trace);
        internal::SweepOptions sweep;
        sweep.lmc_lids = request.deadlock || options.trace.all_lids;
        sweep.threads = options.threads;
        sweep.only_lids = options.only_lids;
        internal::RunSweep(ctx, sweep, {visitor.get()});
      }
      *out = std::move(result);
      return Status::OK();
    }
  }

  AnalysisResult result;
  std::vector<std::unique_ptr<internal::SweepVisitor>> owned;
  result.traffic.resize(options.traffic.size());
  for (size_t i = 0; i < options.traffic.size(); ++i) {
    owned.emplace_back();
    SAR_RETURN_IF_ERROR(
        internal::NewLinkLoadVisitor(ctx, options.traffic[i], &result.traffic[i], &owned.back()));
  }
  if (trace) owned.push_back(internal::NewTraceVisitor(ctx, options.trace, &result.trace));
  if (options.what & kAnalyseDeadlock) {
    owned.push_back(internal::NewDeadlockVisitor(
        ctx, options.layers, options.deadlock_switch_lids, &result.deadlock, options.only_lids,
        options.dependency_base, options.keep_dependencies));
  }
  if (options.what & kAnalyseSingleLayerDeadlock) {
    owned.push_back(internal::NewDeadlockVisitor(ctx, nullptr, options.deadlock_switch_lids,
                                                 &result.single_layer));
  }
  const std::vector<ResolvedJob> no_jobs;
  if (options.what & kAnalyseMetrics) {
    owned.push_back(
        internal::NewMetricsVisitor(ctx, jobs ? *options.jobs : no_jobs, &result.metrics));
  }

  internal::SweepOptions sweep;
  sweep.lmc_lids = deadlock || (trace && options.trace.all_lids);
  sweep.job_phases = jobs;
  sweep.from_all_switches = deadlock && options.deadlock_switch_lids;
  sweep.threads = options.threads;
  sweep.only_lids = options.only_lids;
  std::vector<internal::SweepVisitor*> visitors;
  for (const auto& v : owned) visitors.push_back(v.get());
  internal::RunSweep(ctx, sweep, visitors);
  *out = std::move(result);
  return Status::OK();
}

Status TraceAll(const Fabric& fabric, const LftSet& lfts, const TraceOptions& options,
                TraceReport* out) {
  AnalysisOptions o;
  o.what = kAnalyseTrace;
  o.trace = options;
  o.threads = options.threads;
  AnalysisResult r;
  SAR_RETURN_IF_ERROR(AnalyseRouting(fabric, lfts, o, &r));
  *out = std::move(r.trace);
  return Status::OK();
}

Status CheckDeadlock(const Fabric& fabric, const LftSet& lfts, const VirtualLayers* layers,
                     DeadlockReport* out, bool switch_lids) {
  AnalysisOptions o;
  o.what = kAnalyseDeadlock;
  o.layers = layers;
  o.deadlock_switch_lids = switch_lids;
  AnalysisResult r;
  SAR_RETURN_IF_ERROR(AnalyseRouting(fabric, lfts, o, &r));
  *out = std::move(r.deadlock);
  return Status::OK();
}

Status ComputeMetrics(const Fabric& fabric, const LftSet& lfts,
                      const std::vector<ResolvedJob>& jobs, const MetricsOptions& options,
                      Metrics* out) {
  AnalysisOptions o;
  o.what = kAnalyseMetrics;
  o.jobs = &jobs;
  o.threads = options.threads;
  AnalysisResult r;
  SAR_RETURN_IF_ERROR(AnalyseRouting(fabric, lfts, o, &r));
  *out = std::move(r.metrics);
  return Status::OK();
}

Status ComputeLinkLoad(const Fabric& fabric, const LftSet& lfts, const TrafficSpec& spec,
                       LinkLoad* out) {
  AnalysisOptions o;
  o.traffic = {spec};
  AnalysisResult r;
  SAR_RETURN_IF_ERROR(AnalyseRouting(fabric, lfts, o, &r));
  *out = r.traffic[0];
  return Status::OK();
}

}  // namespace sar
