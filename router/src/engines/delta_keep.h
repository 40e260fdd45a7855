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
//
// The stability rule (RunningPins, issue 18 goal 4): when the previous job set is known, a job
// running across the reroute (same endpoints before and after) keeps its own routes: every entry
// on a path between two of its members in the previous tables is pinned, and a pinned entry goes
// back first, within looser caps (DeltaKeepOptions: the caller's quality bound), and without its
// own job's max EFI as a limit (its routes return to where they were). It still moves when the
// fabric changed under it (the previous port is gone or no longer one hop nearer) or when going
// back would overload a channel beyond those caps (it shares a bottleneck with a new job).
// Virtual layers are assigned after this stage, so deadlock freedom is decided on the final
// tables. Thread-safety: a pure function of its arguments.
#pragma once

#include <cstdint>
#include <vector>

#include "engines/switch_graph.h"
#include "sar/model/fabric.h"
#include "sar/model/jobs.h"
#include "sar/model/lft.h"

namespace sar::internal {

struct DeltaKeepStats {
  uint64_t differing = 0;  // entries of the full recompute that differ from the previous tables
  uint64_t kept = 0;       // of those, set back to the previous port
  uint64_t effective_efi_cap = 0, efi_cap = 0;  // the full recompute's maxima (the bounds kept)
  bool per_job = false;  // each job's own max EFI was kept too (false: too many jobs x channels)
  uint64_t pinned_kept = 0;  // of `kept`, pinned entries (running jobs' routes) set back
};

/// Which entries carry a running job's own routes in the previous tables.
struct RunningPins {
  int num_switches = 0;
  int num_endpoint_dests = 0;        // switch destinations (dests past these) are never pinned
  std::vector<uint8_t> pinned;       // [endpoint dest * num_switches + switch]; empty = none
  std::vector<uint8_t> job_running;  // per job of the current set: same endpoints as before
  int running_jobs = 0;              // multi-switch jobs running across the reroute
  uint64_t entries = 0;              // pinned entries
  bool at(int dest, int sw) const {
    return !pinned.empty() && dest < num_endpoint_dests &&
           pinned[static_cast<size_t>(dest) * num_switches + sw] != 0;
  }
};

/// A job of `jobs` runs across the reroute when some job of `previous_jobs` has exactly its
/// endpoints; pins the entries (switch, member base LID) on the previous paths between members
/// of each running multi-switch job. REQUIRES: previous.CheckFits(fabric) is OK.
RunningPins PinRunningJobs(const Fabric& fabric, const SwitchGraph& g,
                           const std::vector<ResolvedJob>* jobs,
                           const std::vector<ResolvedJob>& previous_jobs, const LftSet& previous);

/// Pinned entries of `lfts` that differ from `previous`: the running jobs' moved entries.
uint64_t CountMovedPins(const RunningPins& pins, const SwitchGraph& g, const LftSet& previous,
                        const LftSet& lfts);

struct DeltaKeepOptions {
  const RunningPins* pins = nullptr;  // null or empty: no stability rule
  /// Caps for pinned entries; the full recompute's maxima are used where these are lower.
  uint64_t pinned_effective_efi_cap = 0, pinned_efi_cap = 0;
  /// Entries decided before the engine (RoutingInput::fixed), laid out as RunningPins::pinned:
  /// never set back, whatever the previous tables hold. Null = none.
  const std::vector<uint8_t>* fixed = nullptr;
};

/// Max effective EFI and max EFI of `lfts` as metrics.h counts them (the stage's own counting).
struct DeltaLoads {
  uint64_t effective_efi_max = 0, efi_max = 0;
};
DeltaLoads MeasureLoads(const Fabric& fabric, const SwitchGraph& g,
                        const std::vector<ResolvedJob>* jobs, const LftSet& lfts);

/// Sets entries of *lfts (a full recompute on `fabric`, `g` its switch graph) back to `previous`
/// as the rules above allow. `jobs` may be null. REQUIRES: previous.CheckFits(fabric) is OK.
void KeepPreviousEntries(const Fabric& fabric, const SwitchGraph& g,
                         const std::vector<ResolvedJob>* jobs, const LftSet& previous, LftSet* lfts,
                         DeltaKeepStats* stats, const DeltaKeepOptions& options = {});

}  // namespace sar::internal
