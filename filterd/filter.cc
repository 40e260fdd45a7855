#include "filter.h"

#include <algorithm>
#include <unordered_set>

namespace sar::filterd {

bool JobSetOrder(const MultiSwitchJob& a, const MultiSwitchJob& b) {
  if (a.hosts != b.hosts) return a.hosts < b.hosts;
  if (a.pattern != b.pattern) return a.pattern < b.pattern;
  return a.id < b.id;
}

FilterResult FilterJobs(const std::vector<SourceJob>& jobs, const LeafMap& leaves,
                        const FilterOptions& options) {
  FilterResult result;
  std::vector<JobHcaPort> ports;
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
    std::vector<std::string> hosts;
    hosts.reserve(job.hosts.size());
    ports.clear();
    std::unordered_set<const std::vector<LeafMap::Port>*> seen;  // a host listed twice: once
    for (const std::string& host : job.hosts) {
      const std::vector<LeafMap::Port>* of_host = leaves.PortsOf(host);
      if (of_host == nullptr) {
        result.unknown_hosts.push_back(host);
        continue;
      }
      hosts.push_back(host);
      if (!seen.insert(of_host).second) continue;
      for (const LeafMap::Port& p : *of_host) {
        ports.push_back({static_cast<int>(seen.size()), p.rail, p.leaf});
      }
    }
    const int num_leaves = TrafficLeafSpan(ports, options.hca_pairs);
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
