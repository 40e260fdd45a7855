// The delta/stability stage: with previous tables (RoutingInputs::previous, the tables the
// switches hold now) and options.delta, the sar and dfsssp engines keep every previous entry
// that costs no quality (engines/delta_keep.h); with the job set those tables were computed for
// (RoutingInputs::previous_jobs) they also keep the routes of the jobs still running (the
// stability rule). False options.delta: a full recompute even when previous tables are given.
#include "pass/stages.h"

namespace sar::pass {

void SetDeltaInputs(const RoutingInputs& inputs, RoutingInput* in) {
  in->previous =
      inputs.options.delta && inputs.previous.num_switches() > 0 ? &inputs.previous : nullptr;
  in->previous_jobs =
      in->previous != nullptr && inputs.previous_jobs ? &*inputs.previous_jobs : nullptr;
}

}  // namespace sar::pass
