// The jobs reply of SLURM's OpenAPI (v0.0.38, SLURM 22.05), as `squeue --json` prints it and
// slurmrestd serves it at /slurm/v0.0.38/jobs. Shared by the squeue and slurmrestd sources.
#pragma once

#include <string_view>
#include <vector>

#include "job_source.h"

namespace sar::filterd {

/// Keeps jobs in RUNNING or CONFIGURING (they hold their nodes); expands "nodes". A reply that
/// is not JSON, lacks "jobs", or carries entries in "errors" is an error (no partial answer).
Status ParseSlurmJobsJson(std::string_view text, std::vector<SourceJob>* out);

}  // namespace sar::filterd
