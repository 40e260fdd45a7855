#include "sar/analysis/oblivious.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <numeric>
#include <utility>

#include "sar/env.h"
#include "sar/model/lids.h"

namespace sar {
namespace {

using Pair = std::pair<uint32_t, uint32_t>;  // (source, destination) endpoint indices

// Maximum bipartite matching (Hopcroft-Karp) of a channel's pairs. `stamp`/`local` are scratch
// arrays of one slot per endpoint, reused across channels.
class Matcher {
 public:
  explicit Matcher(size_t endpoints) : src_local_(endpoints, -1), dst_local_(endpoints, -1) {}

  uint32_t Match(const std::vector<Pair>& pairs) {
    // Local numbering of the channel's sources (left) and destinations (right).
    std::vector<uint32_t> srcs, dsts;
    for (const Pair& p : pairs) {
      if (src_local_[p.first] < 0) {
        src_local_[p.first] = static_cast<int>(srcs.size());
        srcs.push_back(p.first);
      }
      if (dst_local_[p.second] < 0) {
        dst_local_[p.second] = static_cast<int>(dsts.size());
        dsts.push_back(p.second);
      }
    }
    const int nl = static_cast<int>(srcs.size()), nr = static_cast<int>(dsts.size());
    start_.assign(nl + 1, 0);
    for (const Pair& p : pairs) ++start_[src_local_[p.first] + 1];
    std::partial_sum(start_.begin(), start_.end(), start_.begin());
    adj_.resize(pairs.size());
    std::vector<int> fill(start_.begin(), start_.end() - 1);
    for (const Pair& p : pairs) adj_[fill[src_local_[p.first]]++] = dst_local_[p.second];
    for (uint32_t s : srcs) src_local_[s] = -1;
    for (uint32_t d : dsts) dst_local_[d] = -1;

    match_l_.assign(nl, -1);
    match_r_.assign(nr, -1);
    dist_.assign(nl, 0);
    uint32_t size = 0;
    // Greedy start, then augmenting phases.
    for (int u = 0; u < nl; ++u) {
      for (int i = start_[u]; i < start_[u + 1]; ++i) {
        if (match_r_[adj_[i]] < 0) {
          match_l_[u] = adj_[i];
          match_r_[adj_[i]] = u;
          ++size;
          break;
        }
      }
    }
    while (Bfs(nl)) {
      it_.assign(start_.begin(), start_.end() - 1);
      for (int u = 0; u < nl; ++u) {
        if (match_l_[u] < 0 && Dfs(u)) ++size;
      }
    }
    return size;
  }

 private:
  static constexpr int kInf = std::numeric_limits<int>::max();

  bool Bfs(int nl) {
    std::deque<int> q;
    bool found = false;
    for (int u = 0; u < nl; ++u) {
      dist_[u] = match_l_[u] < 0 ? 0 : kInf;
      if (dist_[u] == 0) q.push_back(u);
    }
    while (!q.empty()) {
      const int u = q.front();
      q.pop_front();
      for (int i = start_[u]; i < start_[u + 1]; ++i) {
        const int w = match_r_[adj_[i]];
        if (w < 0) {
          found = true;
        } else if (dist_[w] == kInf) {
          dist_[w] = dist_[u] + 1;
          q.push_back(w);
        }
      }
    }
    return found;
  }

  // Iterative would avoid deep recursion; augmenting paths are at most 2 * min(nl, nr) long and
  // channels have at most a few thousand endpoints, so the recursion stays shallow enough.
  bool Dfs(int u) {
    for (int& i = it_[u]; i < start_[u + 1]; ++i) {
      const int v = adj_[i];
      const int w = match_r_[v];
      if (w < 0 || (dist_[w] == dist_[u] + 1 && Dfs(w))) {
        match_l_[u] = v;
        match_r_[v] = u;
        ++i;
        return true;
      }
    }
    dist_[u] = kInf;
    return false;
  }

  std::vector<int> src_local_, dst_local_;
  std::vector<int> start_, adj_, match_l_, match_r_, dist_, it_;
};

}  // namespace

bool IsFullBisectionTree(const Fabric& f) {
  // Level: hop distance from the nearest HCA (HCAs 0).
  std::vector<int> level(f.num_nodes(), -1);
  std::deque<NodeId> q;
  for (NodeId h : f.hcas()) {
    level[h] = 0;
    q.push_back(h);
  }
  while (!q.empty()) {
    const NodeId n = q.front();
    q.pop_front();
    for (int p = 1; p <= f.num_ports(n); ++p) {
      const PortRef peer = f.peer({n, p});
      if (peer.valid() && level[peer.node] < 0) {
        level[peer.node] = level[n] + 1;
        q.push_back(peer.node);
      }
    }
  }
  for (NodeId sw : f.switches()) {
    int up = 0, down = 0;
    for (int p = 1; p <= f.num_ports(sw); ++p) {
      const PortRef peer = f.peer({sw, p});
      if (!peer.valid()) continue;
      if (level[peer.node] > level[sw]) ++up;
      if (level[peer.node] < level[sw]) ++down;
    }
    if (up > 0 && up < down) return false;
  }
  return true;
}

Status ComputeObliviousRatio(const Fabric& f, const LftSet& lfts, const ObliviousOptions& o,
                             ObliviousResult* out) {
  const Stopwatch t0;
  SAR_RETURN_IF_ERROR(lfts.CheckFits(f));
  ObliviousResult r;
  r.full_bisection = IsFullBisectionTree(f);
  r.per_channel.assign(f.num_port_slots(), 0);
  const std::vector<PortRef> ends = f.Endpoints();
  const size_t n = ends.size();
  // Sources grouped by the switch they hang off and the LID offset they send to: one walk per
  // (group, destination).
  const std::vector<uint8_t>* offset =
      o.source_lid_offset != nullptr && !o.source_lid_offset->empty() ? o.source_lid_offset
                                                                      : nullptr;
  if (offset != nullptr && offset->size() != n) {
    return Status::InvalidArgument("oblivious ratio: " + std::to_string(offset->size()) +
                                   " source LID offsets for " + std::to_string(n) + " endpoints");
  }
  struct SourceGroup {
    int sw;
    uint8_t offset;
    std::vector<uint32_t> members;
  };
  std::vector<SourceGroup> groups;
  {
    std::vector<int> group_of(static_cast<size_t>(f.num_switches()) * 256, -1);
    for (size_t i = 0; i < n; ++i) {
      const PortRef peer = f.peer(ends[i]);
      if (!peer.valid() || !f.is_switch(peer.node)) continue;
      const int sw = f.switch_index(peer.node);
      const uint8_t off = offset != nullptr ? (*offset)[i] : 0;
      int& g = group_of[static_cast<size_t>(sw) * 256 + off];
      if (g < 0) {
        g = static_cast<int>(groups.size());
        groups.push_back({sw, off, {}});
      }
      groups[g].members.push_back(static_cast<uint32_t>(i));
    }
  }
  // Every pair crosses at least one switch-to-switch channel unless both ends share a switch:
  // refuse at once what cannot fit, before walking anything.
  if (n > 1 && static_cast<double>(n) * (n - 1) > static_cast<double>(o.max_entries)) {
    return Status::InvalidArgument("oblivious ratio: " + std::to_string(n) +
                                   " endpoints are too many to match every channel's pairs (" +
                                   std::to_string(n * (n - 1)) + " pairs, limit " +
                                   std::to_string(o.max_entries) + " pair-channel entries)");
  }
  // A route between two switches crosses at least as many switch-to-switch channels as their
  // shortest path: if the endpoints' pairs times those distances exceed the limit, no routing's
  // entries fit, so refuse at once (a 3-level tree of ~4k hosts used to walk 1.7 s and 550 MB
  // into the pairs before finding out).
  {
    std::vector<uint64_t> hosts_on(f.num_switches(), 0);
    std::vector<int> leaves;
    for (size_t i = 0; i < n; ++i) {
      const PortRef peer = f.peer(ends[i]);
      if (!peer.valid() || !f.is_switch(peer.node)) continue;
      const int sw = f.switch_index(peer.node);
      if (hosts_on[sw]++ == 0) leaves.push_back(sw);
    }
    double at_least = 0;
    std::vector<int> dist(f.num_switches());
    std::vector<int> queue;
    for (int from : leaves) {
      std::fill(dist.begin(), dist.end(), -1);
      queue.assign(1, from);
      dist[from] = 0;
      for (size_t k = 0; k < queue.size(); ++k) {
        const NodeId u = f.switches()[queue[k]];
        for (int p = 1; p <= f.num_ports(u); ++p) {
          const PortRef q = f.peer({u, p});
          if (!q.valid() || !f.is_switch(q.node)) continue;
          const int v = f.switch_index(q.node);
          if (dist[v] >= 0) continue;
          dist[v] = dist[queue[k]] + 1;
          queue.push_back(v);
        }
      }
      for (int to : leaves) {
        if (dist[to] > 0) {
          at_least += static_cast<double>(hosts_on[from]) * hosts_on[to] * dist[to];
        }
      }
    }
    if (at_least > static_cast<double>(o.max_entries)) {
      return Status::InvalidArgument(
          "oblivious ratio: " + std::to_string(n) +
          " endpoints are too many to match every channel's pairs (their routes cross at least " +
          std::to_string(static_cast<uint64_t>(at_least)) +
          " pair-channel entries at their shortest, limit " + std::to_string(o.max_entries) + ")");
    }
  }
  std::vector<std::vector<Pair>> pairs(f.num_port_slots());
  uint64_t entries = 0;
  std::vector<PortId> path;
  for (size_t j = 0; j < n; ++j) {
    for (const SourceGroup& group : groups) {
      const Lid lid = SourceLid(f, ends[j], group.offset);
      path.clear();
      NodeId sw = f.switches()[group.sw];
      for (int hops = 0; hops <= f.num_switches(); ++hops) {  // a loop ends the walk
        const uint8_t port = lfts.port(f.switch_index(sw), lid);
        if (port == 0 || port == LftSet::kNoRoute || port > f.num_ports(sw)) break;
        const PortId c = f.port_id(sw, port);
        if (!f.is_inter_switch(c)) break;
        path.push_back(c);
        sw = f.port_node(f.peer_id(c));
      }
      for (PortId c : path) {
        for (uint32_t i : group.members) {
          if (i != j) pairs[c].push_back({i, static_cast<uint32_t>(j)});
        }
      }
      entries += path.size() * group.members.size();
      if (entries > o.max_entries) {
        return Status::InvalidArgument(
            "oblivious ratio: the fabric has too many routed pairs per channel to match (more "
            "than " +
            std::to_string(o.max_entries) + " pair-channel entries)");
      }
    }
  }
  // Upper bounds: distinct sources and destinations per channel.
  std::vector<std::pair<uint32_t, PortId>> order;
  std::vector<uint32_t> seen_s(n, UINT32_MAX), seen_d(n, UINT32_MAX);
  for (PortId c = 0; c < f.num_port_slots(); ++c) {
    if (pairs[c].empty()) continue;
    uint32_t ns = 0, nd = 0;
    for (const Pair& p : pairs[c]) {
      if (seen_s[p.first] != static_cast<uint32_t>(c)) {
        seen_s[p.first] = c;
        ++ns;
      }
      if (seen_d[p.second] != static_cast<uint32_t>(c)) {
        seen_d[p.second] = c;
        ++nd;
      }
    }
    order.push_back({std::min(ns, nd), c});
  }
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  Matcher matcher(n);
  for (const auto& [bound, c] : order) {
    if (!o.all_channels && bound <= r.max_disjoint) break;
    const uint32_t m = matcher.Match(pairs[c]);
    ++r.channels_matched;
    r.per_channel[c] = m;
    if (m > r.max_disjoint) {
      r.max_disjoint = m;
      r.worst_channel = c;
    }
  }
  // Endpoints on one switch only: every pair's route crosses its HCA links, each carrying one
  // source (or one destination): mds 1.
  if (r.max_disjoint == 0 && n >= 2) r.max_disjoint = 1;
  r.ms = t0.ElapsedMs();
  *out = std::move(r);
  return Status::OK();
}

}  // namespace sar
