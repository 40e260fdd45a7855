#include "engines/sar_refine.h"

#include <algorithm>
#include <unordered_map>

namespace sar::internal {
namespace {

// One job destination's tree: next arc per switch (-1: the root or no route), and the routes
// each switch forwards (its own sources plus everything upstream), intra-job and all.
struct Tree {
  int dest = 0;  // index into g.dests
  std::vector<int> next;
  std::vector<uint32_t> flow_eff;
  std::vector<uint32_t> flow_all;
};

class Refiner {
 public:
  Refiner(const SwitchGraph& g, const std::vector<std::vector<int>>& jobs, LftSet* lfts)
      : g_(g), jobs_(jobs), lfts_(lfts) {
    const int n = g.num_switches;
    arc_of_port_.assign(static_cast<size_t>(n) * 256, -1);
    arc_from_.assign(g.arc_to.size(), 0);
    for (int s = 0; s < n; ++s) {
      for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
        arc_of_port_[static_cast<size_t>(s) * 256 + g.arc_port[a]] = a;
        arc_from_[a] = s;
      }
    }
    eff_.assign(g.arc_to.size(), 0);
    all_.assign(g.arc_to.size(), 0);
    hops_of_root_.assign(n, {});
    order_of_root_.assign(n, {});
    crosses_.assign(n, 0);
  }

  size_t JobDestinations() {
    std::vector<char> in_job(g_.num_endpoint_dests, 0);
    for (const auto& j : jobs_) {
      for (int e : j) in_job[e] = 1;
    }
    jobs_of_dest_.assign(g_.num_endpoint_dests, {});
    for (int j = 0; j < static_cast<int>(jobs_.size()); ++j) {
      for (int e : jobs_[j]) jobs_of_dest_[e].push_back(j);
    }
    for (int e = 0; e < g_.num_endpoint_dests; ++e) dests_of_node_[g_.dests[e].node].push_back(e);
    size_t count = 0;
    for (int e = 0; e < g_.num_endpoint_dests; ++e) count += in_job[e];
    return count;
  }

  void Load() {
    const int n = g_.num_switches;
    std::vector<uint32_t> src_eff(n), src_all(n);
    std::vector<uint32_t> seen(g_.num_endpoint_dests, 0);
    uint32_t epoch = 0;
    for (int e = 0; e < g_.num_endpoint_dests; ++e) {
      const Destination& d = g_.dests[e];
      if (d.sw < 0 || d.base_lid == 0 || d.base_lid > lfts_->max_lid()) continue;
      for (int s = 0; s < n; ++s) src_all[s] = g_.hcas_on_switch[s];
      std::fill(src_eff.begin(), src_eff.end(), 0);
      for (int o : dests_of_node_[d.node]) {  // d's own node sends it nothing
        if (g_.dests[o].sw >= 0) --src_all[g_.dests[o].sw];
      }
      ++epoch;
      for (int j : jobs_of_dest_[e]) {
        for (int m : jobs_[j]) {
          if (seen[m] == epoch) continue;
          seen[m] = epoch;
          const Destination& src = g_.dests[m];
          if (src.node != d.node && src.sw >= 0) ++src_eff[src.sw];
        }
      }
      Tree t;
      t.dest = e;
      if (BuildTree(d, src_eff, src_all, &t)) trees_.push_back(std::move(t));
    }
  }

  // Three phases of the same local search: the effective load down, raising no channel's
  // all-pairs load above max(cap, the current max); the all-pairs load down to the cap without
  // raising the max effective load; the effective load again within what is left.
  void Run(const RefineOptions& o, RefineStats* st) {
    st->all_before = Max(all_);
    st->effective_before = Max(eff_);
    const uint64_t target = o.all_pairs_cap;
    int moves = 0;
    max_work_ = o.max_work;
    pinned_ = o.pinned != nullptr && !o.pinned->empty() ? o.pinned : nullptr;
    auto phase = [&](bool effective, uint64_t cap) {
      std::vector<uint64_t>& load = effective ? eff_ : all_;
      while (moves < o.max_moves && work_ < max_work_) {
        const uint64_t m = Max(load);
        if (m == 0 || (!effective && m <= target)) break;
        bool progress = false;
        for (size_t a = 0; a < load.size() && moves < o.max_moves && work_ < max_work_; ++a) {
          if (load[a] == m && Relieve(static_cast<int>(a), m, effective, cap)) {
            ++moves;
            progress = true;
          }
        }
        if (!progress) break;
      }
    };
    // The effective phase first: under the work limit (large fabrics) the goal of the engine
    // comes before the price.
    phase(true, std::max(target, Max(all_)));
    if (target != std::numeric_limits<uint64_t>::max()) {
      phase(false, Max(eff_));
      phase(true, std::max(target, Max(all_)));
    }
    st->moves = moves;
    st->work_limited = work_ >= max_work_;
    st->effective_after = Max(eff_);
    st->all_after = Max(all_);
  }

 private:
  static uint64_t Max(const std::vector<uint64_t>& v) {
    uint64_t m = 0;
    for (uint64_t x : v) m = std::max(m, x);
    return m;
  }

  const std::vector<int>& Hops(int root) {
    std::vector<int>& h = hops_of_root_[root];
    if (!h.empty()) return h;
    h.assign(g_.num_switches, -1);
    std::vector<int>& q = order_of_root_[root];
    q.push_back(root);
    h[root] = 0;
    for (size_t i = 0; i < q.size(); ++i) {
      for (int a = g_.arc_begin[q[i]]; a < g_.arc_begin[q[i] + 1]; ++a) {
        if (h[g_.arc_to[a]] < 0) {
          h[g_.arc_to[a]] = h[q[i]] + 1;
          q.push_back(g_.arc_to[a]);
        }
      }
    }
    return h;
  }

  // Reads the destination's tree from the tables and adds its loads. False (loads added by
  // walking, tree not kept) if some switch does not route it one hop nearer: not ours to move.
  bool BuildTree(const Destination& d, const std::vector<uint32_t>& src_eff,
                 const std::vector<uint32_t>& src_all, Tree* t) {
    const int n = g_.num_switches;
    const std::vector<int>& hops = Hops(d.sw);
    t->next.assign(n, -1);
    bool min_hop = true;
    int max_hops = 0;
    for (int s = 0; s < n; ++s) {
      if (s == d.sw) continue;
      const uint8_t port = lfts_->port(s, d.base_lid);
      if (port == LftSet::kNoRoute || port == 0) continue;
      const int a = arc_of_port_[static_cast<size_t>(s) * 256 + port];
      if (a < 0) continue;
      t->next[s] = a;
      if (hops[s] < 0 || hops[g_.arc_to[a]] != hops[s] - 1) min_hop = false;
      max_hops = std::max(max_hops, hops[s]);
    }
    if (!min_hop) {
      for (int s = 0; s < n; ++s) {
        if (src_eff[s] == 0 && src_all[s] == 0) continue;
        // Walk with a step limit: a looping route delivers nothing (the metrics count it so).
        std::vector<int> path;
        int u = s;
        for (int steps = 0; u != d.sw && t->next[u] >= 0 && steps <= n; ++steps) {
          path.push_back(t->next[u]);
          u = g_.arc_to[t->next[u]];
        }
        if (u != d.sw) continue;
        for (int a : path) {
          eff_[a] += src_eff[s];
          all_[a] += src_all[s];
        }
      }
      return false;
    }
    t->flow_eff.assign(src_eff.begin(), src_eff.end());
    t->flow_all.assign(src_all.begin(), src_all.end());
    // Farthest first, so each switch has its upstream flow before passing it on.
    std::vector<std::vector<int>> by_hops(max_hops + 1);
    for (int s = 0; s < n; ++s) {
      if (t->next[s] >= 0) by_hops[hops[s]].push_back(s);
    }
    for (int h = max_hops; h >= 1; --h) {
      for (int s : by_hops[h]) {
        const int a = t->next[s];
        eff_[a] += t->flow_eff[s];
        all_[a] += t->flow_all[s];
        t->flow_eff[g_.arc_to[a]] += t->flow_eff[s];
        t->flow_all[g_.arc_to[a]] += t->flow_all[s];
      }
    }
    return true;
  }

  // Tries the best single move that takes routes off arc h, which carries the maximum m of the
  // load being lowered (effective or all-pairs). The routes' new channels must stay below m in
  // that load and within `cap` in the other one.
  bool Relieve(int h, uint64_t m, bool effective, uint64_t cap) {
    const int from = arc_from_[h];
    struct Move {
      size_t tree;
      int u, arc;
      uint64_t worst, worst_other;
    };
    bool found = false;
    Move best{};
    const std::vector<uint64_t>& load = effective ? eff_ : all_;
    const std::vector<uint64_t>& other = effective ? all_ : eff_;
    if (mark_.size() < eff_.size()) mark_.assign(eff_.size(), 0);
    for (size_t ti = 0; ti < trees_.size(); ++ti) {
      const Tree& t = trees_[ti];
      const std::vector<uint32_t>& flow = effective ? t.flow_eff : t.flow_all;
      const std::vector<uint32_t>& flow_other = effective ? t.flow_all : t.flow_eff;
      ++work_;
      if (t.next[from] != h || flow[from] == 0) continue;
      work_ += order_of_root_[g_.dests[t.dest].sw].size();
      const int root = g_.dests[t.dest].sw;
      const std::vector<int>& hops = hops_of_root_[root];
      // Which switches route through h: nearest the root first, so each switch's successor is
      // known before it.
      for (int u : order_of_root_[root]) {
        crosses_[u] =
            u != root && t.next[u] >= 0 && (t.next[u] == h || crosses_[g_.arc_to[t.next[u]]]);
      }
      for (int u : order_of_root_[root]) {
        if (!crosses_[u] || flow[u] == 0) continue;
        if (pinned_ != nullptr &&
            (*pinned_)[static_cast<size_t>(t.dest) * g_.num_switches + u] != 0) {
          continue;
        }
        const uint64_t f = flow[u], fo = flow_other[u];
        // The old path from u, marked.
        ++stamp_;
        for (int v = u; v != root; v = g_.arc_to[t.next[v]]) mark_[t.next[v]] = stamp_;
        for (int a = g_.arc_begin[u]; a < g_.arc_begin[u + 1]; ++a) {
          if (a == t.next[u] || hops[g_.arc_to[a]] != hops[u] - 1) continue;
          uint64_t worst = 0, worst_other = 0;
          bool ok = true;
          for (int x = a;; ++work_) {
            if (x == h) {
              ok = false;  // rejoins h: relieves nothing
              break;
            }
            if (mark_[x] != stamp_) {  // a channel the routes newly take
              worst = std::max(worst, load[x] + f);
              worst_other = std::max(worst_other, other[x] + fo);
              if (load[x] + f >= m || other[x] + fo > cap) {
                ok = false;
                break;
              }
            }
            const int v = g_.arc_to[x];
            if (v == root) break;
            x = t.next[v];
            if (x < 0) {  // no entry there (a disconnected part): not a move to make
              ok = false;
              break;
            }
          }
          if (!ok) continue;
          if (!found || worst < best.worst ||
              (worst == best.worst && worst_other < best.worst_other)) {
            found = true;
            best = {ti, u, a, worst, worst_other};
          }
        }
      }
    }
    if (!found) return false;
    Apply(&trees_[best.tree], best.u, best.arc);
    return true;
  }

  void Apply(Tree* t, int u, int arc) {
    const Destination& d = g_.dests[t->dest];
    const uint32_t f = t->flow_eff[u], fa = t->flow_all[u];
    for (int v = u; v != d.sw;) {
      const int a = t->next[v];
      eff_[a] -= f;
      all_[a] -= fa;
      v = g_.arc_to[a];
      if (v != d.sw) {
        t->flow_eff[v] -= f;
        t->flow_all[v] -= fa;
      }
    }
    t->next[u] = arc;
    for (int v = u; v != d.sw;) {
      const int a = t->next[v];
      eff_[a] += f;
      all_[a] += fa;
      v = g_.arc_to[a];
      if (v != d.sw) {
        t->flow_eff[v] += f;
        t->flow_all[v] += fa;
      }
    }
    lfts_->set_port(u, d.base_lid, g_.arc_port[arc]);
  }

  const SwitchGraph& g_;
  const std::vector<std::vector<int>>& jobs_;
  LftSet* lfts_;
  std::vector<int> arc_of_port_;  // switch * 256 + port -> arc
  std::vector<int> arc_from_;
  std::vector<uint64_t> eff_, all_;  // per arc
  std::vector<std::vector<int>> hops_of_root_;
  std::vector<std::vector<int>> order_of_root_;  // switches by hops from the root (BFS order)
  std::vector<char> crosses_;                    // per switch: its route crosses the arc at hand
  std::vector<std::vector<int>> jobs_of_dest_;
  std::vector<Tree> trees_;
  std::unordered_map<NodeId, std::vector<int>> dests_of_node_;
  std::vector<uint32_t> mark_;
  uint32_t stamp_ = 0;
  const std::vector<uint8_t>* pinned_ = nullptr;  // RefineOptions::pinned
  uint64_t work_ = 0, max_work_ = 0;  // steps of the search so far, and its deterministic limit
};

}  // namespace

void RefineJobRoutes(const SwitchGraph& g, const std::vector<std::vector<int>>& jobs,
                     const RefineOptions& options, LftSet* lfts, RefineStats* stats) {
  *stats = RefineStats{};
  Refiner r(g, jobs, lfts);
  const size_t dests = r.JobDestinations();
  if (dests == 0) return;
  if (static_cast<size_t>(g.num_endpoint_dests) * static_cast<size_t>(g.num_switches) >
      options.max_state) {
    stats->skipped = true;
    return;
  }
  r.Load();
  r.Run(options, stats);
}

}  // namespace sar::internal
