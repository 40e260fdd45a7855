// The job's pattern from SLURM's admin_comment: the reader lives in libsar
// (sar/io/admin_comment.h), which sar-route's trace replay reads too.
#pragma once

#include "sar/io/admin_comment.h"

namespace sar::filterd {

using sar::PatternFromAdminComment;

}  // namespace sar::filterd
