#include "sar/analysis/trace.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "analysis/sweep_visitors.h"

namespace sar {

namespace {

std::string LidHex(Lid lid) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%04x", static_cast<unsigned>(lid));
  return buf;
}

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
    internal::TraceCounts partial;
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
  internal::TraceCounts& part = w.partial;
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
  internal::MergeTraceCounts(
      workers_, [](const Worker& w) -> const internal::TraceCounts& { return w.partial; }, &report);
  std::vector<Candidate> all;
  for (Worker& w : workers_) all.insert(all.end(), w.candidates.begin(), w.candidates.end());
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

}  // namespace sar
