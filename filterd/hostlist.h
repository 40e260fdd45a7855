// SLURM host lists ("n[001-004,010],login1"): expansion without libslurm, for the replay trace,
// topology.conf and the squeue/slurmrestd sources (libslurm's own expander is used where
// libslurm is linked, see slurm_source.cc).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sar/status.h"

namespace sar::filterd {

/// Appends the hosts of `expr` to *out in list order. Accepts comma-separated items, each a
/// plain name or a name with one or more bracketed range groups ("r[1-2]n[01-03]"); a range keeps
/// the zero padding of its lower bound, as SLURM does. Fails on unbalanced brackets or a range
/// whose bounds are not numbers or run backwards.
Status ExpandHostlist(std::string_view expr, std::vector<std::string>* out);

}  // namespace sar::filterd
