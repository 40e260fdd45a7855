// The routing pass's stages (sar/pass/routing_pass.h), one file each, in the order pass.cc runs
// them:
//
//   inputs.cc        fabric + options -> RoutingInputs (jobs, classes, roots, the empty-mapping
//                    rule); the engine's RoutingInput
//   delta.cc         what the engines' minimal-delta keep and stability rule get (previous
//                    tables and jobs)
//   fors_overlay.cc  alltoall jobs first: per-job FORS plans, their fixed entries, and their
//                    check on the final tables
//   engine.cc        the engine's tables: the engine itself, or one of its two wrappers:
//   migration.cc       migration mode (base LIDs by the engine, highLIDs by updn)
//   dmodc_memory.cc    dmodc rerouting incrementally from a RoutingMemory
//   validation.cc    the one definition of valid tables (ValidateRouting)
//   layer_guard.cc   an engine without layers that is cyclic only through switch-LID routes
//                    gets virtual layers from its tables
//
// Internal to libsar: callers use sar/pass/routing_pass.h.
#pragma once

#include <string>
#include <vector>

#include "sar/engines/engine.h"
#include "sar/fors/fors_job.h"
#include "sar/pass/routing_pass.h"

namespace sar::pass {

/// min(num_vls, max_layers), max_layers 0 = num_vls: the lanes the tables' consumer carries.
int UsableLanes(int num_vls, int max_layers);

// delta.cc: sets in->previous and in->previous_jobs from the inputs (options.delta).
void SetDeltaInputs(const RoutingInputs& inputs, RoutingInput* in);

// fors_overlay.cc
struct AlltoallPlans {
  Ft2Topology topo;
  std::vector<ForsJobPlan> plans;
  std::vector<FixedEntry> entries;
};
/// Plans every alltoall job that can have FORS; every other alltoall job goes to *none with
/// the reason; facts to *notes.
void PlanAlltoallJobs(const RoutingInputs& in, AlltoallPlans* out, std::vector<std::string>* notes,
                      std::vector<ForsJobNone>* none);
/// Writes the plans' entries over `out` where the engine did not route them (noted) and notes
/// each plan with its check on the final tables.
void CheckAlltoallJobs(const RoutingInputs& in, const AlltoallPlans& a, RoutingOutput* out);
/// RoutingOptions::fors_only_where_faster: each plan judged against the same pass routed
/// without FORS entries (the per-job flow model); slower plans go to *none with the figures
/// and *out is routed again with the plans kept. Any failure keeps what *out holds.
void JudgeAlltoallJobs(const RoutingInputs& in, const RoutingEngine& engine, AlltoallPlans* a,
                       RoutingOutput* out, std::vector<std::string>* notes,
                       std::vector<ForsJobNone>* none);

// engine.cc: migration mode, dmodc with memory, or the engine itself, with the alltoall plans'
// entries (RoutingInput::fixed) and their jobs in their phases (RoutingInput::fixed_jobs) where
// the engine takes them; null = none.
Status RouteTables(const RoutingInputs& inputs, const RoutingEngine& engine,
                   const AlltoallPlans* alltoall, RoutingOutput* out);

// migration.cc
Status RouteMigration(const RoutingInputs& inputs, const RoutingEngine& engine, RoutingOutput* out);
/// The migration layer discipline (ValidationOptions::migration), `last` the highLID layer.
Status CheckMigrationLayers(const Fabric& f, const VirtualLayers* layers, int last);

// dmodc_memory.cc
Status RouteDmodcWithMemory(const RoutingInputs& inputs, RoutingMemory* memory, RoutingOutput* out);

// layer_guard.cc: after validation failed with `failed`; true when the guard applies and gave
// `out` layers (noted), so the caller validates again. *failed gets the combined message when
// the guard applies but cannot layer the tables.
bool LayerSwitchLidCycles(const RoutingInputs& inputs, const ValidationReport& report,
                          RoutingOutput* out, Status* failed);

}  // namespace sar::pass
