// The job's communication pattern as SLURM carries it: slurm-plugin/job_submit.lua writes the
// --sar-pattern value into the job's admin_comment as the word "sar-pattern=<name>", beside
// whatever else an admin keeps there. Every job source reads it through this one function.
#pragma once

#include <string_view>

#include "sar/model/jobs.h"

namespace sar {

/// The pattern named by the first "sar-pattern=<name>" word of `admin_comment` (words are
/// separated by commas or whitespace). No such word, or an unknown name, is kDefault: a job is
/// never dropped for its comment, it is only routed the ordinary way.
JobPattern PatternFromAdminComment(std::string_view admin_comment);

}  // namespace sar
