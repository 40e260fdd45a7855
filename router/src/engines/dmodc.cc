// Dmodc (Gliksberg et al., IEEE Micro 2020): closed-form routing for degraded parallel
// generalised fat-trees. Costs and dividers from local information (Procedure 1), then every
// switch picks, for each destination node d, the port group C[floor(d / Pi) mod #C] among the
// neighbours closer to d's leaf and the port floor(d / (Pi * #C)) mod #g inside it (Eqs. 1-4).
// Routes are up*-down* by rank, so one layer is deadlock-free. dmodc_core.h has the shared
// work; docs/engines.md the choices where the paper is ambiguous.
#include <chrono>
#include <cstdio>
#include <string>

#include "engines/dmodc_core.h"
#include "engines/engines.h"

namespace sar::internal {
namespace {

class DmodcEngine : public RoutingEngine {
 public:
  std::string_view name() const override { return "dmodc"; }

 protected:
  Status DoRoute(const RoutingInput& in, RoutingOutput* out) const override {
    using Clock = std::chrono::steady_clock;
    const auto ms = [](Clock::time_point a, Clock::time_point b) {
      return std::chrono::duration<double, std::milli>(b - a).count();
    };
    const Fabric& f = *in.fabric;
    const auto t0 = Clock::now();
    const SwitchGraph g = BuildSwitchGraph(f);
    DmodcPlan plan;
    SAR_RETURN_IF_ERROR(BuildDmodcPlan(g, in.threads, &plan));
    const auto t1 = Clock::now();
    SAR_RETURN_IF_ERROR(CheckDmodcValidity(f, g, plan, in.allow_disconnected, &out->notes));
    const auto t2 = Clock::now();
    out->lfts = LftSet(f);
    FillDmodcTables(g, plan, DmodcNodeIndex(g, plan), plan.divider, in.threads, &out->lfts);
    const auto t3 = Clock::now();
    char note[160];
    std::snprintf(note, sizeof note,
                  "dmodc: %d leaves, %d switch levels; costs+dividers %.1f ms, validity %.1f ms, "
                  "tables %.1f ms",
                  plan.num_leaves, plan.max_rank + 1, ms(t0, t1), ms(t1, t2), ms(t2, t3));
    out->notes.push_back(note);
    return Status::OK();
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> NewDmodcEngine() { return std::make_unique<DmodcEngine>(); }

}  // namespace sar::internal
