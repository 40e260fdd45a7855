// The trace analysis: every route between endpoints, traced from the forwarding tables
// (RouteTracer), counted as delivered, unreachable or looping, and compared with the shortest
// path. AnalyseRouting (sar/analysis/analysis.h) runs it, alone (TraceAll) or with the others.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sar/analysis/route_tracer.h"

namespace sar {

struct TraceOptions {
  /// Also compare every delivered route with the shortest switch path (BFS).
  bool check_min_hop = true;
  /// Trace every LID of each endpoint (all 2^lmc), not only base LIDs.
  bool all_lids = true;
  int threads = 0;        // 0 = hardware concurrency
  int max_examples = 10;  // problem routes described in TraceReport::examples
};

struct TraceReport {
  uint64_t pairs = 0;  // (source endpoint, destination LID) pairs with distinct nodes
  uint64_t delivered = 0;
  uint64_t unreachable = 0;  // holes + misdelivered
  uint64_t loops = 0;
  uint64_t non_min_hop = 0;  // delivered, but longer than the shortest path
  int max_hops = 0;          // cables, HCA to HCA
  double mean_hops = 0;
  std::vector<std::string> examples;  // "h0001 -> lid 0x0005 (h0003): loop at leaf002", ...
  bool valid() const { return unreachable == 0 && loops == 0; }
};

}  // namespace sar
