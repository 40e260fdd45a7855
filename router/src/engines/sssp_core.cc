#include "engines/sssp_core.h"

#include <algorithm>
#include <cstddef>
#include <string>

#include "engines/delta_keep.h"
#include "sar/engines/virtual_layers.h"
#include "sar/env.h"

namespace sar::internal {

SsspRouter::SsspRouter(const Fabric& fabric)
    : fabric_(fabric), graph_(BuildSwitchGraph(fabric)), lfts_(fabric) {
  const size_t arcs = graph_.arc_to.size();
  const int n = graph_.num_switches;
  packed_load_.assign(arcs, 0);
  const std::vector<uint32_t> capacity = fabric.ChannelCapacities();
  const uint64_t nominal =
      capacity.empty() ? 1 : *std::max_element(capacity.begin(), capacity.end());
  unit_.resize(arcs);
  for (size_t a = 0; a < arcs; ++a) {
    const uint64_t c = capacity[graph_.arc_channel[a]];
    unit_[a] = (kUnitWeight * nominal + c / 2) / c;
    weighted_ = weighted_ || unit_[a] != kUnitWeight;
  }
  hops_.assign(n, -1);
  pending_ports_.assign(kPendingSteps * n, LftSet::kNoRoute);
  down_begin_.assign(n, 0);
  down_end_.assign(n, 0);
  down_first_arc_.assign(n, -1);
  down_count_.assign(n, 0);
  for (int s = 0; s < n; ++s) degrees_.push_back(graph_.degree(s));
  std::sort(degrees_.begin(), degrees_.end());
  degrees_.erase(std::unique(degrees_.begin(), degrees_.end()), degrees_.end());
  rr_start_.assign(degrees_.empty() ? 1 : degrees_.back() + 1, 0);
  next_.assign(n, -1);
  cost_.assign(n, Cost{});
  packed_cost_.assign(n, 0);
  memo_.assign(n, 0);
  choice_.assign(n, -1);
  all_count_.assign(n, 0);
  job_count_.assign(n, 0);
  dests_of_node_.assign(fabric.num_nodes(), {});
  for (int e = 0; e < graph_.num_endpoint_dests; ++e) {
    dests_of_node_[graph_.dests[e].node].push_back(e);
  }
  jobs_of_dest_.assign(graph_.num_endpoint_dests, {});
  seen_.assign(graph_.num_endpoint_dests, 0);
}

void SsspRouter::SetJobs(std::vector<std::vector<int>> members) {
  job_members_ = std::move(members);
  for (auto& jobs : jobs_of_dest_) jobs.clear();
  for (int j = 0; j < static_cast<int>(job_members_.size()); ++j) {
    for (int e : job_members_[j]) jobs_of_dest_[e].push_back(j);
  }
}

void SsspRouter::SetFixed(const std::vector<FixedEntry>& fixed) {
  fixed_arcs_.assign(graph_.num_endpoint_dests, {});
  fixed_mask_.assign(static_cast<size_t>(graph_.num_endpoint_dests) * graph_.num_switches, 0);
  fixed_dropped_ = 0;
  std::vector<int> dest_of_lid(lfts_.max_lid() + 1, -1);
  for (int e = 0; e < graph_.num_endpoint_dests; ++e) {
    if (graph_.dests[e].base_lid <= lfts_.max_lid()) dest_of_lid[graph_.dests[e].base_lid] = e;
  }
  for (const FixedEntry& x : fixed) {
    const int e = x.lid >= 1 && x.lid <= lfts_.max_lid() ? dest_of_lid[x.lid] : -1;
    int arc = -1;
    if (e >= 0 && x.sw >= 0 && x.sw < graph_.num_switches && x.sw != graph_.dests[e].sw) {
      for (int a = graph_.arc_begin[x.sw]; a < graph_.arc_begin[x.sw + 1] && arc < 0; ++a) {
        if (graph_.arc_port[a] == x.port) arc = a;
      }
    }
    // The destination's own switch delivers through its HCA cable whatever is given.
    if (e >= 0 && x.sw == graph_.dests[e].sw && x.port == graph_.dests[e].sw_port) continue;
    if (arc < 0) {
      ++fixed_dropped_;
      continue;
    }
    uint8_t& m = fixed_mask_[static_cast<size_t>(e) * graph_.num_switches + x.sw];
    if (m) continue;  // one entry per (switch, LID): the first given counts
    m = 1;
    fixed_arcs_[e].emplace_back(x.sw, arc);
  }
}

void SsspRouter::PresetFixed(int dest) {
  for (const auto& [sw, arc] : fixed_arcs_[dest]) {
    if (hops_[sw] > 0 && hops_[graph_.arc_to[arc]] == hops_[sw] - 1) {
      next_[sw] = arc;
    } else {
      fixed_mask_[static_cast<size_t>(dest) * graph_.num_switches + sw] = 0;
      ++fixed_dropped_;
    }
  }
}

void SsspRouter::Bfs(int root) {
  bfs_root_ = root;
  std::fill(hops_.begin(), hops_.end(), -1);
  // Unreachable switches keep no candidates.
  std::fill(down_begin_.begin(), down_begin_.end(), 0);
  std::fill(down_end_.begin(), down_end_.end(), 0);
  std::fill(down_first_arc_.begin(), down_first_arc_.end(), -1);
  std::fill(down_count_.begin(), down_count_.end(), 0);
  order_.clear();
  down_.clear();
  level_begin_.clear();
  hops_[root] = 0;
  order_.push_back(root);
  for (size_t head = 0; head < order_.size(); ++head) {
    const int s = order_[head];
    const int h = hops_[s];
    if (head == 0 || h != hops_[order_[head - 1]]) level_begin_.push_back(static_cast<int>(head));
    // Every switch of level h - 1 was found before s was: its arcs to them are its candidates.
    int first = -1, last = -1, count = 0;
    for (int a = graph_.arc_begin[s]; a < graph_.arc_begin[s + 1]; ++a) {
      const int t = graph_.arc_to[a];
      if (hops_[t] < 0) {
        hops_[t] = h + 1;
        order_.push_back(t);
      } else if (hops_[t] == h - 1) {
        first = count == 0 ? a : first;
        last = a;
        ++count;
      }
    }
    down_count_[s] = count;
    if (count > 0 && last - first == count - 1) {
      down_first_arc_[s] = first;  // consecutive: no list
      continue;
    }
    down_begin_[s] = static_cast<int32_t>(down_.size());
    for (int a = graph_.arc_begin[s]; count > 0 && a < graph_.arc_begin[s + 1]; ++a) {
      if (hops_[graph_.arc_to[a]] == h - 1) down_.push_back({a, graph_.arc_to[a]});
    }
    down_end_[s] = static_cast<int32_t>(down_.size());
  }
  level_begin_.push_back(static_cast<int>(order_.size()));
}

void SsspRouter::FlushPorts() {
  const size_t n = graph_.num_switches;
  for (size_t s = 0; s < n; ++s) {
    uint8_t* row = lfts_.mutable_row(static_cast<int>(s));
    // In step order: a LID routed twice keeps its last step's port, as set one by one.
    for (size_t k = 0; k < pending_lids_.size(); ++k)
      row[pending_lids_[k]] = pending_ports_[k * n + s];
  }
  std::fill(pending_ports_.begin(), pending_ports_.begin() + pending_lids_.size() * n,
            LftSet::kNoRoute);
  pending_lids_.clear();
}

void SsspRouter::SetRoundRobinStarts() {
  for (int deg : degrees_) {
    rr_start_[deg] = deg == 0 ? 0 : static_cast<int>(rr_key_ % static_cast<uint64_t>(deg));
  }
}

// Among equally good arcs, switch s takes its (rr_key_ mod degree)-th one onward, so that
// consecutive destinations fan out over parallel cables and spines the way d-mod-k does.
// Only the DAG successors (down_) are candidates: the arcs one hop nearer the root.
// The order is the cost (Cost's comment: p, q = w, t, or t, w with total_first_), then the
// round-robin key. The candidates are scanned in key order (from the start arc onward, then the
// ones before it) and only a strictly lower cost replaces the best, so the first of equals in
// key order wins: the key needs no comparison.
template <bool kTotalFirst, bool kWeighted>
void SsspRouter::ChooseArcOf(int s) {
  const int start = graph_.arc_begin[s] + rr_start_[graph_.degree(s)];
  if (down_count_[s] == 0) {
    choice_[s] = -1;
    cost_[s] = Cost{};
    return;
  }
  const Cost* const cost = cost_.data();
  const uint64_t chunk = kWeighted ? chunk_ : 0;
  using U128 = unsigned __int128;
  U128 best = 0;
  int best_arc = -1;
  auto consider = [&](int a, int to) {
    const Cost arc = Load(a);
    const Cost& rest = cost[to];
    uint64_t w = rest.w + arc.w, t = rest.t + arc.t;
    if (kWeighted) {
      const uint64_t extra = chunk * unit_[a] / 2;
      w += extra;
      t += extra;
    }
    const U128 v = kTotalFirst ? (U128{t} << 64 | w) : (U128{w} << 64 | t);
    if (best_arc < 0 || v < best) {
      best = v;
      best_arc = a;
    }
  };
  const int a0 = down_first_arc_[s];
  if (a0 >= 0) {
    const int a1 = a0 + down_count_[s];
    const int split = std::min(std::max(start, a0), a1);
    for (int b = split; b < a1; ++b) consider(b, graph_.arc_to[b]);
    for (int b = a0; b < split; ++b) consider(b, graph_.arc_to[b]);
  } else {
    const DownArc* const first = down_.data() + down_begin_[s];
    const DownArc* const last = down_.data() + down_end_[s];
    const DownArc* split = first;
    while (split != last && split->arc < start) ++split;
    for (const DownArc* b = split; b != last; ++b) consider(b->arc, b->to);
    for (const DownArc* b = first; b != split; ++b) consider(b->arc, b->to);
  }
  choice_[s] = best_arc;
  const uint64_t hi = static_cast<uint64_t>(best >> 64), lo = static_cast<uint64_t>(best);
  cost_[s] = kTotalFirst ? Cost{lo, hi} : Cost{hi, lo};
}

void SsspRouter::ChooseArc(int s) {
  if (weighted_) {
    total_first_ ? ChooseArcOf<true, true>(s) : ChooseArcOf<false, true>(s);
  } else {
    total_first_ ? ChooseArcOf<true, false>(s) : ChooseArcOf<false, false>(s);
  }
}

void SsspRouter::AddLoad(int a, uint64_t w, uint64_t t) {
  if (!wide_) {
    const uint64_t p = packed_load_[a];
    const uint64_t hw = (p >> 32) + w, lt = (p & 0xffffffffu) + t;
    if (((hw | lt) >> 32) == 0) {
      packed_load_[a] = hw << 32 | lt;
      max_load_ = std::max(max_load_, std::max(hw, lt));
      return;
    }
    GoWide();
  }
  Cost& l = load_[a];
  l.w += w;
  l.t += t;
  max_load_ = std::max(max_load_, std::max(l.w, l.t));
}

void SsspRouter::GoWide() {
  load_.resize(packed_load_.size());
  for (size_t a = 0; a < packed_load_.size(); ++a) load_[a] = Load(static_cast<int>(a));
  wide_ = true;
  packed_load_ = {};
}

template <bool kTotalFirst>
void SsspRouter::ChoosePackedRange(int begin, int end) {
  const uint64_t* const packed = packed_load_.data();
  // w << 32 | t as stored, or t << 32 | w (one rotation: both halves are below 2^32).
  auto load = [packed](int a) {
    const uint64_t v = packed[a];
    return kTotalFirst ? (v << 32 | v >> 32) : v;
  };
  uint64_t* const cost = packed_cost_.data();
  for (int i = begin; i < end; ++i) {
    const int u = order_[i];
    if (next_[u] >= 0) {
      cost[u] = cost[graph_.arc_to[next_[u]]] + load(next_[u]);
      continue;
    }
    // ChooseArcOf's scan in round-robin order, on packed costs. Branch-free: the split by
    // counting (the candidates are few), the minimum by selects; `best` starts above every
    // cost (Run keeps each half below 2^32 - 1), so the first of equal costs is kept.
    const int start = graph_.arc_begin[u] + rr_start_[graph_.degree(u)];
    uint64_t best = ~uint64_t{0};
    int best_arc = -1;
    const int a0 = down_first_arc_[u];
    if (a0 >= 0) {
      // Consecutive candidates [a0, a1): from the start arc onward, then the ones before it.
      const int a1 = a0 + down_count_[u];
      const int split = std::min(std::max(start, a0), a1);
      const int* const to = graph_.arc_to.data();
      auto scan = [&](int b, int e) {
        for (; b != e; ++b) {
          const uint64_t v = cost[to[b]] + load(b);
          const bool better = v < best;
          best_arc = better ? b : best_arc;
          best = better ? v : best;
        }
      };
      scan(split, a1);
      scan(a0, split);
      next_[u] = best_arc;
      cost[u] = best;
      continue;
    }
    const DownArc* const first = down_.data() + down_begin_[u];
    const DownArc* const last = down_.data() + down_end_[u];
    ptrdiff_t before = 0;
    for (const DownArc* b = first; b != last; ++b) before += b->arc < start;
    const DownArc* const split = first + before;
    auto scan = [&](const DownArc* b, const DownArc* e) {
      for (; b != e; ++b) {
        const uint64_t v = cost[b->to] + load(b->arc);
        const bool better = v < best;
        best_arc = better ? b->arc : best_arc;
        best = better ? v : best;
      }
    };
    scan(split, last);
    scan(first, split);
    next_[u] = best_arc;
    cost[u] = best_arc < 0 ? 0 : best;
  }
}

void SsspRouter::ChooseRange(int begin, int end) {
  if (packed_pass_) {
    total_first_ ? ChoosePackedRange<true>(begin, end) : ChoosePackedRange<false>(begin, end);
    return;
  }
  for (int i = begin; i < end; ++i) {
    const int u = order_[i];
    if (next_[u] < 0) {
      ChooseArc(u);
      next_[u] = choice_[u];
    } else {
      const int a = next_[u];
      const Cost& rest = cost_[graph_.arc_to[a]];
      cost_[u] = Cost{rest.w + ArcCost(a).w, rest.t + ArcCost(a).t};
    }
  }
}

void SsspRouter::NextEpoch() {
  if (++epoch_ == 0) {  // wrapped: no memo_ entry may look current
    std::fill(memo_.begin(), memo_.end(), 0);
    epoch_ = 1;
  }
}

// The memo's invariant: a switch marked current (memo_ == epoch_) has every switch its cost was
// computed from current too (CostFrom computes them first). So the walk up the DAG (to the
// switches one hop farther from the root that have an arc to this one) stops at a switch already
// stale: the switches that read it are stale as well.
void SsspRouter::Invalidate(int v) {
  if (memo_[v] != epoch_) return;
  memo_[v] = 0;
  stale_.clear();
  stale_.push_back(v);
  while (!stale_.empty()) {
    const int x = stale_.back();
    stale_.pop_back();
    const int up = hops_[x] + 1;
    for (int a = graph_.arc_begin[x]; a < graph_.arc_begin[x + 1]; ++a) {
      const int t = graph_.arc_to[a];
      if (hops_[t] == up && memo_[t] == epoch_) {
        memo_[t] = 0;
        stale_.push_back(t);
      }
    }
  }
}

SsspRouter::Cost SsspRouter::CostFrom(int s) {
  if (s == bfs_root_) return Cost{};
  if (memo_[s] == epoch_) return cost_[s];
  ++cost_computations_;
  if (next_[s] >= 0) {
    const int a = next_[s];
    const Cost rest = CostFrom(graph_.arc_to[a]);
    cost_[s] = Cost{rest.w + ArcCost(a).w, rest.t + ArcCost(a).t};
  } else {
    // Successors first (they are one hop nearer the root), then the same choice as the
    // final pass makes.
    const int a0 = down_first_arc_[s];
    if (a0 >= 0) {
      for (int a = a0; a < a0 + down_count_[s]; ++a) CostFrom(graph_.arc_to[a]);
    } else {
      for (int i = down_begin_[s]; i < down_end_[s]; ++i) CostFrom(down_[i].to);
    }
    cost_[bfs_root_] = Cost{};
    ChooseArc(s);
  }
  memo_[s] = epoch_;
  return cost_[s];
}

void SsspRouter::CountSources(const Destination& d, bool intra_job) {
  // Every HCA port is a source except the destination's own node (its routes stay inside it).
  for (int s = 0; s < graph_.num_switches; ++s) all_count_[s] = graph_.hcas_on_switch[s];
  if (!d.is_switch) {
    for (int e : dests_of_node_[d.node]) {
      if (graph_.dests[e].sw >= 0) --all_count_[graph_.dests[e].sw];
    }
  }
  for (int s : job_switches_) job_count_[s] = 0;
  job_switches_.clear();
  if (!intra_job || d.is_switch) return;
  ++seen_epoch_;
  const int self = static_cast<int>(&d - graph_.dests.data());
  for (int j : jobs_of_dest_[self]) {
    for (int m : job_members_[j]) {
      if (seen_[m] == seen_epoch_) continue;  // shares several jobs: still one route
      seen_[m] = seen_epoch_;
      const Destination& src = graph_.dests[m];
      if (src.node == d.node || src.sw < 0) continue;
      if (job_count_[src.sw]++ == 0) job_switches_.push_back(src.sw);
    }
  }
}

// Capacity weighting: every switch that still has sources for this destination, largest count
// first, takes its cheapest path given the routes the switches before it placed, and raises the
// weights along it at once, looking ahead by its own routes (chunk_). Placed one source switch at
// a time, the routes that meet at a switch are known when the next source chooses: a slow cable
// that one leaf's routes fit on takes them, and the next leaf sees it loaded (chosen all at once,
// every leaf would see the slow cable empty and pile onto it).
void SsspRouter::PlaceSourcesOneByOne(bool intra_job) {
  sources_.clear();
  for (int u : order_) {
    if (u != bfs_root_ && all_count_[u] > 0) sources_.push_back(u);
  }
  std::stable_sort(sources_.begin(), sources_.end(),
                   [this](int a, int b) { return all_count_[a] > all_count_[b]; });
  for (int s : sources_) {
    NextEpoch();
    chunk_ = all_count_[s];
    CostFrom(s);
    for (int u = s; u != bfs_root_ && next_[u] < 0; u = graph_.arc_to[next_[u]]) {
      next_[u] = choice_[u];
    }
    for (int u = s; u != bfs_root_; u = graph_.arc_to[next_[u]]) {
      const uint64_t add = all_count_[s] * unit_[next_[u]];
      AddLoad(next_[u], intra_job ? 0 : add, add);
    }
    all_count_[s] = 0;
  }
  chunk_ = 1;
}

void SsspRouter::Run(const SsspStep& step) {
  const Destination& d = graph_.dests[step.dest];
  const Lid lid = d.base_lid + static_cast<Lid>(step.lid_offset);
  if (d.sw < 0 || d.base_lid == 0 || lid > lfts_.max_lid()) return;
  if (bfs_root_ != d.sw) Bfs(d.sw);
  const int root = d.sw;
  // next_ is all -1 here: the end of Run resets the switches it set.
  CountSources(d, step.intra_job);
  // The round-robin key: the step count for a base LID; base key + offset for the extra LMC
  // LIDs, so that the LIDs of one port start their tie-breaks on different arcs even when they
  // are routed far apart (base LIDs first, extra LIDs later).
  if (base_key_.empty()) base_key_.assign(graph_.dests.size(), kNoKey);
  if (step.lid_offset == 0 || base_key_[step.dest] == kNoKey) {
    rr_key_ = counter_;
    if (step.lid_offset == 0) base_key_[step.dest] = counter_;
  } else {
    rr_key_ = base_key_[step.dest] + static_cast<uint64_t>(step.lid_offset);
  }
  SetRoundRobinStarts();
  // Fixed entries first: every choice below goes through them (a switch with a next hop keeps
  // it), and the final pass raises the weights along them like along any chosen arc.
  if (step.lid_offset == 0 && HasFixed(step.dest)) PresetFixed(step.dest);

  if (step.intra_job) {
    // Deliberate difference from Algorithm 1 (which computes the whole tree, then raises the
    // weights): the tree grows one source switch at a time, largest job group first, and each
    // switch's intra-job routes raise the weights before the next switch chooses. Within one
    // destination the routes from different leaves then spread over different spines, which
    // is what lowers the effective EFI of the down channels into the destination's leaf; a
    // switch already on the tree keeps its choice, so the result is still one tree per LID.
    std::sort(job_switches_.begin(), job_switches_.end(), [this](int a, int b) {
      return job_count_[a] != job_count_[b] ? job_count_[a] > job_count_[b] : a < b;
    });
    // Without capacity weighting a cost does not depend on chunk_, so the memo outlives one
    // source: only the switches whose cost reads a raised arc are computed again (Invalidate).
    const bool keep_memo = !weighted_ && keep_job_memo_;
    if (keep_memo) NextEpoch();
    for (int s : job_switches_) {
      if (s == root || hops_[s] < 0) continue;
      if (!keep_memo) NextEpoch();
      chunk_ = job_count_[s];
      CostFrom(s);
      for (int u = s; u != root && next_[u] < 0; u = graph_.arc_to[next_[u]]) {
        next_[u] = choice_[u];
      }
      for (int u = s; u != root; u = graph_.arc_to[next_[u]]) {
        AddLoad(next_[u], job_count_[s] * unit_[next_[u]], all_count_[s] * unit_[next_[u]]);
        if (keep_memo) Invalidate(u);
      }
      all_count_[s] = 0;  // its routes are counted in load_.t already
    }
    chunk_ = 1;
  }

  // Every other switch: Dijkstra on the shortest-path DAG, nearest switches first. In the job
  // phase these switches carry no intra-job route to this destination, so their choice cannot
  // change the weights; they balance all routes instead (another deliberate difference: with
  // the job weights first they would pile every other route onto the job-free channels).
  total_first_ = step.intra_job;
  if (weighted_) PlaceSourcesOneByOne(step.intra_job);
  cost_[root] = Cost{};
  packed_cost_[root] = 0;
  // Packed when no path cost's half can reach 2^32 - 1: at most (levels - 1) arcs of max_load_.
  const uint64_t depth = std::max<uint64_t>(1, level_begin_.size() - 2);
  packed_pass_ = !wide_ && !weighted_ && max_load_ <= uint64_t{0xfffffffeu} / depth;
  // In BFS order (order_[0] is the root): a switch's choice reads only the level before. (The
  // levels were once shared among worker threads; measured on 2 cores, 10k and 45k hosts, that
  // made the pass 1.6-3x slower than one thread: a level is microseconds of work, less than
  // handing it over and moving the previous level's costs between the cores.)
  ChooseRange(1, static_cast<int>(order_.size()));

  total_first_ = false;

  // One pass over the tree, farthest switches first: record each switch's port, raise the
  // weights by the routes each channel now carries (all_count_ becomes the subtree sums: nothing
  // reads the counts after this), and reset next_ for the next step.
  uint8_t* const ports = pending_ports_.data() + pending_lids_.size() * graph_.num_switches;
  uint64_t* const acc = all_count_.data();
  for (size_t i = order_.size(); i-- > 1;) {
    const int u = order_[i];
    const int a = next_[u];
    ports[u] = graph_.arc_port[a];
    const uint64_t add = acc[u] * unit_[a];
    AddLoad(a, step.intra_job ? 0 : add, add);
    acc[graph_.arc_to[a]] += acc[u];
    next_[u] = -1;
  }
  ports[root] = d.sw_port;
  pending_lids_.push_back(lid);
  if (pending_lids_.size() == kPendingSteps) FlushPorts();
  ++counter_;
}

namespace {

// Quality bound of the stability rule: running jobs' routes stay unless the max effective EFI
// or max EFI would end more than this factor above the full recompute's.
constexpr double kStableSlack = 1.02;

uint64_t WithSlack(uint64_t v) {
  return static_cast<uint64_t>(static_cast<double>(v) * kStableSlack + 1e-9);
}

std::string KeepNote(const DeltaKeepStats& st) {
  return "delta: kept " + std::to_string(st.kept) + " of " + std::to_string(st.differing) +
         " entries the full recompute changed (its max effective EFI " +
         std::to_string(st.effective_efi_cap) + ", max EFI " + std::to_string(st.efi_cap) +
         (st.per_job ? " and every job's max EFI" : "") + " not exceeded)";
}

// Without the previous job set: keep what costs nothing, then the engine's stage.
// `fixed`: RoutingInput::fixed's entries (SsspRouter::fixed_mask), kept as routed; null = none.
void KeepPrevious(const RoutingInput& in, const SwitchGraph& g, const SsspRouter& router,
                  const SsspPostPaths& post, const std::vector<uint8_t>* fixed,
                  RoutingOutput* out) {
  DeltaKeepStats st;
  DeltaKeepOptions options;
  options.fixed = fixed;
  KeepPreviousEntries(*in.fabric, g, in.jobs, *in.previous, &out->lfts, &st, options);
  out->notes.push_back(KeepNote(st));
  if (post) post(router, &out->lfts, &out->notes, fixed);
}

// With it (the stability rule, delta_keep.h): the full recompute (with the engine's stage) sets
// the bound B = 2% above its maxima. The first attempt that ends within B is taken:
//  1. (engines with a stage) running jobs' entries all go back where the fabric allows, whatever
//     the load, and the stage routes the others around them;
//  2. they go back only within B, the stage routes around them;
//  3. then the stage may move them too (the shared bottlenecks);
//  4. the full recompute.
// Without a stage only 2 (which ends within B by construction). The note counts the moves.
void KeepStable(const RoutingInput& in, const SwitchGraph& g, const SsspRouter& router,
                const SsspPostPaths& post, const std::vector<uint8_t>* fixed, RoutingOutput* out) {
  const RunningPins pins = PinRunningJobs(*in.fabric, g, in.jobs, *in.previous_jobs, *in.previous);
  if (pins.entries == 0) {
    KeepPrevious(in, g, router, post, fixed, out);
    out->notes.push_back("stability: no multi-switch job runs across the reroute");
    return;
  }
  const LftSet paths = std::move(out->lfts);
  LftSet full = paths;
  std::vector<std::string> full_notes;
  if (post) post(router, &full, &full_notes, fixed);
  // What the stage must not move around the pins: the pins and the fixed entries.
  std::vector<uint8_t> held = pins.pinned;
  if (fixed != nullptr) {
    for (size_t i = 0; i < held.size(); ++i) held[i] |= (*fixed)[i];
  }
  const DeltaLoads bound = MeasureLoads(*in.fabric, g, in.jobs, full);
  const uint64_t eff_cap = WithSlack(bound.effective_efi_max), all_cap = WithSlack(bound.efi_max);
  auto within = [&](const LftSet& t) {
    const DeltaLoads l = MeasureLoads(*in.fabric, g, in.jobs, t);
    return l.effective_efi_max <= eff_cap && l.efi_max <= all_cap;
  };
  // Keeps (pinned entries within the given caps) and runs the stage around the pins.
  std::vector<std::string> notes;
  auto attempt = [&](uint64_t pin_eff, uint64_t pin_all) {
    notes.clear();
    out->lfts = paths;
    DeltaKeepOptions options;
    options.pins = &pins;
    options.pinned_effective_efi_cap = pin_eff;
    options.pinned_efi_cap = pin_all;
    options.fixed = fixed;
    DeltaKeepStats st;
    KeepPreviousEntries(*in.fabric, g, in.jobs, *in.previous, &out->lfts, &st, options);
    notes.push_back(KeepNote(st));
    if (post) post(router, &out->lfts, &notes, &held);
    return within(out->lfts);
  };
  constexpr uint64_t kAny = uint64_t{1} << 62;
  std::string how;
  if (post && attempt(kAny, kAny)) {
    how = "all kept where the fabric allows, the others routed around them, within";
  } else if (attempt(eff_cap, all_cap)) {
    how = "kept within";
  } else if (post && (post(router, &out->lfts, &notes, fixed), within(out->lfts))) {
    how = "shared bottlenecks: the refinement moved some to stay within";
  } else {
    out->lfts = std::move(full);
    notes = std::move(full_notes);
    how = "full recompute taken: keeping them would exceed";
  }
  out->notes.insert(out->notes.end(), notes.begin(), notes.end());
  out->notes.push_back("stability: " + std::to_string(pins.running_jobs) + " running jobs, " +
                       std::to_string(CountMovedPins(pins, g, *in.previous, out->lfts)) +
                       " of their " + std::to_string(pins.entries) + " entries moved (" + how +
                       " max effective EFI " + std::to_string(eff_cap) + ", max EFI " +
                       std::to_string(all_cap) + ", 2% above the full recompute)");
}

// The fixed entries as the stages left them (they move none: a stage that did would be a bug,
// so they are set again and the note says how many); and how many were given but not honoured.
void NoteFixed(const SsspRouter& router, LftSet* lfts, std::vector<std::string>* notes) {
  const SwitchGraph& g = router.graph();
  const std::vector<uint8_t>& mask = router.fixed_mask();
  uint64_t held = 0, restored = 0;
  for (int e = 0; e < g.num_endpoint_dests; ++e) {
    const Lid lid = g.dests[e].base_lid;
    for (int s = 0; s < g.num_switches; ++s) {
      if (!mask[static_cast<size_t>(e) * g.num_switches + s]) continue;
      ++held;
      const uint8_t port = router.FixedPort(e, s);
      if (lfts->port(s, lid) != port) {
        lfts->set_port(s, lid, port);
        ++restored;
      }
    }
  }
  std::string note = "fixed entries: " + std::to_string(held) + " routed first and kept";
  if (router.fixed_dropped() > 0) {
    note += ", " + std::to_string(router.fixed_dropped()) +
            " ignored (no such port or LID, or not one hop nearer)";
  }
  if (restored > 0) note += ", " + std::to_string(restored) + " restored after the stages";
  notes->push_back(note);
}

}  // namespace

Status RouteSssp(const RoutingInput& in, const SsspPlanner& plan, RoutingOutput* out,
                 const SsspPostPaths& post) {
  SsspRouter router(*in.fabric);
  if (in.fixed != nullptr && !in.fixed->empty()) router.SetFixed(*in.fixed);
  std::vector<SsspStep> steps;
  plan(in, &router, &steps);
  for (const SsspStep& step : steps) router.Run(step);
  out->lfts = router.TakeLfts();
  const std::vector<uint8_t>* fixed = router.fixed_mask().empty() ? nullptr : &router.fixed_mask();
  // Keep what the switches hold where it costs nothing against these paths, then let the
  // engine's own stage (SAR's refinement) improve on that: the refinement moves only the routes
  // on the most loaded channels, so starting it from the kept tables changes few entries, where
  // keeping entries after it could keep almost none (its result is tight everywhere).
  Status fits = Status::OK();
  if (in.previous != nullptr) fits = in.previous->CheckFits(*in.fabric);
  if (in.previous == nullptr || !fits.ok()) {
    if (!fits.ok()) {
      out->notes.push_back("delta: previous tables ignored, full recompute (" + fits.message() +
                           ")");
    }
    if (post) post(router, &out->lfts, &out->notes, fixed);
  } else if (in.previous_jobs == nullptr) {
    KeepPrevious(in, router.graph(), router, post, fixed, out);
  } else {
    KeepStable(in, router.graph(), router, post, fixed, out);
  }
  if (fixed != nullptr) NoteFixed(router, &out->lfts, &out->notes);

  const Stopwatch layer_start;
  LayerOptions options;
  options.max_layers = in.num_vls;
  options.threads = in.threads;
  options.switch_lids = in.switch_lids && in.num_vls > 1;  // the one-lane rule (routing_pass.h)
  LayerStats stats;
  SAR_RETURN_IF_ERROR(AssignVirtualLayers(*in.fabric, out->lfts, options, &out->layers, &stats));
  out->layers_ms = layer_start.ElapsedMs();
  out->num_layers = std::max(1, stats.layers_used);
  out->notes.push_back("virtual layers: " + std::to_string(stats.layers_needed) +
                       " needed for deadlock freedom, " + std::to_string(stats.layers_used) +
                       " used after balancing (" + std::to_string(stats.cycles_broken) +
                       " cycles broken, " + std::to_string(stats.routes) + " switch routes" +
                       (stats.up_down_first ? "; up*/down* routes kept in layer 0: cycle by cycle "
                                              "needed more layers"
                                            : "") +
                       ")");
  return Status::OK();
}

}  // namespace sar::internal
