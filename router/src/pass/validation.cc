// The validation stage: the one definition of valid tables (ValidateRouting,
// sar/pass/routing_pass.h).
//
// The switch-LID rule (RoutingOptions::switch_lids):
// Deadlock freedom as OpenSM's dfsssp promises it: switch port-0 LIDs (and so management
// and SHARP traffic to switches) are sources and destinations in the channel dependency
// check and in the layered engines' layers. An engine without layers whose one layer is then
// cyclic gets layers from its tables (noted) when more than one lane is usable. The one-lane
// rule: with one usable lane (max_layers 1, num_vls 1) the switch-LID routes cannot have a
// lane of their own, so the engines layer and ValidateRouting checks CA pairs only
// (ValidationReport::deadlock.switch_lids says which check ran). Migration mode keeps the check
// between CAs (its layer discipline has no place for switch-LID routes yet). False: routes
// between CAs only everywhere (the check before issue 33; `--hca-pairs-only`, for comparison).
#include <algorithm>
#include <string>

#include "pass/stages.h"
#include "sar/env.h"

namespace sar {
namespace {

std::string Channel(const Fabric& f, PortId c) {
  const PortRef p = f.port_ref(c);
  return f.name(p.node) + "/" + std::to_string(p.port);
}

}  // namespace

ValidationOptions ValidationFor(const RoutingOptions& options) {
  ValidationOptions v;
  v.num_vls = options.num_vls;
  v.max_layers = options.max_layers;
  v.allow_disconnected = options.allow_disconnected;
  v.migration = options.migration;
  v.switch_lids = options.switch_lids;
  v.threads = options.threads;
  return v;
}

Status ValidateRouting(const Fabric& fabric, const LftSet& lfts, const VirtualLayers* layers,
                       int num_layers, const ValidationOptions& options,
                       const AnalysisOptions& also, AnalysisResult* analysis,
                       ValidationReport* report) {
  ValidationReport& r = *report;
  r = ValidationReport();
  r.layers = std::max(num_layers, 1);
  SAR_RETURN_IF_ERROR(lfts.CheckFits(fabric));

  // One sweep traces every route and builds the layers' dependency graphs. The dependency
  // check is then judged only if the routes are delivered and fit the lanes, as if it ran after.
  const Stopwatch t0;
  const int usable = pass::UsableLanes(options.num_vls, options.max_layers);
  AnalysisOptions ao = also;
  ao.what |= kAnalyseTrace | (options.layers_known ? kAnalyseDeadlock : 0u);
  ao.trace.check_min_hop = options.check_min_hop;
  ao.layers = layers;
  // The one-lane rule: a consumer that carries one lane (OpenSM's file engine, sar-filterd's
  // file mode) cannot give the routes from and to switch LIDs a lane of their own (on a
  // fat-tree, spine-to-spine routes go down and up), so there the routes between CAs must be
  // deadlock-free. Migration mode keeps the check between CAs too: its layer discipline
  // (highLIDs alone in the last layer) has no place for switch-LID routes yet.
  ao.deadlock_switch_lids = options.switch_lids && !options.migration && usable > 1;
  ao.threads = options.threads;
  SAR_RETURN_IF_ERROR(AnalyseRouting(fabric, lfts, ao, analysis));
  r.check_ms = t0.ElapsedMs();
  r.trace = analysis->trace;
  const TraceReport& trace = r.trace;
  if (trace.loops > 0 || (!options.allow_disconnected && trace.unreachable > 0)) {
    return Status::Failed("invalid routing: " + std::to_string(trace.unreachable) +
                          " unreachable pairs, " + std::to_string(trace.loops) + " loops; first: " +
                          (trace.examples.empty() ? "?" : trace.examples.front()));
  }

  if (r.layers > usable) {
    return Status::Failed("invalid routing: the routes need " + std::to_string(r.layers) +
                          " virtual layers, " + std::to_string(usable) + " usable");
  }
  if (!options.layers_known) return Status::OK();
  if (options.migration)
    SAR_RETURN_IF_ERROR(pass::CheckMigrationLayers(fabric, layers, usable - 1));

  r.deadlock = analysis->deadlock;
  r.deadlock_checked = true;
  const DeadlockReport& dl = r.deadlock;
  if (!dl.deadlock_free) {
    std::string cycle;
    for (PortId c : dl.cycle) cycle += (cycle.empty() ? "" : " -> ") + Channel(fabric, c);
    if (!dl.cycle.empty()) cycle += " -> " + Channel(fabric, dl.cycle.front());
    return Status::Failed("invalid routing: virtual layer " + std::to_string(dl.cyclic_layer) +
                          " has a cyclic channel dependency: " + cycle);
  }
  return Status::OK();
}

Status ValidateRouting(const Fabric& fabric, const LftSet& lfts, const VirtualLayers* layers,
                       int num_layers, const ValidationOptions& options, ValidationReport* report) {
  AnalysisResult analysis;
  return ValidateRouting(fabric, lfts, layers, num_layers, options, AnalysisOptions(), &analysis,
                         report);
}

}  // namespace sar
