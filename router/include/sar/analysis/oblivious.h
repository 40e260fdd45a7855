// Oblivious performance ratio of a single-path routing (Yuan et al., "Oblivious routing in
// fat-tree based system area networks with uncertain traffic demands").
//
// The maximum disjoint size of a channel, mds(l), is the largest set of the source-destination
// pairs routed over l with pairwise distinct sources and distinct destinations: a maximum
// bipartite matching between the channel's sources and destinations. mds(r) = max over channels.
// For any traffic matrix TM a channel then carries at most mds(l) * baseload(TM) (König: a
// vertex cover of mds(l) endpoints, each sending or receiving at most baseload), and the
// permutation of a maximum matching reaches it. On a tree whose every switch has at least as
// many up cables as down cables (full bisection), optimal multipath routing carries any TM at
// baseload (Yuan Theorem 3), so there PERF(r) = mds(r) exactly; on an oversubscribed tree mds(r)
// is an upper bound of PERF(r).
//
// Pairs: ordered pairs of distinct cabled HCA ports, to each destination's base LID (or the LID
// the source picks, ObliviousOptions::source_lid_offset), routed by the LFTs (undelivered routes
// count on the channels they do cross). Exact and fast: each destination's in-tree is walked once
// per switch (memoised), not once per source; a channel's matching is bounded by min(distinct
// sources, distinct destinations), and channels are matched (Hopcroft-Karp) in decreasing order of
// that bound until no bound can beat the best found. Memory: one entry per (pair, switch-to-switch
// channel on its route).
#pragma once

#include <cstdint>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/model/lft.h"
#include "sar/status.h"

namespace sar {

struct ObliviousOptions {
  /// Match every switch-to-switch channel (per_channel complete) instead of stopping early.
  bool all_channels = false;
  /// Refuse fabrics needing more pair-channel entries than this (8 bytes each; the default,
  /// 512 MB, is a few thousand endpoints).
  uint64_t max_entries = 64'000'000;
  /// Per endpoint (Fabric::Endpoints() order): the offset from a destination's base LID that
  /// source sends to (RoutingOutput::source_lid_offset: osrm2/osrm3 route per source group).
  /// Null or empty = the base LID. An offset beyond a destination's 2^LMC LIDs uses its base.
  const std::vector<uint8_t>* source_lid_offset = nullptr;
};

struct ObliviousResult {
  uint32_t max_disjoint = 0;  // mds(r): 1 on a single switch, 0 with fewer than two endpoints
  PortId worst_channel = kNoPort;
  bool full_bisection = false;  // then mds(r) is PERF(r); else an upper bound of it
  /// Per PortId: mds of switch-to-switch channels that were matched, else 0 (all of them with
  /// all_channels).
  std::vector<uint32_t> per_channel;
  int channels_matched = 0;  // channels that needed a matching (the rest were pruned)
  double ms = 0;
};

/// InvalidArgument when the tables do not fit the fabric or the fabric is too large.
Status ComputeObliviousRatio(const Fabric& fabric, const LftSet& lfts,
                             const ObliviousOptions& options, ObliviousResult* out);

/// Whether every switch has at least as many up cables (towards switches farther from the
/// HCAs) as down cables (HCAs and nearer switches); levels by hop distance from the HCAs.
bool IsFullBisectionTree(const Fabric& fabric);

}  // namespace sar
