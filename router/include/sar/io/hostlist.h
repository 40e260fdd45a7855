// SLURM host lists ("n[001-004,010],login1"): expansion without libslurm, for the replay trace,
// topology.conf and the squeue/slurmrestd sources (libslurm's own expander is used where
// libslurm is linked, see slurm_source.cc).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sar/status.h"

namespace sar {

/// No InfiniBand subnet has more end ports than unicast LIDs (0x0001..0xBFFF), so no host list
/// that sar acts on names more hosts than this.
inline constexpr size_t kMaxHostlistHosts = 0xBFFF;

/// Appends the hosts of `expr` to *out in list order. Accepts comma-separated items, each a
/// plain name or a name with one or more bracketed range groups ("r[1-2]n[01-03]"); a range keeps
/// the zero padding of its lower bound, as SLURM does. Fails on unbalanced brackets or a range
/// whose bounds are not numbers or run backwards, and when the list would name more than
/// `max_hosts` hosts (counted before anything is expanded, so `x[0-999999999999]` costs no
/// time or memory). Never recurses: time and memory are linear in the input and the output.
Status ExpandHostlist(std::string_view expr, std::vector<std::string>* out,
                      size_t max_hosts = kMaxHostlistHosts);

/// The number of hosts `expr` names, with the same checks and errors as ExpandHostlist but no
/// name made: time is linear in the input alone, whatever the count. For callers that bound
/// the hosts of many lists together before expanding any (sar-filterd's jobs reply).
Status CountHostlist(std::string_view expr, size_t* count, size_t max_hosts = kMaxHostlistHosts);

}  // namespace sar
