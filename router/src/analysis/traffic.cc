#include "sar/analysis/traffic.h"

#include <algorithm>
#include <memory>
#include <random>

#include "analysis/sweep_visitors.h"
#include "analysis/tree_load.h"

namespace sar {

namespace {

// Uniform in [0, bound) by rejection, so the sequence depends only on the seed (the standard
// distributions differ between library implementations).
uint64_t Below(std::mt19937_64* rng, uint64_t bound) {
  const uint64_t limit = std::mt19937_64::max() - std::mt19937_64::max() % bound;
  uint64_t x;
  do {
    x = (*rng)();
  } while (x >= limit);
  return x % bound;
}

void Shuffle(std::mt19937_64* rng, std::vector<int>* v) {
  for (size_t i = v->size(); i > 1; --i) std::swap((*v)[i - 1], (*v)[Below(rng, i)]);
}

// A pattern as "who sends to destination j": one partner (shift, permutation) or the other
// members of j's group (all-to-all: one group; clustered).
struct Traffic {
  std::vector<int> partner;               // per destination: its source, -1 for none
  std::vector<int> group;                 // per endpoint: its group
  std::vector<std::vector<int>> members;  // per group
  bool everyone = false;                  // all-to-all: the group is all endpoints
};

Status MakeTraffic(int n, const TrafficSpec& spec, Traffic* t) {
  switch (spec.pattern) {
    case TrafficPattern::kAllToAll:
      t->everyone = true;
      return Status::OK();
    case TrafficPattern::kShift: {
      t->partner.assign(n, -1);
      if (n == 0) return Status::OK();
      const int shift = static_cast<int>(((spec.shift % n) + n) % n);
      if (shift == 0) return Status::OK();
      for (int j = 0; j < n; ++j) t->partner[j] = (j - shift + n) % n;
      return Status::OK();
    }
    case TrafficPattern::kRandomPermutation: {
      t->partner.assign(n, -1);
      if (n < 2) return Status::OK();
      std::mt19937_64 rng(spec.seed);
      std::vector<int> dest(n);
      // Shuffle until no endpoint maps to itself: about e tries on average.
      for (bool fixed = true; fixed;) {
        for (int i = 0; i < n; ++i) dest[i] = i;
        Shuffle(&rng, &dest);
        fixed = false;
        for (int i = 0; i < n && !fixed; ++i) fixed = dest[i] == i;
      }
      for (int i = 0; i < n; ++i) t->partner[dest[i]] = i;
      return Status::OK();
    }
    case TrafficPattern::kClustered: {
      if (spec.cluster_size < 1) {
        return Status::InvalidArgument("cluster size must be at least 1, not " +
                                       std::to_string(spec.cluster_size));
      }
      std::mt19937_64 rng(spec.seed);
      std::vector<int> order(n);
      for (int i = 0; i < n; ++i) order[i] = i;
      Shuffle(&rng, &order);
      t->group.assign(n, 0);
      for (int i = 0; i < n; ++i) {
        const int g = i / spec.cluster_size;
        if (g == static_cast<int>(t->members.size())) t->members.emplace_back();
        t->members[g].push_back(order[i]);
        t->group[order[i]] = g;
      }
      for (auto& m : t->members) std::sort(m.begin(), m.end());
      return Status::OK();
    }
  }
  return Status::InvalidArgument("unknown traffic pattern");
}

}  // namespace

Status TrafficFlows(const Fabric& fabric, const TrafficSpec& spec,
                    std::vector<std::pair<int, int>>* flows) {
  const std::vector<PortRef> endpoints = fabric.Endpoints();
  const int n = static_cast<int>(endpoints.size());
  Traffic t;
  SAR_RETURN_IF_ERROR(MakeTraffic(n, spec, &t));
  flows->clear();
  for (int j = 0; j < n; ++j) {
    auto add = [&](int i) {
      if (endpoints[i].node != endpoints[j].node) flows->push_back({i, j});
    };
    if (t.everyone) {
      for (int i = 0; i < n; ++i) add(i);
    } else if (!t.members.empty()) {
      for (int i : t.members[t.group[j]]) add(i);
    } else if (t.partner[j] >= 0) {
      add(t.partner[j]);
    }
  }
  std::sort(flows->begin(), flows->end());
  return Status::OK();
}

namespace {

// The load of one pattern: per destination, its sources pushed down the destination's tree.
class LinkLoadVisitor : public internal::SweepVisitor {
 public:
  LinkLoadVisitor(const internal::SweepContext& ctx, Traffic traffic, LinkLoad* out)
      : ctx_(ctx), fabric_(ctx.fabric), traffic_(std::move(traffic)), out_(out) {}

  void Start(int workers) override;
  void Visit(int worker, const internal::SweepDestination& d, const DestinationTree& tree) override;
  void Finish() override;

 private:
  struct Worker {
    explicit Worker(int switches) : sources(switches) {}
    internal::TreeLoad sources;
    std::vector<uint64_t> load;  // per port slot
    uint64_t flows = 0;
    std::vector<int> live;  // the current destination's sources
    // All-to-all uplinks: an endpoint's uplink carries one flow per destination its leaf
    // delivers its LID to, minus destinations on its own node; counted per switch and source
    // LID offset (SweepContext::offsets), not per pair.
    std::vector<uint64_t> delivered;  // [switch * offsets + offset]
    std::vector<uint64_t> own_node;   // per endpoint
  };

  const internal::SweepContext& ctx_;
  const Fabric& fabric_;
  const Traffic traffic_;
  LinkLoad* out_;
  std::vector<Worker> workers_;
};

void LinkLoadVisitor::Start(int workers) {
  workers_.assign(workers, Worker(fabric_.num_switches()));
  for (Worker& w : workers_) {
    w.load.assign(fabric_.num_port_slots(), 0);
    if (traffic_.everyone) {
      w.delivered.assign(static_cast<size_t>(fabric_.num_switches()) * ctx_.offsets, 0);
      w.own_node.assign(ctx_.endpoints.size(), 0);
    }
  }
}

void LinkLoadVisitor::Visit(int worker, const internal::SweepDestination& d,
                            const DestinationTree& tree) {
  if (!d.first || !d.sent || d.leaf < 0) return;
  Worker& w = workers_[worker];
  const int j = d.endpoint;
  const NodeId dest_node = ctx_.endpoints[j].node;
  if (traffic_.everyone) {
    w.flows += w.sources.AddAllBut(ctx_, d);
    const int offsets = ctx_.offsets;
    for (int o = 0; o < offsets; ++o) {
      if (!ctx_.OffsetSends(o, d)) continue;
      for (int s : ctx_.leaves) {
        w.delivered[static_cast<size_t>(s) * offsets + o] += tree.fate[s] == RouteFate::kDelivered;
      }
    }
    for (int e : ctx_.of_node[dest_node]) {
      if (ctx_.leaf[e] >= 0 && ctx_.Sends(e, d) &&
          tree.fate[ctx_.leaf[e]] == RouteFate::kDelivered) {
        ++w.own_node[e];
      }
    }
  } else {
    w.live.clear();
    auto sends = [&](int i) { return ctx_.endpoints[i].node != dest_node && ctx_.Sends(i, d); };
    if (!traffic_.members.empty()) {
      for (int i : traffic_.members[traffic_.group[j]]) {
        if (sends(i)) w.live.push_back(i);
      }
    } else if (const int i = traffic_.partner[j]; i >= 0 && sends(i)) {
      w.live.push_back(i);
    }
    w.flows += w.live.size();
    for (int i : w.live) {
      if (ctx_.leaf[i] < 0) continue;
      w.sources.Add(ctx_.leaf[i], 1);
      if (tree.fate[ctx_.leaf[i]] == RouteFate::kDelivered) {
        ++w.load[fabric_.port_id(ctx_.endpoints[i])];
      }
    }
  }
  w.sources.Push(ctx_.tracer, tree, w.load.data());
}

void LinkLoadVisitor::Finish() {
  const int n = static_cast<int>(ctx_.endpoints.size());
  std::vector<uint64_t>& load = workers_[0].load;
  uint64_t flows = 0;
  for (size_t w = 0; w < workers_.size(); ++w) {
    flows += workers_[w].flows;
    if (w == 0) continue;
    for (size_t i = 0; i < load.size(); ++i) load[i] += workers_[w].load[i];
  }
  // Destinations the sweep has no tree for still count their flows.
  for (int j = 0; j < n; ++j) {
    const PortRef dest = ctx_.endpoints[j];
    if (fabric_.base_lid(dest) != 0 && ctx_.leaf[j] >= 0) continue;
    if (traffic_.everyone) {
      flows += n - ctx_.of_node[dest.node].size();
    } else if (!traffic_.members.empty()) {
      for (int i : traffic_.members[traffic_.group[j]])
        flows += ctx_.endpoints[i].node != dest.node;
    } else if (const int i = traffic_.partner[j]; i >= 0) {
      flows += ctx_.endpoints[i].node != dest.node;
    }
  }
  if (traffic_.everyone) {
    for (int i = 0; i < n; ++i) {
      if (ctx_.leaf[i] < 0) continue;
      uint64_t up = 0;
      const size_t slot = static_cast<size_t>(ctx_.leaf[i]) * ctx_.offsets + ctx_.OffsetOf(i);
      for (const Worker& w : workers_) up += w.delivered[slot] - w.own_node[i];
      load[fabric_.port_id(ctx_.endpoints[i])] += up;
    }
  }

  LinkLoad result;
  result.flows = flows;
  uint64_t sum = 0;
  int channels = 0;
  for (PortId id = 0; id < fabric_.num_port_slots(); ++id) {
    if (load[id] > result.max_load) {
      result.max_load = load[id];
      result.max_channel = id;
    }
    if (fabric_.is_inter_switch(id)) {
      sum += load[id];
      ++channels;
    }
  }
  result.mean_load = channels ? static_cast<double>(sum) / channels : 0;
  *out_ = result;
}

}  // namespace

namespace internal {

Status NewLinkLoadVisitor(const SweepContext& ctx, const TrafficSpec& spec, LinkLoad* out,
                          std::unique_ptr<SweepVisitor>* visitor) {
  Traffic traffic;
  SAR_RETURN_IF_ERROR(MakeTraffic(static_cast<int>(ctx.endpoints.size()), spec, &traffic));
  *visitor = std::make_unique<LinkLoadVisitor>(ctx, std::move(traffic), out);
  return Status::OK();
}

}  // namespace internal

}  // namespace sar
