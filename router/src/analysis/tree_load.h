// Channel loads from one destination's tree (private to libsar): the EFI and the link loads of
// traffic patterns count, per channel, the sources whose route towards the destination crosses
// it. Sources are counted per switch and the counts pushed down the tree, not walked route by
// route.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/destination_sweep.h"
#include "sar/analysis/route_tracer.h"

namespace sar::internal {

class TreeLoad {
 public:
  explicit TreeLoad(int switches) : count_(switches, 0) {}

  /// `c` more sources on switch `s`.
  void Add(int s, uint64_t c) {
    if (c == 0) return;
    if (count_[s] == 0) seeds_.push_back(s);
    count_[s] += c;
  }
  /// Every endpoint that sends to `d` (SweepContext::Sends) except those on d's node; returns
  /// how many.
  uint64_t AddAllBut(const SweepContext& ctx, const SweepDestination& d) {
    uint64_t added = 0;
    for (int s : ctx.leaves) {
      const uint64_t c = ctx.Senders(s, d);
      Add(s, c);
      added += c;
    }
    for (int e : ctx.of_node[ctx.endpoints[d.endpoint].node]) {
      if (ctx.leaf[e] >= 0 && ctx.Sends(e, d)) {
        --count_[ctx.leaf[e]];
        --added;
      }
    }
    return added;
  }

  /// Adds the sources below every channel of `tree` to `load` (per port slot) and forgets them.
  /// Routes that are not delivered add nothing.
  void Push(const RouteTracer& tracer, const DestinationTree& tree, uint64_t* load) {
    const int n = static_cast<int>(tree.fate.size());
    if (seeds_.size() * 16 < static_cast<size_t>(n)) {
      // Few sources: walking each seed's route is cheaper than ordering the whole tree.
      for (int s : seeds_) {
        const uint64_t c = count_[s];
        count_[s] = 0;
        if (tree.fate[s] != RouteFate::kDelivered) continue;
        for (int t = s; t >= 0 && tree.out[t] != kNoPort;) {
          load[tree.out[t]] += c;
          t = tracer.next_switch(tree.out[t]);
        }
      }
      seeds_.clear();
      return;
    }
    // Many sources: move counts towards the destination in decreasing hop order, so each
    // switch has received everything from upstream before passing it on. Counting sort by hops.
    bucket_.assign(n + 2, 0);
    for (int s = 0; s < n; ++s) {
      if (tree.fate[s] == RouteFate::kDelivered) ++bucket_[tree.hops[s]];
    }
    for (int h = n; h >= 0; --h) bucket_[h] += bucket_[h + 1];  // first slot of hop h, from far
    order_.resize(bucket_[0]);
    for (int s = 0; s < n; ++s) {
      if (tree.fate[s] == RouteFate::kDelivered) order_[--bucket_[tree.hops[s]]] = s;
    }
    for (int s : order_) {
      const uint64_t c = count_[s];
      if (c == 0 || tree.out[s] == kNoPort) continue;
      load[tree.out[s]] += c;
      const int t = tracer.next_switch(tree.out[s]);
      if (t >= 0) count_[t] += c;
    }
    for (int s : order_) count_[s] = 0;
    for (int s : seeds_) count_[s] = 0;  // undelivered seeds
    seeds_.clear();
  }

 private:
  std::vector<uint64_t> count_;  // per switch
  std::vector<int> seeds_;       // switches with a count
  std::vector<int> bucket_;
  std::vector<int> order_;
};

}  // namespace sar::internal
