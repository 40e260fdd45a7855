// The table-filling pass MinHop and Up*/Down* share: given, for each (switch, destination
// switch), the arcs a route may take next, pick one per destination LID so that the load on
// every port stays even, the way OpenSM 3.3.23's ucast_mgr fills tables for its minhop and updn
// (ucast_mgr_build_lfts, osm_switch_recommend_path).
//
// Balance is per switch and per port (each parallel cable is its own port): destinations are
// taken in OpenSM's order (OpenSmFillOrder below: switch by switch, not by LID, so that the
// tables equal OpenSM's whatever the LID assignment), and each LID goes to the candidate port
// that has carried the fewest endpoint base LIDs so far, the lowest port on ties. The 2^LMC LIDs
// of one HCA port first avoid ports, then neighbour switches, that its earlier LIDs already use,
// so LMC gives really different paths. Only base LIDs count as load, which is what OpenSM's
// base LIDs see too: it routes every port's base LID before any port's second LID (seen on the
// test bed: with LMC 1 its minhop spreads the base LIDs round-robin), so base LID entries equal
// OpenSM's with any LMC, the extra LIDs may take another equally good port. Counting the extra
// LIDs too would pile the base LIDs onto every other port. Switch LIDs are routed the same way
// but not counted (OpenSM's default port_profile_switch_nodes FALSE), as management traffic is
// light.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <numeric>
#include <tuple>
#include <vector>

#include "analysis/trace_parallel.h"
#include "engines/switch_graph.h"
#include "sar/model/lft.h"

namespace sar::internal {

/// Fills the arcs of switch `s` that a route to destination switch `t` (t != s) may take next;
/// leaves *arcs empty if there is none. `to_switch` says the destination is the switch's own LID.
using CandidateFn = std::function<void(int s, int t, bool to_switch, std::vector<int>* arcs)>;

/// Indices into g.dests in the order OpenSM 3.3.23 fills each switch's table
/// (sort_ports_by_switch_load): the HCA ports switch by switch, switches with more cabled HCA
/// ports first, then on each switch by the port number the HCA hangs on. Switches with equally
/// many HCAs keep the order of OpenSM's switch table, a map keyed by the node GUID as stored in
/// network byte order read as a host integer; on the little-endian hosts ibsim and OpenSM run
/// on that compares the GUID's bytes from the least significant one (0x..0100 before 0x..00ff).
/// The sort keeps that order among equals because glibc's qsort (2.36 on the test bed) is a
/// merge sort, hence stable. Then the switch LIDs (by LID: they add no load, so their order
/// changes no entry) and any HCA port not cabled to a switch (never routed).
inline std::vector<int> OpenSmFillOrder(const SwitchGraph& g) {
  const auto map_key = [](Guid guid) {  // the big-endian bytes read as a little-endian integer
    Guid key = 0;
    for (int i = 0; i < 8; ++i) key = (key << 8) | ((guid >> (8 * i)) & 0xff);
    return key;
  };
  std::vector<int> sw_rank(g.num_switches);
  {
    std::vector<int> sws(g.num_switches);
    std::iota(sws.begin(), sws.end(), 0);
    std::sort(sws.begin(), sws.end(), [&](int a, int b) {
      if (g.hcas_on_switch[a] != g.hcas_on_switch[b]) {
        return g.hcas_on_switch[a] > g.hcas_on_switch[b];
      }
      return map_key(g.switch_guid[a]) < map_key(g.switch_guid[b]);
    });
    for (int i = 0; i < g.num_switches; ++i) sw_rank[sws[i]] = i;
  }
  std::vector<int> order(g.dests.size());
  std::iota(order.begin(), order.end(), 0);
  const auto key = [&](int i) {
    const Destination& d = g.dests[i];
    // (group: 0 HCA on a switch, 1 switch, 2 HCA without switch; switch rank; port or LID)
    const int group = d.is_switch ? 1 : d.sw < 0 ? 2 : 0;
    return std::make_tuple(group, group == 0 ? sw_rank[d.sw] : 0,
                           group == 0 ? static_cast<int>(d.sw_port) : static_cast<int>(d.base_lid));
  };
  std::sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
  return order;
}

/// Writes every LID of every destination of `g` into *lfts (sized for the fabric); LIDs with no
/// candidate stay kNoRoute. Thread-safe in that each worker owns whole switch rows.
inline void FillBalanced(const SwitchGraph& g, int threads, const CandidateFn& candidates,
                         LftSet* lfts) {
  const std::vector<int> order = OpenSmFillOrder(g);
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
