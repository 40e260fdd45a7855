#include "daemon_metrics.h"

#include <fmt/format.h>

#include "sar/io/file_util.h"

namespace sar::filterd {
namespace {

template <typename T>
void Add(std::string* out, const char* name, const char* type, const char* help, T value) {
  *out +=
      fmt::format("# HELP sar_filterd_{0} {1}\n# TYPE sar_filterd_{0} {2}\nsar_filterd_{0} {3}\n",
                  name, help, type, value);
}

void AddHistogram(std::string* out, const char* name, const char* help,
                  const DurationHistogram& h) {
  *out += fmt::format("# HELP sar_filterd_{0} {1}\n# TYPE sar_filterd_{0} histogram\n", name, help);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < DurationHistogram::kBounds.size(); ++i) {
    cumulative += h.counts[i];
    *out += fmt::format("sar_filterd_{}_bucket{{le=\"{}\"}} {}\n", name,
                        DurationHistogram::kBounds[i], cumulative);
  }
  *out += fmt::format(
      "sar_filterd_{0}_bucket{{le=\"+Inf\"}} {1}\nsar_filterd_{0}_sum {2}\n"
      "sar_filterd_{0}_count {1}\n",
      name, h.count, h.sum);
}

}  // namespace

void DurationHistogram::Observe(double seconds) {
  // A NaN or negative duration (a clock oddity) counts in the first bucket, never out of range.
  if (!(seconds >= 0)) seconds = 0;
  size_t i = 0;
  while (i < kBounds.size() && seconds > kBounds[i]) ++i;
  ++counts[i];
  sum += seconds;
  ++count;
}

std::string FormatPrometheus(const DaemonMetrics& m) {
  std::string out;
  Add(&out, "polls_total", "counter", "Job source polls.", m.polls);
  Add(&out, "poll_errors_total", "counter", "Polls that failed after all retries.", m.poll_errors);
  Add(&out, "reroutes_total", "counter", "Mapping writes followed by a trigger.", m.reroutes);
  Add(&out, "trigger_errors_total", "counter",
      "Failed reroutes: mapping not written or trigger failed.", m.trigger_errors);
  Add(&out, "mapping_write_errors_total", "counter",
      "Mapping file writes that failed (before a trigger, or restoring the router's set).",
      m.mapping_write_errors);
  Add(&out, "state_write_errors_total", "counter",
      "State dir saves that failed after a reroute (a restart may reroute once more).",
      m.state_write_errors);
  Add(&out, "cycle_errors_total", "counter",
      "Cycles ended by an unexpected error (logged; the daemon goes on).", m.cycle_errors);
  Add(&out, "control_requests_total", "counter",
      "Poll requests (poll, job-start, job-end) on the control socket.", m.control_requests);
  Add(&out, "poll_duration_seconds", "gauge", "Last job source call.", m.last_poll_seconds);
  Add(&out, "cycle_duration_seconds", "gauge", "Last poll + filter + diff.", m.last_cycle_seconds);
  Add(&out, "action_duration_seconds", "gauge",
      "Last reroute action: mapping write and trigger (file mode: routing too).",
      m.last_action_seconds);
  Add(&out, "running_jobs", "gauge", "Jobs holding nodes at the last poll.", m.running_jobs);
  Add(&out, "multi_switch_jobs", "gauge", "Jobs spanning >= min_leaves leaf switches.",
      m.multi_switch_jobs);
  Add(&out, "unknown_hosts", "gauge", "Hosts of running jobs the topology lacks.", m.unknown_hosts);
  Add(&out, "last_reroute_timestamp_seconds", "gauge", "Unix time of the last reroute.",
      m.last_reroute_unix_s);
  Add(&out, "pending_change_since_timestamp_seconds", "gauge",
      "Unix time since which the multi-switch job set differs from the router's (0: none).",
      m.pending_change_since_unix_s);
  AddHistogram(&out, "poll_seconds", "Job source calls.", m.poll_seconds);
  AddHistogram(&out, "cycle_seconds", "Poll + filter + diff.", m.cycle_seconds);
  AddHistogram(&out, "action_seconds",
               "Reroute actions: mapping write and trigger (file mode: routing too).",
               m.action_seconds);
  return out;
}

Status WriteMetricsTextfile(const std::string& path, const DaemonMetrics& m) {
  return WriteFileAtomic(path, FormatPrometheus(m));
}

}  // namespace sar::filterd
