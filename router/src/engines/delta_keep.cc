#include "engines/delta_keep.h"

#include <algorithm>
#include <utility>

namespace sar::internal {
namespace {

constexpr int kPortSlots = 256;  // port numbers are uint8_t
// Per-job channel loads (jobs x arcs counters) only up to this many: beyond, only the summed
// effective EFI and the all-pairs EFI are kept within the full recompute's (noted).
constexpr size_t kMaxJobArcCounters = size_t{1} << 24;

class DeltaKeeper {
 public:
  DeltaKeeper(const Fabric& f, const SwitchGraph& g, const std::vector<ResolvedJob>* jobs,
              const LftSet& previous, LftSet* lfts, const DeltaKeepOptions& options = {})
      : g_(g), prev_(previous), lfts_(*lfts), options_(options) {
    if (options_.pins != nullptr && options_.pins->entries == 0) options_.pins = nullptr;
    const int n = g.num_switches;
    arc_of_.assign(static_cast<size_t>(n) * kPortSlots, -1);
    for (int s = 0; s < n; ++s) {
      for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
        arc_of_[static_cast<size_t>(s) * kPortSlots + g.arc_port[a]] = a;
      }
    }
    // Destinations per switch they live on, and the endpoint indices of every node and job.
    lids_at_.assign(n, {});
    for (int e = 0; e < static_cast<int>(g.dests.size()); ++e) {
      if (g.dests[e].sw >= 0 && g.dests[e].base_lid != 0) lids_at_[g.dests[e].sw].push_back(e);
    }
    dests_of_node_.assign(f.num_nodes(), {});
    std::vector<int> dest_of_port(f.num_port_slots(), -1);
    for (int e = 0; e < g.num_endpoint_dests; ++e) {
      dests_of_node_[g.dests[e].node].push_back(e);
      dest_of_port[f.port_id(g.dests[e].node, g.dests[e].port)] = e;
    }
    jobs_of_dest_.assign(g.num_endpoint_dests, {});
    if (jobs != nullptr) {
      for (const ResolvedJob& job : *jobs) {
        std::vector<int> m;
        for (const PortRef& p : job.endpoints) {
          const int e = dest_of_port[f.port_id(p)];
          if (e >= 0) m.push_back(e);
        }
        std::sort(m.begin(), m.end());
        m.erase(std::unique(m.begin(), m.end()), m.end());
        for (int e : m) jobs_of_dest_[e].push_back(static_cast<int>(members_.size()));
        members_.push_back(std::move(m));
      }
    }
    load_all_.assign(g.arc_to.size(), 0);
    load_job_.assign(g.arc_to.size(), 0);
    per_job_ = members_.size() * g.arc_to.size() <= kMaxJobArcCounters;
    if (per_job_) {
      load_of_job_.assign(members_.size(), std::vector<int32_t>(g.arc_to.size(), 0));
      cap_of_job_.assign(members_.size(), 0);
    }
    mark_.assign(g.arc_to.size(), 0);
    next_.assign(n, -1);
    acc_all_.assign(n, 0);
    acc_job_.assign(n, 0);
  }

  // The loads of the tables as they are, and their maxima (the caps).
  void Measure() {
    ForEachLid([this](int e, Lid lid, int root) {
      if (!Loaded(e, lid)) return;
      BuildTree(e, lid, root);
      for (size_t i = order_.size(); i-- > 1;) {
        const int s = order_[i];
        if (next_[s] < 0) continue;
        load_all_[next_[s]] += acc_all_[s];
        load_job_[next_[s]] += acc_job_[s];
        if (!per_job_) continue;
        for (size_t x = 0; x < jobs_of_dest_[e].size(); ++x) {
          load_of_job_[jobs_of_dest_[e][x]][next_[s]] += static_cast<int32_t>(acc_of_job_[x][s]);
        }
      }
    });
    for (size_t a = 0; a < load_all_.size(); ++a) {
      cap_all_ = std::max(cap_all_, load_all_[a]);
      cap_job_ = std::max(cap_job_, load_job_[a]);
    }
    for (size_t j = 0; per_job_ && j < members_.size(); ++j) {
      for (int32_t v : load_of_job_[j]) cap_of_job_[j] = std::max<int64_t>(cap_of_job_[j], v);
    }
  }

  DeltaLoads Maxima() const {
    return {static_cast<uint64_t>(cap_job_), static_cast<uint64_t>(cap_all_)};
  }

  void Run(DeltaKeepStats* stats) {
    // The full recompute's loads and their maxima: the bounds every revert keeps.
    Measure();
    pin_cap_all_ = std::max<int64_t>(cap_all_, static_cast<int64_t>(options_.pinned_efi_cap));
    pin_cap_job_ =
        std::max<int64_t>(cap_job_, static_cast<int64_t>(options_.pinned_effective_efi_cap));
    stats->efi_cap = cap_all_;
    stats->effective_efi_cap = cap_job_;
    stats->per_job = per_job_;
    // Running jobs' entries first (their own caps), then everything (two sweeps).
    const int first = options_.pins != nullptr ? 0 : 1;
    for (int sweep = first; sweep < 3; ++sweep) {
      ForEachLid([&](int e, Lid lid, int root) {
        Revert(e, lid, root, sweep == first, sweep == 0, stats);
      });
    }
  }

 private:
  // Calls f(dest, lid, root switch) for every routed LID, root by root (one BFS per root).
  template <class F>
  void ForEachLid(F&& f) {
    for (int root = 0; root < g_.num_switches; ++root) {
      if (lids_at_[root].empty()) continue;
      HopsTo(g_, root, &hops_);
      order_all_.clear();
      for (int s = 0; s < g_.num_switches; ++s) {
        if (hops_[s] >= 0) order_all_.push_back(s);
      }
      std::stable_sort(order_all_.begin(), order_all_.end(),
                       [this](int a, int b) { return hops_[a] < hops_[b]; });
      for (int e : lids_at_[root]) {
        const Destination& d = g_.dests[e];
        for (int k = 0; k < d.num_lids; ++k) {
          const Lid lid = d.base_lid + static_cast<Lid>(k);
          if (lid <= lfts_.max_lid()) f(e, lid, root);
        }
      }
    }
  }

  // Only base LIDs of HCA ports count in the metrics (metrics.h).
  bool Loaded(int e, Lid lid) const {
    return e < g_.num_endpoint_dests && lid == g_.dests[e].base_lid;
  }

  int ArcOf(int s, uint8_t port) const {
    return arc_of_[static_cast<size_t>(s) * kPortSlots + port];
  }

  // next_ from the current tables; for loaded LIDs also the routes below each switch (subtree
  // sums, farthest first), as the SSSP router counts them: every HCA port but the destination's
  // own node is a source; a job's members count once per job they share with the destination.
  void BuildTree(int e, Lid lid, int root) {
    order_ = order_all_;
    for (int s : order_) {
      const uint8_t p = lfts_.port(s, lid);
      next_[s] = s == root || p == LftSet::kNoRoute ? -1 : ArcOf(s, p);
      if (next_[s] >= 0 && hops_[g_.arc_to[next_[s]]] != hops_[s] - 1) next_[s] = -1;
    }
    if (!Loaded(e, lid)) return;
    for (int s : order_) {
      acc_all_[s] = g_.hcas_on_switch[s];
      acc_job_[s] = 0;
    }
    const Destination& d = g_.dests[e];
    for (int o : dests_of_node_[d.node]) {
      if (g_.dests[o].sw >= 0 && hops_[g_.dests[o].sw] >= 0) --acc_all_[g_.dests[o].sw];
    }
    const size_t njobs = per_job_ ? jobs_of_dest_[e].size() : 0;
    if (acc_of_job_.size() < njobs) acc_of_job_.resize(njobs);
    for (size_t x = 0; x < njobs; ++x) {
      acc_of_job_[x].assign(g_.num_switches, 0);
    }
    for (size_t x = 0; x < jobs_of_dest_[e].size(); ++x) {
      for (int m : members_[jobs_of_dest_[e][x]]) {
        const Destination& src = g_.dests[m];
        if (src.node == d.node || src.sw < 0 || hops_[src.sw] < 0) continue;
        ++acc_job_[src.sw];
        if (x < njobs) ++acc_of_job_[x][src.sw];
      }
    }
    for (size_t i = order_.size(); i-- > 1;) {
      const int s = order_[i];
      if (next_[s] < 0) continue;
      const int t = g_.arc_to[next_[s]];
      acc_all_[t] += acc_all_[s];
      acc_job_[t] += acc_job_[s];
      for (size_t x = 0; x < njobs; ++x) acc_of_job_[x][t] += acc_of_job_[x][s];
    }
  }

  // Adds (sign +1) or removes (-1) the routes below switch s (destination e) along the path
  // from arc `first`.
  void Move(int e, int s, int first, int root, int sign) {
    const int64_t all = acc_all_[s], job = acc_job_[s];
    moved_.clear();
    for (size_t x = 0; per_job_ && x < jobs_of_dest_[e].size(); ++x) {
      moved_.push_back(acc_of_job_[x][s]);
    }
    for (int a = first;;) {
      const int u = g_.arc_to[a];
      load_all_[a] += sign * all;
      load_job_[a] += sign * job;
      acc_all_[u] += sign * all;
      acc_job_[u] += sign * job;
      for (size_t x = 0; x < moved_.size(); ++x) {
        load_of_job_[jobs_of_dest_[e][x]][a] += static_cast<int32_t>(sign * moved_[x]);
        acc_of_job_[x][u] += sign * moved_[x];
      }
      if (u == root) return;
      a = next_[u];
    }
  }

  // Whether arc a can take the routes below switch s (destination e) within every cap (a
  // pinned entry: the pinned caps, and no running job's own max as a limit).
  bool Fits(int e, int s, int a, bool pinned) const {
    if (load_all_[a] + acc_all_[s] > (pinned ? pin_cap_all_ : cap_all_) ||
        load_job_[a] + acc_job_[s] > (pinned ? pin_cap_job_ : cap_job_)) {
      return false;
    }
    for (size_t x = 0; per_job_ && x < jobs_of_dest_[e].size(); ++x) {
      const int j = jobs_of_dest_[e][x];
      if (pinned && options_.pins->job_running[j]) continue;
      if (load_of_job_[j][a] + acc_of_job_[x][s] > cap_of_job_[j]) return false;
    }
    return true;
  }

  // Whether the current tree leads s to the root (false only where some switch has no route).
  bool Delivers(int s, int root) const {
    for (int u = s; u != root; u = g_.arc_to[next_[u]]) {
      if (next_[u] < 0) return false;
    }
    return true;
  }

  // pinned_only: the sweep over running jobs' entries (the others are left for later sweeps).
  void Revert(int e, Lid lid, int root, bool count, bool pinned_only, DeltaKeepStats* stats) {
    const bool loaded = Loaded(e, lid);
    if (pinned_only && !loaded) {
      if (!count) return;
      for (int s : order_all_)
        stats->differing += s != root && lfts_.port(s, lid) != prev_.port(s, lid);
      return;
    }
    BuildTree(e, lid, root);
    for (size_t i = 1; i < order_.size(); ++i) {
      const int s = order_[i];
      const uint8_t q = lfts_.port(s, lid), p = prev_.port(s, lid);
      if (p == q) continue;
      if (count) ++stats->differing;
      if (options_.fixed != nullptr && e < g_.num_endpoint_dests &&
          (*options_.fixed)[static_cast<size_t>(e) * g_.num_switches + s]) {
        continue;
      }
      const bool pinned = options_.pins != nullptr && options_.pins->at(e, s);
      if (pinned_only && !pinned) continue;
      if (next_[s] < 0 || p == LftSet::kNoRoute) continue;
      const int b = ArcOf(s, p);
      if (b < 0 || hops_[g_.arc_to[b]] != hops_[s] - 1) continue;  // min-hop only
      if (!Delivers(s, root) || !Delivers(g_.arc_to[b], root)) continue;
      if (loaded && (acc_all_[s] > 0 || acc_job_[s] > 0)) {
        // The arcs the moved routes newly take must stay within both caps.
        ++stamp_;
        for (int u = s; u != root; u = g_.arc_to[next_[u]]) mark_[next_[u]] = stamp_;
        bool fits = true;
        for (int a = b;;) {
          if (mark_[a] != stamp_ && !Fits(e, s, a, pinned)) {
            fits = false;
            break;
          }
          const int u = g_.arc_to[a];
          if (u == root) break;
          a = next_[u];
          if (a < 0) {  // no route onward (a disconnected part): keep the new entry
            fits = false;
            break;
          }
        }
        if (!fits) continue;
        Move(e, s, next_[s], root, -1);
        next_[s] = b;
        Move(e, s, b, root, +1);
      } else {
        next_[s] = b;
      }
      lfts_.set_port(s, lid, p);
      ++stats->kept;
      stats->pinned_kept += pinned;
    }
  }

  const SwitchGraph& g_;
  const LftSet& prev_;
  LftSet& lfts_;
  DeltaKeepOptions options_;
  int64_t pin_cap_all_ = 0, pin_cap_job_ = 0;  // caps for pinned entries
  std::vector<int> arc_of_;  // [switch * 256 + port] -> arc, -1 = not a switch-to-switch cable
  std::vector<std::vector<int>> lids_at_;        // per switch: dests living there
  std::vector<std::vector<int>> dests_of_node_;  // endpoint dests per NodeId
  std::vector<std::vector<int>> members_;        // per job: endpoint dests
  std::vector<std::vector<int>> jobs_of_dest_;
  std::vector<int64_t> load_all_, load_job_;  // per arc: all-pairs and effective EFI
  int64_t cap_all_ = 0, cap_job_ = 0;
  bool per_job_ = false;                           // each job's own max EFI kept too
  std::vector<std::vector<int32_t>> load_of_job_;  // [job][arc]: the job's own routes
  std::vector<int64_t> cap_of_job_;
  std::vector<std::vector<int64_t>> acc_of_job_;  // [k-th job of the destination][switch]
  std::vector<int64_t> moved_;
  // Per root / per LID scratch.
  std::vector<int> hops_, order_all_, order_, next_;
  std::vector<int64_t> acc_all_, acc_job_;
  std::vector<uint32_t> mark_;
  uint32_t stamp_ = 0;
};

}  // namespace

void KeepPreviousEntries(const Fabric& fabric, const SwitchGraph& g,
                         const std::vector<ResolvedJob>* jobs, const LftSet& previous, LftSet* lfts,
                         DeltaKeepStats* stats, const DeltaKeepOptions& options) {
  *stats = DeltaKeepStats();
  DeltaKeeper(fabric, g, jobs, previous, lfts, options).Run(stats);
}

DeltaLoads MeasureLoads(const Fabric& fabric, const SwitchGraph& g,
                        const std::vector<ResolvedJob>* jobs, const LftSet& lfts) {
  LftSet scratch = lfts;
  DeltaKeeper k(fabric, g, jobs, lfts, &scratch);
  k.Measure();
  return k.Maxima();
}

namespace {

std::vector<std::pair<NodeId, int>> SortedEndpoints(const ResolvedJob& j) {
  std::vector<std::pair<NodeId, int>> v;
  for (const PortRef& p : j.endpoints) v.emplace_back(p.node, p.port);
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

RunningPins PinRunningJobs(const Fabric& f, const SwitchGraph& g,
                           const std::vector<ResolvedJob>* jobs,
                           const std::vector<ResolvedJob>& previous_jobs, const LftSet& previous) {
  RunningPins pins;
  pins.num_switches = g.num_switches;
  pins.num_endpoint_dests = g.num_endpoint_dests;
  if (jobs == nullptr) return pins;
  pins.job_running.assign(jobs->size(), 0);
  std::vector<std::vector<std::pair<NodeId, int>>> before;
  for (const ResolvedJob& j : previous_jobs) before.push_back(SortedEndpoints(j));
  std::sort(before.begin(), before.end());
  std::vector<int> dest_of_port(f.num_port_slots(), -1);
  for (int e = 0; e < g.num_endpoint_dests; ++e) {
    dest_of_port[f.port_id(g.dests[e].node, g.dests[e].port)] = e;
  }
  std::vector<int> arc_of(static_cast<size_t>(g.num_switches) * kPortSlots, -1);
  for (int s = 0; s < g.num_switches; ++s) {
    for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
      arc_of[static_cast<size_t>(s) * kPortSlots + g.arc_port[a]] = a;
    }
  }
  for (size_t ji = 0; ji < jobs->size(); ++ji) {
    const ResolvedJob& job = (*jobs)[ji];
    if (!std::binary_search(before.begin(), before.end(), SortedEndpoints(job))) continue;
    pins.job_running[ji] = 1;
    if (job.num_leaf_switches < 2) continue;
    ++pins.running_jobs;
    if (pins.pinned.empty()) {
      pins.pinned.assign(static_cast<size_t>(g.num_endpoint_dests) * g.num_switches, 0);
    }
    std::vector<int> m;
    for (const PortRef& p : job.endpoints) {
      if (const int e = dest_of_port[f.port_id(p)]; e >= 0) m.push_back(e);
    }
    for (int e : m) {
      const Destination& d = g.dests[e];
      if (d.sw < 0 || d.base_lid == 0 || d.base_lid > previous.max_lid()) continue;
      for (int src : m) {
        if (g.dests[src].node == d.node || g.dests[src].sw < 0) continue;
        // Walk the previous path (at most one visit per switch: garbage tables may loop).
        int s = g.dests[src].sw;
        for (int hops = 0; s != d.sw && hops < g.num_switches; ++hops) {
          uint8_t& pin = pins.pinned[static_cast<size_t>(e) * g.num_switches + s];
          pins.entries += pin == 0;
          pin = 1;
          const int a = arc_of[static_cast<size_t>(s) * kPortSlots + previous.port(s, d.base_lid)];
          if (a < 0) break;
          s = g.arc_to[a];
        }
      }
    }
  }
  return pins;
}

uint64_t CountMovedPins(const RunningPins& pins, const SwitchGraph& g, const LftSet& previous,
                        const LftSet& lfts) {
  uint64_t moved = 0;
  if (pins.pinned.empty()) return 0;
  for (int e = 0; e < g.num_endpoint_dests; ++e) {
    const Lid lid = g.dests[e].base_lid;
    if (lid == 0 || lid > lfts.max_lid() || lid > previous.max_lid()) continue;
    for (int s = 0; s < g.num_switches; ++s) {
      moved += pins.at(e, s) && lfts.port(s, lid) != previous.port(s, lid);
    }
  }
  return moved;
}

}  // namespace sar::internal
