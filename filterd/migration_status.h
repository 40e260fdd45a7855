// The OpenSM plugin's migration status (osmsar.conf `status_file`, docs/opensm-plugin.md): read
// by sar-filterd so that its status line and metrics show the current epoch's phase and how the
// last epoch ended. A reroute filterd triggers now runs as an epoch of the baseLID/highLID
// protocol and may take seconds (the agents' drain time); this is where an operator sees it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sar/status.h"

namespace sar::filterd {

/// One reading of the coordinator's status file.
struct MigrationStatus {
  uint64_t epoch = 0;
  int phase = 0;           // 1 plan, 2 drain, 3 push, 4 repath, 5 idle
  std::string phase_name;  // "plan", "drain", "push", "repath", "idle"
  int64_t expected = 0;    // acks expected in the phase waited for
  int64_t acked = 0;
  std::vector<std::string> waiting;  // GUIDs still expected: who is late
  bool pending = false;              // a request waits for the next epoch
  uint64_t last_epoch = 0;
  std::string last_outcome;                // "released", "aborted-timeout", ... ("" = none yet)
  std::map<std::string, int64_t> last_ms;  // plan, drain, push, repath, total
  uint64_t epochs_started = 0;
  uint64_t acks_ignored = 0;
};

/// Parses the status file's JSON. Corruption naming `source` on anything malformed.
Status ParseMigrationStatus(const std::string& text, const std::string& source,
                            MigrationStatus* out);
/// Reads and parses `path` (a regular file of at most 64 KiB).
Status ReadMigrationStatus(const std::string& path, MigrationStatus* out);

/// " migration_epoch=E migration_phase=drain acks=1/4 last_outcome=released" (a suffix for
/// the control socket's status line).
std::string MigrationStatusLine(const MigrationStatus& m);
/// Prometheus gauges and counters (sar_filterd_migration_*).
std::string FormatMigrationPrometheus(const MigrationStatus& m);

}  // namespace sar::filterd
