#include "sar/metrics.h"

#include <algorithm>
#include <random>
#include <set>
#include <string_view>

#include "sar/trace.h"
#include "trace_parallel.h"

namespace sar {

namespace {

constexpr size_t kChunk = 16;  // destinations per work item: neighbouring LIDs share LFT lines

// What the analyses need to know about the endpoints, computed once per call.
struct EndpointIndex {
  EndpointIndex(const Fabric& fabric, const RouteTracer& tracer) : endpoints(fabric.Endpoints()) {
    of_node.assign(fabric.num_nodes(), {});
    per_switch.assign(fabric.num_switches(), 0);
    for (size_t i = 0; i < endpoints.size(); ++i) {
      const int leaf = tracer.next_switch(fabric.port_id(endpoints[i]));
      this->leaf.push_back(leaf);
      of_node[endpoints[i].node].push_back(static_cast<int>(i));
      if (leaf >= 0 && per_switch[leaf]++ == 0) leaves.push_back(leaf);
    }
  }
  std::vector<PortRef> endpoints;
  std::vector<int> leaf;                  // per endpoint: switch index it hangs off
  std::vector<std::vector<int>> of_node;  // per node: endpoint indices
  std::vector<uint64_t> per_switch;       // endpoints per switch
  std::vector<int> leaves;                // switches with endpoints
};

// Adds, for one destination tree, the number of sources below every channel to `load`. Sources
// are given as counts per switch (`count`, with the switches listed in `seeds`); the counts are
// consumed (left zero). Routes that are not delivered add nothing.
class LoadPusher {
 public:
  void Push(const RouteTracer& tracer, const DestinationTree& tree, std::vector<uint64_t>* count,
            std::vector<int>* seeds, uint64_t* load) {
    const int n = static_cast<int>(tree.fate.size());
    if (seeds->size() * 16 < static_cast<size_t>(n)) {
      // Few sources: walking each seed's route is cheaper than ordering the whole tree.
      for (int s : *seeds) {
        const uint64_t c = (*count)[s];
        (*count)[s] = 0;
        if (tree.fate[s] != RouteFate::kDelivered) continue;
        for (int t = s; t >= 0 && tree.out[t] != kNoPort;) {
          load[tree.out[t]] += c;
          t = tracer.next_switch(tree.out[t]);
        }
      }
      seeds->clear();
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
      const uint64_t c = (*count)[s];
      if (c == 0 || tree.out[s] == kNoPort) continue;
      load[tree.out[s]] += c;
      const int t = tracer.next_switch(tree.out[s]);
      if (t >= 0) (*count)[t] += c;
    }
    for (int s : order_) (*count)[s] = 0;
    for (int s : *seeds) (*count)[s] = 0;  // undelivered seeds
    seeds->clear();
  }

 private:
  std::vector<int> bucket_;
  std::vector<int> order_;
};

struct Worker {
  DestinationTree tree;
  LoadPusher pusher;
  std::vector<uint64_t> count;  // per switch
  std::vector<int> seeds;
  std::vector<uint64_t> load;  // per port slot
};

void AddSeed(int s, uint64_t c, Worker* w) {
  if (c == 0) return;
  if (w->count[s] == 0) w->seeds.push_back(s);
  w->count[s] += c;
}

// Seeds every endpoint except those on `dest_node`.
void SeedAll(const EndpointIndex& ix, NodeId dest_node, Worker* w) {
  for (int s : ix.leaves) AddSeed(s, ix.per_switch[s], w);
  for (int e : ix.of_node[dest_node]) {
    if (ix.leaf[e] >= 0) --w->count[ix.leaf[e]];
  }
}

std::vector<Worker> MakeWorkers(int workers, const Fabric& fabric) {
  std::vector<Worker> state(workers);
  for (Worker& w : state) {
    w.count.assign(fabric.num_switches(), 0);
    w.load.assign(fabric.num_port_slots(), 0);
  }
  return state;
}

// Sums the workers' loads into the first one's and zeroes the others.
std::vector<uint64_t>& MergeLoads(std::vector<Worker>* state) {
  std::vector<uint64_t>& total = (*state)[0].load;
  for (size_t w = 1; w < state->size(); ++w) {
    std::vector<uint64_t>& part = (*state)[w].load;
    for (size_t i = 0; i < total.size(); ++i) total[i] += part[i];
    std::fill(part.begin(), part.end(), 0);
  }
  return total;
}

// Endpoints that can be destinations (they have a LID), sorted by LID.
std::vector<int> Destinations(const EndpointIndex& ix, const Fabric& fabric,
                              const std::vector<int>& candidates) {
  std::vector<int> out;
  for (int e : candidates) {
    if (fabric.base_lid(ix.endpoints[e]) != 0 && ix.leaf[e] >= 0) out.push_back(e);
  }
  std::sort(out.begin(), out.end(), [&](int a, int b) {
    return fabric.base_lid(ix.endpoints[a]) < fabric.base_lid(ix.endpoints[b]);
  });
  return out;
}

EfiSummary Summarize(const Fabric& fabric, const std::vector<uint64_t>& load, int channels) {
  EfiSummary s;
  uint64_t sum = 0;
  for (PortId id = 0; id < fabric.num_port_slots(); ++id) {
    if (!fabric.is_inter_switch(id)) continue;
    s.max = std::max(s.max, load[id]);
    sum += load[id];
  }
  s.mean = channels ? static_cast<double>(sum) / channels : 0;
  return s;
}

}  // namespace

Status ComputeMetrics(const Fabric& fabric, const LftSet& lfts,
                      const std::vector<ResolvedJob>& jobs, const MetricsOptions& options,
                      Metrics* out) {
  SAR_RETURN_IF_ERROR(lfts.CheckFits(fabric));
  const RouteTracer tracer(fabric, lfts);
  const EndpointIndex ix(fabric, tracer);
  Metrics m;
  for (PortId id = 0; id < fabric.num_port_slots(); ++id) m.channels += fabric.is_inter_switch(id);

  // Plain EFI: every endpoint to every endpoint on another node.
  std::vector<int> everyone(ix.endpoints.size());
  for (size_t i = 0; i < everyone.size(); ++i) everyone[i] = static_cast<int>(i);
  const std::vector<int> all_dests = Destinations(ix, fabric, everyone);
  int workers = internal::WorkerCount(options.threads, all_dests.size(), kChunk);
  std::vector<Worker> state = MakeWorkers(workers, fabric);
  internal::ParallelFor(workers, all_dests.size(), kChunk, [&](int worker, size_t i) {
    Worker& w = state[worker];
    const PortRef dest = ix.endpoints[all_dests[i]];
    tracer.Build(fabric.base_lid(dest), &w.tree);
    SeedAll(ix, dest.node, &w);
    w.pusher.Push(tracer, w.tree, &w.count, &w.seeds, w.load.data());
  });
  m.efi_per_channel = std::move(MergeLoads(&state));
  state[0].load.assign(fabric.num_port_slots(), 0);

  // Effective EFI: each job on its own, summed.
  m.effective_efi_per_channel.assign(fabric.num_port_slots(), 0);
  std::vector<int> member_of(ix.endpoints.size(), 0);  // stamp: job index + 1
  for (size_t j = 0; j < jobs.size(); ++j) {
    const ResolvedJob& job = jobs[j];
    std::vector<int> members;
    std::set<std::string_view> hosts;
    for (const PortRef& p : job.endpoints) {
      const PortId id = fabric.port_id(p);
      // Map the port back to its endpoint index (the job lists cabled HCA ports).
      for (int e : ix.of_node[p.node]) {
        if (fabric.port_id(ix.endpoints[e]) == id && member_of[e] != static_cast<int>(j) + 1) {
          member_of[e] = static_cast<int>(j) + 1;
          members.push_back(e);
          hosts.insert(fabric.hostname(p.node));
        }
      }
    }
    const std::vector<int> dests = Destinations(ix, fabric, members);
    workers = internal::WorkerCount(options.threads, dests.size(), kChunk);
    internal::ParallelFor(workers, dests.size(), kChunk, [&](int worker, size_t i) {
      Worker& w = state[worker];
      const PortRef dest = ix.endpoints[dests[i]];
      tracer.Build(fabric.base_lid(dest), &w.tree);
      for (int e : members) {
        if (ix.endpoints[e].node != dest.node && ix.leaf[e] >= 0) AddSeed(ix.leaf[e], 1, &w);
      }
      w.pusher.Push(tracer, w.tree, &w.count, &w.seeds, w.load.data());
    });
    std::vector<uint64_t>& load = MergeLoads(&state);
    JobMetrics jm;
    jm.id = job.id;
    jm.hosts = static_cast<int>(hosts.size());
    jm.leaf_switches = job.num_leaf_switches;
    for (PortId id = 0; id < fabric.num_port_slots(); ++id) {
      if (load[id] != 0 && fabric.is_inter_switch(id)) {
        jm.efi_max = std::max(jm.efi_max, load[id]);
        ++jm.channels;
        m.effective_efi_per_channel[id] += load[id];
      }
    }
    std::fill(load.begin(), load.end(), 0);
    m.jobs.push_back(std::move(jm));
  }

  // Only switch-to-switch channels carry an EFI; the pushes also counted HCA downlinks.
  for (PortId id = 0; id < fabric.num_port_slots(); ++id) {
    if (!fabric.is_inter_switch(id)) m.efi_per_channel[id] = 0;
  }
  m.efi = Summarize(fabric, m.efi_per_channel, m.channels);
  m.effective_efi = Summarize(fabric, m.effective_efi_per_channel, m.channels);
  int dark = 0;
  for (PortId id = 0; id < fabric.num_port_slots(); ++id) {
    dark += fabric.is_inter_switch(id) && m.effective_efi_per_channel[id] == 0;
  }
  m.dark_fiber = m.channels ? static_cast<double>(dark) / m.channels : 0;
  *out = std::move(m);
  return Status::OK();
}

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

Status ComputeLinkLoad(const Fabric& fabric, const LftSet& lfts, const TrafficSpec& spec,
                       LinkLoad* out) {
  SAR_RETURN_IF_ERROR(lfts.CheckFits(fabric));
  const RouteTracer tracer(fabric, lfts);
  const EndpointIndex ix(fabric, tracer);
  const int n = static_cast<int>(ix.endpoints.size());
  Traffic traffic;
  SAR_RETURN_IF_ERROR(MakeTraffic(n, spec, &traffic));

  // Destinations in LID order; those without a LID still count their flows.
  std::vector<int> dests(n);
  for (int i = 0; i < n; ++i) dests[i] = i;
  std::sort(dests.begin(), dests.end(), [&](int a, int b) {
    return fabric.base_lid(ix.endpoints[a]) < fabric.base_lid(ix.endpoints[b]);
  });
  const int workers = internal::WorkerCount(0, dests.size(), kChunk);
  std::vector<Worker> state = MakeWorkers(workers, fabric);
  std::vector<uint64_t> flows(workers, 0);
  // All-to-all uplinks: an endpoint's uplink carries one flow per destination its leaf
  // delivers to, minus destinations on its own node; counted per switch, not per pair.
  std::vector<std::vector<uint64_t>> delivered(workers), own_node(workers);
  if (traffic.everyone) {
    for (int w = 0; w < workers; ++w) {
      delivered[w].assign(fabric.num_switches(), 0);
      own_node[w].assign(n, 0);
    }
  }
  internal::ParallelFor(workers, dests.size(), kChunk, [&](int worker, size_t k) {
    Worker& w = state[worker];
    const int j = dests[k];
    const PortRef dest = ix.endpoints[j];
    const Lid lid = fabric.base_lid(dest);
    if (traffic.everyone) {
      flows[worker] += n - ix.of_node[dest.node].size();
      if (lid == 0 || ix.leaf[j] < 0) return;
      tracer.Build(lid, &w.tree);
      SeedAll(ix, dest.node, &w);
      for (int s : ix.leaves) delivered[worker][s] += w.tree.fate[s] == RouteFate::kDelivered;
      for (int e : ix.of_node[dest.node]) {
        if (ix.leaf[e] >= 0 && w.tree.fate[ix.leaf[e]] == RouteFate::kDelivered) {
          ++own_node[worker][e];
        }
      }
    } else {
      const bool grouped = !traffic.members.empty();
      const std::vector<int> single{grouped ? -1 : traffic.partner[j]};
      const std::vector<int>& sources = grouped ? traffic.members[traffic.group[j]] : single;
      std::vector<int> live;
      for (int i : sources) {
        if (i >= 0 && ix.endpoints[i].node != dest.node) live.push_back(i);
      }
      flows[worker] += live.size();
      if (live.empty() || lid == 0 || ix.leaf[j] < 0) return;
      tracer.Build(lid, &w.tree);
      for (int i : live) {
        if (ix.leaf[i] < 0) continue;
        AddSeed(ix.leaf[i], 1, &w);
        if (w.tree.fate[ix.leaf[i]] == RouteFate::kDelivered) {
          ++w.load[fabric.port_id(ix.endpoints[i])];
        }
      }
    }
    w.pusher.Push(tracer, w.tree, &w.count, &w.seeds, w.load.data());
  });
  std::vector<uint64_t>& load = MergeLoads(&state);
  if (traffic.everyone) {
    for (int i = 0; i < n; ++i) {
      if (ix.leaf[i] < 0) continue;
      uint64_t up = 0;
      for (int w = 0; w < workers; ++w) up += delivered[w][ix.leaf[i]] - own_node[w][i];
      load[fabric.port_id(ix.endpoints[i])] += up;
    }
  }

  LinkLoad result;
  for (uint64_t f : flows) result.flows += f;
  uint64_t sum = 0;
  int channels = 0;
  for (PortId id = 0; id < fabric.num_port_slots(); ++id) {
    if (load[id] > result.max_load) {
      result.max_load = load[id];
      result.max_channel = id;
    }
    if (fabric.is_inter_switch(id)) {
      sum += load[id];
      ++channels;
    }
  }
  result.mean_load = channels ? static_cast<double>(sum) / channels : 0;
  *out = result;
  return Status::OK();
}

}  // namespace sar
