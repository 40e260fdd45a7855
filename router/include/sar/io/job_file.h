// The job mapping file: one "<hostname> <jobid> [<pattern>]" per line; '#' starts a comment; blank
// lines are ignored. A host may appear in several jobs. The optional pattern ("default" or
// "alltoall") must be the same on every line of a job. See docs/formats.md.
#pragma once

#include <string>
#include <string_view>

#include "sar/jobs.h"
#include "sar/status.h"

namespace sar {

Status ParseJobMapping(std::string_view text, const std::string& source, JobMapping* out);
Status ReadJobMapping(const std::string& path, JobMapping* out);
std::string FormatJobMapping(const JobMapping& mapping);
Status WriteJobMapping(const std::string& path, const JobMapping& mapping);

}  // namespace sar
