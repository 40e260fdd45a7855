// One agreed node order for a fabric, whatever order it was described in.
//
// The engines break ties by node and port order, so two descriptions of one subnet (an
// ibnetdiscover file and OpenSM's own maps, say) give the same tables only if both are put in
// the same order first. This is that order: switches by node GUID, then HCAs by node GUID.
// The OpenSM plugin builds its fabric in it, and `sar-route --canonical-order` uses it so that
// offline tables can be compared with the plugin's entry for entry.
#pragma once

#include "sar/model/fabric.h"
#include "sar/status.h"

namespace sar {

/// A copy of `in` (names, descriptions, port GUIDs, LIDs, cables) with nodes renumbered into
/// canonical order. Fails only if `in` is inconsistent (duplicate GUIDs or LIDs).
Status CanonicalNodeOrder(const Fabric& in, Fabric* out);

}  // namespace sar
