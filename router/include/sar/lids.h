// Deterministic LID assignment, writable as OpenSM's guid2lid so OpenSM uses the same LIDs.
#pragma once

#include "sar/fabric.h"
#include "sar/status.h"

namespace sar {

struct LidOptions {
  int lmc = 0;  // HCA ports get 2^lmc LIDs, aligned; switches get one LID (OpenSM's default,
                // lmc_esp0 FALSE) unless lmc_switches is set
  bool lmc_switches = false;
};

/// Clears and assigns LIDs: HCA ports in node order first (from LID 1 upward, aligned to 2^lmc),
/// then switches. Cabled HCA ports and all switches get LIDs; unconnected HCA ports do not.
Status AssignLids(const LidOptions& options, Fabric* fabric);

}  // namespace sar
