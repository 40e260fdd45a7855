// The action stage: what sar-filterd does once the filter decided the router must learn a new
// job set. Shaped like spdlog's sinks: Action::Apply() is the one entry point and holds what
// every action shares (the mapping file written whole before anything is told, the dry run,
// logging, duration and success/failure counts); each action only implements DoApply(), in a
// file of its own:
//   signal_action.cc   SIGUSR2 to the pid in OpenSM's pid file (the osmsar plugin rereads)
//   console_action.cc  "reroute" on OpenSM's console
//   file_action.cc     plan tables with libsar, write them for OpenSM's file engine, SIGHUP
//   null_action.cc     trigger "none" (the mapping only), and the dry run (reports, writes nothing)
//   recording_action.h tests: records each request
// The config's trigger is parsed once (config.h); MakeAction() turns it into the one Action the
// daemon holds.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "actions/route_planner.h"
#include "actions/sm_process.h"
#include "config.h"
#include "filter.h"
#include "sar/env.h"
#include "sar/model/jobs.h"
#include "sar/status.h"

namespace sar::filterd {

/// One reroute. The set is converted once per cycle: `mapping` is `jobs` as the mapping file
/// holds it (ToJobMapping), shared by the mapping write, the state dir and the planner's caller.
struct ActionRequest {
  const std::vector<MultiSwitchJob>& jobs;        // the set the router is to have (sorted)
  const JobMapping& mapping;                      // the same, converted once
  const std::vector<MultiSwitchJob>& router_has;  // what it has now (the dry run compares)
};

struct ActionStats {
  uint64_t succeeded = 0;
  uint64_t failed = 0;                // mapping not written, or the action itself failed
  uint64_t mapping_write_failed = 0;  // of `failed`: the mapping file could not be written
  double last_seconds = 0;
  double total_seconds = 0;
  // Of the last Apply: writing the mapping file (it is fsynced) and the trigger (DoApply), so
  // the log splits a reroute's latency into stages (scripts/day_latency.py reads them).
  double last_mapping_write_seconds = 0;
  double last_trigger_seconds = 0;
};

class Action {
 public:
  virtual ~Action() = default;
  Action(const Action&) = delete;
  Action& operator=(const Action&) = delete;

  /// The trigger's name as the config spells it ("signal", ...), for logs.
  virtual const char* name() const = 0;

  /// Writes the mapping atomically (not in a dry run), then DoApply(); logs the outcome and
  /// counts it. Not virtual: every action gets the same order and the same bookkeeping. An
  /// error means the router may still have the old set (the caller retries next cycle).
  Status Apply(const ActionRequest& request);

  bool dry_run() const { return dry_run_; }
  const ActionStats& stats() const { return stats_; }
  const std::string& mapping_file() const { return mapping_file_; }
  /// Group the mapping is written with (mode 0640; -1: the daemon's group).
  gid_t mapping_group() const { return mapping_group_; }
  void set_mapping_group(gid_t group) { mapping_group_ = group; }
  /// The clocks Apply's timings and the actions' stamps read (the daemon's; RealEnv() until set).
  void set_env(std::shared_ptr<Env> env) { env_ = std::move(env); }

 protected:
  /// `mapping_file` empty: the action writes no mapping (tests).
  Action(std::string mapping_file, bool dry_run)
      : mapping_file_(std::move(mapping_file)), dry_run_(dry_run) {}
  /// Tells the router. Runs after the mapping is complete on disk (or, dry run, instead of
  /// everything: it must then change nothing).
  virtual Status DoApply(const ActionRequest& request) = 0;
  Env& env() const { return *env_; }

 private:
  std::shared_ptr<Env> env_ = RealEnv();
  std::string mapping_file_;
  gid_t mapping_group_ = static_cast<gid_t>(-1);
  bool dry_run_;
  ActionStats stats_;
};

/// The action for config.trigger (or, with `dry_run`, the dry run reporting on it). `planner`
/// (may be null) is file mode's routing and the dry run's metrics; the action owns it.
std::unique_ptr<Action> MakeAction(const Config& config, bool dry_run,
                                   std::unique_ptr<RoutePlanner> planner);

// The actions one by one (MakeAction's parts, and tests').
/// `check` (null: none, tests' stand-ins) vets the pid before each signal (sm_process.h).
std::unique_ptr<Action> MakeSignalAction(std::string mapping_file,
                                         std::vector<std::string> pid_files, SmProcessCheck check);
std::unique_ptr<Action> MakeConsoleAction(std::string mapping_file, std::string host, int port,
                                          double timeout_s);
std::unique_ptr<Action> MakeFileAction(std::string mapping_file, std::string lft_file,
                                       std::vector<std::string> pid_files,
                                       std::unique_ptr<RoutePlanner> planner, SmProcessCheck check);
std::unique_ptr<Action> MakeNullAction(std::string mapping_file);
/// Reports what `trigger` would do, and with a planner the EFI and dark fiber before and after.
std::unique_ptr<Action> MakeDryRunAction(std::string mapping_file, Trigger trigger,
                                         std::unique_ptr<RoutePlanner> planner);

/// Reads the pid in `pid_file` (a decimal number > 1, blanks around it allowed).
Status ReadPidFile(const std::string& pid_file, pid_t* pid);
/// Reads a pid from `pid_file` (OpenSM's, or a test's stand-in) and sends it `signum`. Fails,
/// naming the file, if the file is missing or malformed or the process is gone, and, without
/// sending anything, if `check` (when set) refuses the pid.
Status SignalPidFile(const std::string& pid_file, int signum, const SmProcessCheck& check);
/// SignalPidFile for each of `pid_files` (a master and standby subnet managers): OK when at
/// least one was signalled (a standby that is down, or a master that died and left its pid
/// file, must not block the reroute: whichever runs is told); the others' errors are logged as
/// warnings. Fails, with every file's error, when none was signalled.
Status SignalPidFiles(const std::vector<std::string>& pid_files, int signum,
                      const SmProcessCheck& check);
/// Connects to OpenSM's console on host:port (console "loopback" mode) and sends "reroute".
Status ConsoleReroute(const std::string& host, int port, double timeout_s);

}  // namespace sar::filterd
