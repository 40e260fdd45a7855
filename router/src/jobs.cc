#include "sar/jobs.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace sar {

const char* JobPatternName(JobPattern pattern) {
  return pattern == JobPattern::kAllToAll ? "alltoall" : "default";
}

bool ParseJobPattern(std::string_view name, JobPattern* out) {
  if (name == "default") {
    *out = JobPattern::kDefault;
  } else if (name == "alltoall") {
    *out = JobPattern::kAllToAll;
  } else {
    return false;
  }
  return true;
}

std::vector<ResolvedJob> ResolveJobs(const Fabric& fabric, const JobMapping& mapping,
                                     std::vector<std::string>* unknown_hosts) {
  // hostname -> cabled ports of that HCA (a host with two HCAs or ports contributes all of them).
  std::unordered_map<std::string_view, std::vector<PortRef>> ports_of_host;
  for (const PortRef& e : fabric.Endpoints()) ports_of_host[fabric.hostname(e.node)].push_back(e);

  std::unordered_set<std::string> reported;
  std::vector<ResolvedJob> out;
  out.reserve(mapping.jobs.size());
  for (const Job& job : mapping.jobs) {
    ResolvedJob r;
    r.id = job.id;
    r.pattern = job.pattern;
    std::vector<NodeId> leaves;
    // A repeated host would put its ports in the job twice and double its routes in the
    // metrics and SAR's weights; Job promises no duplicates, but hand-built mappings break it.
    std::unordered_set<std::string_view> seen;
    for (const std::string& host : job.hosts) {
      if (!seen.insert(host).second) continue;
      auto it = ports_of_host.find(host);
      if (it == ports_of_host.end()) {
        if (unknown_hosts && reported.insert(host).second) unknown_hosts->push_back(host);
        continue;
      }
      for (const PortRef& e : it->second) {
        r.endpoints.push_back(e);
        leaves.push_back(fabric.peer(e).node);
      }
    }
    std::sort(leaves.begin(), leaves.end());
    r.num_leaf_switches =
        static_cast<int>(std::unique(leaves.begin(), leaves.end()) - leaves.begin());
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace sar
