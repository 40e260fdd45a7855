// Trigger "file": sar-filterd routes itself (RoutePlanner, libsar) and hands stock OpenSM the
// tables through its `file` routing engine: write the LFT file whole, then SIGHUP. A plan that
// fails validation is never written: OpenSM keeps the last good tables.
#include <signal.h>
#include <spdlog/spdlog.h>

#include <chrono>

#include "action.h"
#include "sar/io/lft_dump.h"

namespace sar::filterd {
namespace {

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

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
    const double t0 = Seconds();
    RoutingInputs in;  // the request's mapping, converted once by the daemon
    Status s = planner_->Inputs(request.mapping, &in);
    if (s.ok()) s = planner_->Plan(in, &tables, &quality);
    if (!s.ok()) {
      return Status::Failed(s.message() + "; keeping the last good tables in " + lft_file_);
    }
    const double t1 = Seconds();
    // OpenSM's file engine reads the whole file on SIGHUP: it must be complete before the
    // signal (WriteLftDump replaces it atomically).
    SAR_RETURN_IF_ERROR(WriteLftDump(lft_file_, planner_->fabric(), tables));
    const double t2 = Seconds();
    SAR_RETURN_IF_ERROR(SignalPidFiles(pid_files_, SIGHUP, check_));
    // The stage times let an operator (and scripts/day_latency.py) split a reroute's latency.
    spdlog::info(
        "file mode: new tables in {}: max effective EFI {}, dark fiber {:.3f} (routing and "
        "checks {:.1f} ms, write {:.1f} ms); SIGHUP sent",
        lft_file_, quality.max_effective_efi, quality.dark_fiber, (t1 - t0) * 1e3, (t2 - t1) * 1e3);
    return planner_->SetCurrent(std::move(tables));
  }

 private:
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
