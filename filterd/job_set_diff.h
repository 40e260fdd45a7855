// Did the multi-switch job set change in a way the router cares about? Routes depend on which
// hosts run together, not on job ids: a job resubmitted on the same nodes under a new id is no
// change. A job's declared pattern (--sar-pattern) does count: the same hosts turning all-to-all
// change how they are routed. Two sets are compared as multisets of (host set, pattern).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "filter.h"
#include "sar/model/jobs.h"

namespace sar::filterd {

struct JobSetDiff {
  std::vector<MultiSwitchJob> added;    // (hosts, pattern) in `current` and not in `previous`
  std::vector<MultiSwitchJob> removed;  // (hosts, pattern) in `previous` and not in `current`
  // (previous id, current id) of the jobs matched by (hosts, pattern) whose ids differ: an id-only
  // change (a job resubmitted on the same nodes). Not a change for the router.
  std::vector<std::pair<std::string, std::string>> renamed;
  bool changed() const { return !added.empty() || !removed.empty(); }
};

/// REQUIRES: both sorted by JobSetOrder, as FilterJobs returns them.
JobSetDiff DiffJobSets(const std::vector<MultiSwitchJob>& previous,
                       const std::vector<MultiSwitchJob>& current);

/// The mapping file contents for a set: one job per multi-switch job, hosts sorted, with its
/// pattern (the mapping's third column).
JobMapping ToJobMapping(const std::vector<MultiSwitchJob>& jobs);
/// Back from a mapping file (the state dir's copy of the last set); sorts as FilterJobs does.
std::vector<MultiSwitchJob> FromJobMapping(const JobMapping& mapping);

}  // namespace sar::filterd
