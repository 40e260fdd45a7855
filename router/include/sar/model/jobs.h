// Jobs: which hosts run which batch job, as the filter daemon writes it for the router.
//
// A JobMapping is the parsed job mapping file (one "<hostname> <jobid> [<pattern>]" per line, see
// docs/formats.md). ResolveJobs() ties hostnames to the fabric's HCAs by the first word of each
// HCA's node description; hosts the fabric does not know are reported, not fatal.
//
// Hosts with several HCA ports (rails, e.g. a DGX's mlx5_0..7 on different leaves): a host maps
// to all its cabled HCA ports, and which of a job's HCA port pairs exchange traffic is one rule,
// ResolvedJob::Sends (docs/formats.md, "Hosts with several HCAs"): never two ports of one host,
// and by default only ports on the same rail (JobHcaPairs::kRails). Every consumer (metrics,
// SAR's weights, per-job flows, the lower bound, sar-filterd) asks it or JobTrafficGroups.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/status.h"

namespace sar {

/// The communication pattern a job declared (sbatch --sar-pattern). kAllToAll jobs may get FORS
/// phased routing where the fabric is a 2-level fat-tree; everything else is routed by SAR.
enum class JobPattern { kDefault, kAllToAll };

/// "default" / "alltoall", as in the mapping file and --sar-pattern.
const char* JobPatternName(JobPattern pattern);
/// Parses a pattern name; false if it is not one of JobPatternName's values.
bool ParseJobPattern(std::string_view name, JobPattern* out);

/// Which HCA ports of a job's hosts exchange traffic (RoutingOptions::job_hca_pairs, sar-route
/// --job-hca-pairs). Ports of one host never do (their traffic stays inside the node).
enum class JobHcaPairs : uint8_t {
  kRails,  // rail-aligned: HCA port of rail i to the rail-i port of every other host
  kAll,    // every HCA port to every HCA port of every other host
};
/// "rails" / "all".
const char* JobHcaPairsName(JobHcaPairs pairs);
/// Parses a JobHcaPairsName; false (and *out untouched) otherwise.
bool ParseJobHcaPairs(std::string_view name, JobHcaPairs* out);

/// The rail of an HCA port of a host with one cabled HCA port: it talks to every rail.
inline constexpr int kAnyRail = -1;

/// The one pair rule on (host, rail) of two HCA ports: different hosts, and with kRails the same
/// rail or one of them kAnyRail.
inline bool HcaPortsSend(int host_a, int rail_a, int host_b, int rail_b, JobHcaPairs pairs) {
  return host_a != host_b && (pairs == JobHcaPairs::kAll || rail_a == kAnyRail ||
                              rail_b == kAnyRail || rail_a == rail_b);
}

/// An HCA port as the rail rule reads it: its host's name, its node description, its port GUID.
struct NamedHcaPort {
  std::string_view host;
  std::string_view description;
  Guid port_guid = 0;
};
/// The rail of each port (HcaRails' rule below, on ports from any source: a fabric, OpenSM's
/// subnet dump). Views must outlive the call only.
std::vector<int> RailsOfPorts(const std::vector<NamedHcaPort>& ports);

/// The rail of every endpoint (index into fabric.Endpoints()); a host is a hostname. A host with
/// one cabled HCA port: kAnyRail. A host with several whose HCA names (the node description's
/// second word: "dgx-01 mlx5_4", "dgx-02 HCA-5") all end in a number, no two alike: the rank of
/// that number among the numbers that end the names with the same prefix ("mlx5_", "HCA-") on
/// all such hosts of the fabric (mlx5_{0,1,4,5} and HCA-{1,2,5,6} are both rails 0..3; a host
/// missing HCA-5 keeps HCA-6 on rail 3). Any other host: the rank of the port in port GUID order.
std::vector<int> HcaRails(const Fabric& fabric);

struct Job {
  std::string id;
  std::vector<std::string> hosts;  // in file order, without duplicates
  JobPattern pattern = JobPattern::kDefault;
};

struct JobMapping {
  std::vector<Job> jobs;  // in order of first appearance
};

/// A job as the metrics see it: its endpoints (cabled HCA ports) in the fabric.
struct ResolvedJob {
  std::string id;
  std::vector<PortRef> endpoints;
  /// JobLeafSpan: distinct leaf switches of its largest traffic group (< 2: its traffic stays
  /// on one switch; a one-host job is never multi-switch).
  int num_leaf_switches = 0;
  JobPattern pattern = JobPattern::kDefault;
  /// Per endpoint: its host (index into the job's hosts) and rail (HcaRails). Empty (jobs built
  /// by hand, synthetic clusters): every endpoint is its own host's only port, i.e. endpoints
  /// on distinct nodes exchange traffic.
  std::vector<int> host_of, rail_of;
  JobHcaPairs hca_pairs = JobHcaPairs::kRails;

  /// The one pair rule: whether endpoint `a` sends to endpoint `b` (indices into endpoints).
  bool Sends(size_t a, size_t b) const {
    if (host_of.empty()) return endpoints[a].node != endpoints[b].node;
    return HcaPortsSend(host_of[a], rail_of[a], host_of[b], rail_of[b], hca_pairs);
  }
};

/// The job's traffic as groups of endpoint indices: every pair that Sends lies in a group, and
/// two endpoints of one group on distinct hosts send to each other (kAll, or no rails: one
/// group; kRails: one per rail, kAnyRail ports in each). With `each_pair_once` a kAnyRail port
/// joins the first group only, so no pair is in two groups but pairs between a kAnyRail port and
/// other rails are missing (a subset: what a lower bound may use). Groups of one host are left out.
std::vector<std::vector<int>> JobTrafficGroups(const Fabric& fabric, const ResolvedJob& job,
                                               bool each_pair_once = false);

/// The leaf switches of the job's largest traffic group that carry a port with a partner; 1 if
/// no port has one, 0 without endpoints. What ResolveJobs puts in num_leaf_switches.
int JobLeafSpan(const Fabric& fabric, const ResolvedJob& job);

/// A job's HCA port as the span rule sees it: host (any id, equal for one host's ports), rail
/// (HcaRails), leaf (any id of the switch it is cabled to).
struct JobHcaPort {
  int host = 0;
  int rail = kAnyRail;
  int leaf = 0;
};
/// JobLeafSpan on ports from any source (sar-filterd's leaf map): the same rule.
int TrafficLeafSpan(const std::vector<JobHcaPort>& ports, JobHcaPairs pairs);

/// Maps each job's hosts to endpoints. Hostnames unknown to the fabric go to *unknown_hosts
/// (if given), once each.
std::vector<ResolvedJob> ResolveJobs(const Fabric& fabric, const JobMapping& mapping,
                                     std::vector<std::string>* unknown_hosts = nullptr,
                                     JobHcaPairs hca_pairs = JobHcaPairs::kRails);

}  // namespace sar
