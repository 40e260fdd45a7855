// The actions that tell no one: trigger "none" (the mapping is written for whoever reads it,
// e.g. a routing pass OpenSM runs on its own schedule) and --dry-run (nothing is written; with
// routing data, the EFI and dark fiber a reroute would change are reported).
#include <spdlog/spdlog.h>

#include "actions/action.h"

namespace sar::filterd {
namespace {

class NullAction : public Action {
 public:
  explicit NullAction(std::string mapping_file) : Action(std::move(mapping_file), false) {}
  const char* name() const override { return "none"; }

 protected:
  Status DoApply(const ActionRequest&) override { return Status::OK(); }
};

class DryRunAction : public Action {
 public:
  DryRunAction(std::string mapping_file, Trigger trigger, std::unique_ptr<RoutePlanner> planner)
      : Action(std::move(mapping_file), true), trigger_(trigger), planner_(std::move(planner)) {}
  const char* name() const override { return TriggerName(trigger_); }

 protected:
  // Reports only: a failure to evaluate is information, not a failed reroute.
  Status DoApply(const ActionRequest& request) override {
    if (!planner_) {
      spdlog::info(
          "dry run: no routing data for EFI (set 'fabric' with LIDs in it, or 'fabric' and "
          "'guid2lid'; 'current_lfts' for the tables in use)");
      return Status::OK();
    }
    RouteQuality now, now_new_jobs, after;
    bool now_known = false;       // the current tables evaluated with the new jobs
    RoutingInputs router_in, in;  // each job set converted once
    if (Status s = planner_->Inputs(request.mapping, &in); !s.ok()) {
      spdlog::info("dry run: {}", s.ToString());
      return Status::OK();
    }
    if (Status s = planner_->Inputs(request.router_has, &router_in); !s.ok()) {
      spdlog::info("dry run: current job set: {}", s.ToString());
    } else if (s = planner_->Evaluate(router_in, &now); !s.ok()) {
      spdlog::info("dry run: current tables not evaluated: {}", s.ToString());
    } else if (planner_->Evaluate(in, &now_new_jobs).ok()) {
      now_known = true;
      spdlog::info(
          "dry run: current tables: max effective EFI {} -> {} and dark fiber {:.3f} -> {:.3f} "
          "with the new jobs and no reroute",
          now.max_effective_efi, now_new_jobs.max_effective_efi, now.dark_fiber,
          now_new_jobs.dark_fiber);
    }
    LftSet tables;
    if (Status s = planner_->Plan(in, &tables, &after); !s.ok()) {
      spdlog::info("dry run: a reroute would fail and keep the last good tables: {}", s.ToString());
      return Status::OK();
    }
    if (!now_known) {
      // No "(now 0)": a figure never computed is not shown as one.
      spdlog::info(
          "dry run: after a reroute: max effective EFI {}, dark fiber {:.3f} (the current "
          "tables were not evaluated: nothing to compare with)",
          after.max_effective_efi, after.dark_fiber);
      return Status::OK();
    }
    spdlog::info(
        "dry run: after a reroute: max effective EFI {} (now {}), dark fiber {:.3f} (now "
        "{:.3f})",
        after.max_effective_efi, now_new_jobs.max_effective_efi, after.dark_fiber,
        now_new_jobs.dark_fiber);
    return Status::OK();
  }

 private:
  Trigger trigger_;
  std::unique_ptr<RoutePlanner> planner_;
};

}  // namespace

std::unique_ptr<Action> MakeNullAction(std::string mapping_file) {
  return std::make_unique<NullAction>(std::move(mapping_file));
}

std::unique_ptr<Action> MakeDryRunAction(std::string mapping_file, Trigger trigger,
                                         std::unique_ptr<RoutePlanner> planner) {
  return std::make_unique<DryRunAction>(std::move(mapping_file), trigger, std::move(planner));
}

}  // namespace sar::filterd
