// The daemon: poll -> filter -> diff -> (hysteresis) -> write mapping -> trigger, once per poll
// interval or when a hook asks through the control socket. Faults (controller down, trigger
// target gone, state dir unwritable) are logged and survived; only a bad config or topology at
// start-up is fatal.
#pragma once

#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "config.h"
#include "daemon_metrics.h"
#include "filter.h"
#include "job_source.h"
#include "leaf_map.h"
#include "reroute_gate.h"
#include "route_planner.h"
#include "state_store.h"

namespace sar::filterd {

struct DaemonOptions {
  bool once = false;     // one cycle, then exit (settle/min-interval do not apply)
  bool dry_run = false;  // report what would change; write and signal nothing
};

class Daemon {
 public:
  Daemon(Config config, DaemonOptions options, LeafMap leaves, std::unique_ptr<JobSource> source);

  /// Routing for file mode and the dry run's metrics; optional otherwise.
  void set_planner(std::unique_ptr<RoutePlanner> planner) { planner_ = std::move(planner); }

  /// Loads the state dir (an unreadable one is logged, not fatal).
  void Start();
  /// One cycle at monotonic time `now_s`. Returns true if it rerouted (or would have, dry run).
  bool RunCycle(double now_s);
  /// Loops until SIGTERM/SIGINT. Returns the process exit code.
  int Run();

  const DaemonMetrics& metrics() const { return metrics_; }

 private:
  bool PollWithRetries(std::vector<SourceJob>* jobs);
  void ReportUnknownHosts(const std::vector<std::string>& hosts);
  void CompareNodeLists();
  bool Reroute(const std::vector<MultiSwitchJob>& set);
  void ReportDryRun(const std::vector<MultiSwitchJob>& set);
  Status FileModeTrigger(const std::vector<MultiSwitchJob>& set);
  void Persist();
  void WriteMetrics();
  std::string StatusLine() const;

  Config config_;
  DaemonOptions options_;
  LeafMap leaves_;
  std::unique_ptr<JobSource> source_;
  std::unique_ptr<RoutePlanner> planner_;
  RerouteGate gate_;
  DaemonMetrics metrics_;

  PersistentState state_;                      // what the router has
  std::vector<MultiSwitchJob> last_poll_set_;  // what the previous poll saw
  std::unordered_set<std::string> reported_unknown_;
  bool nodes_compared_ = false;
  bool waiting_ = false;  // the last cycle held a change back (settle / interval)
};

}  // namespace sar::filterd
