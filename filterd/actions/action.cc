#include "actions/action.h"

#include <spdlog/spdlog.h>

#include "sar/io/job_file.h"
#include "test_stop.h"

namespace sar::filterd {
namespace {

std::unique_ptr<Action> MakeActionFor(const Config& config, bool dry_run,
                                      std::unique_ptr<RoutePlanner> planner);

}  // namespace

Status Action::Apply(const ActionRequest& request) {
  const double t0 = env_->NowMonotonic();
  Status s = Status::OK();
  if (dry_run_) {
    spdlog::info("dry run: would write {} jobs to {} and trigger '{}'", request.jobs.size(),
                 mapping_file_, name());
    s = DoApply(request);
  } else if (!mapping_file_.empty() &&
             !(s = WriteJobMapping(*env_, mapping_file_, request.mapping, mapping_group_)).ok()) {
    // The mapping must be whole on disk before the subnet manager is told to read it.
    ++stats_.mapping_write_failed;
    spdlog::error("reroute: mapping not written, not triggering: {}", s.ToString());
  } else {
    TestStopPoint("mapping");
    const double t1 = env_->NowMonotonic();
    stats_.last_mapping_write_seconds = t1 - t0;
    s = DoApply(request);
    stats_.last_trigger_seconds = env_->NowMonotonic() - t1;
    if (!s.ok()) {
      spdlog::error("reroute: mapping written ({} jobs) but trigger '{}' failed: {}",
                    request.jobs.size(), name(), s.ToString());
    } else {
      spdlog::info(
          "reroute: wrote {} multi-switch jobs to {}, triggered '{}' (mapping write {:.1f} ms, "
          "trigger {:.1f} ms)",
          request.jobs.size(), mapping_file_, name(), stats_.last_mapping_write_seconds * 1e3,
          stats_.last_trigger_seconds * 1e3);
    }
  }
  stats_.last_seconds = env_->NowMonotonic() - t0;
  stats_.total_seconds += stats_.last_seconds;
  ++(s.ok() ? stats_.succeeded : stats_.failed);
  return s;
}

std::unique_ptr<Action> MakeAction(const Config& config, bool dry_run,
                                   std::unique_ptr<RoutePlanner> planner) {
  std::unique_ptr<Action> action = MakeActionFor(config, dry_run, std::move(planner));
  action->set_mapping_group(config.mapping_gid);
  return action;
}

namespace {

std::unique_ptr<Action> MakeActionFor(const Config& config, bool dry_run,
                                      std::unique_ptr<RoutePlanner> planner) {
  if (dry_run) return MakeDryRunAction(config.mapping_file, config.trigger, std::move(planner));
  switch (config.trigger) {
    case Trigger::kSignal:
      return MakeSignalAction(config.mapping_file, config.opensm_pid_files,
                              config.verify_sm_process
                                  ? RealSmProcessCheck(true, PluginReadyFile(config.mapping_file))
                                  : nullptr);
    case Trigger::kConsole:
      return MakeConsoleAction(config.mapping_file, config.console_host, config.console_port, 2.0);
    case Trigger::kFile:
      // Stock OpenSM's file engine: SIGHUP is OpenSM's own, no plugin involved.
      return MakeFileAction(config.mapping_file, config.lft_file, config.opensm_pid_files,
                            std::move(planner),
                            config.verify_sm_process ? RealSmProcessCheck(false) : nullptr);
    case Trigger::kNone:
      return MakeNullAction(config.mapping_file);
  }
  return MakeNullAction(config.mapping_file);
}

}  // namespace
}  // namespace sar::filterd
