// Job sources that talk to SLURM from outside the process: `squeue --json` (a child process)
// and slurmrestd on a UNIX socket (HTTP/1.1). Both read the OpenAPI jobs reply (slurm_json.h)
// and give up after a timeout, which Poll() reports as an error (no partial data).
#pragma once

#include <memory>
#include <string>

#include "sar/env.h"
#include "sources/job_source.h"

namespace sar::filterd {

/// Runs `squeue_path --json` with SLURM_CONF=slurm_conf (if not empty), through `env`'s Run
/// (null: RealEnv()).
std::unique_ptr<JobSource> MakeSqueueSource(std::string squeue_path, std::string slurm_conf,
                                            double timeout_s, std::shared_ptr<Env> env = nullptr);

/// GET /slurm/<api_version>/jobs on slurmrestd's UNIX socket.
std::unique_ptr<JobSource> MakeSlurmrestdSource(std::string socket_path, std::string api_version,
                                                double timeout_s);

}  // namespace sar::filterd
