#include "sar/trace.h"

#include <algorithm>
#include <cstdio>

#include "trace_parallel.h"

namespace sar {

namespace {

// Build() keeps its walk state in `hops` until a switch is classified; real hop counts never
// reach these values because a route has at most one hop per switch and LIDs (hence switches)
// are fewer than 0xC000.
constexpr uint16_t kPending = 0xFFFF;
constexpr uint16_t kVisiting = 0xFFFE;

std::string LidHex(Lid lid) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%04x", static_cast<unsigned>(lid));
  return buf;
}

}  // namespace

RouteTracer::RouteTracer(const Fabric& fabric, const LftSet& lfts)
    : fabric_(fabric), lfts_(lfts), next_switch_(fabric.num_port_slots(), kNowhere) {
  for (PortId id = 0; id < fabric.num_port_slots(); ++id) {
    const PortId peer = fabric.peer_id(id);
    if (peer == kNoPort) continue;
    const NodeId n = fabric.port_node(peer);
    next_switch_[id] = fabric.is_switch(n) ? fabric.switch_index(n) : kToHca;
  }
}

void RouteTracer::Build(Lid lid, DestinationTree* tree) const {
  const int n = fabric_.num_switches();
  tree->lid = lid;
  tree->fate.assign(n, RouteFate::kHole);
  tree->hops.assign(n, 0);
  tree->out.assign(n, kNoPort);
  const PortRef owner = fabric_.lid_owner(lid);
  const PortId owner_id = owner.valid() ? fabric_.port_id(owner) : kNoPort;
  const std::vector<NodeId>& switches = fabric_.switches();

  // Pass 1: each switch's own step. Switches whose step ends the route are classified now; the
  // rest forward to another switch and are left pending.
  for (int s = 0; s < n; ++s) {
    const NodeId node = switches[s];
    const uint8_t p = lfts_.port(s, lid);
    if (p == LftSet::kNoRoute || p > fabric_.num_ports(node)) continue;  // hole
    const PortId ch = fabric_.port_id(node, p);
    if (p == 0) {
      tree->fate[s] = ch == owner_id ? RouteFate::kDelivered : RouteFate::kMisdelivered;
      continue;
    }
    const int32_t next = next_switch_[ch];
    if (next == kNowhere) continue;  // hole: uncabled port
    tree->out[s] = ch;
    if (next == kToHca) {
      if (fabric_.peer_id(ch) == owner_id) {
        tree->fate[s] = RouteFate::kDelivered;
        tree->hops[s] = 1;
      } else {
        tree->fate[s] = RouteFate::kMisdelivered;
      }
      continue;
    }
    tree->hops[s] = kPending;
  }

  // Pass 2: follow the pending chains. The first walk from `s` marks switches as visiting until
  // it meets a classified switch (the chain inherits its fate) or a visiting one (the chain runs
  // into a loop). The second walk writes the result. Each switch is walked at most twice.
  for (int s = 0; s < n; ++s) {
    if (tree->hops[s] != kPending) continue;
    int length = 0;
    int t = s;
    while (tree->hops[t] == kPending) {
      tree->hops[t] = kVisiting;
      ++length;
      t = next_switch_[tree->out[t]];
    }
    if (tree->hops[t] == kVisiting) {
      for (int u = s; tree->hops[u] == kVisiting; u = next_switch_[tree->out[u]]) {
        tree->fate[u] = RouteFate::kLoop;
        tree->hops[u] = 0;
      }
      continue;
    }
    const RouteFate fate = tree->fate[t];
    const int base = fate == RouteFate::kDelivered ? tree->hops[t] : 0;
    for (int u = s, i = 0; i < length; ++i, u = next_switch_[tree->out[u]]) {
      tree->fate[u] = fate;
      tree->hops[u] = fate == RouteFate::kDelivered ? static_cast<uint16_t>(base + length - i) : 0;
    }
  }
}

std::vector<PortId> RouteTracer::Path(PortRef src, Lid lid, RouteFate* fate) const {
  std::vector<PortId> path;
  const PortId up = fabric_.port_id(src);
  if (next_switch_[up] < 0) {  // uncabled, or (impossibly) cabled to an HCA
    *fate = next_switch_[up] == kNowhere ? RouteFate::kHole : RouteFate::kMisdelivered;
    return path;
  }
  path.push_back(up);
  const PortRef owner = fabric_.lid_owner(lid);
  const PortId owner_id = owner.valid() ? fabric_.port_id(owner) : kNoPort;
  std::vector<bool> visited(fabric_.num_switches(), false);
  int s = next_switch_[up];
  for (;;) {
    if (visited[s]) {
      *fate = RouteFate::kLoop;
      return path;
    }
    visited[s] = true;
    const NodeId node = fabric_.switches()[s];
    const uint8_t p = lfts_.port(s, lid);
    if (p == LftSet::kNoRoute || p > fabric_.num_ports(node)) {
      *fate = RouteFate::kHole;
      return path;
    }
    const PortId ch = fabric_.port_id(node, p);
    if (p == 0) {
      *fate = ch == owner_id ? RouteFate::kDelivered : RouteFate::kMisdelivered;
      return path;
    }
    const int32_t next = next_switch_[ch];
    if (next == kNowhere) {
      *fate = RouteFate::kHole;
      return path;
    }
    path.push_back(ch);
    if (next == kToHca) {
      *fate = fabric_.peer_id(ch) == owner_id ? RouteFate::kDelivered : RouteFate::kMisdelivered;
      return path;
    }
    s = next;
  }
}

namespace {

// Per-worker partial report. Everything merges by sum or max, so the result does not depend on
// the number of threads.
struct Partial {
  uint64_t pairs = 0, delivered = 0, unreachable = 0, loops = 0, non_min_hop = 0;
  uint64_t total_hops = 0;
  int max_hops = 0;
};

struct Example {
  Lid lid;
  int source;  // index into endpoints
  std::string text;
};

class Tracer {
 public:
  Tracer(const Fabric& fabric, const LftSet& lfts, const TraceOptions& options)
      : fabric_(fabric), lfts_(lfts), options_(options), tracer_(fabric, lfts) {}

  Status Run(TraceReport* out);

 private:
  struct Dest {
    Lid lid;
    int endpoint;
  };
  struct Worker {
    Partial partial;
    DestinationTree tree;
    std::vector<int> dist;  // BFS distance from the current group's switch
    std::vector<int> queue;
    std::vector<int> sources;    // per switch: endpoints there, minus the destination's node
    std::vector<uint32_t> seen;  // per switch: walk stamp, for locating loops in examples
    uint32_t stamp = 0;
  };

  void Prepare();
  void Bfs(int from, Worker* w) const;
  void TraceGroup(size_t group, Worker* w);
  std::string Describe(int source, const Dest& d, Worker* w) const;

  const Fabric& fabric_;
  const LftSet& lfts_;
  const TraceOptions& options_;
  RouteTracer tracer_;

  std::vector<PortRef> endpoints_;
  std::vector<int> leaf_;                       // per endpoint: switch index it is cabled to
  std::vector<std::vector<int>> on_switch_;     // per switch: endpoint indices, in order
  std::vector<std::vector<int>> of_node_;       // per node: endpoint indices
  std::vector<int> adj_begin_, adj_;            // switch graph, CSR
  std::vector<Dest> dests_;                     // sorted by (destination switch, LID)
  std::vector<size_t> group_begin_;             // dests_ ranges sharing a destination switch
  std::vector<std::vector<Example>> examples_;  // per group
};

void Tracer::Prepare() {
  const int n = fabric_.num_switches();
  endpoints_ = fabric_.Endpoints();
  leaf_.resize(endpoints_.size());
  on_switch_.assign(n, {});
  of_node_.assign(fabric_.num_nodes(), {});
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    leaf_[i] = tracer_.next_switch(fabric_.port_id(endpoints_[i]));
    if (leaf_[i] >= 0) on_switch_[leaf_[i]].push_back(static_cast<int>(i));
    of_node_[endpoints_[i].node].push_back(static_cast<int>(i));
  }
  adj_begin_.assign(n + 1, 0);
  for (int s = 0; s < n; ++s) {
    const NodeId node = fabric_.switches()[s];
    for (int p = 1; p <= fabric_.num_ports(node); ++p) {
      const int t = tracer_.next_switch(fabric_.port_id(node, p));
      if (t >= 0) adj_.push_back(t);
    }
    adj_begin_[s + 1] = static_cast<int>(adj_.size());
  }
  for (size_t i = 0; i < endpoints_.size(); ++i) {
    const Lid base = fabric_.base_lid(endpoints_[i]);
    if (base == 0 || leaf_[i] < 0) continue;
    const Lid count = options_.all_lids ? Lid{1} << fabric_.lmc(endpoints_[i]) : 1;
    for (Lid l = base; l < base + count; ++l) dests_.push_back({l, static_cast<int>(i)});
  }
  std::sort(dests_.begin(), dests_.end(), [&](const Dest& a, const Dest& b) {
    const int la = leaf_[a.endpoint], lb = leaf_[b.endpoint];
    return la != lb ? la < lb : a.lid < b.lid;
  });
  for (size_t i = 0; i < dests_.size(); ++i) {
    if (i == 0 || leaf_[dests_[i].endpoint] != leaf_[dests_[i - 1].endpoint]) {
      group_begin_.push_back(i);
    }
  }
  group_begin_.push_back(dests_.size());
  examples_.assign(group_begin_.size() - 1, {});
}

void Tracer::Bfs(int from, Worker* w) const {
  w->dist.assign(fabric_.num_switches(), -1);
  w->queue.clear();
  w->dist[from] = 0;
  w->queue.push_back(from);
  for (size_t head = 0; head < w->queue.size(); ++head) {
    const int s = w->queue[head];
    for (int i = adj_begin_[s]; i < adj_begin_[s + 1]; ++i) {
      const int t = adj_[i];
      if (w->dist[t] < 0) {
        w->dist[t] = w->dist[s] + 1;
        w->queue.push_back(t);
      }
    }
  }
}

void Tracer::TraceGroup(size_t group, Worker* w) {
  const int n = fabric_.num_switches();
  const size_t begin = group_begin_[group], end = group_begin_[group + 1];
  const int dest_switch = leaf_[dests_[begin].endpoint];
  if (options_.check_min_hop) Bfs(dest_switch, w);
  if (w->sources.empty()) {
    w->sources.resize(n);
    for (int s = 0; s < n; ++s) w->sources[s] = static_cast<int>(on_switch_[s].size());
  }
  Partial& part = w->partial;
  std::vector<Example>& examples = examples_[group];
  const int max_examples = std::max(options_.max_examples, 0);
  for (size_t i = begin; i < end; ++i) {
    const Dest& d = dests_[i];
    tracer_.Build(d.lid, &w->tree);
    const NodeId dest_node = endpoints_[d.endpoint].node;
    for (int e : of_node_[dest_node]) {
      if (leaf_[e] >= 0) --w->sources[leaf_[e]];
    }
    for (int s = 0; s < n; ++s) {
      const uint64_t count = w->sources[s];
      if (count == 0) continue;
      part.pairs += count;
      const RouteFate fate = w->tree.fate[s];
      bool problem = fate != RouteFate::kDelivered;
      switch (fate) {
        case RouteFate::kDelivered: {
          part.delivered += count;
          const int hops = 1 + w->tree.hops[s];
          part.total_hops += count * hops;
          part.max_hops = std::max(part.max_hops, hops);
          if (options_.check_min_hop && w->tree.hops[s] > w->dist[s] + 1) {
            part.non_min_hop += count;
            problem = true;
          }
          break;
        }
        case RouteFate::kLoop:
          part.loops += count;
          break;
        case RouteFate::kHole:
        case RouteFate::kMisdelivered:
          part.unreachable += count;
          break;
      }
      if (problem && static_cast<int>(examples.size()) < max_examples) {
        for (int e : on_switch_[s]) {
          if (endpoints_[e].node == dest_node) continue;
          examples.push_back({d.lid, e, Describe(e, d, w)});
          break;
        }
      }
    }
    for (int e : of_node_[dest_node]) {
      if (leaf_[e] >= 0) ++w->sources[leaf_[e]];
    }
  }
}

// Says where the route from endpoint `source` to `d` goes wrong, with node names.
std::string Tracer::Describe(int source, const Dest& d, Worker* w) const {
  const DestinationTree& tree = w->tree;
  std::string text = fabric_.name(endpoints_[source].node) + " -> lid " + LidHex(d.lid) + " (" +
                     fabric_.name(endpoints_[d.endpoint].node) + "): ";
  int s = leaf_[source];
  const RouteFate fate = tree.fate[s];
  if (fate == RouteFate::kDelivered) {
    return text + std::to_string(1 + tree.hops[s]) + " hops, shortest " +
           std::to_string(w->dist[s] + 2);
  }
  // Walk to the switch where the route fails; the walk ends because every switch on it has the
  // same fate, and a looping walk stops at the first switch seen twice.
  if (w->seen.size() != static_cast<size_t>(fabric_.num_switches())) {
    w->seen.assign(fabric_.num_switches(), 0);
    w->stamp = 0;
  }
  ++w->stamp;
  for (;;) {
    if (w->seen[s] == w->stamp) break;
    w->seen[s] = w->stamp;
    if (tree.out[s] == kNoPort) break;
    const int next = tracer_.next_switch(tree.out[s]);
    if (next < 0) break;
    s = next;
  }
  const NodeId at = fabric_.switches()[s];
  switch (fate) {
    case RouteFate::kLoop:
      return text + "loop at " + fabric_.name(at);
    case RouteFate::kHole: {
      const uint8_t p = lfts_.port(s, d.lid);
      return text + "hole at " + fabric_.name(at) +
             (p == LftSet::kNoRoute ? std::string(" (no entry)")
                                    : " (port " + std::to_string(p) + " unusable)");
    }
    case RouteFate::kMisdelivered: {
      if (tree.out[s] == kNoPort) return text + "misdelivered to " + fabric_.name(at) + " itself";
      const PortRef to = fabric_.port_ref(fabric_.peer_id(tree.out[s]));
      return text + "misdelivered at " + fabric_.name(at) + " port " +
             std::to_string(fabric_.port_ref(tree.out[s]).port) + " to " + fabric_.name(to.node);
    }
    case RouteFate::kDelivered:
      break;
  }
  return text;
}

Status Tracer::Run(TraceReport* out) {
  SAR_RETURN_IF_ERROR(lfts_.CheckFits(fabric_));
  Prepare();
  const size_t groups = group_begin_.size() - 1;
  const int workers = internal::WorkerCount(options_.threads, groups, 1);
  std::vector<Worker> state(workers);
  internal::ParallelFor(workers, groups, 1,
                        [&](int worker, size_t group) { TraceGroup(group, &state[worker]); });

  TraceReport report;
  uint64_t total_hops = 0;
  for (const Worker& w : state) {
    report.pairs += w.partial.pairs;
    report.delivered += w.partial.delivered;
    report.unreachable += w.partial.unreachable;
    report.loops += w.partial.loops;
    report.non_min_hop += w.partial.non_min_hop;
    report.max_hops = std::max(report.max_hops, w.partial.max_hops);
    total_hops += w.partial.total_hops;
  }
  report.mean_hops = report.delivered
                         ? static_cast<double>(total_hops) / static_cast<double>(report.delivered)
                         : 0;
  std::vector<Example> all;
  for (auto& group : examples_) {
    for (Example& e : group) all.push_back(std::move(e));
  }
  std::sort(all.begin(), all.end(), [](const Example& a, const Example& b) {
    return a.lid != b.lid ? a.lid < b.lid : a.source < b.source;
  });
  for (Example& e : all) {
    if (static_cast<int>(report.examples.size()) >= options_.max_examples) break;
    report.examples.push_back(std::move(e.text));
  }
  *out = std::move(report);
  return Status::OK();
}

}  // namespace

Status TraceAll(const Fabric& fabric, const LftSet& lfts, const TraceOptions& options,
                TraceReport* out) {
  Tracer tracer(fabric, lfts, options);
  return tracer.Run(out);
}

}  // namespace sar
