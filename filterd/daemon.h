// The daemon: poll -> filter -> diff -> (hysteresis) -> action (write mapping, trigger), once per
// poll interval or when a hook asks through the control socket. Faults (controller down, trigger
// target gone, state dir unwritable) are logged and survived; only a bad config or topology at
// start-up is fatal.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "actions/action.h"
#include "actions/route_planner.h"
#include "config.h"
#include "daemon_metrics.h"
#include "filter.h"
#include "leaf_map.h"
#include "migration_status.h"
#include "reroute_gate.h"
#include "sar/env.h"
#include "sources/job_source.h"
#include "state_store.h"

namespace sar::filterd {

struct DaemonOptions {
  bool once = false;     // one cycle, then exit (settle/min-interval do not apply)
  bool dry_run = false;  // report what would change; write and signal nothing
};

class Daemon {
 public:
  /// `action` null: MakeAction(config, options.dry_run, no planner). `env` null: RealEnv().
  /// Every clock the daemon and its action read, and every sleep, go through `env`.
  Daemon(Config config, DaemonOptions options, LeafMap leaves, std::unique_ptr<JobSource> source,
         std::unique_ptr<Action> action = nullptr, std::shared_ptr<Env> env = nullptr);

  /// Remakes the action with routing data (file mode; the dry run's metrics).
  void set_planner(std::unique_ptr<RoutePlanner> planner) {
    UseAction(MakeAction(config_, options_.dry_run, std::move(planner)));
  }

  /// Loads the state dir (an unreadable one is logged, not fatal).
  void Start();
  /// One cycle at monotonic time `now_s` (the Env's NowMonotonic()). Returns true if it rerouted
  /// (or would have, dry run).
  bool RunCycle(double now_s);
  /// RunCycle, with any exception caught, logged and counted as a failed cycle: this is the
  /// loop's boundary, and nothing a job source or action throws may end the daemon.
  bool SafeCycle(double now_s);
  /// Loops until SIGTERM/SIGINT. Returns the process exit code.
  int Run();

  const DaemonMetrics& metrics() const { return metrics_; }

 private:
  void UseAction(std::unique_ptr<Action> action);
  bool PollWithRetries(std::vector<SourceJob>* jobs);
  void ReportUnknownHosts(const std::vector<std::string>& hosts);
  void CompareNodeLists();
  bool Reroute(const std::vector<MultiSwitchJob>& set);
  void Persist(const JobMapping& router_mapping);
  void CheckMappingOnDisk();
  void RestoreMapping();
  void WriteMetrics();
  /// SIGHUP: a log_file moved away by logrotate is opened anew.
  void ReopenLogFile();
  /// An id change only: the router's FORS schedule of `router_id` also under `slurm_id`.
  void AliasForsSchedule(const std::string& router_id, const std::string& slurm_id);
  std::string StatusLine() const;
  /// What the control socket's "mapping" answers: the router's job set as a mapping file.
  std::string MappingText() const;
  /// The Prometheus text: the daemon's counters and, if configured, the plugin's migration.
  std::string MetricsText() const;
  /// Reads migration_status_file; false if unset or unreadable (logged at debug).
  bool ReadMigration(MigrationStatus* m) const;

  std::shared_ptr<Env> env_;  // first: the action is given it
  Config config_;
  DaemonOptions options_;
  LeafMap leaves_;
  std::unique_ptr<JobSource> source_;
  std::unique_ptr<Action> action_;
  RerouteGate gate_;
  DaemonMetrics metrics_;

  PersistentState state_;                      // what the router has
  std::vector<MultiSwitchJob> last_poll_set_;  // what the previous poll saw
  // Router set id -> the id the same job (hosts, pattern) runs under now, after an id-only
  // change: the log names the job by the id SLURM shows, also when it ends.
  std::map<std::string, std::string> current_ids_;
  std::unordered_set<std::string> reported_unknown_;
  bool nodes_compared_ = false;
  bool waiting_ = false;  // the last cycle held a change back (settle / interval)
  // The mapping file may hold a set the router was not told (a failed trigger, a crash between
  // write and state save): rewritten with state_.router_set at the next cycle without reroute.
  bool mapping_stale_ = false;
  // Found at start: the mapping on disk was not the router's set, and the subnet manager may
  // have routed with it while sar-filterd was down (its own sweep, a restart). Rewriting the
  // file is then not enough: the next cycle reroutes even if the job set equals the router's.
  bool router_unsure_ = false;
};

/// poll()'s timeout for a wait of `wait_s` seconds: 0..3,600,000 ms, for any double (huge,
/// infinite or NaN waits included), so that no interval can overflow an int into a busy loop.
int PollTimeoutMs(double wait_s);

}  // namespace sar::filterd
