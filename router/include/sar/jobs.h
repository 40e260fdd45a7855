// Jobs: which hosts run which batch job, as the filter daemon writes it for the router.
//
// A JobMapping is the parsed job mapping file (one "<hostname> <jobid> [<pattern>]" per line, see
// docs/formats.md). ResolveJobs() ties hostnames to the fabric's HCAs by the first word of each
// HCA's node description; hosts the fabric does not know are reported, not fatal.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sar/fabric.h"
#include "sar/status.h"

namespace sar {

/// The communication pattern a job declared (sbatch --sar-pattern). kAllToAll jobs may get FORS
/// phased routing where the fabric is a 2-level fat-tree; everything else is routed by SAR.
enum class JobPattern { kDefault, kAllToAll };

/// "default" / "alltoall", as in the mapping file and --sar-pattern.
const char* JobPatternName(JobPattern pattern);
/// Parses a pattern name; false if it is not one of JobPatternName's values.
bool ParseJobPattern(std::string_view name, JobPattern* out);

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
  int num_leaf_switches = 0;  // distinct switches its endpoints are cabled to
  JobPattern pattern = JobPattern::kDefault;
};

/// Maps each job's hosts to endpoints. Hostnames unknown to the fabric go to *unknown_hosts
/// (if given), once each.
std::vector<ResolvedJob> ResolveJobs(const Fabric& fabric, const JobMapping& mapping,
                                     std::vector<std::string>* unknown_hosts = nullptr);

}  // namespace sar
