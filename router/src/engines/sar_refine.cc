#include "engines/sar_refine.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <memory_resource>
#include <new>
#include <optional>
#include <unordered_map>

#include "analysis/trace_parallel.h"
#include "big_array.h"
#include "work_pool.h"

namespace sar::internal {
namespace {

// One job destination's tree. Its next hops and flows live in the Refiner's flat arrays
// (next_, flow_eff_, flow_all_ at [tree * num_switches + switch]): one allocation for all trees
// instead of three per tree. The next hop of a switch is its arc's offset among the switch's
// arcs (kNoArc: the root or no route; a switch has at most kMaxPorts < 255 arcs), the flows the
// routes each switch forwards (its own sources plus everything upstream), intra-job and all.
struct Tree {
  int dest = 0;  // index into g.dests
};
constexpr uint8_t kNoArc = 0xFF;

// Per arc, what the candidate walk reads at each step, in one 32-byte record (one cache line
// per step instead of one per array): the loads per unit of capacity ([0] effective, [1]
// all-pairs), what one route adds, and the ends.
struct ArcState {
  uint64_t load[2];
  uint64_t unit;
  int32_t to, from;
};

// Flow: the type of the per-switch route counts (flow_eff_, flow_all_), wide enough for every
// HCA port of the fabric: uint16_t below 65,536 ports, which halves the largest arrays (80 MB
// at 10k hosts, first touched on every pass).
template <class Flow>
class Refiner {
 public:
  Refiner(const SwitchGraph& g, const std::vector<std::vector<int>>& jobs,
          const std::vector<uint64_t>& unit, LftSet* lfts)
      : g_(g), jobs_(jobs), lfts_(lfts) {
    base_ = unit.empty() ? 1 : *std::min_element(unit.begin(), unit.end());
    const int n = g.num_switches;
    arcs_.assign(g.arc_to.size(), ArcState{});
    for (int s = 0; s < n; ++s) {
      for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
        arcs_[a] = {{0, 0}, unit.empty() ? 1 : unit[a], g.arc_to[a], s};
      }
    }
    hops_of_root_.assign(n, {});
    order_of_root_.assign(n, {});
    level_begin_of_root_.assign(n, {});
  }

  Refiner(const Refiner&) = delete;
  Refiner& operator=(const Refiner&) = delete;

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

  // Reads every job destination's tree from the tables and adds the routes' loads to arcs_.
  // The tables are read row by row (LftSet keeps one switch's LIDs together) for kLoadChunk
  // destinations at a time, not a column per destination (a cache miss per switch and
  // destination); the flows are passed on in the root's BFS order, farthest first. Chunks run
  // on `threads` workers, each summing flows per arc into its own array, merged at the end
  // (sums: the result does not depend on which worker did what, and unit x sum of flows is the
  // sum of unit x flow, mod 2^64); the trees stay in destination order.
  //
  // At most `max_trees` trees are kept (RefineOptions::max_state): when the tables route more
  // destinations, only whole jobs' destinations are kept (KeepWholeJobs); the others' routes
  // are still read and their loads counted, in a worker's scratch, so every load stays exact and
  // only the moves are fewer. Returns false when not one job fits.
  bool Load(int threads, size_t max_trees) {
    const int n = g_.num_switches;
    const size_t ns = static_cast<size_t>(n);
    std::vector<int> cand;  // endpoint destinations the tables route; the kept ones first
    for (int e = 0; e < g_.num_endpoint_dests; ++e) {
      const Destination& d = g_.dests[e];
      if (d.sw < 0 || d.base_lid == 0 || d.base_lid > lfts_->max_lid()) continue;
      cand.push_back(e);
      Hops(d.sw);  // now: the workers only read them
    }
    const size_t count = cand.size();
    const size_t kept = count <= max_trees ? count : KeepWholeJobs(&cand, max_trees);
    if (kept == 0 && count > 0) return false;
    trees_partial_ = kept < count;
    // Per switch and port, the offset of its arc among the switch's arcs (kNoArc: no arc, and
    // ports 0 and kNoRoute, which are no next hop).
    std::vector<uint8_t> offset_of_port(ns * 256, kNoArc);
    for (int s = 0; s < n; ++s) {
      for (int a = g_.arc_begin[s]; a < g_.arc_begin[s + 1]; ++a) {
        offset_of_port[s * size_t{256} + g_.arc_port[a]] =
            static_cast<uint8_t>(a - g_.arc_begin[s]);
      }
      offset_of_port[s * size_t{256}] = kNoArc;
      offset_of_port[s * size_t{256} + LftSet::kNoRoute] = kNoArc;
    }
    const std::vector<Flow> hcas(g_.hcas_on_switch.begin(), g_.hcas_on_switch.end());
    next_ = Big<uint8_t>(kept * ns);
    flow_eff_ = Big<Flow>(kept * ns);
    flow_all_ = Big<Flow>(kept * ns);
    // The same next hops switch by switch ([switch * kept + candidate]), for the index below.
    const BigArray<uint8_t> by_switch = Big<uint8_t>(kept * ns);
    std::vector<char> is_tree(kept, 0);
    struct Part {
      std::vector<uint64_t> sum;   // per arc: flows over it, [arc * 2 + kEff / kAll]
      std::vector<uint32_t> seen;  // per endpoint destination: == epoch if counted
      uint32_t epoch = 0;
      // A chunk of destinations whose trees are not kept: next hops and one tree's flows.
      std::vector<uint8_t> next;
      std::vector<Flow> flow_eff, flow_all;
    };
    // Chunks of the kept candidates, then of the others (no chunk holds both).
    const size_t kept_chunks = (kept + kLoadChunk - 1) / kLoadChunk;
    const size_t chunks = kept_chunks + (count - kept + kLoadChunk - 1) / kLoadChunk;
    std::vector<Part> parts(WorkerCount(threads, chunks, 1));
    const int* arc_begin = g_.arc_begin.data();
    const int* arc_to = g_.arc_to.data();
    ParallelFor(static_cast<int>(parts.size()), chunks, 1, [&](int w, size_t chunk) {
      Part& p = parts[w];
      if (p.sum.empty()) {
        p.sum.assign(2 * arcs_.size(), 0);
        p.seen.assign(g_.num_endpoint_dests, 0);
      }
      const bool keep = chunk < kept_chunks;
      const size_t c0 = keep ? chunk * kLoadChunk : kept + (chunk - kept_chunks) * kLoadChunk;
      const int k = static_cast<int>(std::min((keep ? kept : count) - c0, kLoadChunk));
      if (!keep && p.next.empty()) {
        p.next.assign(kLoadChunk * ns, kNoArc);
        p.flow_eff.assign(ns, 0);
        p.flow_all.assign(ns, 0);
      }
      Lid lid[kLoadChunk];
      int root[kLoadChunk], routed[kLoadChunk];
      for (int i = 0; i < k; ++i) {
        lid[i] = g_.dests[cand[c0 + i]].base_lid;
        root[i] = g_.dests[cand[c0 + i]].sw;
        routed[i] = 0;
      }
      uint8_t* next0 = keep ? next_.get() + c0 * ns : p.next.data();
      for (int s = 0; s < n; ++s) {
        const uint8_t* row = lfts_->row(s);
        const uint8_t* offset = offset_of_port.data() + s * size_t{256};
        uint8_t* out = next0 + s;
        if (keep) {
          uint8_t* column = by_switch.get() + s * kept + c0;
          for (int i = 0; i < k; ++i, out += ns) {
            const uint8_t o = s == root[i] ? kNoArc : offset[row[lid[i]]];
            *out = o;
            column[i] = o;
            routed[i] += o != kNoArc;
          }
        } else {
          for (int i = 0; i < k; ++i, out += ns) {
            const uint8_t o = s == root[i] ? kNoArc : offset[row[lid[i]]];
            *out = o;
            routed[i] += o != kNoArc;
          }
        }
      }
      uint64_t* sum = p.sum.data();
      for (int i = 0; i < k; ++i) {
        const size_t c = c0 + i;
        const int e = cand[c];
        const Destination& d = g_.dests[e];
        const uint8_t* next = next0 + static_cast<size_t>(i) * ns;
        Flow* fe = keep ? flow_eff_.get() + c * ns : p.flow_eff.data();
        Flow* fa = keep ? flow_all_.get() + c * ns : p.flow_all.data();
        // Each switch's own sources: every HCA port on it but d's node's, and the job's.
        auto sources = [&] {
          std::copy(hcas.begin(), hcas.end(), fa);
          std::fill(fe, fe + ns, 0);
          for (int o : dests_of_node_.at(d.node)) {  // d's own node sends it nothing
            if (g_.dests[o].sw >= 0) --fa[g_.dests[o].sw];
          }
          ++p.epoch;
          for (int j : jobs_of_dest_[e]) {
            for (int m : jobs_[j]) {
              if (p.seen[m] == p.epoch) continue;
              p.seen[m] = p.epoch;
              const Destination& src = g_.dests[m];
              if (src.node != d.node && src.sw >= 0) ++fe[src.sw];
            }
          }
        };
        sources();
        // Farthest first (BFS order backwards, order[0] is the root), so each switch has its
        // upstream flow before passing it on, as long as every next hop is one hop nearer
        // the root (min-hop) and no switch the BFS does not reach routes d.
        const std::vector<int>& hops = hops_of_root_[d.sw];
        const std::vector<int>& order = order_of_root_[d.sw];
        size_t at = order.size();
        int seen = 0;
        while (at-- > 1) {
          const int s = order[at];
          if (next[s] == kNoArc) continue;
          const int a = arc_begin[s] + next[s];
          if (hops[arc_to[a]] != hops[s] - 1) break;
          ++seen;
          sum[2 * a + kEff] += fe[s];
          sum[2 * a + kAll] += fa[s];
          fe[arc_to[a]] += fe[s];
          fa[arc_to[a]] += fa[s];
        }
        if (at == 0 && seen == routed[i]) {
          if (keep) is_tree[c] = 1;
          continue;
        }
        // Not min-hop: not ours to move (the tree is not kept). Takes back what the loop
        // above added (the flows it passed on were final), and walks each source's route
        // instead, with a step limit: a looping route delivers nothing (the metrics count it
        // so).
        for (size_t back = order.size(); --back > at;) {
          const int s = order[back];
          if (next[s] == kNoArc) continue;
          const int a = arc_begin[s] + next[s];
          sum[2 * a + kEff] -= fe[s];
          sum[2 * a + kAll] -= fa[s];
        }
        sources();
        for (int s = 0; s < n; ++s) {
          if (fe[s] == 0 && fa[s] == 0) continue;
          int u = s;
          for (int steps = 0; u != d.sw && next[u] != kNoArc && steps <= n; ++steps) {
            u = arc_to[arc_begin[u] + next[u]];
          }
          if (u != d.sw) continue;
          for (int v = s; v != d.sw;) {
            const int a = arc_begin[v] + next[v];
            sum[2 * a + kEff] += fe[s];
            sum[2 * a + kAll] += fa[s];
            v = arc_to[a];
          }
        }
      }
    });
    for (const Part& p : parts) {
      if (p.sum.empty()) continue;
      for (size_t a = 0; a < arcs_.size(); ++a) {
        arcs_[a].load[kEff] += p.sum[2 * a + kEff] * arcs_[a].unit;
        arcs_[a].load[kAll] += p.sum[2 * a + kAll] * arcs_[a].unit;
      }
    }
    // The kept trees, packed in destination order.
    std::vector<uint32_t> tree_of(kept, kNoTree);
    tree_of_dest_.assign(g_.num_endpoint_dests, -1);
    for (size_t c = 0; c < kept; ++c) {
      if (!is_tree[c]) continue;
      const size_t to = trees_.size() * ns;
      if (to != c * ns) {
        std::copy_n(next_.get() + c * ns, ns, next_.get() + to);
        std::copy_n(flow_eff_.get() + c * ns, ns, flow_eff_.get() + to);
        std::copy_n(flow_all_.get() + c * ns, ns, flow_all_.get() + to);
      }
      tree_of[c] = static_cast<uint32_t>(trees_.size());
      tree_of_dest_[cand[c]] = static_cast<int32_t>(trees_.size());
      trees_.push_back(Tree{cand[c]});
    }
    // Per arc, the trees whose switch routes over it, in tree order (Relieve's scan order),
    // sized exactly: switch by switch from the copy above (switches own disjoint arcs, so
    // they run on the workers too). The lists are carved from one arena in 2 MB pages (see
    // Big): tens of MB of lists of their own cost as much in 4 KB page faults as the rest of
    // Load; a list a move outgrows moves to the heap.
    const size_t arcs = g_.arc_to.size();
    std::vector<uint32_t> on_arc(arcs, 0);
    const auto each_switch = [&](auto&& f) {
      ParallelFor(WorkerCount(threads, ns, kIndexSwitches), ns, kIndexSwitches,
                  [&](int, size_t s) { f(s, by_switch.get() + s * kept); });
    };
    each_switch([&](size_t s, const uint8_t* column) {
      uint32_t* counts = on_arc.data() + arc_begin[s];
      for (size_t c = 0; c < kept; ++c) {
        if (column[c] != kNoArc) counts[column[c]] += tree_of[c] != kNoTree;
      }
    });
    size_t total = 0;
    for (const uint32_t k : on_arc) total += k;
    trees_on_arc_.clear();
    // Room for every list to double once (the moves insert; only what is used is touched).
    const size_t room = 2 * total + 1024;
    index_arena_ = Big<uint32_t>(room);
    index_memory_.emplace(index_arena_.get(), room * sizeof(uint32_t),
                          std::pmr::new_delete_resource());
    trees_on_arc_.reserve(arcs);
    for (size_t a = 0; a < arcs; ++a) {
      trees_on_arc_.emplace_back(&*index_memory_).reserve(on_arc[a]);
    }
    each_switch([&](size_t s, const uint8_t* column) {
      std::pmr::vector<uint32_t>* lists = trees_on_arc_.data() + arc_begin[s];
      for (size_t c = 0; c < kept; ++c) {
        if (column[c] != kNoArc && tree_of[c] != kNoTree) lists[column[c]].push_back(tree_of[c]);
      }
    });
    return true;
  }

  // Whether Load kept only some trees, and how many destinations' routes it read.
  bool trees_partial() const { return trees_partial_; }
  size_t trees_kept() const { return trees_.size(); }

  // Load's choice of trees when not every routed destination's fits: whole jobs, the largest
  // first (ties in job order), each taken if its destinations not taken yet still fit. Large
  // jobs' routes make the highest effective loads, so their trees are the moves that lower
  // them; a whole job is what the per-job phase can judge. Moves the kept destinations to the
  // front of *cand (both parts stay in destination order) and returns how many.
  size_t KeepWholeJobs(std::vector<int>* cand, size_t max_trees) const {
    std::vector<uint8_t> state(g_.num_endpoint_dests, 0);  // 1 routed, 2 taken, 3 this job's
    for (const int e : *cand) state[e] = 1;
    std::vector<size_t> order(jobs_.size());
    for (size_t j = 0; j < order.size(); ++j) order[j] = j;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return jobs_[a].size() > jobs_[b].size(); });
    size_t taken = 0;
    for (const size_t j : order) {
      size_t add = 0;
      for (const int e : jobs_[j]) {
        if (state[e] == 1) {
          state[e] = 3;
          ++add;
        }
      }
      const bool fits = taken + add <= max_trees;
      if (fits) taken += add;
      for (const int e : jobs_[j]) {
        if (state[e] == 3) state[e] = fits ? 2 : 1;
      }
    }
    std::stable_partition(cand->begin(), cand->end(), [&](int e) { return state[e] == 2; });
    return taken;
  }

  // Three phases of the same local search: the effective load down, raising no channel's
  // all-pairs load above max(cap, the current max); the all-pairs load down to the cap without
  // raising the max effective load; the effective load again within what is left.
  void Run(const RefineOptions& o, RefineStats* st) {
    st->all_before = Max(kAll) / base_;
    st->effective_before = Max(kEff) / base_;
    const uint64_t target = o.all_pairs_cap == std::numeric_limits<uint64_t>::max()
                                ? o.all_pairs_cap
                                : o.all_pairs_cap * base_;
    int moves = 0;
    max_work_ = o.max_work;
    StartWorkers(WorkerCount(o.threads, trees_.size(), kTreesPerWorker));
    pinned_ = o.pinned != nullptr && !o.pinned->empty() ? o.pinned : nullptr;
    auto phase = [&](bool effective, uint64_t cap) {
      const int li = effective ? kEff : kAll;
      while (moves < o.max_moves && work_ < max_work_) {
        const uint64_t m = Max(li);
        if (m == 0 || (!effective && m <= target)) break;
        bool progress = false;
        for (size_t a = 0; a < arcs_.size() && moves < o.max_moves && work_ < max_work_; ++a) {
          if (arcs_[a].load[li] == m && Relieve(static_cast<int>(a), m, li, cap)) {
            ++moves;
            progress = true;
          }
        }
        if (!progress) break;
      }
    };
    // The effective phase first: under the work limit (large fabrics) the goal of the engine
    // comes before the price.
    phase(true, std::max(target, Max(kAll)));
    if (target != std::numeric_limits<uint64_t>::max()) {
      phase(false, Max(kEff));
      phase(true, std::max(target, Max(kAll)));
    }
    st->work_limited = work_ >= max_work_;
    if (o.per_job) {
      work_ = 0;  // its own budget: the phases before may have used theirs up
      JobPhase(o, std::max(target, Max(kAll)), &moves, st);
      st->work_limited = st->work_limited || work_ >= max_work_;
    }
    st->moves = moves;
    st->effective_after = Max(kEff) / base_;
    st->all_after = Max(kAll) / base_;
  }

 private:
  static constexpr int kEff = 0, kAll = 1;  // ArcState::load

  // Per job of jobs_: its bottleneck (the largest effective load, per unit of capacity, on the
  // channels its own routes cross, every job's routes counted; its HCA links: HcaFloors) and
  // the channels at it in arc order: none when it cannot fall by a move (at the HCA floor, or
  // more than kTriesPerJob channels at it) or the job has a route outside the kept trees (not
  // ours to judge). Adds the steps to work_.
  static constexpr size_t kTriesPerJob = 4;
  struct Bottleneck {
    uint64_t load = 0;
    std::vector<int> arcs;
  };
  // Per job, the most routes on one of its HCA links (a host sends to and receives from each
  // partner that shares a job with it: fixed by the placement), at the nominal rate. A job's
  // bottleneck is never below it, and no move changes it.
  std::vector<uint64_t> HcaFloors() {
    std::vector<uint64_t> partners(g_.num_endpoint_dests, 0), floor(jobs_.size(), 0);
    std::vector<uint32_t> seen(g_.num_endpoint_dests, 0);
    uint32_t epoch = 0;
    for (int e = 0; e < g_.num_endpoint_dests; ++e) {
      ++epoch;
      for (const int j : jobs_of_dest_[e]) {
        for (const int m : jobs_[j]) {
          if (seen[m] == epoch || g_.dests[m].node == g_.dests[e].node) continue;
          seen[m] = epoch;
          ++partners[e];
          ++work_;
        }
      }
    }
    for (size_t j = 0; j < jobs_.size(); ++j) {
      for (const int e : jobs_[j]) floor[j] = std::max(floor[j], partners[e] * base_);
    }
    return floor;
  }

  void Bottlenecks(std::vector<Bottleneck>* out) {
    out->resize(jobs_.size());
    for (size_t j = 0; j < jobs_.size(); ++j) (*out)[j] = BottleneckOf(j);
  }

  Bottleneck BottleneckOf(size_t j) {
    const int n = g_.num_switches;
    // Marks: arc_mark_[a] == job_mark once this job counted arc a; switch_mark_[s] == pass
    // once the current destination's walk started at s.
    if (arc_mark_.size() != arcs_.size() || mark_ > (uint32_t{1} << 31)) {
      mark_ = 0;
      arc_mark_.assign(arcs_.size(), 0);
      switch_mark_.assign(n, 0);
    }
    const uint32_t job_mark = ++mark_;
    Bottleneck b;
    bool whole = true;
    crossed_.clear();
    for (const int e : jobs_[j]) {
      const int ti = tree_of_dest_[e];
      if (ti < 0) {
        whole = false;
        continue;
      }
      const Destination& d = g_.dests[e];
      const uint8_t* next = next_.get() + Slot(static_cast<uint32_t>(ti));
      const uint32_t pass = ++mark_;
      for (const int m : jobs_[j]) {
        const Destination& src = g_.dests[m];
        if (src.node == d.node || src.sw < 0 || switch_mark_[src.sw] == pass) continue;
        switch_mark_[src.sw] = pass;
        for (int v = src.sw, steps = 0; v != d.sw && steps < n; ++steps) {
          ++work_;
          const int a = NextArc(next, v);
          if (a < 0) break;
          v = g_.arc_to[a];
          if (arc_mark_[a] == job_mark) continue;
          arc_mark_[a] = job_mark;
          crossed_.push_back(a);
          b.load = std::max(b.load, arcs_[a].load[kEff]);
        }
      }
    }
    // Only a bottleneck on switch channels above the HCA floor can fall.
    const bool movable = whole && b.load > hca_floor_[j];
    b.load = std::max(b.load, hca_floor_[j]);
    if (!movable) return b;
    std::sort(crossed_.begin(), crossed_.end());
    for (const int a : crossed_) {
      if (arcs_[a].load[kEff] != b.load) continue;
      // A move relieves one route's channels: with more channels at the bottleneck than one
      // route crosses up and down (two per level above the leaves), it is unlikely to lower
      // it, and trying costs a search each.
      if (b.arcs.size() == kTriesPerJob) return Bottleneck{b.load, {}};
      b.arcs.push_back(a);
    }
    return b;
  }

  // The per-job phase. A move takes routes off channel h, one of the channels at job J's
  // bottleneck X, onto channels whose loads stay below X (Relieve with m = X), so no job at or
  // above X gets worse and a job whose bottleneck rises ends below X. It is kept if J's
  // bottleneck fell below X (then the sorted vector of bottlenecks fell lexicographically),
  // else taken back (with several channels at X one move may not do it). Jobs are tried from
  // the worst down, each channel at the bottleneck in turn, in sweeps until one keeps no move;
  // every move kept lowers the sorted channel loads too, so the search ends.
  void JobPhase(const RefineOptions& o, uint64_t cap, int* moves, RefineStats* st) {
    std::vector<Bottleneck> before, now;
    hca_floor_ = HcaFloors();
    Bottlenecks(&before);
    now = before;
    std::vector<size_t> order;
    // (channel, load) pairs Relieve found nothing for since the last move kept: the same
    // search on the same loads finds nothing again (many jobs share a bottleneck channel).
    std::vector<std::pair<int, uint64_t>> failed;
    // Sweeps over the jobs, worst first as the sweep starts; each job with its bottleneck as
    // it is when its turn comes (`now` is exact after every move kept or taken back).
    for (bool kept_any = true; kept_any;) {
      kept_any = false;
      order.clear();
      for (size_t j = 0; j < now.size(); ++j) {
        if (!now[j].arcs.empty()) order.push_back(j);
      }
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return now[a].load > now[b].load; });
      for (const size_t j : order) {
        for (size_t k = 0; k < now[j].arcs.size(); ++k) {
          if (*moves >= o.max_moves || work_ >= max_work_) return Lowered(before, now, st);
          const int h = now[j].arcs[k];
          const uint64_t x = now[j].load;
          if (std::find(failed.begin(), failed.end(), std::make_pair(h, x)) != failed.end()) {
            continue;
          }
          Move made;
          if (!Relieve(h, x, kEff, cap, &made)) {
            failed.emplace_back(h, x);
            continue;
          }
          // Every new load is below x, so no bottleneck at or above x rose and none below
          // it rose to x: if j's fell below x, the sorted vector fell.
          if (BottleneckOf(j).load < x) {
            ++*moves;
            ++st->job_moves;
            kept_any = true;
            failed.clear();
            Bottlenecks(&now);
            break;  // job j's bottleneck changed: its next turn is in the next sweep
          }
          Apply(&trees_[made.tree], made.u, made.old_arc);
          failed.emplace_back(h, x);
        }
      }
    }
    Lowered(before, now, st);
  }

  static void Lowered(const std::vector<Bottleneck>& before, const std::vector<Bottleneck>& now,
                      RefineStats* st) {
    for (size_t j = 0; j < now.size(); ++j) st->jobs_lowered += now[j].load < before[j].load;
  }

  static constexpr size_t kLoadChunk = 256;
  static constexpr size_t kIndexSwitches = 16;
  static constexpr uint32_t kNoTree = ~uint32_t{0};

  void StartWorkers(int workers) {
    scratch_.resize(workers);
    part_.resize(static_cast<size_t>(workers) * kPartsPerWorker);
    if (workers > 1) pool_ = std::make_unique<WorkPool>(workers);
  }

  uint64_t Max(int li) const {
    uint64_t m = 0;
    for (const ArcState& a : arcs_) m = std::max(m, a.load[li]);
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
    // Per hop count, where its switches start in the order; the end twice (one past the last
    // level: a channel into the farthest level has no switches beyond it).
    std::vector<int>& begin = level_begin_of_root_[root];
    for (size_t i = 0; i < q.size(); ++i) {
      if (i == 0 || h[q[i]] != h[q[i - 1]]) begin.push_back(static_cast<int>(i));
    }
    begin.push_back(static_cast<int>(q.size()));
    begin.push_back(static_cast<int>(q.size()));
    return h;
  }

  // Tree ti's entries in next_, flow_eff_ and flow_all_ start here.
  size_t Slot(uint32_t ti) const { return static_cast<size_t>(ti) * g_.num_switches; }
  // The arc switch s routes tree entry `next` (next_[slot + s]) over, -1 if none.
  int NextArc(const uint8_t* next, int s) const {
    return next[s] == kNoArc ? -1 : g_.arc_begin[s] + next[s];
  }

  // The best move found so far, and the search steps it took (RefineOptions::max_work).
  struct Search {
    bool found = false;
    uint32_t tree = 0;
    int u = 0, arc = 0;
    uint64_t worst = 0, worst_other = 0;
    uint64_t work = 0;
  };

  // Per-search scratch: the switches whose route crosses the arc being relieved, and one
  // candidate's old path by hop level.
  struct Scratch {
    std::vector<int> crossing;  // the switches whose route crosses h, in the root's BFS order
    std::vector<int> old_path;  // [hops]: the old route's arc leaving that level
    std::vector<int> below_h;   // [hops]: the switch the route from h passes there
    // Per switch whose route does not cross h: where that route leaves the old routes' common
    // part below h (the same for every candidate of one search), memoised per search (epoch).
    struct Suffix {
      uint32_t epoch = 0;
      int32_t begin = 0, len = 0;  // its channels before that, in `suffix_arcs`
      int32_t end_steps = 0;       // steps after them (the old route's channels to the root)
      bool ok = true;              // false: it reaches a switch without a route
      // When its channels (len > 0) share one unit (every channel at the same rate): their
      // largest loads, so that a candidate that keeps all of them within the limits takes
      // max + flow x unit without the walk (the walk still decides, and counts, any other).
      bool uniform = false;
      uint64_t unit = 0, max_load = 0, max_other = 0;
    };
    struct SuffixArc {
      uint64_t load, other, unit;  // ArcState's loads (the one lowered first)
    };
    std::vector<uint32_t> crossing_epoch;  // per switch: == epoch if its route crosses h
    std::vector<Suffix> suffix;            // per switch
    std::vector<SuffixArc> suffix_arcs;
    uint32_t epoch = 0;
  };

  // A move made (Relieve), and how to take it back: switch u of tree `tree` routed over
  // `old_arc` before.
  struct Move {
    uint32_t tree = 0;
    int u = 0, old_arc = 0;
  };

  // Tries the best single move that takes routes off arc h, which carries the maximum m of the
  // load being lowered (li: effective or all-pairs). The routes' new channels must stay below m
  // in that load and within `cap` in the other one.
  bool Relieve(int h, uint64_t m, int li, uint64_t cap, Move* made = nullptr) {
    // Every tree counts one step of work, as the scan over all trees did before the index;
    // only the trees routing over h (trees_on_arc_, in tree order) can cross it.
    work_ += trees_.size();
    const std::pmr::vector<uint32_t>& trees = trees_on_arc_[h];
    const int workers = static_cast<int>(scratch_.size());
    Search best;
    if (workers > 1 && trees.size() >= kTreesPerWorker * static_cast<size_t>(workers)) {
      const size_t parts = std::min(part_.size(), trees.size() / kTreesPerWorker);
      pool_->Run(parts, [&](int w, size_t part) {
        SearchPart(trees, part, parts, h, m, li, cap, &scratch_[w], &part_[part]);
      });
      // Parts in tree order, a later one only if strictly better: the move the sequential
      // search finds (the first best), and the same steps.
      best = part_[0];
      for (size_t pi = 1; pi < parts; ++pi) {
        const Search& p = part_[pi];
        best.work += p.work;
        if (p.found && (!best.found || p.worst < best.worst ||
                        (p.worst == best.worst && p.worst_other < best.worst_other))) {
          const uint64_t work = best.work;
          best = p;
          best.work = work;
        }
      }
    } else {
      for (const uint32_t ti : trees) SearchTree(ti, h, m, li, cap, &scratch_[0], &best);
    }
    work_ += best.work;
    if (!best.found) return false;
    if (made != nullptr) {
      *made = {best.tree, best.u, NextArc(next_.get() + Slot(best.tree), best.u)};
    }
    Apply(&trees_[best.tree], best.u, best.arc);
    return true;
  }

  // Part `part` of `parts` of Relieve's search: a contiguous run of the trees in tree order,
  // searched with the scratch of whichever worker runs it.
  void SearchPart(const std::pmr::vector<uint32_t>& trees, size_t part, size_t parts, int h,
                  uint64_t m, int li, uint64_t cap, Scratch* sc, Search* best) const {
    const size_t begin = trees.size() * part / parts, end = trees.size() * (part + 1) / parts;
    *best = Search{};
    for (size_t i = begin; i < end; ++i) SearchTree(trees[i], h, m, li, cap, sc, best);
  }

  // Relieve's search in tree ti, which routes `from` (h's tail) over h: every switch whose route
  // crosses h, each other next hop one hop nearer the root, and the route from there. Updates
  // *best if a move beats it (strictly: of equal moves the first found in tree order, then in
  // the root's BFS order of the switches, then in arc order, wins) and adds the steps to
  // best->work. Reads the shared state only.
  void SearchTree(uint32_t ti, int h, uint64_t m, int li, uint64_t cap, Scratch* sc,
                  Search* best) const {
    const Tree& t = trees_[ti];
    const int from = arcs_[h].from;
    const size_t slot = Slot(ti);
    const Flow* flow = (li == kEff ? flow_eff_ : flow_all_).get() + slot;
    const Flow* flow_other = (li == kEff ? flow_all_ : flow_eff_).get() + slot;
    if (flow[from] == 0) return;
    const int root = g_.dests[t.dest].sw;
    // One step per switch, as the scan over the root's BFS order that found them once counted.
    uint64_t work = order_of_root_[root].size();
    const std::vector<int>& hops = hops_of_root_[root];
    const uint8_t* next_offset = next_.get() + slot;
    auto next = [&](int s) { return NextArc(next_offset, s); };
    const int oi = 1 - li;
    const int level_h = hops[from];
    const size_t n = static_cast<size_t>(g_.num_switches);
    std::vector<int>& old_path = sc->old_path;
    std::vector<int>& below_h = sc->below_h;
    if (old_path.size() < n + 1) {
      old_path.assign(n + 1, -1);
      below_h.assign(n + 1, -1);
      sc->crossing_epoch.assign(n, 0);
      sc->suffix.assign(n, {});
    }
    const uint32_t epoch = ++sc->epoch;
    // The switches routing over h: `from` (alone on its level: the tree is min-hop) and, on
    // the levels beyond, those whose next hop does, in the root's BFS order (so that of equal
    // moves the same one wins).
    std::vector<int>& crossing = sc->crossing;
    crossing.clear();
    crossing.push_back(from);
    sc->crossing_epoch[from] = epoch;
    // The switches beyond h's level in the root's BFS order: u crosses h when its next hop leads
    // to a switch that does. (Walking upstream from `from` over the reverse arcs instead, then
    // sorting, looks at fewer switches but more arcs: 10% slower at 10k hosts.)
    const std::vector<int>& order = order_of_root_[root];
    for (size_t at = level_begin_of_root_[root][level_h + 1]; at < order.size(); ++at) {
      const int u = order[at];
      const int x = next(u);
      if (x >= 0 && sc->crossing_epoch[g_.arc_to[x]] == epoch) {
        sc->crossing_epoch[u] = epoch;
        crossing.push_back(u);
      }
    }
    sc->suffix_arcs.clear();
    for (int w = arcs_[h].to, k = level_h - 1; k >= 0; --k) {
      below_h[k] = w;
      if (k > 0) w = arcs_[next(w)].to;
    }
    // The route from v (not crossing h) up to where it joins the old route below h: the
    // candidate walk's channels after its first one, the same for every candidate u.
    auto suffix = [&](int v) -> const typename Scratch::Suffix& {
      typename Scratch::Suffix& sf = sc->suffix[v];
      if (sf.epoch == epoch) return sf;
      sf.epoch = epoch;
      sf.begin = static_cast<int32_t>(sc->suffix_arcs.size());
      sf.end_steps = 0;
      sf.ok = true;
      for (int w = v; w != root;) {
        const int k = hops[w];
        if (k < level_h && below_h[k] == w) {
          sf.end_steps = k;  // the step onto the old route, then one per channel after it
          break;
        }
        const int x = next(w);
        if (x < 0) {
          sf.ok = false;
          break;
        }
        const ArcState& arc = arcs_[x];
        sc->suffix_arcs.push_back({arc.load[li], arc.load[1 - li], arc.unit});
        w = arc.to;
      }
      sf.len = static_cast<int32_t>(sc->suffix_arcs.size()) - sf.begin;
      sf.uniform = sf.len > 0;
      sf.max_load = sf.max_other = 0;
      if (sf.uniform) sf.unit = sc->suffix_arcs[sf.begin].unit;
      for (int i = 0; i < sf.len; ++i) {
        const typename Scratch::SuffixArc& sa = sc->suffix_arcs[sf.begin + i];
        sf.uniform = sf.uniform && sa.unit == sf.unit;
        sf.max_load = std::max(sf.max_load, sa.load);
        sf.max_other = std::max(sf.max_other, sa.other);
      }
      return sf;
    };
    for (const int u : crossing) {
      if (flow[u] == 0) continue;
      if (pinned_ != nullptr &&
          (*pinned_)[static_cast<size_t>(t.dest) * g_.num_switches + u] != 0) {
        continue;
      }
      const uint64_t f = flow[u], fo = flow_other[u];
      // The old path from u, by the level each arc leaves (hops to the root): a new route
      // that reaches it at some level follows it from there on. Only the walk below reads it,
      // for the few candidates whose next switch crosses h too: found when first needed.
      const int level_u = hops[u];
      bool old_path_found = false;
      const int next_u = next(u);
      for (int a = g_.arc_begin[u]; a < g_.arc_begin[u + 1]; ++a) {
        if (a == next_u || hops[arcs_[a].to] != level_u - 1) continue;
        uint64_t worst = 0, worst_other = 0;
        bool ok = true;
        const int v = arcs_[a].to;
        if (level_u == 1 || sc->crossing_epoch[v] != epoch) {
          // The same steps as the walk below, with the route after the first channel from
          // the memo: it neither meets h nor the old route above h.
          const ArcState& first = arcs_[a];
          worst = first.load[li] + f * first.unit;
          worst_other = first.load[oi] + fo * first.unit;
          if (worst >= m || worst_other > cap) continue;
          if (level_u > 1) {
            const typename Scratch::Suffix& sf = suffix(v);
            // Nearly every candidate keeps the suffix within the limits (~90% at 10k hosts):
            // then the walk would look at all len channels, and its maxima are the memo's plus
            // the flows. Otherwise the walk decides, and counts the channels it looks at.
            const uint64_t max_nl = sf.max_load + f * sf.unit;
            const uint64_t max_no = sf.max_other + fo * sf.unit;
            if (sf.uniform && max_nl < m && max_no <= cap) {
              work += sf.len;
              worst = std::max(worst, max_nl);
              worst_other = std::max(worst_other, max_no);
            } else {
              const typename Scratch::SuffixArc* sa = sc->suffix_arcs.data() + sf.begin;
              for (int i = 0; i < sf.len && ok; ++i) {
                ++work;
                const uint64_t nl = sa[i].load + f * sa[i].unit;
                const uint64_t no = sa[i].other + fo * sa[i].unit;
                worst = std::max(worst, nl);
                worst_other = std::max(worst_other, no);
                ok = nl < m && no <= cap;
              }
              if (!ok) continue;
            }
            if (!sf.ok) continue;
            work += sf.end_steps;
          }
        } else {
          // One step per channel looked at after the first, up to where the route ends (the
          // root, h, a channel too loaded, a switch without a route).
          if (!old_path_found) {
            for (int w = u, k = level_u; k > 0; --k) {
              old_path[k] = next(w);
              w = arcs_[old_path[k]].to;
            }
            old_path_found = true;
          }
          for (int x = a, k = level_u;; ++work, --k) {
            if (x == h) {
              ok = false;  // rejoins h: relieves nothing
              break;
            }
            if (x == old_path[k]) {
              // Back on the old route, whose channels keep their load: it runs on to h (below
              // level_h: passes it: no move) or to the root, a step per channel.
              if (k > level_h) {
                work += k - level_h;
                ok = false;
              } else {
                work += k - 1;
              }
              break;
            }
            const ArcState& arc = arcs_[x];  // a channel the routes newly take
            const uint64_t nl = arc.load[li] + f * arc.unit, no = arc.load[oi] + fo * arc.unit;
            worst = std::max(worst, nl);
            worst_other = std::max(worst_other, no);
            if (nl >= m || no > cap) {
              ok = false;
              break;
            }
            if (k == 1) break;  // arc.to is the root
            x = next(arc.to);
            if (x < 0) {  // no entry there (a disconnected part): not a move to make
              ok = false;
              break;
            }
          }
        }
        if (!ok) continue;
        if (!best->found || worst < best->worst ||
            (worst == best->worst && worst_other < best->worst_other)) {
          best->found = true;
          best->tree = ti;
          best->u = u;
          best->arc = a;
          best->worst = worst;
          best->worst_other = worst_other;
        }
      }
    }
    best->work += work;
  }

  // Moves tree `ti` from arc `from` to arc `to` in trees_on_arc_, keeping both in tree order.
  void Reindex(uint32_t ti, int from, int to) {
    std::pmr::vector<uint32_t>& a = trees_on_arc_[from];
    a.erase(std::lower_bound(a.begin(), a.end(), ti));
    std::pmr::vector<uint32_t>& b = trees_on_arc_[to];
    b.insert(std::lower_bound(b.begin(), b.end(), ti), ti);
  }

  void Apply(Tree* t, int u, int arc) {
    const Destination& d = g_.dests[t->dest];
    const uint32_t ti = static_cast<uint32_t>(t - trees_.data());
    uint8_t* next = next_.get() + Slot(ti);
    Flow* flow_eff = flow_eff_.get() + Slot(ti);
    Flow* flow_all = flow_all_.get() + Slot(ti);
    const uint64_t f = flow_eff[u], fa = flow_all[u];
    for (int v = u; v != d.sw;) {
      const int a = NextArc(next, v);
      arcs_[a].load[kEff] -= f * arcs_[a].unit;
      arcs_[a].load[kAll] -= fa * arcs_[a].unit;
      v = g_.arc_to[a];
      if (v != d.sw) {
        flow_eff[v] -= f;
        flow_all[v] -= fa;
      }
    }
    Reindex(ti, NextArc(next, u), arc);
    next[u] = static_cast<uint8_t>(arc - g_.arc_begin[u]);
    for (int v = u; v != d.sw;) {
      const int a = NextArc(next, v);
      arcs_[a].load[kEff] += f * arcs_[a].unit;
      arcs_[a].load[kAll] += fa * arcs_[a].unit;
      v = g_.arc_to[a];
      if (v != d.sw) {
        flow_eff[v] += f;
        flow_all[v] += fa;
      }
    }
    lfts_->set_port(u, d.base_lid, g_.arc_port[arc]);
  }

  const SwitchGraph& g_;
  const std::vector<std::vector<int>>& jobs_;
  // A nominal-rate channel's ArcState::unit (SsspRouter::arc_units: what one route adds to an
  // arc's load, larger on slower channels, so every load here is per unit of capacity).
  uint64_t base_ = 1;
  LftSet* lfts_;
  std::vector<ArcState> arcs_;
  std::vector<std::vector<int>> hops_of_root_;
  std::vector<std::vector<int>> order_of_root_;        // switches by hops from the root (BFS order)
  std::vector<std::vector<int>> level_begin_of_root_;  // per root, per hop count: first in order
  std::vector<std::vector<int>> jobs_of_dest_;
  std::vector<Tree> trees_;
  // Per tree and switch, [tree * num_switches + switch]: the next hop's offset among the
  // switch's arcs (kNoArc: none), and the routes it forwards, intra-job and all (see Tree).
  BigArray<uint8_t> next_;
  BigArray<Flow> flow_eff_, flow_all_;
  // Per arc: the trees with next[arc's tail] == arc, in tree order; their memory (declared first,
  // freed last).
  BigArray<uint32_t> index_arena_;
  std::optional<std::pmr::monotonic_buffer_resource> index_memory_;
  std::vector<std::pmr::vector<uint32_t>> trees_on_arc_;
  std::unordered_map<NodeId, std::vector<int>> dests_of_node_;
  // The search's workers (null: one thread), kept for the whole refinement: a search is a few
  // hundred microseconds, too short to start threads for. A search is split into parts of
  // trees (results part_[part], in tree order) taken by whichever worker is free (scratch_[w]):
  // more parts than workers, so a worker the OS delays or a part of costly trees holds up less.
  static constexpr size_t kTreesPerWorker = 8;  // fewer: not worth waking a worker
  static constexpr size_t kPartsPerWorker = 4;
  std::vector<Scratch> scratch_ = std::vector<Scratch>(1);
  std::vector<Search> part_;
  std::unique_ptr<WorkPool> pool_;
  const std::vector<uint8_t>* pinned_ = nullptr;  // RefineOptions::pinned
  std::vector<int32_t> tree_of_dest_;             // per endpoint destination: its tree, -1 if none
  std::vector<uint64_t> hca_floor_;               // per job: HcaFloors()
  // BottleneckOf's scratch: marks per arc and switch, and the arcs one job crosses.
  std::vector<uint32_t> arc_mark_, switch_mark_;
  uint32_t mark_ = 0;
  std::vector<int> crossed_;
  uint64_t work_ = 0, max_work_ = 0;  // steps of the search so far, and its deterministic limit
  bool trees_partial_ = false;        // Load kept only whole jobs' trees (KeepWholeJobs)
};

}  // namespace

namespace {

template <class Flow>
void Refine(const SwitchGraph& g, const std::vector<std::vector<int>>& jobs,
            const std::vector<uint64_t>& arc_units, const RefineOptions& options, LftSet* lfts,
            RefineStats* stats) {
  Refiner<Flow> r(g, jobs, arc_units, lfts);
  const size_t dests = r.JobDestinations();
  if (dests == 0) return;
  const size_t max_trees = options.max_state / std::max<size_t>(1, g.num_switches);
  if (!r.Load(options.threads, max_trees)) {
    stats->skipped = true;
    return;
  }
  stats->trees_kept = r.trees_kept();
  stats->trees_partial = r.trees_partial();
  r.Run(options, stats);
}

}  // namespace

void RefineJobRoutes(const SwitchGraph& g, const std::vector<std::vector<int>>& jobs,
                     const std::vector<uint64_t>& arc_units, const RefineOptions& options,
                     LftSet* lfts, RefineStats* stats) {
  *stats = RefineStats{};
  // A switch forwards at most every HCA port's route to a destination.
  uint64_t ports = 0;
  for (const int k : g.hcas_on_switch) ports += static_cast<uint64_t>(std::max(k, 0));
  if (!options.wide_flows && ports <= std::numeric_limits<uint16_t>::max()) {
    Refine<uint16_t>(g, jobs, arc_units, options, lfts, stats);
  } else {
    Refine<uint32_t>(g, jobs, arc_units, options, lfts, stats);
  }
}

}  // namespace sar::internal
