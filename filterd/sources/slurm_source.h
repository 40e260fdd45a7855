// Running jobs from slurmctld through libslurm, in process (no squeue fork, no text parsing):
// slurm_load_jobs() and SLURM's own host list expansion. Jobs in RUNNING and CONFIGURING hold
// their nodes (CONFIGURING has base state RUNNING in libslurm's encoding).
#pragma once

#include <memory>
#include <string>

#include "sources/job_source.h"

namespace sar::filterd {

/// Initialises libslurm with `slurm_conf` (empty: $SLURM_CONF). libslurm keeps process-wide
/// state, so create at most one per process. Always succeeds; the controller is first
/// contacted by Poll().
std::unique_ptr<JobSource> MakeSlurmSource(const std::string& slurm_conf);

}  // namespace sar::filterd
