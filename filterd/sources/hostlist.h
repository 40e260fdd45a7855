// SLURM host lists: the expander lives in libsar (sar/io/hostlist.h), which sar-route's trace
// replay reads too; the daemon's code names it as before.
#pragma once

#include "sar/io/hostlist.h"

namespace sar::filterd {

using sar::CountHostlist;
using sar::ExpandHostlist;
using sar::kMaxHostlistHosts;

}  // namespace sar::filterd
