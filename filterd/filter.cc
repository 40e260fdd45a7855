#include "filter.h"

#include <algorithm>

namespace sar::filterd {

bool JobSetOrder(const MultiSwitchJob& a, const MultiSwitchJob& b) {
  if (a.hosts != b.hosts) return a.hosts < b.hosts;
  if (a.pattern != b.pattern) return a.pattern < b.pattern;
  return a.id < b.id;
}

FilterResult FilterJobs(const std::vector<SourceJob>& jobs, const LeafMap& leaves,
                        const FilterOptions& options) {
  FilterResult result;
  std::vector<int> seen_leaf(leaves.num_leaves(), -1);  // job index that last counted the leaf
  for (size_t j = 0; j < jobs.size(); ++j) {
    const SourceJob& job = jobs[j];
    if (std::find(options.ignore_partitions.begin(), options.ignore_partitions.end(),
                  job.partition) != options.ignore_partitions.end()) {
      continue;
    }
    // An unlimited job (-1) always passes the time-limit test: it may run for ever.
    if (options.min_time_limit_min > 0 && job.time_limit_min >= 0 &&
        job.time_limit_min < options.min_time_limit_min) {
      continue;
    }
    int num_leaves = 0;
    std::vector<std::string> hosts;
    hosts.reserve(job.hosts.size());
    for (const std::string& host : job.hosts) {
      const int leaf = leaves.LeafOf(host);
      if (leaf == LeafMap::kUnknown) {
        result.unknown_hosts.push_back(host);
        continue;
      }
      hosts.push_back(host);
      if (seen_leaf[leaf] != static_cast<int>(j)) {
        seen_leaf[leaf] = static_cast<int>(j);
        ++num_leaves;
      }
    }
    std::sort(hosts.begin(), hosts.end());
    hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
    if (num_leaves < options.min_leaves || static_cast<int>(hosts.size()) < options.min_nodes) {
      continue;
    }
    result.jobs.push_back({job.id, std::move(hosts), num_leaves, job.pattern});
  }
  std::sort(result.jobs.begin(), result.jobs.end(), JobSetOrder);
  std::sort(result.unknown_hosts.begin(), result.unknown_hosts.end());
  result.unknown_hosts.erase(std::unique(result.unknown_hosts.begin(), result.unknown_hosts.end()),
                             result.unknown_hosts.end());
  return result;
}

}  // namespace sar::filterd
