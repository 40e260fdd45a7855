// Synthetic traffic patterns and the link load they put on a routing (Yuan et al. Sec. 5).
//
// A pattern is a set of flows between HCA endpoints (to base LIDs, or the LID each source sends
// to with AnalysisOptions::source_lid_offset); the load of a channel is the
// number of flows whose route crosses it. Computed per destination over the in-tree the LFTs
// define, like the EFI (sar/analysis/metrics.h), in parallel.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/model/lft.h"
#include "sar/status.h"

namespace sar {

enum class TrafficPattern {
  kAllToAll,           // every endpoint to every other
  kShift,              // endpoint i to i+shift (mod n), endpoints in Fabric::Endpoints() order
  kRandomPermutation,  // a random derangement from the seed
  kClustered,          // Yuan Sec. 5: random groups of cluster_size, all-to-all inside each
};

struct TrafficSpec {
  TrafficPattern pattern = TrafficPattern::kAllToAll;
  int shift = 1;
  int cluster_size = 8;
  uint64_t seed = 1;
};

struct LinkLoad {
  uint64_t flows = 0;     // source-destination pairs in the pattern
  uint64_t max_load = 0;  // most flows on one channel (any channel, HCA links included)
  PortId max_channel = kNoPort;
  double mean_load = 0;  // over switch-to-switch channels
};

/// The flows of a pattern as (source, destination) indices into fabric.Endpoints(), sorted; the
/// same flows ComputeLinkLoad() routes. Lists all n^2 pairs for all-to-all: for tests and small
/// fabrics. Fails on cluster_size < 1.
Status TrafficFlows(const Fabric& fabric, const TrafficSpec& spec,
                    std::vector<std::pair<int, int>>* flows);

}  // namespace sar
