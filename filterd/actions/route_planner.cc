#include "actions/route_planner.h"

#include "sar/analysis/analysis.h"
#include "sar/analysis/metrics.h"

namespace sar::filterd {

PlannerOptions PlannerOptionsFor(const Config& config) {
  PlannerOptions o;
  o.engine = config.engine;
  o.num_vls = config.num_vls;
  o.threads = config.routing_threads;
  // File mode feeds OpenSM's file engine, which loads no per-route SL: one layer. The dry run in
  // front of the plugin may use every lane.
  o.max_layers = config.trigger == Trigger::kFile ? 1 : 0;
  o.hca_pairs = config.filter.hca_pairs;
  o.routing = config.routing;
  return o;
}

RoutePlanner::RoutePlanner(Fabric fabric, std::unique_ptr<RoutingEngine> engine,
                           PlannerOptions options)
    : fabric_(std::move(fabric)), engine_(std::move(engine)), options_(std::move(options)) {}

Status RoutePlanner::SetCurrent(LftSet tables) {
  SAR_RETURN_IF_ERROR(tables.CheckFits(fabric_));
  current_ = std::move(tables);
  has_current_ = true;
  return Status::OK();
}

Status RoutePlanner::Inputs(const JobMapping& mapping, RoutingInputs* out) const {
  RoutingOptions o = options_.routing;
  o.engine = options_.engine;
  o.mapping_path = "(sar-filterd's job set)";
  o.num_vls = options_.num_vls;
  o.max_layers = options_.max_layers;
  o.threads = options_.threads;
  o.job_hca_pairs = options_.hca_pairs;
  return LoadRoutingInputs(fabric_, o, mapping, out);
}

Status RoutePlanner::Evaluate(const RoutingInputs& in, RouteQuality* out) const {
  if (!has_current_) return Status::NotFound("no current tables (set 'current_lfts')");
  Metrics m;
  MetricsOptions mo;
  mo.threads = options_.threads;
  SAR_RETURN_IF_ERROR(ComputeMetrics(fabric_, current_, in.jobs, mo, &m));
  out->max_effective_efi = m.effective_efi.max;
  out->dark_fiber = m.dark_fiber;
  return Status::OK();
}

Status RoutePlanner::Plan(const RoutingInputs& in, LftSet* out, RouteQuality* quality,
                          PlannedFors* fors) const {
  const std::string engine(engine_ ? engine_->name() : in.engine);
  // The subnet manager would load whatever we hand it: the routing pass refuses tables that
  // drop or loop a route, or that need more layers than it carries.
  // The sweep that validates also gives the metrics the new tables are judged by.
  AnalysisOptions also;
  also.what = kAnalyseMetrics;
  also.jobs = &in.jobs;
  RoutingResult result;
  const Status s = RunRoutingPass(in, engine_.get(), also, &result);
  const ValidationReport& report = result.report;
  if (!s.ok()) {
    std::string why = "engine '" + engine + "': " + s.message();
    // With one lane the engine fails itself when it needs layers; the pass refuses a cyclic
    // single layer. Either way the fabric needs the per-route SLs only the plugin gives.
    const bool undelivered = report.trace.loops > 0 || report.trace.unreachable > 0;
    if (in.options.max_layers == 1 && s.code() == Status::Code::kFailed && !undelivered) {
      why +=
          " (OpenSM's file engine loads no per-route SL, so file mode publishes only "
          "single-layer, deadlock-free tables; route with the OpenSM plugin, trigger 'signal', "
          "on this fabric)";
    }
    return Status::Failed(why);
  }
  quality->max_effective_efi = result.analysis.metrics.effective_efi.max;
  quality->dark_fiber = result.analysis.metrics.dark_fiber;
  *out = std::move(result.output.lfts);
  if (fors != nullptr) {
    PlannedFors planned;
    planned.plans = std::move(result.fors);
    planned.none = std::move(result.fors_none);
    for (const ForsJobPlan& plan : planned.plans) {
      planned.rows.push_back(FormatForsScheduleRows(fabric_, plan));
    }
    *fors = std::move(planned);
  }
  return Status::OK();
}

}  // namespace sar::filterd
