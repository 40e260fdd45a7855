// The jobs reply of SLURM's OpenAPI, as `squeue --json` prints it and slurmrestd serves it at
// /slurm/<version>/jobs. Shared by the squeue and slurmrestd sources. Two shapes are read:
// v0.0.38 (SLURM 22.05: job_state "RUNNING", time_limit a number) and v0.0.39/v0.0.40+ (SLURM
// 23.02 and later: job_state ["RUNNING", <flags>...], time_limit {"set","infinite","number"}).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "sources/job_source.h"

namespace sar::filterd {

/// The most hosts the running jobs of one reply may name in all (a host shared by two jobs
/// counts twice). A host list may name up to kMaxHostlistHosts hosts, so a few KB of JSON could
/// otherwise ask for millions of names. No subnet has more than 49151 end ports, so 1 Mi is
/// every host of the largest one in 21 running jobs at once; the names it allows cost some
/// 40 MB and a fraction of a second.
inline constexpr size_t kMaxReplyHosts = size_t{1} << 20;

/// Keeps jobs in RUNNING or CONFIGURING (they hold their nodes); expands "nodes". A reply that
/// is not JSON, lacks "jobs", carries entries in "errors", or has a field of a type neither
/// shape uses is an error naming the field and the job (no partial answer). So is a reply whose
/// jobs name more than `max_reply_hosts` hosts in all: counted before any is expanded, so its
/// cost is that of its text. Never throws.
Status ParseSlurmJobsJson(std::string_view text, std::vector<SourceJob>* out,
                          size_t max_reply_hosts = kMaxReplyHosts);

}  // namespace sar::filterd
