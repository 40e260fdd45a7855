// The routing side of sar-filterd, for file mode and --dry-run: the fabric with its LIDs, the
// tables the subnet manager has now (the last good ones), and libsar's routing pass.
// Plan() computes tables for a job set and hands them out only if the pass's ValidateRouting
// accepts them; otherwise the last good tables stay. In file mode (max_layers 1) that refuses
// every table set whose routes need more than one virtual layer, or whose single layer has a
// cyclic channel dependency: OpenSM's file engine loads no per-route SL, so such tables would
// be a deadlock risk on the fabric.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config.h"
#include "filter.h"
#include "job_set_diff.h"
#include "sar/engines/engine.h"
#include "sar/fors/fors_job.h"
#include "sar/model/fabric.h"
#include "sar/model/lft.h"
#include "sar/pass/routing_pass.h"
#include "sar/status.h"

namespace sar::filterd {

struct PlannerOptions {
  std::string engine = "sar";
  int num_vls = 8;
  int threads = 0;  // 0 = all hardware threads
  /// Layers the consumer of the tables carries: 1 for OpenSM's file engine (file mode), 0 =
  /// num_vls (the dry run in front of the plugin).
  int max_layers = 1;
  JobHcaPairs hca_pairs = JobHcaPairs::kRails;  // RoutingOptions::job_hca_pairs
  /// SAR's knobs (sar_refine, sar_all_pairs_budget, sar_refine_work, sar_no_regret,
  /// fors_only_where_faster: Config::routing); the fields above override its others.
  RoutingOptions routing = {};
};

/// The planner's options from the daemon's configuration (sar-filterd's one mapping).
PlannerOptions PlannerOptionsFor(const Config& config);

/// The FORS outcome of a plan: what file mode publishes beside the mapping once OpenSM has the
/// tables (sar/fors/fors_job.h PublishForsSchedules).
struct PlannedFors {
  std::vector<ForsJobPlan> plans;
  std::vector<std::string> rows;  // FormatForsScheduleRows per plan
  std::vector<ForsJobNone> none;  // alltoall jobs without FORS, and why
};

/// max effective EFI and dark fiber: what a reroute is judged by (SAR paper Sec. 4.2).
struct RouteQuality {
  uint64_t max_effective_efi = 0;
  double dark_fiber = 0;
};

class RoutePlanner {
 public:
  /// `fabric` with LIDs set. `engine` may be a test's own (used whatever the inputs' engine);
  /// null = libsar's engine named by the routing pass.
  RoutePlanner(Fabric fabric, std::unique_ptr<RoutingEngine> engine, PlannerOptions options);

  /// Sets the tables the subnet manager has now. Fails if they do not fit the fabric.
  Status SetCurrent(LftSet tables);
  bool has_current() const { return has_current_; }
  const LftSet& current() const { return current_; }
  const Fabric& fabric() const { return fabric_; }

  /// A job set in the routing pass's terms: convert once per cycle, then Evaluate and Plan.
  /// The result points into this planner's fabric.
  Status Inputs(const JobMapping& mapping, RoutingInputs* out) const;
  Status Inputs(const std::vector<MultiSwitchJob>& jobs, RoutingInputs* out) const {
    return Inputs(ToJobMapping(jobs), out);
  }
  /// Quality of the current tables for the inputs' jobs. Fails without current tables.
  Status Evaluate(const RoutingInputs& in, RouteQuality* out) const;
  /// New tables for the inputs, validated. On any error *out is unspecified and the current
  /// tables are unchanged (callers keep handing out those). `fors` (if given) receives the
  /// pass's FORS plans and the alltoall jobs without one.
  Status Plan(const RoutingInputs& in, LftSet* out, RouteQuality* quality,
              PlannedFors* fors = nullptr) const;

 private:
  Fabric fabric_;
  std::unique_ptr<RoutingEngine> engine_;
  PlannerOptions options_;
  LftSet current_;
  bool has_current_ = false;
};

}  // namespace sar::filterd
