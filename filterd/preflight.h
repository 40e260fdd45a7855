// `sar-filterd --check`: what the daemon will need once it runs, tried before the unit is
// enabled. The dry run tests the SLURM side (a poll) but not the action side, so a dead OpenSM
// pid, an OpenSM without the plugin, an unknown socket group, an unbindable metrics address and
// an unwritable mapping directory used to pass and surface only at the first reroute.
// Nothing here changes state: no signal is sent (kill(pid, 0) only), no socket is replaced, and
// write checks create and remove a temporary file.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "actions/sm_process.h"
#include "config.h"
#include "sar/status.h"

namespace sar::filterd {

struct PreflightItem {
  std::string what;    // "opensm", "mapping_file", ...
  std::string detail;  // what was checked, on success
  Status status;
};

/// Runs every check the config calls for, in a fixed order; `check` decides whether a pid is
/// the subnet manager (RealSmProcessCheck in the daemon; tests inject their own). Never stops at
/// the first failure: the operator sees everything that is wrong at once.
std::vector<PreflightItem> RunPreflight(const Config& config, const SmProcessCheck& check);

/// OK if a file can be created in the directory that holds `file_path` (tried with a temporary
/// file, removed again).
Status CheckWritableDirOf(const std::string& file_path);

/// Whether a process with these credentials may chown() its own file to group `gid`: root, or
/// `gid` is its effective or a supplementary group. The control socket is handed to
/// control_socket_group this way, so the system user must be in that group
/// (`adduser sar-filterd slurm`).
bool MayChownToGroup(uid_t euid, gid_t egid, const std::vector<gid_t>& groups, gid_t gid);

}  // namespace sar::filterd
