// The engine stage: the engine's tables for the pass, from the engine itself or one of its two
// wrappers (migration.cc, dmodc_memory.cc), with the alltoall jobs' fixed entries where the
// engine takes them (fors_overlay.cc).
#include <algorithm>
#include <vector>

#include "pass/stages.h"
#include "sar/analysis/flows.h"

namespace sar::pass {

int UsableLanes(int num_vls, int max_layers) {
  return max_layers > 0 ? std::min(num_vls, max_layers) : num_vls;
}

Status RouteTables(const RoutingInputs& inputs, const RoutingEngine& engine,
                   const AlltoallPlans* alltoall, RoutingOutput* out) {
  const bool dmodc_memory = inputs.memory != nullptr && engine.name() == "dmodc";
  if (inputs.options.migration) {
    SAR_RETURN_IF_ERROR(RouteMigration(inputs, engine, out));
    if (dmodc_memory) out->notes.push_back("full pass (migration mode: the memory is not used)");
    return Status::OK();
  }
  if (dmodc_memory) return RouteDmodcWithMemory(inputs, inputs.memory, out);
  RoutingInput in = inputs.EngineInput();
  std::vector<FlowJob> fixed_jobs;
  if (alltoall != nullptr && !alltoall->entries.empty()) {
    in.fixed = &alltoall->entries;
    for (const ForsJobPlan& plan : alltoall->plans) fixed_jobs.push_back(ForsFlowJob(plan));
    in.fixed_jobs = &fixed_jobs;
  }
  return engine.Route(in, out);
}

}  // namespace sar::pass
