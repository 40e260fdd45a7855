// Deadlock check: the channel dependency graph (CDG) of each virtual layer must be acyclic
// (Dally & Seitz). A dependency c1 -> c2 exists in layer L if some route of layer L crosses
// switch-to-switch channel c1 and then c2. Routes are read from the LFTs.
#pragma once

#include <vector>

#include "sar/model/fabric.h"
#include "sar/model/lft.h"
#include "sar/status.h"

namespace sar {

struct DeadlockReport {
  bool deadlock_free = true;
  int layers = 1;
  int cyclic_layer = -1;      // first layer with a cycle
  std::vector<PortId> cycle;  // its channels, in order (cycle.front() follows cycle.back())
  uint64_t dependencies = 0;  // edges in all CDGs
  bool switch_lids = true;    // switch port-0 LIDs were sources and destinations
};

/// The channel dependency graphs of a check, one per layer, kept for a later incremental check
/// (AnalysisOptions::dependency_base). Numbered by switch port, so a graph stays meaningful when
/// cables change: per switch index s in order, its ports 1..num_ports, `words` bitmap words
/// each (bit p - 1: the dependency on port p of the switch the channel enters).
struct DependencyGraphs {
  int words = 0;
  std::vector<std::vector<uint64_t>> layers;
};

}  // namespace sar
