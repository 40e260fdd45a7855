#include "sar/model/jobs.h"

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

const char* JobHcaPairsName(JobHcaPairs pairs) {
  return pairs == JobHcaPairs::kAll ? "all" : "rails";
}

bool ParseJobHcaPairs(std::string_view name, JobHcaPairs* out) {
  if (name == "rails") {
    *out = JobHcaPairs::kRails;
  } else if (name == "all") {
    *out = JobHcaPairs::kAll;
  } else {
    return false;
  }
  return true;
}

namespace {

// The second word of a node description ("dgx-01 mlx5_4" -> "mlx5_4"), split into the prefix
// and the number it ends in; false if it has no such word or number.
bool HcaNameNumber(std::string_view description, std::string_view* prefix, int* number) {
  size_t i = description.find_first_not_of(" \t");
  if (i == std::string_view::npos) return false;
  i = description.find_first_of(" \t", i);  // past the host name
  if (i == std::string_view::npos) return false;
  i = description.find_first_not_of(" \t", i);
  if (i == std::string_view::npos) return false;
  size_t end = description.find_first_of(" \t", i);
  if (end == std::string_view::npos) end = description.size();
  size_t digits = end;
  while (digits > i && description[digits - 1] >= '0' && description[digits - 1] <= '9') --digits;
  // A bounded number: rails are few, and a long digit run is not an HCA index.
  if (digits == end || end - digits > 6) return false;
  int n = 0;
  for (size_t k = digits; k < end; ++k) n = n * 10 + (description[k] - '0');
  *prefix = description.substr(i, digits - i);
  *number = n;
  return true;
}

}  // namespace

std::vector<int> RailsOfPorts(const std::vector<NamedHcaPort>& ports) {
  std::vector<int> rails(ports.size(), kAnyRail);
  std::unordered_map<std::string_view, std::vector<int>> of_host;  // port indices
  for (size_t i = 0; i < ports.size(); ++i) of_host[ports[i].host].push_back(static_cast<int>(i));
  struct Named {
    std::string_view prefix;
    int number;
  };
  std::vector<Named> named(ports.size(), {{}, -1});
  std::unordered_map<std::string_view, std::vector<int>> numbers_of_prefix;
  std::vector<const std::vector<int>*> by_guid;  // hosts whose names give no distinct numbers
  for (const auto& [host, mine] : of_host) {
    if (mine.size() < 2) continue;
    bool ok = true;
    for (int e : mine) {
      ok = ok && HcaNameNumber(ports[e].description, &named[e].prefix, &named[e].number);
    }
    for (size_t a = 0; ok && a < mine.size(); ++a) {
      for (size_t b = a + 1; ok && b < mine.size(); ++b) {
        ok = named[mine[a]].prefix != named[mine[b]].prefix ||
             named[mine[a]].number != named[mine[b]].number;
      }
    }
    if (!ok) {
      for (int e : mine) named[e].number = -1;
      by_guid.push_back(&mine);
      continue;
    }
    for (int e : mine) numbers_of_prefix[named[e].prefix].push_back(named[e].number);
  }
  for (auto& [prefix, numbers] : numbers_of_prefix) {
    std::sort(numbers.begin(), numbers.end());
    numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  }
  for (size_t e = 0; e < ports.size(); ++e) {
    if (named[e].number < 0) continue;
    const std::vector<int>& numbers = numbers_of_prefix[named[e].prefix];
    rails[e] = static_cast<int>(std::lower_bound(numbers.begin(), numbers.end(), named[e].number) -
                                numbers.begin());
  }
  for (const std::vector<int>* mine : by_guid) {
    std::vector<int> order = *mine;
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      return ports[a].port_guid != ports[b].port_guid ? ports[a].port_guid < ports[b].port_guid
                                                      : a < b;
    });
    for (size_t r = 0; r < order.size(); ++r) rails[order[r]] = static_cast<int>(r);
  }
  return rails;
}

std::vector<int> HcaRails(const Fabric& fabric) {
  std::vector<NamedHcaPort> ports;
  for (const PortRef& e : fabric.Endpoints()) {
    ports.push_back({fabric.hostname(e.node), fabric.description(e.node), fabric.port_guid(e)});
  }
  return RailsOfPorts(ports);
}

namespace {

// The traffic groups of ports given by host and rail (JobTrafficGroups' rule): indices.
std::vector<std::vector<int>> GroupsOf(const std::vector<int>& host_of,
                                       const std::vector<int>& rail_of, JobHcaPairs pairs,
                                       bool each_pair_once) {
  const int n = static_cast<int>(host_of.size());
  std::vector<std::vector<int>> groups;
  if (pairs == JobHcaPairs::kAll) {
    groups.emplace_back();
    for (int i = 0; i < n; ++i) groups.back().push_back(i);
  } else {
    std::vector<int> rail_ids;
    for (int r : rail_of) {
      if (r != kAnyRail) rail_ids.push_back(r);
    }
    std::sort(rail_ids.begin(), rail_ids.end());
    rail_ids.erase(std::unique(rail_ids.begin(), rail_ids.end()), rail_ids.end());
    if (rail_ids.empty()) rail_ids.push_back(kAnyRail);  // only one-port hosts: one group
    for (size_t g = 0; g < rail_ids.size(); ++g) {
      groups.emplace_back();
      for (int i = 0; i < n; ++i) {
        const int r = rail_of[i];
        if (r == rail_ids[g] || (r == kAnyRail && (g == 0 || !each_pair_once))) {
          groups.back().push_back(i);
        }
      }
    }
  }
  // Groups whose ports all belong to one host carry nothing; in the others every port has a
  // partner (a port of another host in the group, which talks to it by construction).
  std::vector<std::vector<int>> out;
  for (std::vector<int>& g : groups) {
    bool two_hosts = false;
    for (size_t k = 1; k < g.size() && !two_hosts; ++k) two_hosts = host_of[g[k]] != host_of[g[0]];
    if (two_hosts) out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

std::vector<std::vector<int>> JobTrafficGroups(const Fabric& /*fabric*/, const ResolvedJob& job,
                                               bool each_pair_once) {
  if (!job.host_of.empty()) {
    return GroupsOf(job.host_of, job.rail_of, job.hca_pairs, each_pair_once);
  }
  // Hand-built jobs: a host per node, every node on every rail.
  std::vector<int> host_of;
  for (const PortRef& p : job.endpoints) host_of.push_back(p.node);
  return GroupsOf(host_of, std::vector<int>(host_of.size(), kAnyRail), JobHcaPairs::kAll,
                  each_pair_once);
}

int TrafficLeafSpan(const std::vector<JobHcaPort>& ports, JobHcaPairs pairs) {
  if (ports.empty()) return 0;
  std::vector<int> host_of, rail_of;
  for (const JobHcaPort& p : ports) {
    host_of.push_back(p.host);
    rail_of.push_back(p.rail);
  }
  int span = 1;
  std::vector<int> leaves;
  for (const std::vector<int>& g : GroupsOf(host_of, rail_of, pairs, false)) {
    leaves.clear();
    for (int i : g) leaves.push_back(ports[i].leaf);
    std::sort(leaves.begin(), leaves.end());
    span = std::max(span,
                    static_cast<int>(std::unique(leaves.begin(), leaves.end()) - leaves.begin()));
  }
  return span;
}

int JobLeafSpan(const Fabric& fabric, const ResolvedJob& job) {
  std::vector<JobHcaPort> ports;
  for (size_t i = 0; i < job.endpoints.size(); ++i) {
    const int leaf = fabric.peer(job.endpoints[i]).node;
    if (job.host_of.empty()) {
      ports.push_back({job.endpoints[i].node, kAnyRail, leaf});
    } else {
      ports.push_back({job.host_of[i], job.rail_of[i], leaf});
    }
  }
  return TrafficLeafSpan(ports, job.host_of.empty() ? JobHcaPairs::kAll : job.hca_pairs);
}

std::vector<ResolvedJob> ResolveJobs(const Fabric& fabric, const JobMapping& mapping,
                                     std::vector<std::string>* unknown_hosts,
                                     JobHcaPairs hca_pairs) {
  // hostname -> cabled HCA ports of that host (a host with several HCAs or ports has them all)
  // and their rails.
  struct HostPorts {
    std::vector<PortRef> ports;
    std::vector<int> rails;
  };
  std::unordered_map<std::string_view, HostPorts> ports_of_host;
  const std::vector<PortRef> ends = fabric.Endpoints();
  const std::vector<int> rails = HcaRails(fabric);
  for (size_t i = 0; i < ends.size(); ++i) {
    HostPorts& h = ports_of_host[fabric.hostname(ends[i].node)];
    h.ports.push_back(ends[i]);
    h.rails.push_back(rails[i]);
  }

  std::unordered_set<std::string> reported;
  std::vector<ResolvedJob> out;
  out.reserve(mapping.jobs.size());
  for (const Job& job : mapping.jobs) {
    ResolvedJob r;
    r.id = job.id;
    r.pattern = job.pattern;
    r.hca_pairs = hca_pairs;
    // A repeated host would put its ports in the job twice and double its routes in the
    // metrics and SAR's weights; Job promises no duplicates, but hand-built mappings break it.
    std::unordered_set<std::string_view> seen;
    int hosts = 0;
    for (const std::string& host : job.hosts) {
      if (!seen.insert(host).second) continue;
      auto it = ports_of_host.find(host);
      if (it == ports_of_host.end()) {
        if (unknown_hosts && reported.insert(host).second) unknown_hosts->push_back(host);
        continue;
      }
      const HostPorts& hp = it->second;
      r.endpoints.insert(r.endpoints.end(), hp.ports.begin(), hp.ports.end());
      r.rail_of.insert(r.rail_of.end(), hp.rails.begin(), hp.rails.end());
      r.host_of.insert(r.host_of.end(), hp.ports.size(), hosts++);
    }
    r.num_leaf_switches = JobLeafSpan(fabric, r);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace sar
