// What the daemon must remember across restarts so a restart does not reroute needlessly: the
// job set last handed to the router and when. Kept in the state dir as a job mapping file
// ("router.jobs") and a one-line "last_reroute" (Unix seconds).
#pragma once

#include <string>
#include <vector>

#include "filter.h"
#include "sar/env.h"
#include "sar/model/jobs.h"
#include "sar/status.h"

namespace sar::filterd {

struct PersistentState {
  bool has_router_set = false;  // false on the first start ever
  std::vector<MultiSwitchJob> router_set;
  double last_reroute_unix_s = 0;
};

/// A missing state dir or files give an empty state (not an error); a malformed file is one.
/// Files are read through `env` (regular files only, no symlink, bounded).
Status LoadState(Env& env, const std::string& state_dir, PersistentState* out);
/// Creates the dir if needed (mode 0700); each file is replaced atomically, through `env`.
Status SaveState(Env& env, const std::string& state_dir, const PersistentState& state);
/// The same, with the router set already converted (the daemon converts it once per cycle).
Status SaveState(Env& env, const std::string& state_dir, const PersistentState& state,
                 const JobMapping& router_mapping);

}  // namespace sar::filterd
