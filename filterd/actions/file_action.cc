// Trigger "file": sar-filterd routes itself (RoutePlanner, libsar) and hands stock OpenSM the
// tables through its `file` routing engine: write the LFT file whole, then SIGHUP. A plan that
// fails validation is never written: OpenSM keeps the last good tables. After the SIGHUP the
// alltoall jobs' FORS schedules (or "none" files) are published beside the mapping, as the
// plugin does; stock OpenSM says nothing back, so that is as late as file mode can know.
#include <signal.h>
#include <spdlog/spdlog.h>

#include "actions/action.h"
#include "sar/io/lft_dump.h"

namespace sar::filterd {
namespace {

class FileAction : public Action {
 public:
  FileAction(std::string mapping_file, std::string lft_file, std::vector<std::string> pid_files,
             std::unique_ptr<RoutePlanner> planner, SmProcessCheck check)
      : Action(std::move(mapping_file), false),
        lft_file_(std::move(lft_file)),
        pid_files_(std::move(pid_files)),
        planner_(std::move(planner)),
        check_(std::move(check)) {}
  const char* name() const override { return "file"; }

 protected:
  Status DoApply(const ActionRequest& request) override {
    if (!planner_) return Status::InvalidArgument("file mode without routing data");
    LftSet tables;
    RouteQuality quality;
    PlannedFors fors;
    const double t0 = env().NowMonotonic();
    RoutingInputs in;  // the request's mapping, converted once by the daemon
    Status s = planner_->Inputs(request.mapping, &in);
    if (s.ok()) s = planner_->Plan(in, &tables, &quality, &fors);
    if (!s.ok()) {
      return Status::Failed(s.message() + "; keeping the last good tables in " + lft_file_);
    }
    const double t1 = env().NowMonotonic();
    // OpenSM's file engine reads the whole file on SIGHUP: it must be complete before the
    // signal (WriteLftDump replaces it atomically).
    SAR_RETURN_IF_ERROR(WriteLftDump(env(), lft_file_, planner_->fabric(), tables));
    const double t2 = env().NowMonotonic();
    SAR_RETURN_IF_ERROR(SignalPidFiles(pid_files_, SIGHUP, check_));
    const double t3 = env().NowMonotonic();
    // The stage times let an operator (and scripts/day_latency.py) split a reroute's latency.
    spdlog::info(
        "file mode: new tables in {}: max effective EFI {}, dark fiber {:.3f} (routing and "
        "checks {:.1f} ms, write {:.1f} ms); SIGHUP sent ({:.1f} ms)",
        lft_file_, quality.max_effective_efi, quality.dark_fiber, (t1 - t0) * 1e3, (t2 - t1) * 1e3,
        (t3 - t2) * 1e3);
    PublishFors(fors);
    return planner_->SetCurrent(std::move(tables));
  }

 private:
  // The schedules of the tables just handed over; a failure is logged, not the reroute's (the
  // tables are out). Epoch: now.
  void PublishFors(const PlannedFors& fors) const {
    for (const ForsJobNone& n : fors.none) {
      spdlog::warn("alltoall job {} gets no FORS schedule: {} (its schedule file says so)",
                   n.job_id, n.reason);
    }
    int current = 0;
    const Status s =
        PublishForsSchedules(mapping_file(), fors.plans, fors.rows, fors.none,
                             static_cast<uint64_t>(env().NowUnix()), mapping_group(), &current);
    if (!s.ok()) {
      spdlog::error("file mode: FORS schedules not written: {}", s.ToString());
    } else if (!fors.plans.empty() || !fors.none.empty()) {
      spdlog::info("file mode: FORS schedules published: {} FORS, {} none, {} file(s) current",
                   fors.plans.size(), fors.none.size(), current);
    }
  }

  std::string lft_file_;
  std::vector<std::string> pid_files_;
  std::unique_ptr<RoutePlanner> planner_;
  SmProcessCheck check_;
};

}  // namespace

std::unique_ptr<Action> MakeFileAction(std::string mapping_file, std::string lft_file,
                                       std::vector<std::string> pid_files,
                                       std::unique_ptr<RoutePlanner> planner,
                                       SmProcessCheck check) {
  return std::make_unique<FileAction>(std::move(mapping_file), std::move(lft_file),
                                      std::move(pid_files), std::move(planner), std::move(check));
}

}  // namespace sar::filterd
