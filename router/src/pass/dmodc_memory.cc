// The dmodc memory as an engine wrapper (RoutingInputs::memory): a caller that routes one
// fabric again and again (the OpenSM plugin) gives the pass a RoutingMemory, and with engine
// "dmodc" outside migration mode the pass routes through its DmodcRouter (sar/engines/dmodc.h),
// whose Reroute gives the engine's tables entry for entry, recomputing only what changed
// switch-to-switch cables reach; the notes say "incremental reroute: <what was recomputed>" or
// "full pass (<why>)". Validation is the same as always.
#include <algorithm>
#include <cstdio>
#include <utility>

#include "pass/stages.h"
#include "sar/env.h"

namespace sar::pass {

// Engine dmodc with memory: DmodcRouter::Reroute runs the engine's input checks and either its
// full pass or the incremental one proven equal to it, so the tables are the engine's. Its
// state is changed in place, so an exception half-way (out of memory) empties it: a later pass
// must never diff against half-updated tables.
Status RouteDmodcWithMemory(const RoutingInputs& inputs, RoutingMemory* memory,
                            RoutingOutput* out) {
  const Stopwatch t0;
  if (!memory->dmodc) memory->dmodc.emplace();
  DmodcRouter& router = *memory->dmodc;
  try {
    SAR_RETURN_IF_ERROR(router.Reroute(inputs.EngineInput()));
  } catch (...) {
    memory->dmodc.reset();  // cannot throw, unlike making a fresh router here
    throw;
  }
  // The router keeps its own tables for the next pass, so the output gets a copy, made through
  // the sizing constructor: it asks for transparent huge pages, which the default copy would
  // not, and validation reads the tables by destination (a TLB miss per row with 4 KiB pages).
  const LftSet& kept = router.lfts();
  RoutingOutput r;
  r.lfts = LftSet(kept.num_switches(), kept.max_lid());
  for (int s = 0; s < kept.num_switches(); ++s) {
    std::copy(kept.row(s), kept.row(s) + kept.max_lid() + 1, r.lfts.mutable_row(s));
  }
  r.notes = router.notes();
  const DmodcRouter::Stats& st = router.last();
  char note[256];
  if (st.incremental) {
    std::snprintf(note, sizeof note,
                  "incremental reroute: %d switches recabled, %d cost rows recomputed, %d whole "
                  "rows and %d (switch, leaf) cells refilled, %.1f ms",
                  st.cables_changed, st.switches_recomputed, st.rows_refilled, st.cells_refilled,
                  st.ms);
  } else {
    std::snprintf(note, sizeof note, "full pass (%s), kept for incremental reroutes",
                  st.full_reason.c_str());
  }
  r.notes.push_back(note);
  r.paths_ms = t0.ElapsedMs();
  *out = std::move(r);
  return Status::OK();
}

}  // namespace sar::pass
