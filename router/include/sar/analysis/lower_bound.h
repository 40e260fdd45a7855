// A floor under the max effective EFI (metrics.h) that no destination-based routing can beat,
// for a fabric and a job set: the yardstick that says how far a routing is from the best possible.
//
// Argument. A switch has one forwarding entry per LID, so all sources cabled to one switch s reach
// one destination d over the same path: the pair (s, d) is an indivisible item whose weight is the
// number of intra-job routes it carries (sources on s sharing a job with d, summed over jobs, d's
// own node excluded, as the metric counts them). For any set X of switches, every item with s in
// X and d outside X crosses one of X's outgoing channels at least once (its first crossing is
// fixed by (s, d)), and every item into X crosses one incoming channel. Spreading weighted items
// over c channels is a makespan problem, whose classic lower bounds apply: ceil(total / c), and for
// every k the k+1 smallest of the k*c+1 largest items (two of c+1 items share a channel, etc.).
//
// Cuts used: every switch with HCAs on its own (per leaf, up and down), and for each level L >= 1
// (levels = hops from the nearest HCA-carrying switch) each connected group of switches below L
// (the pods of a multi-level tree). Valid for any fabric, failed links included.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/model/jobs.h"

namespace sar {

struct EffectiveEfiBound {
  uint64_t value = 0;     // the bound: the max of the ones below
  uint64_t leaf = 0;      // from single switches (up- and down-channels of each leaf)
  uint64_t level = 0;     // from groups of switches below each level (pods); 0 on 2-level trees
  uint64_t leaf_avg = 0;  // the plain per-leaf average ceil(total / channels) alone, for reference
  std::string where;  // the cut that gives `value` ("leaf01 up", "level 2 group of leaf01 down")
};

/// The bound for `jobs` (as ResolveJobs gives them) on `fabric`. Jobs on one switch add nothing.
EffectiveEfiBound EffectiveEfiLowerBound(const Fabric& fabric,
                                         const std::vector<ResolvedJob>& jobs);

/// The makespan lower bound of `items` (weights, any order; sorted in place) on `channels`
/// identical channels: max(ceil(sum / channels), max_k sum of the k+1 smallest of the k*channels+1
/// largest). 0 if channels < 1 or no items. Exposed for tests.
uint64_t MakespanLowerBound(std::vector<uint64_t>* items, int channels);

/// The relative gap of a routing's max effective EFI to the bound: value / bound - 1 (0 when the
/// bound is 0 and value is 0; +inf when only the bound is 0).
double BoundGap(uint64_t value, uint64_t bound);

}  // namespace sar
