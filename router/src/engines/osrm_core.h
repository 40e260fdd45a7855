// OSRM2 and OSRM3 (Yuan et al., "Oblivious routing in fat-tree based system area networks with
// uncertain traffic demands", Figs. 8 and 9): single-path routings with the optimal oblivious
// performance ratio on m-port 2- and 3-trees. A route depends on the source's group as well as
// the destination, which an LFT (forwarding by destination LID only) cannot express with one LID
// per port; here each destination port has one LID per source group (LMC) and every source
// sends to the LID of its own group (RoutingOutput::source_lid_offset). Shared by osrm2.cc and
// osrm3.cc; docs/engines.md gives the rules and the LID budget.
#pragma once

#include "engines/switch_graph.h"
#include "sar/engines/engine.h"

namespace sar::internal {

/// levels = 2 (OSRM2) or 3 (OSRM3). Failed when the fabric is not an intact tree of that height
/// with the regular cabling the rule needs, or when the endpoints' LMC is below what the source
/// groups need (naming the LMC to assign).
Status RouteOsrm(const RoutingInput& in, int levels, RoutingOutput* out);

}  // namespace sar::internal
