// The routing pass: the stages of stages.h in order, one RoutingRequest in, one RoutingResult
// out. The only place that decides what happens when a stage fails: FORS never fails a pass
// (its entries are withdrawn, noted), the layer guard may rescue a switch-LID-only cycle, every
// other failure is the pass's.
#include <memory>
#include <string>
#include <utility>

#include "pass/stages.h"
#include "sar/env.h"
#include "sar/io/job_file.h"

namespace sar {
namespace {

// Resolves the request's inputs: the inputs stage plus what the caller holds in memory.
Status SettleRequest(const RoutingRequest& request, RoutingInputs* in) {
  if (request.fabric == nullptr) return Status::InvalidArgument("routing pass: no fabric");
  const Fabric& f = *request.fabric;
  SAR_RETURN_IF_ERROR(request.mapping ? LoadRoutingInputs(f, request.options, *request.mapping, in)
                                      : LoadRoutingInputs(f, request.options, in));
  in->memory = request.memory;
  in->previous = request.previous;
  if (request.previous_mapping) {
    in->previous_jobs =
        ResolveJobs(f, *request.previous_mapping, nullptr, request.options.job_hca_pairs);
  }
  return Status::OK();
}

}  // namespace

std::vector<std::string> RoutingResult::Notes() const {
  std::vector<std::string> all = inputs.notes;
  all.insert(all.end(), output.notes.begin(), output.notes.end());
  return all;
}

Status RunRoutingPass(const RoutingRequest& request, RoutingResult* result) {
  *result = RoutingResult();
  const Stopwatch t0;
  SAR_RETURN_IF_ERROR(SettleRequest(request, &result->inputs));
  result->inputs_ms = t0.ElapsedMs();
  AnalysisOptions also = request.also;
  if (also.jobs == nullptr) also.jobs = &result->inputs.jobs;
  // The stages below leave result->inputs alone, so they may read it in place.
  return RunRoutingPass(result->inputs, request.engine, also, result);
}

Status RunRoutingPass(const RoutingInputs& inputs, const RoutingEngine* given,
                      const AnalysisOptions& also, RoutingResult* result) {
  RoutingOutput* out = &result->output;
  ValidationReport* report = &result->report;
  *out = RoutingOutput();
  *report = ValidationReport();
  result->fors.clear();
  result->fors_none.clear();
  result->validated = false;
  std::unique_ptr<RoutingEngine> made;
  if (given == nullptr) {
    made = MakeRoutingEngine(inputs.engine);
    if (made == nullptr) return Status::InvalidArgument("unknown engine '" + inputs.engine + "'");
  }
  const RoutingEngine& engine = given != nullptr ? *given : *made;

  pass::AlltoallPlans alltoall;
  std::vector<std::string> plan_notes;
  std::vector<ForsJobNone>& none = result->fors_none;
  pass::PlanAlltoallJobs(inputs, &alltoall, &plan_notes, &none);
  // FORS given up for every planned job (routing or validation failed with its entries).
  auto withdraw = [&](const std::string& why) {
    out->notes.push_back(why);
    for (const ForsJobPlan& plan : alltoall.plans) {
      none.push_back({plan.job_id, why, plan.hosts.size()});
    }
    alltoall.plans.clear();
  };
  if (const Status r = pass::RouteTables(inputs, engine, &alltoall, out); !r.ok()) {
    if (alltoall.plans.empty()) return r;
    // Never fail a reroute for FORS: route without the alltoall entries.
    SAR_RETURN_IF_ERROR(pass::RouteTables(inputs, engine, nullptr, out));
    withdraw("FORS entries withdrawn, routing with them failed: " + r.message());
  }
  pass::JudgeAlltoallJobs(inputs, engine, &alltoall, out, &plan_notes, &none);
  out->notes.insert(out->notes.end(), plan_notes.begin(), plan_notes.end());
  // The engine's tables before the check writes any entry over them (migration mode), kept
  // only while FORS entries may have to be taken back.
  LftSet engine_tables;
  if (!alltoall.plans.empty() && inputs.options.migration) engine_tables = out->lfts;
  pass::CheckAlltoallJobs(inputs, alltoall, out);
  // The analyses follow the LID each source uses (osrm2/osrm3: its group's).
  AnalysisOptions with = also;
  const LftSet no_tables;
  auto validate = [&] {
    result->validated = true;
    with.source_lid_offset =
        out->source_lid_offset.empty() ? also.source_lid_offset : &out->source_lid_offset;
    const VirtualLayers* layers = out->layers.size() > 0 ? &out->layers : nullptr;
    if (inputs.memory != nullptr) {
      // The delta validation (a full check where it cannot be one): a delta pass's previous
      // tables are what the switches hold, the baseline's if they were the last valid ones.
      return ValidateRouting(*inputs.fabric, inputs.options.delta ? inputs.previous : no_tables,
                             out->lfts, layers, out->num_layers, ValidationFor(inputs.options),
                             with, &result->analysis, &inputs.memory->validation, report);
    }
    return ValidateRouting(*inputs.fabric, out->lfts, layers, out->num_layers,
                           ValidationFor(inputs.options), with, &result->analysis, report);
  };
  Status s = validate();
  if (!s.ok() && !alltoall.plans.empty()) {
    // Never fail a reroute for FORS: the engine's tables without the alltoall entries are what
    // the pass would have given.
    const std::string why = s.message();
    result->validated = false;
    if (inputs.options.migration) {
      out->lfts = std::move(engine_tables);
    } else {
      SAR_RETURN_IF_ERROR(pass::RouteTables(inputs, engine, nullptr, out));
    }
    withdraw("FORS entries withdrawn, the tables with them are invalid: " + why);
    s = validate();
  }
  if (!s.ok() && pass::LayerSwitchLidCycles(inputs, *report, out, &s)) s = validate();
  result->route_ms = out->paths_ms + out->layers_ms;
  result->fors = std::move(alltoall.plans);
  return s;
}

// The compatibility form (tests): the same pass, its result spread over the old outputs.
Status RunRoutingPass(const RoutingInputs& inputs, const RoutingEngine& engine, RoutingOutput* out,
                      ValidationReport* report, const AnalysisOptions& also,
                      AnalysisResult* analysis, std::vector<ForsJobPlan>* fors,
                      std::vector<ForsJobNone>* fors_none) {
  RoutingResult r;
  const Status s = RunRoutingPass(inputs, &engine, also, &r);
  *out = std::move(r.output);
  *report = std::move(r.report);
  if (analysis != nullptr) *analysis = std::move(r.analysis);
  if (fors != nullptr) *fors = std::move(r.fors);
  if (fors_none != nullptr) *fors_none = std::move(r.fors_none);
  return s;
}

Status RunRoutingPass(const RoutingInputs& inputs, RoutingOutput* out, ValidationReport* report,
                      const AnalysisOptions& also, AnalysisResult* analysis,
                      std::vector<ForsJobPlan>* fors, std::vector<ForsJobNone>* fors_none) {
  const std::unique_ptr<RoutingEngine> engine = MakeRoutingEngine(inputs.engine);
  if (engine == nullptr) return Status::InvalidArgument("unknown engine '" + inputs.engine + "'");
  return RunRoutingPass(inputs, *engine, out, report, also, analysis, fors, fors_none);
}

}  // namespace sar
