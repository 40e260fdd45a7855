// Where running jobs come from: libslurm, `squeue --json`, or a replay trace. The daemon only
// sees this interface, so the filter and the tests do not care which one is configured.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sar/model/jobs.h"
#include "sar/status.h"

namespace sar::filterd {

/// A job that holds nodes now (RUNNING or CONFIGURING), with its host list fully expanded.
struct SourceJob {
  std::string id;
  std::string partition;
  int64_t time_limit_min = -1;  // -1 = unlimited / unknown
  std::vector<std::string> hosts;
  // From the job's admin_comment ("sar-pattern=alltoall", set by slurm-plugin/job_submit.lua).
  JobPattern pattern = JobPattern::kDefault;
};

class JobSource {
 public:
  virtual ~JobSource() = default;
  virtual const char* name() const = 0;
  /// Replaces *out with every job holding nodes now. An error means the answer is incomplete
  /// (controller down, timeout, malformed reply); the caller must then not act on *out.
  virtual Status Poll(std::vector<SourceJob>* out) = 0;
  /// Every node the scheduler knows, for the "in the fabric but not in SLURM" report. Sources
  /// that cannot tell return NotFound.
  virtual Status ListNodes(std::vector<std::string>* /*out*/) {
    return Status::NotFound("this job source does not list nodes");
  }
};

}  // namespace sar::filterd
