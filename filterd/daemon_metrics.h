// The daemon's counters in the Prometheus text exposition format, written as a textfile (for
// node_exporter's textfile collector), replaced atomically so a scrape never sees half a file.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "sar/status.h"

namespace sar::filterd {

/// A Prometheus histogram of durations in seconds over fixed buckets (1 ms to 2 min): what a
/// last-value gauge cannot say (how often a poll was slow between two scrapes). Cumulative
/// counts are made when formatted.
struct DurationHistogram {
  static constexpr std::array<double, 12> kBounds = {0.001, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                     0.25,  0.5,   1,    2.5,   10,   120};
  std::array<uint64_t, kBounds.size() + 1> counts{};  // the last one: above every bound
  double sum = 0;
  uint64_t count = 0;

  void Observe(double seconds);
};

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
  // Unix time since which the multi-switch job set has differed from the one the router has
  // (0: no difference): the tables in the switches are older than the job set since then.
  double pending_change_since_unix_s = 0;
  DurationHistogram poll_seconds;    // every job source call
  DurationHistogram cycle_seconds;   // poll + filter + diff
  DurationHistogram action_seconds;  // every reroute action
};

std::string FormatPrometheus(const DaemonMetrics& m);
Status WriteMetricsTextfile(const std::string& path, const DaemonMetrics& m);

}  // namespace sar::filterd
