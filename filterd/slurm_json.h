// The jobs reply of SLURM's OpenAPI, as `squeue --json` prints it and slurmrestd serves it at
// /slurm/<version>/jobs. Shared by the squeue and slurmrestd sources. Two shapes are read:
// v0.0.38 (SLURM 22.05: job_state "RUNNING", time_limit a number) and v0.0.39/v0.0.40+ (SLURM
// 23.02 and later: job_state ["RUNNING", <flags>...], time_limit {"set","infinite","number"}).
#pragma once

#include <string_view>
#include <vector>

#include "job_source.h"

namespace sar::filterd {

/// Keeps jobs in RUNNING or CONFIGURING (they hold their nodes); expands "nodes". A reply that
/// is not JSON, lacks "jobs", carries entries in "errors", or has a field of a type neither
/// shape uses is an error naming the field and the job (no partial answer). Never throws.
Status ParseSlurmJobsJson(std::string_view text, std::vector<SourceJob>* out);

}  // namespace sar::filterd
