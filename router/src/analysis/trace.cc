#include "sar/analysis/trace.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "analysis/sweep_visitors.h"
#include "sar/analysis/analysis.h"

namespace sar {

namespace {

// Build() keeps its walk state in `hops` until a switch is classified; real hop counts never
// reach these values because a route has at most one hop per switch and LIDs (hence switches)
// are fewer than 0xC000.
constexpr uint16_t kUnknown = 0xFFFF;
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
  for (NodeId sw : fabric.switches()) {
    port0_.push_back(fabric.port_id(sw, 0));
    ports_.push_back(fabric.num_ports(sw));
  }
}

void RouteTracer::LoadColumns(Lid block, LftColumns* c) const {
  const int n = fabric_.num_switches();
  c->num_switches_ = n;
  c->block_ = block;
  c->loaded_ = true;
  const size_t size = static_cast<size_t>(n) * LftColumns::kLids;
  c->port_.resize(size);
  c->next_.resize(size);
  const size_t first = static_cast<size_t>(block) * LftColumns::kLids;
  // Entries past max_lid: kNoRoute, as LftSet::port says.
  const size_t end = std::min(first + LftColumns::kLids, static_cast<size_t>(lfts_.max_lid()) + 1);
  const size_t count = end > first ? end - first : 0;
  if (count < LftColumns::kLids) {
    std::fill(c->port_.begin(), c->port_.end(), LftSet::kNoRoute);
    std::fill(c->next_.begin(), c->next_.end(), static_cast<int16_t>(kNowhere));
  }
  if (count == 0) return;
  uint8_t* port = c->port_.data();
  int16_t* next = c->next_.data();
  // Each switch's row line and port slots are cache misses of their own: ask for a few switches
  // ahead so that the misses overlap.
  constexpr int kAhead = 16;
  for (int s = 0; s < n; ++s) {
    if (s + kAhead < n) {
      const int a = s + kAhead;
      __builtin_prefetch(lfts_.row(a) + first);
      const char* slots = reinterpret_cast<const char*>(&next_switch_[port0_[a]]);
      for (int b = 0; b <= ports_[a] * 4; b += 64) __builtin_prefetch(slots + b);
    }
    const uint8_t* in = lfts_.row(s) + first;
    const int32_t* to = &next_switch_[port0_[s]];
    const int ports = ports_[s];
    for (size_t k = 0; k < count; ++k) {
      const uint8_t p = in[k];
      port[k * n + s] = p;
      next[k * n + s] = static_cast<int16_t>(p <= ports ? to[p] : kNowhere);
    }
  }
}

void RouteTracer::Build(Lid lid, DestinationTree* tree) const {
  BuildImpl(
      lid, nullptr, [&](int s) { return lfts_.port(s, lid); },
      [&](int, PortId ch) { return next_switch_[ch]; }, tree);
}

void RouteTracer::BuildFrom(Lid lid, const std::vector<int>& from, DestinationTree* tree) const {
  BuildImpl(
      lid, &from, [&](int s) { return lfts_.port(s, lid); },
      [&](int, PortId ch) { return next_switch_[ch]; }, tree);
}

void RouteTracer::BuildFrom(Lid lid, const std::vector<int>& from, const LftColumns& columns,
                            DestinationTree* tree) const {
  const size_t at = static_cast<size_t>(lid % LftColumns::kLids) * columns.num_switches_;
  const uint8_t* port = columns.port_.data() + at;
  const int16_t* next = columns.next_.data() + at;
  BuildImpl(
      lid, &from, [port](int s) { return port[s]; },
      [next](int s, PortId) { return static_cast<int32_t>(next[s]); }, tree);
}

// One walk per unclassified start switch: each switch's own step (its LFT entry) is read when
// the walk first reaches it; the walk marks switches as visiting until it meets a classified
// switch (the chain inherits its fate), a visiting one (the chain runs into a loop) or a switch
// whose own step ends the route. The second walk writes the result. Each switch is read once and
// walked at most twice; switches no walk reaches stay unknown.
// `entry(s)` is switch s's LFT entry for `lid`; `next_of(s, ch)` is next_switch(ch) for the
// channel ch it names.
template <class Entry, class Next>
void RouteTracer::BuildImpl(Lid lid, const std::vector<int>* from, Entry entry, Next next_of,
                            DestinationTree* tree) const {
  const int n = fabric_.num_switches();
  tree->lid = lid;
  tree->fate.assign(n, RouteFate::kHole);
  tree->hops.assign(n, kUnknown);
  tree->out.assign(n, kNoPort);
  tree->port.resize(n);
  tree->next.resize(n);
  const PortRef owner = fabric_.lid_owner(lid);
  const PortId owner_id = owner.valid() ? fabric_.port_id(owner) : kNoPort;
  std::vector<RouteFate>& fate = tree->fate;
  std::vector<uint16_t>& hops = tree->hops;
  std::vector<PortId>& out = tree->out;
  const std::vector<int32_t>& next_sw = tree->next;  // valid where out is set

  // Switch s's own step: classifies s if the step ends the route (hops 0 or 1, fate set), else
  // records its channel and marks it visiting.
  auto step = [&](int s) {
    const uint8_t p = entry(s);
    hops[s] = 0;
    if (p == LftSet::kNoRoute || p > ports_[s]) return;  // hole
    const PortId ch = port0_[s] + p;
    if (p == 0) {
      fate[s] = ch == owner_id ? RouteFate::kDelivered : RouteFate::kMisdelivered;
      return;
    }
    const int32_t next = next_of(s, ch);
    if (next == kNowhere) return;  // hole: uncabled port
    out[s] = ch;
    tree->port[s] = p;
    tree->next[s] = next;
    if (next == kToHca) {
      if (fabric_.peer_id(ch) == owner_id) {
        fate[s] = RouteFate::kDelivered;
        hops[s] = 1;
      } else {
        fate[s] = RouteFate::kMisdelivered;
      }
      return;
    }
    hops[s] = kVisiting;
  };

  const int starts = from != nullptr ? static_cast<int>(from->size()) : n;
  for (int i = 0; i < starts; ++i) {
    const int s = from != nullptr ? (*from)[i] : i;
    if (hops[s] != kUnknown) continue;
    int length = 0;
    int t = s;
    while (hops[t] == kUnknown) {
      step(t);
      if (hops[t] != kVisiting) break;  // t ends the route: classified
      ++length;
      t = next_sw[t];
    }
    if (hops[t] == kVisiting) {
      // Only this walk leaves switches visiting: the chain runs into a loop of its own.
      for (int u = s; hops[u] == kVisiting; u = next_sw[u]) {
        fate[u] = RouteFate::kLoop;
        hops[u] = 0;
      }
      continue;
    }
    const RouteFate f = fate[t];
    const int base = f == RouteFate::kDelivered ? hops[t] : 0;
    for (int u = s, k = 0; k < length; ++k, u = next_sw[u]) {
      fate[u] = f;
      hops[u] = f == RouteFate::kDelivered ? static_cast<uint16_t>(base + length - k) : 0;
    }
  }
  for (int s = 0; s < n; ++s) {
    if (hops[s] == kUnknown) hops[s] = 0;
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

// A problem route worth describing: from endpoint `source` (on switch `sw`) to `lid`, owned by
// endpoint `dest` on switch `leaf`.
struct Candidate {
  Lid lid;
  int leaf, sw, source, dest;
};

class TraceVisitor : public internal::SweepVisitor {
 public:
  TraceVisitor(const internal::SweepContext& ctx, const TraceOptions& options, TraceReport* out)
      : ctx_(ctx), options_(options), out_(out) {}

  void Start(int workers) override;
  void Visit(int worker, const internal::SweepDestination& d, const DestinationTree& tree) override;
  void Finish() override;

 private:
  struct Worker {
    Partial partial;
    std::vector<int> dist;  // BFS distance from switch dist_from
    int dist_from = -1;
    std::vector<int> queue;
    std::vector<int> sources;  // per switch: the current LID's sources there, off its node
    std::vector<Candidate> candidates;
  };

  void Bfs(int from, Worker* w) const;
  std::string Describe(const Candidate& c, const DestinationTree& tree,
                       const std::vector<int>& dist) const;

  const internal::SweepContext& ctx_;
  const TraceOptions options_;
  TraceReport* out_;
  std::vector<int> adj_begin_, adj_;  // switch graph, CSR
  std::vector<int> leaves_;           // the switches with endpoints (the only sources), ascending
  std::vector<Worker> workers_;
};

void TraceVisitor::Start(int workers) {
  workers_.assign(workers, {});
  leaves_ = ctx_.leaves;
  std::sort(leaves_.begin(), leaves_.end());
  if (!options_.check_min_hop) return;
  const Fabric& fabric = ctx_.fabric;
  const int n = fabric.num_switches();
  adj_begin_.assign(n + 1, 0);
  for (int s = 0; s < n; ++s) {
    const NodeId node = fabric.switches()[s];
    for (int p = 1; p <= fabric.num_ports(node); ++p) {
      const int t = ctx_.tracer.next_switch(fabric.port_id(node, p));
      if (t >= 0) adj_.push_back(t);
    }
    adj_begin_[s + 1] = static_cast<int>(adj_.size());
  }
}

void TraceVisitor::Bfs(int from, Worker* w) const {
  w->dist_from = from;
  w->dist.assign(ctx_.fabric.num_switches(), -1);
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

void TraceVisitor::Visit(int worker, const internal::SweepDestination& d,
                         const DestinationTree& tree) {
  // all_lids: every source to every LID; otherwise each source to the LID it sends to
  // (SweepContext::Sends: the base LID, or its group's LID with source LID offsets).
  const bool all = options_.all_lids;
  if (!d.first || d.leaf < 0 || (!d.sent && !all)) return;
  Worker& w = workers_[worker];
  const int n = ctx_.fabric.num_switches();
  if (options_.check_min_hop && w.dist_from != d.leaf) Bfs(d.leaf, &w);
  w.sources.resize(n);  // 0 off leaves_, which have no endpoints
  for (int s : leaves_) {
    w.sources[s] = static_cast<int>(all ? ctx_.on_switch[s].size() : ctx_.Senders(s, d));
  }
  Partial& part = w.partial;
  const NodeId dest_node = ctx_.endpoints[d.endpoint].node;
  for (int e : ctx_.of_node[dest_node]) {
    if (ctx_.leaf[e] >= 0 && (all || ctx_.Sends(e, d))) --w.sources[ctx_.leaf[e]];
  }
  int problems = 0;
  for (int s : leaves_) {  // by switch index, as the examples are picked
    const uint64_t count = w.sources[s];
    if (count == 0) continue;
    part.pairs += count;
    const RouteFate fate = tree.fate[s];
    bool problem = fate != RouteFate::kDelivered;
    switch (fate) {
      case RouteFate::kDelivered: {
        part.delivered += count;
        const int hops = 1 + tree.hops[s];
        part.total_hops += count * hops;
        part.max_hops = std::max(part.max_hops, hops);
        if (options_.check_min_hop && tree.hops[s] > w.dist[s] + 1) {
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
    // Up to max_examples per destination, by switch: Finish() picks from these.
    if (problem && problems < options_.max_examples) {
      for (int e : ctx_.on_switch[s]) {
        if (ctx_.endpoints[e].node == dest_node || (!all && !ctx_.Sends(e, d))) continue;
        w.candidates.push_back({d.lid, d.leaf, s, e, d.endpoint});
        ++problems;
        break;
      }
    }
  }
}

// Says where the route of `c` goes wrong, with node names.
std::string TraceVisitor::Describe(const Candidate& c, const DestinationTree& tree,
                                   const std::vector<int>& dist) const {
  const Fabric& fabric = ctx_.fabric;
  std::string text = fabric.name(ctx_.endpoints[c.source].node) + " -> lid " + LidHex(c.lid) +
                     " (" + fabric.name(ctx_.endpoints[c.dest].node) + "): ";
  int s = c.sw;
  const RouteFate fate = tree.fate[s];
  if (fate == RouteFate::kDelivered) {
    return text + std::to_string(1 + tree.hops[s]) + " hops, shortest " +
           std::to_string(dist[s] + 2);
  }
  // Walk to the switch where the route fails; the walk ends because every switch on it has the
  // same fate, and a looping walk stops at the first switch seen twice.
  std::vector<bool> seen(fabric.num_switches(), false);
  for (;;) {
    if (seen[s]) break;
    seen[s] = true;
    if (tree.out[s] == kNoPort) break;
    const int next = ctx_.tracer.next_switch(tree.out[s]);
    if (next < 0) break;
    s = next;
  }
  const NodeId at = fabric.switches()[s];
  switch (fate) {
    case RouteFate::kLoop:
      return text + "loop at " + fabric.name(at);
    case RouteFate::kHole: {
      const uint8_t p = ctx_.lfts.port(s, c.lid);
      return text + "hole at " + fabric.name(at) +
             (p == LftSet::kNoRoute ? std::string(" (no entry)")
                                    : " (port " + std::to_string(p) + " unusable)");
    }
    case RouteFate::kMisdelivered: {
      if (tree.out[s] == kNoPort) return text + "misdelivered to " + fabric.name(at) + " itself";
      const PortRef to = fabric.port_ref(fabric.peer_id(tree.out[s]));
      return text + "misdelivered at " + fabric.name(at) + " port " +
             std::to_string(fabric.port_ref(tree.out[s]).port) + " to " + fabric.name(to.node);
    }
    case RouteFate::kDelivered:
      break;
  }
  return text;
}

void TraceVisitor::Finish() {
  TraceReport report;
  uint64_t total_hops = 0;
  std::vector<Candidate> all;
  for (Worker& w : workers_) {
    report.pairs += w.partial.pairs;
    report.delivered += w.partial.delivered;
    report.unreachable += w.partial.unreachable;
    report.loops += w.partial.loops;
    report.non_min_hop += w.partial.non_min_hop;
    report.max_hops = std::max(report.max_hops, w.partial.max_hops);
    total_hops += w.partial.total_hops;
    all.insert(all.end(), w.candidates.begin(), w.candidates.end());
  }
  report.mean_hops = report.delivered
                         ? static_cast<double>(total_hops) / static_cast<double>(report.delivered)
                         : 0;
  // The examples are the first problems by (LID, source) among the first max_examples of each
  // destination switch by (LID, switch): the same whatever the order of the sweep.
  std::sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
    if (a.leaf != b.leaf) return a.leaf < b.leaf;
    return a.lid != b.lid ? a.lid < b.lid : a.sw < b.sw;
  });
  std::vector<Candidate> picked;
  for (size_t i = 0, taken = 0; i < all.size(); ++i) {
    if (i > 0 && all[i].leaf != all[i - 1].leaf) taken = 0;
    if (static_cast<int>(taken) < options_.max_examples) {
      picked.push_back(all[i]);
      ++taken;
    }
  }
  std::sort(picked.begin(), picked.end(), [](const Candidate& a, const Candidate& b) {
    return a.lid != b.lid ? a.lid < b.lid : a.source < b.source;
  });
  // Only the reported few are described; their trees and distances are built again.
  DestinationTree tree;
  Worker w;
  for (const Candidate& c : picked) {
    if (static_cast<int>(report.examples.size()) >= options_.max_examples) break;
    ctx_.tracer.Build(c.lid, &tree);
    if (options_.check_min_hop && w.dist_from != c.leaf) Bfs(c.leaf, &w);
    report.examples.push_back(Describe(c, tree, w.dist));
  }
  *out_ = std::move(report);
}

}  // namespace

namespace internal {

std::unique_ptr<SweepVisitor> NewTraceVisitor(const SweepContext& ctx, const TraceOptions& options,
                                              TraceReport* out) {
  return std::make_unique<TraceVisitor>(ctx, options, out);
}

}  // namespace internal

Status TraceAll(const Fabric& fabric, const LftSet& lfts, const TraceOptions& options,
                TraceReport* out) {
  AnalysisOptions o;
  o.what = kAnalyseTrace;
  o.trace = options;
  o.threads = options.threads;
  AnalysisResult r;
  SAR_RETURN_IF_ERROR(AnalyseRouting(fabric, lfts, o, &r));
  *out = std::move(r.trace);
  return Status::OK();
}

}  // namespace sar
