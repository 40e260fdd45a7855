// The daemon's counters in the Prometheus text exposition format, written as a textfile (for
// node_exporter's textfile collector), replaced atomically so a scrape never sees half a file.
#pragma once

#include <cstdint>
#include <string>

#include "sar/status.h"

namespace sar::filterd {

struct DaemonMetrics {
  uint64_t polls = 0;
  uint64_t poll_errors = 0;  // polls given up after every retry
  uint64_t reroutes = 0;
  uint64_t trigger_errors = 0;        // reroutes that failed (mapping not written or action failed)
  uint64_t mapping_write_errors = 0;  // the mapping file not written (reroute or restore)
  uint64_t state_write_errors = 0;    // the state dir not saved after a reroute
  uint64_t cycle_errors = 0;          // cycles ended by an unexpected exception (caught, logged)
  uint64_t control_requests = 0;      // poll / job-start / job-end on the control socket
  double last_poll_seconds = 0;       // the source call alone
  double last_cycle_seconds = 0;      // poll + filter + diff
  double last_action_seconds = 0;     // the last reroute's action (mapping write + trigger)
  int64_t running_jobs = 0;
  int64_t multi_switch_jobs = 0;
  int64_t unknown_hosts = 0;
  double last_reroute_unix_s = 0;
};

std::string FormatPrometheus(const DaemonMetrics& m);
Status WriteMetricsTextfile(const std::string& path, const DaemonMetrics& m);

}  // namespace sar::filterd
