// What the engines dmodk, dmodc and sar-dmodc share: the preprocessing of the Dmodc paper
// (Gliksberg et al., "High-Quality Fault Resiliency in Fat Trees", IEEE Micro 2020; Sec. 3.1-3.3,
// Procedure 1) and the closed-form route computation (Sec. 3.4, Eqs. 1-4). docs/engines.md
// says where the paper's text is ambiguous and what is chosen here.
//
// Everything is flat arrays indexed by switch index (SwitchGraph order) and leaf index; no
// recursion on input. Costs are one byte per (switch, leaf): 0xFF is "infinite"; fat-trees are
// shallow, and a fabric whose ranks would overflow that is refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engines/switch_graph.h"
#include "sar/engines/engine.h"
#include "sar/model/lft.h"
#include "sar/status.h"

namespace sar::internal {

inline constexpr uint8_t kDmodcInf = 0xFF;

/// Sec. 3.1-3.3: ranks, port groups, costs and dividers.
struct DmodcPlan {
  int num_switches = 0;
  int num_leaves = 0;
  /// Leaves (switches with at least one cabled HCA) in ascending node GUID order.
  std::vector<int> leaves;
  std::vector<int> leaf_index;  // per switch: its position in `leaves`, -1 if not a leaf
  /// Per switch: hops to the nearest leaf (leaves 0), -1 if no leaf is reachable. A cable from
  /// s to a switch of higher rank is an up link of s, to lower rank a down link; a cable between
  /// equal ranks (impossible in a PGFT, degraded or not) has no direction and is never used.
  std::vector<int> rank;
  int max_rank = 0;
  /// Port groups: the ports of a switch that lead to the same neighbour, per switch ordered by
  /// the neighbour's node GUID, ports inside a group ascending. Groups of switch s are
  /// [group_begin[s], group_begin[s + 1]).
  std::vector<int> group_begin;
  std::vector<int> group_to;          // neighbour switch
  std::vector<int8_t> group_dir;      // +1 up, -1 down, 0 equal rank (unused)
  std::vector<int> group_port_begin;  // ports of group i: [group_port_begin[i], ...[i + 1])
  std::vector<uint8_t> group_ports;
  std::vector<int> num_up_groups;  // per switch: #{s' -> s}, its upward arity
  /// Pi_s of Procedure 1 (1 for leaves; the maximum over down paths of the product of the
  /// upward arities below). Capped at 2^40, far beyond any destination index.
  std::vector<uint64_t> divider;
  /// c_{s,l} at [s * num_leaves + l]: fewest hops from s to leaf l on an up*-down* path.
  std::vector<uint8_t> cost;
  /// The same over down-only paths (the "extra integer" of Sec. 3.2 for the up-down variant).
  std::vector<uint8_t> down_cost;

  uint8_t c(int s, int l) const { return cost[static_cast<size_t>(s) * num_leaves + l]; }
  uint8_t dc(int s, int l) const { return down_cost[static_cast<size_t>(s) * num_leaves + l]; }
};

/// Procedure 1 with its descending pass towards down neighbours (the extracted text's arrow is
/// garbled; see docs/engines.md), both passes as "pull" sweeps one rank at a time, so workers
/// write only their own switches' rows. Failed if the ranks are too deep for byte costs.
Status BuildDmodcPlan(const SwitchGraph& g, int threads, DmodcPlan* plan);

/// The validity pass of Sec. 4.1: every leaf reaches every other one at finite cost. Otherwise
/// Failed naming an endpoint pair, or (allow_disconnected) a note counting the pairs left out.
Status CheckDmodcValidity(const Fabric& fabric, const SwitchGraph& g, const DmodcPlan& plan,
                          bool allow_disconnected, std::vector<std::string>* notes);

/// The paper's node index d of each HCA destination (g.dests[0, num_endpoint_dests)): leaves
/// in `plan.leaves` order, d = leaf position * M + the HCA port's position among the HCA ports
/// of its leaf (by leaf port number), M = the most HCA ports on one leaf. On an intact PGFT
/// built by GeneratePgft this is the host index s of generate.h. Uncabled HCA ports get 0.
std::vector<uint32_t> DmodcNodeIndex(const SwitchGraph& g, const DmodcPlan& plan);

/// What the table fill reads besides the plan, derived from it and the destination indices:
/// shared by the full fill and the incremental one (dmodc_state.cc).
struct DmodcFill {
  /// Per switch: the leaf its switch LID is routed towards (itself for a leaf; else down the
  /// first down group, repeatedly); -1 if it has no rank.
  std::vector<int> chain_leaf;
  /// Destinations reached through each leaf, as CSR ([via_begin[l], via_begin[l + 1])): its
  /// HCA ports and the switch LIDs with that chain leaf, as flat arrays for the inner loop.
  std::vector<int> via_begin;
  std::vector<uint32_t> via_index;  // d (HCA ports) or the switch index (switch LIDs)
  std::vector<Lid> via_lid;
  std::vector<uint16_t> via_lids;
  bool single_lid = true;
  /// floor(d / Pi) mod P per distinct (Pi, P = #up groups * cables per group) in `via` order,
  /// and per switch which one it reads (-1: none) and its P.
  std::vector<std::vector<uint16_t>> residues;
  std::vector<int> residue_of;
  std::vector<uint32_t> period;
  /// Per leaf, the ranked non-leaf switches without an up-down path to it ("holes"), as CSR.
  std::vector<int> hole_begin, holes;
  /// Ranked non-leaf switches with a LID, whose LID column the override pass writes.
  std::vector<int> upper;
};

void PrepareDmodcFill(const SwitchGraph& g, const DmodcPlan& plan,
                      const std::vector<uint32_t>& index, const std::vector<uint64_t>& divider,
                      int threads, DmodcFill* fill);

/// Eqs. 1-4 (up-down variant) for the rows of the given switches, every destination: the entry
/// before the switch-LID, own-destination and hole passes. With `clear` the rows are reset to
/// kNoRoute first (a refill); otherwise they must already be.
void FillDmodcRows(const DmodcPlan& plan, const DmodcFill& fill,
                   const std::vector<uint64_t>& divider, const std::vector<int>& rows, bool clear,
                   int threads, LftSet* lfts);

/// The same entry for one destination (index d, LID offset i) routed towards leaf l at switch
/// s, computed the literal way; kNoRoute where FillDmodcRows leaves none.
uint8_t DmodcEntry(const DmodcPlan& plan, const std::vector<uint64_t>& divider, int s, int l,
                   uint32_t d, int i);

/// The entries of switch s for the destinations reached through the given leaves (a partial
/// refill: each entry as FillDmodcRows would write it into a cleared row).
void FillDmodcCells(const DmodcPlan& plan, const DmodcFill& fill,
                    const std::vector<uint64_t>& divider, int s, const std::vector<int>& leaves,
                    LftSet* lfts);

/// The passes after the rows, over the whole fabric: destinations on each switch itself, the
/// non-leaf switch LIDs (override; per such switch t the rows it writes go to
/// (*override_rows)[t] if given), the holes, the switches of leafless parts.
void FinishDmodcTables(const SwitchGraph& g, const DmodcPlan& plan, const DmodcFill& fill,
                       int threads, std::vector<std::vector<int>>* override_rows, LftSet* lfts);

/// Eqs. 1-4 for every switch and every destination LID, written into *lfts (sized for the
/// fabric, all kNoRoute). `index` is d per HCA destination (DmodcNodeIndex, or sar-dmodc's
/// job-local one), `divider` Pi per switch. LID i of a port with LMC uses floor(d / Pi) + i as
/// its selector, so the LIDs of one port fan out over other groups first. Switch LIDs: see
/// docs/engines.md (down if the switch is below, else towards a leaf below it, then up a fixed
/// chain). Prepare + all rows + Finish.
void FillDmodcTables(const SwitchGraph& g, const DmodcPlan& plan,
                     const std::vector<uint32_t>& index, const std::vector<uint64_t>& divider,
                     int threads, LftSet* lfts);

/// Leaves, ranks and port groups of Procedure 1 (the first part of BuildDmodcPlan), without
/// costs or dividers. Failed if the ranks are too deep for byte costs.
Status BuildDmodcGroups(const SwitchGraph& g, DmodcPlan* plan);

/// The switches of each rank (ascending rank), as CSR over ranks 0..max_rank.
void SwitchesByRank(const DmodcPlan& plan, std::vector<int>* begin, std::vector<int>* order);

/// dst[l] = min(dst[l], src[l] + 1) with "infinite" staying infinite (Procedure 1's pull).
void DmodcPullMin(uint8_t* dst, const uint8_t* src, int n);

inline constexpr uint64_t kDmodcDividerCap = uint64_t{1} << 40;

/// Everything one dmodc pass computed, kept by DmodcRouter (sar/engines/dmodc.h) for the next one.
struct DmodcRun {
  SwitchGraph g;
  DmodcPlan plan;
  DmodcFill fill;
  std::vector<uint32_t> index;                  // DmodcNodeIndex
  std::vector<std::vector<int>> override_rows;  // per switch: rows its LID's override wrote
};

/// The dmodc engine's pass on checked input (dmodc.cc): plan, validity, tables into *lfts
/// (replaced), notes appended. DmodcEngine and DmodcRouter both run exactly this.
Status DmodcFullPass(const RoutingInput& in, DmodcRun* run, LftSet* lfts,
                     std::vector<std::string>* notes);

}  // namespace sar::internal
