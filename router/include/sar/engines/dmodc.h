// Dmodc with memory between passes (issue 16): after a full pass, a fabric that differs only in
// switch-to-switch cables (some failed, some restored) is rerouted by recomputing only the costs,
// dividers and table rows those cables can change (docs/engines.md, "Incremental reroute").
//
// The tables always equal what MakeRoutingEngine("dmodc") routes on the same input, entry for
// entry (dmodc_state_test.cc checks this over random sequences of failures and repairs).
// Thread-safety: a plain object; one caller at a time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sar/engines/engine.h"
#include "sar/model/lft.h"
#include "sar/status.h"

namespace sar {

class DmodcRouter {
 public:
  /// What the last Route/Reroute did.
  struct Stats {
    bool incremental = false;     // false: a full pass (first call or a change it cannot follow)
    std::string full_reason;      // why a full pass, when it was one
    int cables_changed = 0;       // switches whose switch-to-switch cables changed
    int switches_recomputed = 0;  // rows of costs (Procedure 1) recomputed
    int rows_refilled = 0;        // switch tables refilled entirely
    int cells_refilled = 0;       // (switch, leaf) pairs refilled in the other tables
    double ms = 0;                // wall time of the call
    double graph_ms = 0;
    // Phase ends, ms from the call's start: switch graph read, Procedure 1 done, fill inputs
    // prepared, rows and cells refilled; the rest (ms) is the whole-fabric passes.
    double plan_ms = 0, prepare_ms = 0, refill_ms = 0;
  };

  DmodcRouter();
  ~DmodcRouter();
  DmodcRouter(DmodcRouter&&) noexcept;
  DmodcRouter& operator=(DmodcRouter&&) noexcept;

  /// A full dmodc pass: RoutingEngine::Route's input checks, then the engine. On error the
  /// previous tables and state are kept.
  Status Route(const RoutingInput& in);
  /// The same tables as Route(in). When the last pass routed a fabric with the same switches,
  /// HCA ports, LIDs and LMC as `in.fabric` (only switch-to-switch cables differ), and no
  /// switch changes its rank (distance to the nearest leaf) and every leaf pair keeps an
  /// up-down path, only what the changed cables can reach is recomputed; otherwise (and on the
  /// first call) it is a full pass. in.jobs and in.roots are ignored, as dmodc does.
  Status Reroute(const RoutingInput& in);

  /// The tables of the last successful pass (empty before the first).
  const LftSet& lfts() const;
  /// Notes of the last full pass (unreachable pairs with allow_disconnected, phase times).
  const std::vector<std::string>& notes() const;
  const Stats& last() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace sar
