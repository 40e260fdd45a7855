#include "analysis/block_check.h"

#include <algorithm>
#include <bit>

#include "analysis/sweep_visitors.h"
#include "analysis/trace_parallel.h"
#include "sar/analysis/deadlock.h"
#include "sar/analysis/trace.h"

namespace sar::internal {

namespace {

constexpr Lid kBlock = LftColumns::kLids;  // LIDs per block: one cache line of an LFT row

// A switch's state in one LID's walk: hops to the destination (delivered), or one of these.
// Real hop counts stay below them (at most one hop per switch, and switches are < 0x7FFF).
constexpr uint16_t kUnknown = 0xFFFF;
constexpr uint16_t kVisiting = 0xFFFE;
constexpr uint16_t kLoop = 0xFFFD;
constexpr uint16_t kBad = 0xFFFC;  // a hole or misdelivered: unreachable for the trace

// A switch's entry with no dependency (dependency codes are (port - 1) << 8 | (port - 1)).
constexpr uint16_t kNoDependency = 0xFFFF;

// One destination LID.
struct Dest {
  Lid lid;
  int owner;     // endpoint index, or -1 - switch index for a switch's port-0 LID
  int deliver;   // the switch whose entry delivers (leaf of the owner, or the switch itself)
  uint8_t port;  // that entry: the port to the owner (0: the switch itself)
  bool traced;   // the trace counts this LID's pairs (the deadlock check, when asked, all)
};

class BlockCheck {
 public:
  BlockCheck(const SweepContext& ctx, const BlockCheckRequest& r)
      : ctx_(ctx), f_(ctx.fabric), r_(r) {}
  bool Run(TraceReport* trace, DeadlockReport* deadlock);

 private:
  struct Worker {
    std::vector<int16_t> next;    // [k * n + s]: the switch s's entry for LID first + k leads to
    std::vector<uint8_t> port;    // [k * n + s]: that entry
    std::vector<uint16_t> state;  // per switch, the current LID's walk
    // [k * n + s]: the dependency (port - 1) << 8 | (next switch's port - 1) of switch s's
    // entry for LID first + k if a source's route crosses s and goes on through two switches,
    // else kNoDependency.
    std::vector<uint16_t> dependency;
    uint64_t walked = 0;  // bit k: LID first + k was walked (its column of `dependency` is set)
    std::vector<int> path;
    std::vector<int> trace_count;  // per switch: sources of the current LID the trace counts
    std::vector<int> check_count;  // the same for the deadlock check
    std::vector<uint64_t> deps;    // dense bitmap (DenseDependencyOffsets)
    TraceCounts sums;
  };

  bool ListDestinations();
  void LoadNext(Lid first, Worker* w) const;
  void Own(const Dest& d, int delta, Worker* w) const;
  void WalkLid(const Dest& d, int k, Worker* w) const;
  void AddDependencies(Worker* w) const;
  void VisitBlock(size_t b, Worker* w) const;

  const SweepContext& ctx_;
  const Fabric& f_;
  const BlockCheckRequest r_;
  int n_ = 0;
  std::vector<PortId> port0_;          // per switch: its port 0's slot
  std::vector<int> ports_;             // per switch: its number of ports
  std::vector<int16_t> next_of_slot_;  // RouteTracer::next_switch per port slot, in 16 bits
  std::vector<int> walk_from_;         // switches routes start from, leaves first
  std::vector<int> leaves_;            // the trace's sources: switches with endpoints
  std::vector<Dest> dests_;            // by LID
  std::vector<size_t> blocks_;         // start of each block's run of dests_, and dests_.size()
  int words_ = 1;
  std::vector<size_t> dense_;
  size_t dense_words_ = 0;
};

bool BlockCheck::ListDestinations() {
  const std::vector<uint8_t>* only = r_.only_lids;
  auto wanted = [only](Lid l) { return only == nullptr || (l < only->size() && (*only)[l]); };
  // The sweep's destinations (RunSweep without offsets or jobs: the base LIDs, and every LID
  // of an endpoint when the check or the trace of all LIDs wants them) and, for the deadlock
  // check with switch LIDs, every switch's LIDs (DeadlockVisitor::VisitSwitchLids).
  const bool lmc_lids = r_.deadlock || (r_.trace && r_.all_lids);
  for (size_t i = 0; i < ctx_.endpoints.size(); ++i) {
    const PortRef& e = ctx_.endpoints[i];
    const Lid base = f_.base_lid(e);
    if (base == 0) continue;
    const PortId peer = f_.peer_id(f_.port_id(e));
    const int leaf = ctx_.leaf[i];
    const uint8_t port = leaf >= 0 ? static_cast<uint8_t>(f_.port_ref(peer).port) : 0;
    for (Lid l = base; l < base + (Lid{1} << f_.lmc(e)); ++l) {
      if ((l != base && !lmc_lids) || !wanted(l)) continue;
      if (f_.lid_owner(l) != e) return false;  // the tracer delivers to the owner: leave it that
      const bool traced = r_.trace && leaf >= 0 && (r_.all_lids || l == base);
      dests_.push_back({l, static_cast<int>(i), leaf, port, traced});
    }
  }
  if (r_.deadlock && r_.switch_lids) {
    for (int s = 0; s < n_; ++s) {
      const PortRef p0{f_.switches()[s], 0};
      const Lid base = f_.base_lid(p0);
      if (base == 0) continue;
      for (Lid l = base; l < base + (Lid{1} << f_.lmc(p0)); ++l) {
        if (!wanted(l)) continue;
        if (f_.lid_owner(l) != p0) return false;
        dests_.push_back({l, -1 - s, s, 0, false});
      }
    }
  }
  std::sort(dests_.begin(), dests_.end(),
            [](const Dest& a, const Dest& b) { return a.lid < b.lid; });
  for (size_t i = 1; i < dests_.size(); ++i) {
    if (dests_[i].lid == dests_[i - 1].lid) return false;  // the sweep visits both: leave it that
  }
  for (size_t i = 0; i < dests_.size(); ++i) {
    if (i == 0 || dests_[i].lid / kBlock != dests_[i - 1].lid / kBlock) blocks_.push_back(i);
  }
  blocks_.push_back(dests_.size());
  return true;
}

// The switch each switch's entry leads to for LIDs first..first+kBlock-1 (RouteTracer's
// next_switch, kNowhere for no entry, port 0 and ports past the switch's), transposed: a walk
// reads one LID's entries of all switches, a table row apart in the LFTs.
void BlockCheck::LoadNext(Lid first, Worker* w) const {
  const LftSet& lfts = ctx_.lfts;
  const size_t end = std::min<size_t>(first + kBlock, static_cast<size_t>(lfts.max_lid()) + 1);
  const size_t count = end > first ? end - first : 0;
  int16_t* next = w->next.data();
  uint8_t* port = w->port.data();
  if (count < kBlock) {
    std::fill(w->next.begin(), w->next.end(), RouteTracer::kNowhere);
    std::fill(w->port.begin(), w->port.end(), LftSet::kNoRoute);
  }
  if (count == 0) return;
  // Each row's line is a miss of its own: ask for switches ahead so the misses overlap.
  // The same for the switch's slots in next_of_slot_.
  constexpr int kAhead = 32;
  const int n = n_;
  for (int s = 0; s < n; ++s) {
    if (s + kAhead < n) {
      const int a = s + kAhead;
      __builtin_prefetch(lfts.row(a) + first);
      const char* slots = reinterpret_cast<const char*>(next_of_slot_.data() + port0_[a]);
      for (int b = 0; b <= ports_[a] * 2; b += 64) __builtin_prefetch(slots + b);
    }
    const uint8_t* in = lfts.row(s) + first;
    const int16_t* to = next_of_slot_.data() + port0_[s];
    const int ports = ports_[s];
    for (size_t k = 0; k < count; ++k) {
      const uint8_t p = in[k];
      port[k * n + s] = p;
      next[k * n + s] = static_cast<int16_t>(p != 0 && p <= ports ? to[p] : RouteTracer::kNowhere);
    }
  }
}

// Takes the destination's own terminals out of the sources (delta -1), or puts them back (+1):
// a node sends nothing to itself.
void BlockCheck::Own(const Dest& d, int delta, Worker* w) const {
  if (d.owner < 0) {
    w->check_count[-1 - d.owner] += delta;
    return;
  }
  for (int e : ctx_.of_node[ctx_.endpoints[d.owner].node]) {
    const int s = ctx_.leaf[e];
    if (s < 0) continue;
    w->trace_count[s] += delta;
    w->check_count[s] += delta;
  }
}

// One LID's walk (column k of the block): from every switch with a source, each switch once;
// RouteTracer::BuildImpl's classification (the chain inherits the fate of the switch it runs
// into, a chain into itself loops), with the hops of delivered switches.
void BlockCheck::WalkLid(const Dest& d, int k, Worker* w) const {
  const int16_t* next = w->next.data() + static_cast<size_t>(k) * n_;
  const uint8_t* port = w->port.data() + static_cast<size_t>(k) * n_;
  uint16_t* state = w->state.data();
  int* path = w->path.data();
  const std::vector<int>& count = r_.deadlock ? w->check_count : w->trace_count;
  std::fill(w->state.begin(), w->state.end(), kUnknown);
  // The switches walked are those a source's route crosses: each walked switch's dependency
  // (when its entry goes on through two switches) is coded as it is walked, the others have none.
  uint16_t* dependency = w->dependency.data() + static_cast<size_t>(k) * n_;
  const bool deadlock = r_.deadlock;
  if (deadlock) {
    std::fill(dependency, dependency + n_, kNoDependency);
    w->walked |= uint64_t{1} << k;
  }
  for (int s : walk_from_) {
    if (state[s] != kUnknown || count[s] <= 0) continue;
    int len = 0, t = s;
    for (;;) {
      if (state[t] != kUnknown) break;
      path[len++] = t;
      const int nt = next[t];
      if (nt < 0) {  // t's own entry ends the route
        const bool delivered = t == d.deliver && port[t] == d.port;
        state[t] = delivered ? (d.port == 0 ? 0 : 1) : kBad;
        --len;
        break;
      }
      if (deadlock && next[nt] >= 0) {
        dependency[t] = static_cast<uint16_t>((port[t] - 1) << 8 | (port[nt] - 1));
      }
      state[t] = kVisiting;
      t = nt;
    }
    uint16_t v = state[t];
    if (v == kVisiting) v = kLoop;  // only this walk leaves switches visiting
    for (int i = 0; i < len; ++i) {
      state[path[i]] = v >= kBad ? v : static_cast<uint16_t>(v + (len - i));
    }
  }
  if (!d.traced) return;
  TraceCounts& sums = w->sums;
  for (int s : leaves_) {
    const int c = w->trace_count[s];
    if (c <= 0) continue;
    sums.pairs += c;
    const uint16_t v = state[s];
    if (v < kBad) {
      sums.delivered += c;
      sums.total_hops += static_cast<uint64_t>(c) * (1 + v);
      sums.max_hops = std::max(sums.max_hops, 1 + v);
    } else if (v == kLoop) {
      sums.loops += c;
    } else {
      sums.unreachable += c;
    }
  }
}

// The block's dependencies into the bitmap switch by switch, so that each switch's words are
// written for all of the block's LIDs at once (per LID they would be a cache miss per switch).
void BlockCheck::AddDependencies(Worker* w) const {
  const size_t words = static_cast<size_t>(words_);
  const size_t n = static_cast<size_t>(n_);
  uint64_t* deps = w->deps.data();
  const uint16_t* dependency = w->dependency.data();
  const uint64_t walked = w->walked;
  w->walked = 0;
  for (size_t s = 0; s < n; ++s) {
    uint64_t* own = deps + dense_[s];
    for (uint64_t m = walked; m != 0; m &= m - 1) {
      const uint16_t c = dependency[std::countr_zero(m) * n + s];
      if (c == kNoDependency) continue;
      own[(c >> 8) * words + (c & 0xFF) / 64] |= uint64_t{1} << (c % 64);
    }
  }
}

void BlockCheck::VisitBlock(size_t b, Worker* w) const {
  const Lid first = dests_[blocks_[b]].lid / kBlock * kBlock;
  LoadNext(first, w);
  for (size_t i = blocks_[b]; i < blocks_[b + 1]; ++i) {
    const Dest& d = dests_[i];
    Own(d, -1, w);
    WalkLid(d, static_cast<int>(d.lid - first), w);
    Own(d, +1, w);
  }
  if (r_.deadlock) AddDependencies(w);
}

bool BlockCheck::Run(TraceReport* trace, DeadlockReport* deadlock) {
  n_ = f_.num_switches();
  if (!LftColumns::Fits(n_)) return false;
  for (NodeId sw : f_.switches()) {
    port0_.push_back(f_.port_id(sw, 0));
    ports_.push_back(f_.num_ports(sw));
  }
  if (!ListDestinations()) return false;
  // Sparse destinations (the delta validation's few changed columns): a block's load costs a
  // cache line per switch row whatever the LIDs it serves, so there the sweep's per-LID reads
  // are cheaper (its LftColumns rule, kMinBlockUse).
  if (dests_.size() < 4 * (blocks_.size() - 1)) return false;
  next_of_slot_.resize(f_.num_port_slots());
  for (PortId id = 0; id < f_.num_port_slots(); ++id) {
    next_of_slot_[id] = static_cast<int16_t>(ctx_.tracer.next_switch(id));
  }
  // Sources: the endpoints on their leaves and, for the check with switch LIDs, every switch
  // with a LID (DeadlockVisitor's terminals).
  std::vector<int> trace_count(n_, 0), check_count(n_, 0);
  for (int s : ctx_.leaves)
    trace_count[s] = check_count[s] = static_cast<int>(ctx_.on_switch[s].size());
  walk_from_ = ctx_.leaves;
  leaves_ = ctx_.leaves;
  std::sort(leaves_.begin(), leaves_.end());
  if (r_.deadlock && r_.switch_lids) {
    for (int s = 0; s < n_; ++s) {
      if (f_.switch_lid(f_.switches()[s]) == 0) continue;
      if (check_count[s] == 0) walk_from_.push_back(s);
      ++check_count[s];
    }
  }
  words_ = DependencyWords(f_);
  dense_ = DenseDependencyOffsets(f_, words_, &dense_words_);

  const size_t num_blocks = blocks_.size() - 1;
  const int workers = WorkerCount(r_.threads, num_blocks, 1);
  std::vector<Worker> ws(workers);
  for (Worker& w : ws) {
    w.next.assign(static_cast<size_t>(n_) * kBlock, RouteTracer::kNowhere);
    w.port.assign(static_cast<size_t>(n_) * kBlock, LftSet::kNoRoute);
    w.state.assign(n_, kUnknown);
    if (r_.deadlock) w.dependency.assign(static_cast<size_t>(n_) * kBlock, kNoDependency);
    w.path.assign(n_, 0);
    w.trace_count = trace_count;
    w.check_count = check_count;
    if (r_.deadlock) w.deps.assign(dense_words_, 0);
  }
  ParallelFor(workers, num_blocks, 1, [&](int worker, size_t b) { VisitBlock(b, &ws[worker]); });

  if (r_.trace) {
    TraceReport report;
    MergeTraceCounts(
        ws, [](const Worker& w) -> const TraceCounts& { return w.sums; }, &report);
    *trace = std::move(report);
  }
  if (r_.deadlock) {
    std::vector<std::vector<uint64_t>> dense(r_.num_layers);
    for (std::vector<uint64_t>& layer : dense) layer.assign(dense_words_, 0);
    std::vector<uint64_t>& mine = dense[r_.layer];
    mine = std::move(ws[0].deps);
    for (size_t i = 1; i < ws.size(); ++i) {
      for (size_t j = 0; j < dense_words_; ++j) mine[j] |= ws[i].deps[j];
      ws[i].deps = {};
    }
    FinishDependencyCheck(f_, ctx_.tracer, words_, r_.switch_lids, r_.base, r_.keep, &dense,
                          deadlock);
  }
  return true;
}

}  // namespace

bool RunBlockCheck(const SweepContext& ctx, const BlockCheckRequest& request, TraceReport* trace,
                   DeadlockReport* deadlock) {
  BlockCheck check(ctx, request);
  return check.Run(trace, deadlock);
}

}  // namespace sar::internal
