// Deterministic LID assignment, writable as OpenSM's guid2lid so OpenSM uses the same LIDs.
#pragma once

#include "sar/model/fabric.h"
#include "sar/status.h"

namespace sar {

struct LidOptions {
  /// HCA ports get 2^lmc LIDs, base aligned to 2^lmc.
  int lmc = 0;
  /// false (OpenSM's default, lmc_esp0 FALSE): each switch gets one LID, packed after the HCAs
  /// and not aligned. true: switches also get 2^lmc aligned LIDs, which OpenSM keeps only with
  /// lmc_esp0 TRUE (ibsim's switches have enhanced port 0); with lmc_esp0 FALSE OpenSM shrinks
  /// such a range to its base LID. Checked against OpenSM 3.3.23 + ibsim with a pre-seeded
  /// guid2lid: it keeps our LIDs unchanged in both cases.
  bool lmc_switches = false;
};

/// Clears and assigns LIDs: HCA ports in node order first (from LID 1 upward, aligned to 2^lmc),
/// then switches in switch order. Cabled HCA ports and all switches get LIDs; unconnected HCA
/// ports do not. Fails if the fabric needs LIDs beyond kMaxUnicastLid.
Status AssignLids(const LidOptions& options, Fabric* fabric);

/// The LID a source whose LID offset is `offset` (RoutingOutput::source_lid_offset: osrm2/osrm3
/// route per source group) sends to at `dest`: base + offset, or the base LID when the offset is
/// beyond dest's 2^LMC LIDs; 0 if dest has no LID. The one rule every analysis follows (the
/// destination sweep, the oblivious ratio, the study's flows).
inline Lid SourceLid(const Fabric& fabric, PortRef dest, int offset) {
  const Lid base = fabric.base_lid(dest);
  return base == 0 ? 0 : base + (offset < (1 << fabric.lmc(dest)) ? offset : 0);
}

}  // namespace sar
