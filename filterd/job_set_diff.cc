#include "job_set_diff.h"

#include <algorithm>

namespace sar::filterd {

JobSetDiff DiffJobSets(const std::vector<MultiSwitchJob>& previous,
                       const std::vector<MultiSwitchJob>& current) {
  // One merge pass over the two sorted lists, on (host set, pattern) only: ids do not count.
  auto before = [](const MultiSwitchJob& a, const MultiSwitchJob& b) {
    return a.hosts != b.hosts ? a.hosts < b.hosts : a.pattern < b.pattern;
  };
  JobSetDiff diff;
  size_t i = 0, j = 0;
  while (i < previous.size() || j < current.size()) {
    if (j == current.size() || (i < previous.size() && before(previous[i], current[j]))) {
      diff.removed.push_back(previous[i++]);
    } else if (i == previous.size() || before(current[j], previous[i])) {
      diff.added.push_back(current[j++]);
    } else {
      if (previous[i].id != current[j].id) diff.renamed.emplace_back(previous[i].id, current[j].id);
      ++i;
      ++j;
    }
  }
  return diff;
}

JobMapping ToJobMapping(const std::vector<MultiSwitchJob>& jobs) {
  JobMapping mapping;
  mapping.jobs.reserve(jobs.size());
  for (const MultiSwitchJob& job : jobs) mapping.jobs.push_back({job.id, job.hosts, job.pattern});
  return mapping;
}

std::vector<MultiSwitchJob> FromJobMapping(const JobMapping& mapping) {
  std::vector<MultiSwitchJob> jobs;
  for (const Job& job : mapping.jobs) {
    MultiSwitchJob m{job.id, job.hosts, 0, job.pattern};
    std::sort(m.hosts.begin(), m.hosts.end());
    m.hosts.erase(std::unique(m.hosts.begin(), m.hosts.end()), m.hosts.end());
    jobs.push_back(std::move(m));
  }
  std::sort(jobs.begin(), jobs.end(), JobSetOrder);
  return jobs;
}

}  // namespace sar::filterd
