// The shared body of the dfsssp and sar engines: single-source shortest-path trees over the switch
// multigraph, one destination LID at a time, with edge weights that count the routes already
// placed on each channel (DFSSSP, Domke et al.), then virtual layers for deadlock freedom.
//
// The engines differ only in the order of destinations and in which routes raise the weights,
// so each engine is a planner that lists SsspSteps; RouteSssp does the rest.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engines/switch_graph.h"
#include "sar/engines/engine.h"
#include "sar/model/lft.h"

namespace sar::internal {

struct SsspStep {
  int dest = 0;        // index into SwitchGraph::dests
  int lid_offset = 0;  // which of the destination's 2^lmc LIDs
  /// SAR's job phase: only routes from sources that share a job with the destination raise the
  /// weights, and the tree is grown one source switch at a time (see SsspRouter::Run).
  bool intra_job = false;
};

class SsspRouter {
 public:
  explicit SsspRouter(const Fabric& fabric);

  const SwitchGraph& graph() const { return graph_; }
  /// Jobs as lists of endpoint destination indices (dests[0, num_endpoint_dests)).
  void SetJobs(std::vector<std::vector<int>> members);
  const std::vector<std::vector<int>>& job_members() const { return job_members_; }
  /// Entries decided before routing (RoutingInput::fixed): Run routes those base LIDs with the
  /// entries' arcs preset (the other switches choose as always, and the weights count the
  /// routes on them as on any arc). An entry naming no switch-to-switch port, or no HCA base
  /// LID, is dropped here; one that is not one hop nearer its LID's switch, in Run. Call before
  /// the steps.
  void SetFixed(const std::vector<FixedEntry>& fixed);
  /// Whether some entry of the endpoint destination's base LID is fixed.
  bool HasFixed(int dest) const {
    return static_cast<size_t>(dest) < fixed_arcs_.size() && !fixed_arcs_[dest].empty();
  }
  /// [endpoint dest * switches + switch]: the fixed entries honoured so far (all of them once
  /// every step ran); empty = none were given.
  const std::vector<uint8_t>& fixed_mask() const { return fixed_mask_; }
  /// The port of a fixed entry (fixed_mask() set there).
  uint8_t FixedPort(int dest, int sw) const {
    for (const auto& [s, a] : fixed_arcs_[dest]) {
      if (s == sw) return graph_.arc_port[a];
    }
    return LftSet::kNoRoute;
  }
  /// Given entries not honoured (no such arc or LID, or not one hop nearer).
  uint64_t fixed_dropped() const { return fixed_dropped_; }
  /// Per arc of graph(): what one route adds to its weight, kUnitWeight x nominal rate / the
  /// channel's rate (the same for every arc when all links run at one rate).
  const std::vector<uint64_t>& arc_units() const { return unit_; }
  /// Routes one destination LID from every switch and raises the weights.
  void Run(const SsspStep& step);
  /// Keeps the loads in the two-word form from now on, as a fabric does once some channel's
  /// load passes 2^32 (GoWide). For tests: the tables must be those of the packed form.
  void UseWideLoads() {
    if (!wide_) GoWide();
  }
  /// For tests: the job phase computes every switch's cost again for each source switch (as
  /// before the memo was kept across them, Invalidate); the tables must be the same.
  void RecomputeJobCostsPerSource() { keep_job_memo_ = false; }
  /// Switch costs the job phase and capacity weighting computed (CostFrom's memo misses).
  uint64_t cost_computations() const { return cost_computations_; }
  LftSet TakeLfts() {
    FlushPorts();
    return std::move(lfts_);
  }

 private:
  // Path cost, compared lexicographically: hops are fixed by the BFS order (every path taken is
  // a shortest one), then the DFSSSP weight, then all routes on the path, then a round-robin key
  // (with total_first_: all routes before the weight). ChooseArc compares them.
  struct Cost {
    uint64_t w = 0;
    uint64_t t = 0;
  };

  void Bfs(int root);
  // The tables are per switch (one row of LIDs each) and a step writes one LID of every switch:
  // steps' columns wait in pending_ports_ and are written kPendingSteps at a time, switch by
  // switch, so consecutive LIDs share a cache line instead of a miss per switch and step.
  // Unwritten entries hold kNoRoute (a step writes only the switches its BFS reaches).
  void FlushPorts();
  static constexpr size_t kPendingSteps = 64;
  std::vector<Lid> pending_lids_;
  std::vector<uint8_t> pending_ports_;  // [k * switches + s]: port of s for pending_lids_[k]
  // Best arc of unassigned switch `s` towards the root, given the costs of its DAG successors.
  void ChooseArc(int s);
  template <bool kTotalFirst, bool kWeighted>
  void ChooseArcOf(int s);
  // The final pass over order_[begin, end) in BFS order: each switch without a next hop chooses
  // one, the others take the cost of theirs; a switch reads only the costs of the level before.
  void ChooseRange(int begin, int end);
  // The same pass on packed costs (packed_pass_): while every path cost's parts fit in 32 bits
  // (checked per step: max_load_ x the tree's depth), a cost (p, q) is one uint64_t p << 32 | q,
  // so one add and one compare replace two of each, and the arrays read are half the size. No
  // carry crosses the halves, so the order and the choices are exactly those of Cost.
  template <bool kTotalFirst>
  void ChoosePackedRange(int begin, int end);
  bool packed_pass_ = false;
  std::vector<uint64_t> packed_cost_;           // per switch, in packed_pass_
  uint64_t max_load_ = 0;                       // the largest w or t of any arc
  void AddLoad(int a, uint64_t w, uint64_t t);  // raises the arc's load (packed or wide)
  void GoWide();                                // moves the loads from packed_load_ to load_
  // Per step: the round-robin start of every switch degree (rr_key_ mod degree), so that
  // ChooseArc needs no 64-bit division per switch.
  void SetRoundRobinStarts();
  Cost CostFrom(int s);  // memoised (memo_ == epoch_): the job phase and capacity weighting
  void NextEpoch();      // every memo_ entry stale
  // Marks v stale, and every switch whose memoised cost was computed through v (the job phase,
  // after raising the loads of v's chosen arc).
  void Invalidate(int v);
  std::vector<int> stale_;  // Invalidate's stack
  bool keep_job_memo_ = true;
  uint64_t cost_computations_ = 0;
  void CountSources(const Destination& d, bool intra_job);

  const Fabric& fabric_;
  SwitchGraph graph_;
  LftSet lfts_;
  // Per arc: w = the DFSSSP weight (routes that count), t = every route placed so far
  // (tie-breaker). While both fit in 32 bits (always, short of ~10^5 hosts' worth of routes on
  // one channel) they are one word w << 32 | t in packed_load_: a raise touches one 8-byte word,
  // the whole array (1 MB at 45k hosts) stays in a core's L2 cache, and the packed pass reads it
  // as is (t << 32 | w, for the job phase's order, is its rotation). The first raise that would
  // overflow a half moves every load to the two-word load_ for good (wide_).
  std::vector<uint64_t> packed_load_;
  std::vector<Cost> load_;
  bool wide_ = false;
  Cost Load(int a) const {
    if (wide_) return load_[a];
    return Cost{packed_load_[a] >> 32, packed_load_[a] & 0xffffffffu};
  }
  // Capacity weighting, all of it. unit_: per arc, what one route adds to load_ (w and t),
  // kUnitWeight x nominal rate / the channel's rate, so a slow cable fills up sooner. With
  // `weighted_` (some link below the nominal rate) an arc also costs half the routes about to
  // be placed on it, chunk_ x unit_ / 2 (the rise in the sum of squared loads per capacity, so
  // a cable gets its share by rate rounded to the nearest chunk, not down to none), and every
  // switch with sources places its routes one at a time (PlaceSourcesOneByOne; chunk_: the
  // routes the switch sends, its job group in SAR's job phase): one destination's routes through
  // a switch all take one arc, and a leaf must see what the leaves before it put on a slow cable.
  // With every link at one rate, all choices are those of the unweighted engine.
  std::vector<uint64_t> unit_;
  bool weighted_ = false;
  uint64_t chunk_ = 1;
  static constexpr uint64_t kUnitWeight = 64;
  void PlaceSourcesOneByOne(bool intra_job);
  Cost ArcCost(int a) const {
    const uint64_t extra = weighted_ ? chunk_ * unit_[a] / 2 : 0;
    const Cost l = Load(a);
    return Cost{l.w + extra, l.t + extra};
  }
  uint64_t counter_ = 0;  // steps so far
  uint64_t rr_key_ = 0;   // this step's round-robin tie-break key (see Run)
  static constexpr uint64_t kNoKey = ~uint64_t{0};
  std::vector<uint64_t> base_key_;  // per dest: rr_key_ of its base LID step
  bool total_first_ = false;        // compare all routes before the DFSSSP weight

  std::vector<std::vector<int>> job_members_;
  std::vector<std::vector<int>> jobs_of_dest_;
  // Fixed entries (SetFixed): per endpoint dest, (switch, arc); and which are honoured.
  std::vector<std::vector<std::pair<int, int>>> fixed_arcs_;
  std::vector<uint8_t> fixed_mask_;
  uint64_t fixed_dropped_ = 0;
  void PresetFixed(int dest);                    // next_ of the destination's fixed switches (Run)
  std::vector<std::vector<int>> dests_of_node_;  // endpoint dest indices per NodeId

  // Per-step scratch.
  int bfs_root_ = -1;
  std::vector<int> order_;        // switches by increasing hops from the root (reachable only)
  std::vector<int> level_begin_;  // per hop count: its first index in order_; then order_.size()
  std::vector<int> hops_;
  // Per BFS root: the arcs of each switch that lead one hop nearer the root (its successors in
  // the shortest-path DAG), in arc order: down_count_[s] of them; unless they are consecutive
  // arcs (down_first_arc_), switch s's are listed in down_[down_begin_[s], down_end_[s]).
  // Built in the BFS's own pass (when a switch is taken from the queue, the level before it is
  // complete) and reused while consecutive destinations share it, so the arc choice scans only
  // these instead of every arc of the switch. Laid out in BFS order, as the final pass reads
  // them.
  struct DownArc {
    int32_t arc;  // index into graph_.arc_to (the switch's arcs are contiguous and ascending)
    int32_t to;
  };
  std::vector<int32_t> down_begin_, down_end_;
  std::vector<DownArc> down_;
  // Per switch: its first candidate arc when its candidates are consecutive arcs (the usual
  // case: a switch's up-ports are its last ports), else -1. They are then read in place (the
  // arcs' loads and graph_.arc_to), not listed in down_, and the round-robin split is a clamp.
  std::vector<int32_t> down_first_arc_;
  std::vector<int32_t> down_count_;  // per switch: its candidates
  std::vector<int> degrees_;         // the distinct switch degrees
  std::vector<int> rr_start_;        // per degree: rr_key_ mod degree (SetRoundRobinStarts)
  std::vector<int> next_;            // per switch: arc chosen towards the root, -1 = none
  std::vector<Cost> cost_;
  std::vector<uint32_t> memo_;  // per switch: epoch_ when cost_/choice_ were computed
  std::vector<int> choice_;
  uint32_t epoch_ = 0;
  // Per switch: source endpoints for this destination; at the end of Run, the routes through
  // the switch (subtree sums).
  std::vector<uint64_t> all_count_;
  std::vector<uint64_t> job_count_;  // per switch: sources sharing a job with it
  std::vector<int> job_switches_;
  std::vector<int> sources_;    // capacity weighting: switches with routes left to place
  std::vector<uint32_t> seen_;  // per endpoint dest: epoch of the last job count
  uint32_t seen_epoch_ = 0;
};

/// Fills `steps` in routing order; may call SetJobs on the router.
using SsspPlanner =
    std::function<void(const RoutingInput& in, SsspRouter* router, std::vector<SsspStep>* steps)>;

/// DFSSSP's plan (dfsssp.cc): every base LID by node class, then the extra LMC LIDs, then the
/// switches. SAR's no-regret stage routes it for reference.
void PlanDfsssp(const RoutingInput& in, SsspRouter* router, std::vector<SsspStep>* steps);

/// Optional stage between the paths and the virtual layers: may change the tables (keeping every
/// route delivered and loop-free; the layers and the engine's checks come after) and add notes.
/// `pinned` (may be null): entries it must not change ([endpoint dest * switches + switch], the
/// running jobs' routes of delta_keep.h).
using SsspPostPaths =
    std::function<void(const SsspRouter& router, LftSet* lfts, std::vector<std::string>* notes,
                       const std::vector<uint8_t>* pinned)>;

/// The engine body (DoRoute of dfsssp and sar, on input RoutingEngine::Route has checked): runs
/// the planned steps, then `post` (if any), assigns virtual layers with in.num_vls, and reports
/// layers_ms and notes.
Status RouteSssp(const RoutingInput& in, const SsspPlanner& plan, RoutingOutput* out,
                 const SsspPostPaths& post = nullptr);

}  // namespace sar::internal
