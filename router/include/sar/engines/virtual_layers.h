// Deadlock freedom by virtual layers (DFSSSP paper, Domke et al.): give every endpoint-to-
// endpoint route a layer so that each layer's channel dependency graph is acyclic, using at
// most `max_layers` layers. Works from the tables alone, so any engine's routes can be layered.
#pragma once

#include "sar/model/fabric.h"
#include "sar/model/lft.h"
#include "sar/status.h"

namespace sar {

struct LayerOptions {
  int max_layers = 8;  // 1..15: the virtual lanes the fabric offers
  int threads = 0;     // 0 = all hardware threads
  /// After acyclicity is reached, spread routes over the unused layers (as OpenSM's dfsssp
  /// does) to balance VL buffers. Never creates a cycle.
  bool balance = true;
  /// Switch port-0 LIDs are sources and destinations too (routes from a switch start at it), as
  /// OpenSM's dfsssp layers them; false: endpoint pairs only.
  bool switch_lids = true;
  /// Skip the cycle-by-cycle first try and layer by route shape at once (LayerStats::
  /// up_down_first): up*/down* routes in layer 0, down*/up* ones in layer 1, routes with both
  /// turns where their dependencies stay acyclic, cycles broken among the rest.
  bool split_first = false;
};

struct LayerStats {
  int layers_needed = 0;  // layers holding routes before balancing
  int layers_used = 0;    // after balancing
  uint64_t routes = 0;    // routes (source switch, destination LID) considered
  uint64_t cycles_broken = 0;
  /// Breaking cycles one at a time needed more than max_layers, so up*/down* routes were kept in
  /// layer 0, down*/up* ones in layer 1 and those with both turns where their dependencies stay
  /// acyclic (docs/dfsssp-sar.md); cycles_broken counts that second try.
  bool up_down_first = false;
};

/// Fills *out with a layer for every (source LID, destination LID) of terminal pairs (endpoints
/// and, with opts.switch_lids, switch LIDs) whose route crosses at least one switch-to-switch
/// channel (other routes keep default_layer 0). Fails with
/// Status::Failed naming the layer count when max_layers are not enough; the tables must route
/// every pair without loops (trace them first).
Status AssignVirtualLayers(const Fabric& fabric, const LftSet& lfts, const LayerOptions& opts,
                           VirtualLayers* out, LayerStats* stats = nullptr);

}  // namespace sar
