// The table-filling pass MinHop and Up*/Down* share: given, for each (switch, destination
// switch), the arcs a route may take next, pick one per destination LID so that the load on
// every port stays even, the way OpenSM's minhop balances (osm_switch_recommend_path).
//
// Balance is per switch and per port (each parallel cable is its own port): destinations are
// taken in LID order, and each LID goes to the candidate port that has carried the fewest
// endpoint base LIDs so far. The 2^LMC LIDs of one HCA port first avoid ports, then neighbour
// switches, that its earlier LIDs already use, so LMC gives really different paths. Only base
// LIDs count as load, as in OpenSM (seen on the test bed: with LMC 1 its minhop spreads the base
// LIDs round-robin): the base LID is what most traffic and the EFI use, and counting the extra
// LIDs too would pile the base LIDs onto every other port. Switch LIDs are routed the same way
// but not counted (OpenSM's default port_profile_switch_nodes FALSE), as management traffic is
// light.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <vector>

#include "engines/switch_graph.h"
#include "sar/lft.h"
#include "trace_parallel.h"

namespace sar::internal {

/// Fills the arcs of switch `s` that a route to destination switch `t` (t != s) may take next;
/// leaves *arcs empty if there is none. `to_switch` says the destination is the switch's own LID.
using CandidateFn = std::function<void(int s, int t, bool to_switch, std::vector<int>* arcs)>;

/// Writes every LID of every destination of `g` into *lfts (sized for the fabric); LIDs with no
/// candidate stay kNoRoute. Thread-safe in that each worker owns whole switch rows.
inline void FillBalanced(const SwitchGraph& g, int threads, const CandidateFn& candidates,
                         LftSet* lfts) {
  std::vector<int> order(g.dests.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&g](int a, int b) { return g.dests[a].base_lid < g.dests[b].base_lid; });
  const int workers = WorkerCount(threads, g.num_switches, 8);
  ParallelFor(workers, g.num_switches, 8, [&](int, size_t si) {
    const int s = static_cast<int>(si);
    const int begin = g.arc_begin[s];
    std::vector<uint32_t> load(g.degree(s), 0);
    std::vector<int> arcs;
    std::vector<int> chosen;  // arcs already taken by earlier LIDs of this destination
    uint8_t* row = lfts->mutable_row(s);
    for (int di : order) {
      const Destination& d = g.dests[di];
      if (d.sw < 0 || d.base_lid == 0) continue;
      if (d.sw == s) {
        for (int i = 0; i < d.num_lids; ++i) row[d.base_lid + i] = d.is_switch ? 0 : d.sw_port;
        continue;
      }
      arcs.clear();
      candidates(s, d.sw, d.is_switch, &arcs);
      if (arcs.empty()) continue;
      chosen.clear();
      for (int i = 0; i < d.num_lids; ++i) {
        int best = -1;
        // (same port used, same neighbour used, load); ties keep the lowest port (arc order).
        int best_port_use = 0, best_remote_use = 0;
        uint32_t best_load = 0;
        for (int a : arcs) {
          int port_use = 0, remote_use = 0;
          for (int c : chosen) {
            port_use += c == a;
            remote_use += g.arc_to[c] == g.arc_to[a];
          }
          const uint32_t l = load[a - begin];
          if (best < 0 || port_use < best_port_use ||
              (port_use == best_port_use && (remote_use < best_remote_use ||
                                             (remote_use == best_remote_use && l < best_load)))) {
            best = a;
            best_port_use = port_use;
            best_remote_use = remote_use;
            best_load = l;
          }
        }
        row[d.base_lid + i] = g.arc_port[best];
        chosen.push_back(best);
        if (i == 0 && !d.is_switch) ++load[best - begin];
      }
    }
  });
}

}  // namespace sar::internal
