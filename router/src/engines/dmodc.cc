// Dmodc (Gliksberg et al., IEEE Micro 2020): closed-form routing for degraded parallel
// generalised fat-trees. Costs and dividers from local information (Procedure 1), then every
// switch picks, for each destination node d, the port group C[floor(d / Pi) mod #C] among the
// neighbours closer to d's leaf and the port floor(d / (Pi * #C)) mod #g inside it (Eqs. 1-4).
// Routes are up*-down* by rank, so one layer is deadlock-free. dmodc_core.h has the shared
// work; docs/engines.md the choices where the paper is ambiguous.
#include <cstdio>
#include <numeric>
#include <string>

#include "engines/dmodc_core.h"
#include "engines/engines.h"
#include "sar/engines/engine.h"
#include "sar/env.h"

namespace sar::internal {

Status DmodcFullPass(const RoutingInput& in, DmodcRun* run, LftSet* lfts,
                     std::vector<std::string>* notes) {
  const Fabric& f = *in.fabric;
  const Stopwatch watch;
  run->g = BuildSwitchGraph(f);
  SAR_RETURN_IF_ERROR(BuildDmodcPlan(run->g, in.threads, &run->plan));
  const double plan_ms = watch.ElapsedMs();
  SAR_RETURN_IF_ERROR(CheckDmodcValidity(f, run->g, run->plan, in.allow_disconnected, notes));
  const double validity_ms = watch.ElapsedMs();
  *lfts = LftSet(f);
  run->index = DmodcNodeIndex(run->g, run->plan);
  PrepareDmodcFill(run->g, run->plan, run->index, run->plan.divider, in.threads, &run->fill);
  std::vector<int> rows(run->g.num_switches);
  std::iota(rows.begin(), rows.end(), 0);
  FillDmodcRows(run->plan, run->fill, run->plan.divider, rows, false, in.threads, lfts);
  FinishDmodcTables(run->g, run->plan, run->fill, in.threads, &run->override_rows, lfts);
  const double tables_ms = watch.ElapsedMs();
  char note[160];
  std::snprintf(note, sizeof note,
                "dmodc: %d leaves, %d switch levels; costs+dividers %.1f ms, validity %.1f ms, "
                "tables %.1f ms",
                run->plan.num_leaves, run->plan.max_rank + 1, plan_ms, validity_ms - plan_ms,
                tables_ms - validity_ms);
  notes->push_back(note);
  return Status::OK();
}

namespace {

class DmodcEngine : public RoutingEngine {
 public:
  std::string_view name() const override { return "dmodc"; }

 protected:
  Status DoRoute(const RoutingInput& in, RoutingOutput* out) const override {
    DmodcRun run;
    return DmodcFullPass(in, &run, &out->lfts, &out->notes);
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> NewDmodcEngine() { return std::make_unique<DmodcEngine>(); }

}  // namespace sar::internal
