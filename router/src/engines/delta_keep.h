// The delta-minimising stage of the SSSP engines (sar, dfsssp): given the tables the switches
// hold now (RoutingInput::previous), it takes back into the freshly computed tables every
// previous entry that can stay without making the routing worse, so a reroute changes few LFT
// entries (and blocks) and running jobs keep their paths.
//
// Rules, per (switch, destination LID) entry that differs from the previous table:
//  - the previous port must lead to a neighbour switch one hop nearer the destination's switch
//    (so every route stays min-hop, hence delivered and loop-free whatever the other entries
//    are); the destination's own switch is never changed;
//  - moving the routes through that switch (its subtree of the destination's tree) back onto the
//    previous path must not raise any channel's effective EFI above the full recompute's max
//    effective EFI, any channel's all-pairs EFI above the full recompute's max EFI, nor (unless
//    jobs x channels exceed 2^24 counters) any job's own load on a channel above that job's max
//    EFI in the full recompute (all as metrics.h defines them). So no maximum ever rises, not
//    even a single job's: "equal quality" by construction.
// Destinations are visited switch by switch, nearest switches of each tree first; two sweeps, as
// a revert refused in the first may fit once other routes moved back.
// Virtual layers are assigned after this stage, so deadlock freedom is decided on the final
// tables. Thread-safety: a pure function of its arguments.
#pragma once

#include <cstdint>
#include <vector>

#include "engines/switch_graph.h"
#include "sar/fabric.h"
#include "sar/jobs.h"
#include "sar/lft.h"

namespace sar::internal {

struct DeltaKeepStats {
  uint64_t differing = 0;  // entries of the full recompute that differ from the previous tables
  uint64_t kept = 0;       // of those, set back to the previous port
  uint64_t effective_efi_cap = 0, efi_cap = 0;  // the full recompute's maxima (the bounds kept)
  bool per_job = false;  // each job's own max EFI was kept too (false: too many jobs x channels)
};

/// Sets entries of *lfts (a full recompute on `fabric`, `g` its switch graph) back to `previous`
/// as the rules above allow. `jobs` may be null. REQUIRES: previous.CheckFits(fabric) is OK.
void KeepPreviousEntries(const Fabric& fabric, const SwitchGraph& g,
                         const std::vector<ResolvedJob>* jobs, const LftSet& previous, LftSet* lfts,
                         DeltaKeepStats* stats);

}  // namespace sar::internal
