#include "route_planner.h"

#include "job_set_diff.h"
#include "sar/io/guid2lid.h"
#include "sar/io/lft_dump.h"
#include "sar/io/topology.h"
#include "sar/jobs.h"
#include "sar/trace.h"

namespace sar::filterd {

RoutePlanner::RoutePlanner(Fabric fabric, std::unique_ptr<RoutingEngine> engine,
                           PlannerOptions options)
    : fabric_(std::move(fabric)), engine_(std::move(engine)), options_(std::move(options)) {
  if (!engine_) engine_ = MakeRoutingEngine(options_.engine);
}

Status RoutePlanner::Open(const std::string& topology_path, const std::string& guid2lid_path,
                          const std::string& lfts_path, const PlannerOptions& options,
                          std::unique_ptr<RoutePlanner>* out) {
  Fabric fabric;
  SAR_RETURN_IF_ERROR(ReadTopology(topology_path, &fabric));
  std::vector<Guid2LidEntry> lids;
  SAR_RETURN_IF_ERROR(ReadGuid2Lid(guid2lid_path, &lids));
  SAR_RETURN_IF_ERROR(ApplyGuid2Lid(lids, &fabric));
  auto planner = std::make_unique<RoutePlanner>(std::move(fabric), nullptr, options);
  if (!lfts_path.empty()) {
    LftSet tables;
    SAR_RETURN_IF_ERROR(ReadLftDump(lfts_path, planner->fabric_, &tables));
    SAR_RETURN_IF_ERROR(planner->SetCurrent(std::move(tables)));
  }
  *out = std::move(planner);
  return Status::OK();
}

Status RoutePlanner::SetCurrent(LftSet tables) {
  SAR_RETURN_IF_ERROR(tables.CheckFits(fabric_));
  current_ = std::move(tables);
  has_current_ = true;
  return Status::OK();
}

Status RoutePlanner::Quality(const LftSet& tables, const std::vector<MultiSwitchJob>& jobs,
                             RouteQuality* out) const {
  const std::vector<ResolvedJob> resolved = ResolveJobs(fabric_, ToJobMapping(jobs));
  Metrics m;
  MetricsOptions mo;
  mo.threads = options_.threads;
  SAR_RETURN_IF_ERROR(ComputeMetrics(fabric_, tables, resolved, mo, &m));
  out->max_effective_efi = m.effective_efi.max;
  out->dark_fiber = m.dark_fiber;
  return Status::OK();
}

Status RoutePlanner::Evaluate(const std::vector<MultiSwitchJob>& jobs, RouteQuality* out) const {
  if (!has_current_) return Status::NotFound("no current tables (set 'current_lfts')");
  return Quality(current_, jobs, out);
}

Status RoutePlanner::Plan(const std::vector<MultiSwitchJob>& jobs, LftSet* out,
                          RouteQuality* quality) const {
  if (!engine_) return Status::NotFound("no routing engine '" + options_.engine + "'");
  const std::vector<ResolvedJob> resolved = ResolveJobs(fabric_, ToJobMapping(jobs));
  RoutingInput in;
  in.fabric = &fabric_;
  in.num_vls = options_.num_vls;
  in.jobs = &resolved;
  in.threads = options_.threads;
  RoutingOutput routed;
  Status s = engine_->Route(in, &routed);
  if (!s.ok()) {
    return Status::Failed("engine '" + std::string(engine_->name()) + "': " + s.message());
  }
  SAR_RETURN_IF_ERROR(routed.lfts.CheckFits(fabric_));
  // The subnet manager would load whatever we hand it: never hand over tables that drop or
  // loop a route.
  TraceOptions to;
  to.check_min_hop = false;
  to.threads = options_.threads;
  TraceReport report;
  SAR_RETURN_IF_ERROR(TraceAll(fabric_, routed.lfts, to, &report));
  if (!report.valid()) {
    std::string why = report.examples.empty() ? "" : ": " + report.examples.front();
    return Status::Failed("engine '" + std::string(engine_->name()) + "' tables fail validation (" +
                          std::to_string(report.unreachable) + " unreachable, " +
                          std::to_string(report.loops) + " loops" + why + ")");
  }
  SAR_RETURN_IF_ERROR(Quality(routed.lfts, jobs, quality));
  *out = std::move(routed.lfts);
  return Status::OK();
}

}  // namespace sar::filterd
