// The layer guard (RoutingOptions::switch_lids): an engine without layers of its own (minhop,
// updn, dmodc, ...) whose one layer is cyclic only through the routes from and to switch LIDs
// (dmodc's may go down and then up) gets virtual layers from its tables, as dfsssp's do, if the
// consumer carries more than one lane. A cycle between CAs stays the engine's failure, and
// migration mode keeps its own layer discipline.
#include <algorithm>
#include <string>
#include <utility>

#include "pass/stages.h"
#include "sar/analysis/analysis.h"
#include "sar/engines/virtual_layers.h"

namespace sar::pass {

bool LayerSwitchLidCycles(const RoutingInputs& inputs, const ValidationReport& report,
                          RoutingOutput* out, Status* failed) {
  const int usable = UsableLanes(inputs.options.num_vls, inputs.options.max_layers);
  if (!report.deadlock_checked || report.deadlock.deadlock_free || !report.deadlock.switch_lids ||
      out->layers.size() != 0 || usable <= 1 || inputs.options.migration) {
    return false;
  }
  DeadlockReport between_cas;
  if (!CheckDeadlock(*inputs.fabric, out->lfts, nullptr, &between_cas, /*switch_lids=*/false)
           .ok() ||
      !between_cas.deadlock_free) {
    return false;
  }
  LayerOptions lo;
  lo.max_layers = usable;
  lo.threads = inputs.options.threads;
  lo.balance = false;  // only the layers deadlock freedom needs
  lo.switch_lids = inputs.options.switch_lids;
  VirtualLayers layers;
  LayerStats stats;
  const Status ls = AssignVirtualLayers(*inputs.fabric, out->lfts, lo, &layers, &stats);
  if (!ls.ok()) {
    *failed = Status::Failed(failed->message() + "; virtual layers cannot fix it: " + ls.message());
    return false;
  }
  out->notes.push_back("virtual layers: the engine's tables have a cyclic channel dependency (" +
                       failed->message() + "); " + std::to_string(stats.layers_needed) +
                       " layers make them deadlock-free" +
                       (stats.up_down_first ? " (up*/down* routes kept in layer 0)" : ""));
  out->layers = std::move(layers);
  out->num_layers = std::max(1, stats.layers_used);
  return true;
}

}  // namespace sar::pass
