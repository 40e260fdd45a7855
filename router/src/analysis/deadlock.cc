#include "sar/analysis/deadlock.h"

#include <algorithm>
#include <bit>
#include <memory>
#include <utility>

#include "analysis/sweep_visitors.h"
#include "analysis/trace_parallel.h"
#include "sar/analysis/route_tracer.h"

namespace sar {

namespace {

// A dependency c1 -> c2 always has c2 leaving the switch c1 enters, so the dependencies of c1 fit
// in a bitmap over that switch's port numbers 1..255 (bit port - 1): up to four words per
// channel, as many as the largest switch needs (one for switches of up to 64 ports, so a large
// fabric's bitmaps stay in cache), and adding an edge twice costs nothing.
// While the sweep runs, the bitmaps are kept per (switch, port) (`dense`: every port of every
// switch, in switch order), so that the walk finds a channel's bitmap from the tree's switch and
// port alone, with no lookup per channel (a cache miss each on a large fabric); Finish() moves
// them to the inter-switch channels' numbering (`compact`) the cycle search uses. The layers'
// bitmaps are interleaved word by word, so a channel's words of all layers share a cache line: a
// destination's routes in different layers mostly share their last channels.
constexpr int kMaxWords = 4;

// Layered mode: each destination's sources are seeded per layer, from the layer of every
// (source LID, destination LID) pair. VirtualLayers keeps a row per source LID, so the layers of
// one destination are a column: a cache miss per source. Each worker copies the rows' segments
// for up to kWindow destination LIDs at once (VirtualLayers::CopyColumns), from the first
// destination of a work item on to the end of its leaf's run of LIDs (the sweep visits an
// item's LIDs in increasing order, so its next ones are in the copy), and ORs the layers of each
// run of source LIDs for all of them in one pass over the copy. A leaf switch is then seeded
// once with the bits of its sources' layers, and the walk carries the bits: one walk for all
// layers, each switch visited again only for layers that had not reached it yet.
constexpr Lid kWindow = 64;

class DeadlockVisitor : public internal::SweepVisitor {
 public:
  DeadlockVisitor(const internal::SweepContext& ctx, const VirtualLayers* layers, bool switch_lids,
                  DeadlockReport* out, const std::vector<uint8_t>* only_lids,
                  const DependencyGraphs* base, DependencyGraphs* keep)
      : ctx_(ctx),
        fabric_(ctx.fabric),
        tracer_(ctx.tracer),
        layers_(layers),
        switch_lids_(switch_lids),
        out_(out),
        only_lids_(only_lids),
        base_(base),
        keep_(keep) {}

  void Start(int workers) override;
  void Visit(int worker, const internal::SweepDestination& d, const DestinationTree& tree) override;
  void Finish() override;

 private:
  struct Worker {
    const DestinationTree* tree = nullptr;  // the destination being visited
    std::vector<uint32_t> reach;  // per switch: bits of the layers reaching it (this destination)
    std::vector<int> reached;     // switches with reach != 0, to clear them
    std::vector<int> sources;     // per switch, fixed-layer mode
    std::vector<uint32_t> seed_bits;  // per switch: layers routes start from it in
    std::vector<int> seeds;           // switches with seed_bits != 0
    // Dependency bitmaps of all layers, interleaved: [dense word * num_layers_ + layer], so one
    // channel's words of all layers share a cache line.
    std::vector<uint64_t> deps;
    struct Pending {
      size_t word;
      uint64_t bit;
      uint32_t layers;
    };
    std::vector<Pending> pending;  // deps to set, see MarkFrom
    std::vector<uint8_t> window;   // layered: [source LID * window_count + k] (CopyColumns)
    Lid window_first = 0, window_count = 0;  // the destination LIDs in `window`
    std::vector<uint32_t> run_bits;          // [k * runs + run]: layer bits of the run's sources
    uint32_t stamp = 0;                      // one per destination (layered mode)
    std::vector<uint32_t> run_skip;  // per run: stamp if the destination's node has LIDs in it
  };

  // Terminals: the sources and destinations of routes. 0..E-1 are the endpoints (ctx_.endpoints),
  // E + s switch index s's port 0 (with switch_lids_), whose routes start at the switch itself.
  PortRef Terminal(int t) const {
    const int e = static_cast<int>(ctx_.endpoints.size());
    return t < e ? ctx_.endpoints[t] : PortRef{fabric_.switches()[t - e], 0};
  }
  // The destination LID `lid` of terminal `dest` (its node's terminals are `own`) in tree *w->tree.
  void VisitLid(Lid lid, int dest, const std::vector<int>& own, Worker* w) const;
  void VisitSwitchLids();
  void LoadWindow(Lid first, Lid count, Worker* w) const;
  void SeedLayers(Lid lid, int dest, const std::vector<int>& own, Worker* w) const;
  void MarkFrom(int s, uint32_t layers, Worker* w) const;
  void StepFromSources(Worker* w) const;
  void AddPending(Worker* w) const;

  const internal::SweepContext& ctx_;
  const Fabric& fabric_;
  const RouteTracer& tracer_;
  const VirtualLayers* layers_;
  // Switch port-0 LIDs are sources and destinations too, as in OpenSM's dfsssp: LID-routed
  // management and SHARP traffic to switches shares the data VLs.
  const bool switch_lids_;
  DeadlockReport* out_;
  const std::vector<uint8_t>* only_lids_;  // null = every destination LID
  const DependencyGraphs* base_;           // ORed into the graphs before the search
  DependencyGraphs* keep_;
  std::vector<int> source_switches_;  // switches routes start from: leaves (+ every switch)

  int num_layers_ = 1;
  int fixed_layer_ = -1;       // >= 0: every route is in this layer
  std::vector<size_t> dense_;  // per switch index: its port 1's first word in the dense bitmaps
  size_t dense_words_ = 0;     // size of the dense bitmaps
  int words_ = kMaxWords;      // bitmap words per channel
  // Layered mode: the source LIDs (endpoints' LIDs) as runs of consecutive LIDs on one leaf
  // switch, in LID order, so a destination's sources are seeded a run at a time.
  struct Run {
    Lid begin, end;
    int leaf;
  };
  std::vector<Run> runs_;
  std::vector<int> run_of_;                   // per terminal: its run, or -1
  std::vector<std::pair<int, int>> lidless_;  // (terminal, leaf) of sources without a LID
  Lid src_lids_ = 0;                          // source LIDs are < this
  std::vector<Worker> workers_;
};

void DeadlockVisitor::Start(int workers) {
  if (layers_ == nullptr) {
    fixed_layer_ = 0;
  } else {
    num_layers_ = layers_->num_layers();
    if (layers_->size() == 0) fixed_layer_ = layers_->default_layer;
  }
  words_ = internal::DependencyWords(fabric_);
  dense_ = internal::DenseDependencyOffsets(fabric_, words_, &dense_words_);
  const int n = fabric_.num_switches();
  // Per terminal: the switch its routes start from (< 0: none).
  std::vector<int> start(ctx_.leaf.begin(), ctx_.leaf.end());
  source_switches_ = ctx_.leaves;
  if (switch_lids_) {
    std::vector<uint8_t> is_leaf(n, 0);
    for (int s : ctx_.leaves) is_leaf[s] = 1;
    for (int s = 0; s < n; ++s) {
      const bool has_lid = fabric_.switch_lid(fabric_.switches()[s]) != 0;
      start.push_back(has_lid ? s : -1);
      if (has_lid && !is_leaf[s]) source_switches_.push_back(s);
    }
  }
  if (fixed_layer_ < 0) {
    // Terminals' LID ranges by first LID; neighbours on one switch merge (an overlapping range,
    // in a fabric that gives a LID twice, starts a run of its own: the node check stays per
    // range).
    std::vector<std::pair<Lid, int>> ranges;  // (base LID, terminal)
    for (int t = 0; t < static_cast<int>(start.size()); ++t) {
      if (start[t] < 0) continue;
      const Lid base = fabric_.base_lid(Terminal(t));
      if (base == 0) {  // a source without a LID still sends in the default layer
        lidless_.emplace_back(t, start[t]);
      } else {
        ranges.emplace_back(base, t);
      }
    }
    std::sort(ranges.begin(), ranges.end());
    run_of_.assign(start.size(), -1);
    for (const auto& [base, e] : ranges) {
      const Lid end = base + (Lid{1} << fabric_.lmc(Terminal(e)));
      if (runs_.empty() || runs_.back().end != base || runs_.back().leaf != start[e]) {
        runs_.push_back({base, end, start[e]});
      } else {
        runs_.back().end = end;
      }
      run_of_[e] = static_cast<int>(runs_.size()) - 1;
      src_lids_ = std::max(src_lids_, end);
    }
  }
  workers_.assign(workers, {});
  for (Worker& w : workers_) {
    w.reach.assign(n, 0);
    w.seed_bits.assign(n, 0);
    w.deps.assign(dense_words_ * num_layers_, 0);
    if (fixed_layer_ < 0) w.run_skip.assign(runs_.size(), 0);
    if (fixed_layer_ >= 0) {
      w.sources.assign(n, 0);
      for (int t = 0; t < static_cast<int>(start.size()); ++t) {
        if (start[t] >= 0) ++w.sources[start[t]];
      }
    }
  }
}

// Marks the route from switch `s` on in `layers` (bits), listing each switch's dependency (the
// channel into the next switch -> that switch's channel onward) in w->pending for the layers
// that reach it first from here (AddPending sets them). Routes from different sources merge, so
// each switch is walked once per destination and layer, and once for all layers that reach it
// together.
void DeadlockVisitor::MarkFrom(int s, uint32_t layers, Worker* w) const {
  const DestinationTree& tree = *w->tree;
  const size_t words = static_cast<size_t>(words_);
  while (s >= 0) {
    layers &= ~w->reach[s];
    if (layers == 0) return;
    if (w->reach[s] == 0) w->reached.push_back(s);
    w->reach[s] |= layers;
    if (tree.out[s] == kNoPort) return;
    const int t = tree.next[s];  // the channel into t: port tree.port[s] of s
    if (t < 0) return;
    if (tree.out[t] != kNoPort && tree.next[t] >= 0) {  // onward to a switch: a dependency
      const int bit = tree.port[t] - 1;
      w->pending.push_back(
          {dense_[s] + (tree.port[s] - 1) * words + bit / 64, uint64_t{1} << (bit % 64), layers});
    }
    s = t;
  }
}

// Fixed-layer mode: the dependencies of one layer are those of every reached switch's first
// step (its channel onward -> the next switch's), and every source's switch is reached. So each
// source switch adds its own step alone, with no walk and no bookkeeping of which switches were
// reached: with switch LIDs that is every switch, and the bits go straight into the bitmaps in
// switch order instead of through `pending`. Only a switch without sources behind a source
// switch (no terminals, or only the destination's own) is walked as MarkFrom walks it, so the
// set is exactly MarkFrom's from every source.
void DeadlockVisitor::StepFromSources(Worker* w) const {
  const DestinationTree& tree = *w->tree;
  const size_t words = static_cast<size_t>(words_);
  const size_t layers = static_cast<size_t>(num_layers_);
  const uint32_t layer_bit = uint32_t{1} << fixed_layer_;
  uint64_t* deps = w->deps.data() + fixed_layer_;
  const std::vector<int>& sources = w->sources;
  // The bitmaps are megabytes and each switch sets one word of its own: a cache miss per
  // switch unless fetched ahead.
  constexpr size_t kAhead = 8;
  const size_t count = source_switches_.size();
  for (size_t i = 0; i < count; ++i) {
    if (i + kAhead < count) {
      const int a = source_switches_[i + kAhead];
      if (tree.out[a] != kNoPort) {
        __builtin_prefetch(&deps[(dense_[a] + (tree.port[a] - 1) * words) * layers], 1);
      }
    }
    const int s = source_switches_[i];
    if (sources[s] <= 0 || tree.out[s] == kNoPort) continue;
    const int t = tree.next[s];
    if (t < 0) continue;
    if (tree.out[t] != kNoPort && tree.next[t] >= 0) {
      const int bit = tree.port[t] - 1;
      deps[(dense_[s] + (tree.port[s] - 1) * words + bit / 64) * layers] |= uint64_t{1}
                                                                            << (bit % 64);
    }
    if (sources[t] <= 0) MarkFrom(t, layer_bit, w);
  }
}

void DeadlockVisitor::Visit(int worker, const internal::SweepDestination& d,
                            const DestinationTree& tree) {
  if (!d.first) return;
  Worker* w = &workers_[worker];
  w->tree = &tree;
  VisitLid(d.lid, d.endpoint, ctx_.of_node[ctx_.endpoints[d.endpoint].node], w);
}

void DeadlockVisitor::VisitLid(Lid lid, int dest, const std::vector<int>& own, Worker* w) const {
  const int num_endpoints = static_cast<int>(ctx_.endpoints.size());
  auto start_of = [&](int t) {
    return t < num_endpoints ? ctx_.leaf[t] : t - num_endpoints;  // a switch starts at itself
  };
  if (fixed_layer_ >= 0) {
    for (int t : own) {
      if (start_of(t) >= 0) --w->sources[start_of(t)];
    }
    // source_switches_: every switch with terminals, the only ones with sources.
    StepFromSources(w);
    for (int t : own) {
      if (start_of(t) >= 0) ++w->sources[start_of(t)];
    }
  } else {
    SeedLayers(lid, dest, own, w);
    for (int s : w->seeds) {
      MarkFrom(s, w->seed_bits[s], w);
      w->seed_bits[s] = 0;
    }
    w->seeds.clear();
  }
  for (int s : w->reached) w->reach[s] = 0;
  w->reached.clear();
  AddPending(w);
}

// Copies the layers to destination LIDs first..first+count-1 and ORs them per run of sources.
void DeadlockVisitor::LoadWindow(Lid first, Lid count, Worker* w) const {
  w->window_first = first;
  w->window_count = count;
  w->window.resize(static_cast<size_t>(src_lids_) * count);
  layers_->CopyColumns(first, count, src_lids_, w->window.data());
  w->run_bits.resize(static_cast<size_t>(count) * runs_.size());
  for (size_t r = 0; r < runs_.size(); ++r) {
    uint32_t bits[kWindow] = {};
    for (Lid l = runs_[r].begin; l < runs_[r].end; ++l) {
      const uint8_t* row = &w->window[static_cast<size_t>(l) * count];
      for (Lid k = 0; k < count; ++k) bits[k] |= uint32_t{1} << row[k];
    }
    for (Lid k = 0; k < count; ++k) w->run_bits[k * runs_.size() + r] = bits[k];
  }
}

// Seeds each layer with the switches of the sources that reach `lid` in that layer: every
// terminal LID of a node other than the destination's (its terminals are `own`), and every
// terminal without a LID, in the default layer.
void DeadlockVisitor::SeedLayers(Lid lid, int dest, const std::vector<int>& own, Worker* w) const {
  if (w->window_count == 0 || lid < w->window_first || lid >= w->window_first + w->window_count) {
    // Up to the end of the destination's run: a work item's destinations are one leaf's LIDs (a
    // run when the leaf's LIDs are consecutive); its neighbour's are another item's.
    const int r = run_of_[dest];
    const Lid end = r >= 0 ? runs_[r].end : lid + 1;
    LoadWindow(lid, std::min<Lid>(kWindow, std::max<Lid>(end, lid + 1) - lid), w);
  }
  const Lid k = lid - w->window_first, count = w->window_count;
  const uint32_t* run_bits = w->run_bits.data() + static_cast<size_t>(k) * runs_.size();
  ++w->stamp;  // marks the runs holding the destination's own LIDs
  auto seed = [&](uint32_t bits, int s) {
    if (bits == 0) return;
    if (w->seed_bits[s] == 0) w->seeds.push_back(s);
    w->seed_bits[s] |= bits;
  };
  // The destination's node sends nothing to itself: its ranges are left out of their runs.
  for (int e : own) {
    if (run_of_[e] >= 0) w->run_skip[run_of_[e]] = w->stamp;
  }
  for (size_t r = 0; r < runs_.size(); ++r) {
    const Run& run = runs_[r];
    if (w->run_skip[r] != w->stamp) {
      seed(run_bits[r], run.leaf);
      continue;
    }
    uint32_t bits = 0;
    for (Lid l = run.begin; l < run.end; ++l) {
      bool skip = false;
      for (int e : own) {
        const Lid base = fabric_.base_lid(Terminal(e));
        skip |= run_of_[e] == static_cast<int>(r) && l >= base &&
                l < base + (Lid{1} << fabric_.lmc(Terminal(e)));
      }
      if (!skip) bits |= uint32_t{1} << w->window[static_cast<size_t>(l) * count + k];
    }
    seed(bits, run.leaf);
  }
  const uint32_t default_bit = uint32_t{1} << layers_->default_layer;
  const NodeId dest_node = Terminal(dest).node;
  for (const auto& [e, leaf] : lidless_) {
    if (Terminal(e).node != dest_node) seed(default_bit, leaf);
  }
}

// The walks only list the dependencies: each is a bit in a word of a bitmap of megabytes, a cache
// miss, and in the walk each waits for the last. Set in a loop of their own, many misses overlap.
void DeadlockVisitor::AddPending(Worker* w) const {
  std::vector<uint64_t>& deps = w->deps;
  const size_t layers = static_cast<size_t>(num_layers_);
  const std::vector<Worker::Pending>& pending = w->pending;
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (i + kAhead < pending.size()) {
      __builtin_prefetch(&deps[pending[i + kAhead].word * layers], 1);
    }
    const Worker::Pending& p = pending[i];
    for (uint32_t b = p.layers; b != 0; b &= b - 1) {
      deps[p.word * layers + std::countr_zero(b)] |= p.bit;
    }
  }
  w->pending.clear();
}

// The switches' own LIDs as destinations, after the sweep over the endpoints' LIDs (which no
// other analysis wants): one full tree each, from every switch.
void DeadlockVisitor::VisitSwitchLids() {
  const int num_endpoints = static_cast<int>(ctx_.endpoints.size());
  std::vector<std::pair<Lid, int>> dests;  // (LID, switch index)
  for (int s = 0; s < fabric_.num_switches(); ++s) {
    const PortRef port0{fabric_.switches()[s], 0};
    const Lid base = fabric_.base_lid(port0);
    if (base == 0) continue;
    for (Lid l = base; l < base + (Lid{1} << fabric_.lmc(port0)); ++l) {
      if (only_lids_ == nullptr || (l < only_lids_->size() && (*only_lids_)[l])) {
        dests.emplace_back(l, s);
      }
    }
  }
  std::sort(dests.begin(), dests.end());
  const int workers =
      std::min(static_cast<int>(workers_.size()), internal::WorkerCount(0, dests.size(), 4));
  std::vector<DestinationTree> trees(std::max(workers, 1));
  internal::ParallelFor(workers, dests.size(), 4, [&](int worker, size_t i) {
    Worker* w = &workers_[worker];
    tracer_.Build(dests[i].first, &trees[worker]);
    w->tree = &trees[worker];
    const std::vector<int> own{num_endpoints + dests[i].second};
    VisitLid(dests[i].first, own[0], own, w);
    w->tree = nullptr;
  });
}

void DeadlockVisitor::Finish() {
  if (switch_lids_) VisitSwitchLids();
  std::vector<std::vector<uint64_t>> dense(num_layers_);
  for (int layer = 0; layer < num_layers_; ++layer) {
    dense[layer].assign(dense_words_, 0);
    for (const Worker& w : workers_) {
      for (size_t i = 0; i < dense_words_; ++i) dense[layer][i] |= w.deps[i * num_layers_ + layer];
    }
  }
  workers_.clear();
  internal::FinishDependencyCheck(fabric_, tracer_, words_, switch_lids_, base_, keep_, &dense,
                                  out_);
}

// The inter-switch channels the cycle search runs on: compact numbers for the channels that
// enter a switch from a switch.
struct Channels {
  std::vector<int32_t> compact;  // per port slot: inter-switch channel index or -1
  std::vector<PortId> channel;   // per inter-switch channel index: its port slot
};

// Colored depth-first search with an explicit stack (fabrics have many thousands of channels).
bool FindCycle(const Fabric& fabric, const Channels& ch, int words,
               const std::vector<uint64_t>& deps, std::vector<PortId>* cycle) {
  enum : uint8_t { kWhite, kGray, kBlack };
  const size_t n = ch.channel.size();
  std::vector<uint8_t> color(n, kWhite);
  struct Frame {
    int32_t v;
    int next_bit;
  };
  std::vector<Frame> stack;
  for (size_t root = 0; root < n; ++root) {
    if (color[root] != kWhite) continue;
    color[root] = kGray;
    stack.push_back({static_cast<int32_t>(root), 0});
    while (!stack.empty()) {
      Frame& top = stack.back();
      const uint64_t* bits = &deps[static_cast<size_t>(top.v) * words];
      int bit = -1;
      for (int word = top.next_bit / 64; word < words && bit < 0; ++word) {
        uint64_t rest = bits[word];
        if (word == top.next_bit / 64) rest &= ~uint64_t{0} << (top.next_bit % 64);
        if (rest) bit = word * 64 + std::countr_zero(rest);
      }
      if (bit < 0) {
        color[top.v] = kBlack;
        stack.pop_back();
        continue;
      }
      top.next_bit = bit + 1;
      const NodeId next_node = fabric.port_node(fabric.peer_id(ch.channel[top.v]));
      const int32_t u = ch.compact[fabric.port_id(next_node, bit + 1)];
      if (u < 0) continue;  // a base dependency on a channel whose cable is gone
      if (color[u] == kWhite) {
        color[u] = kGray;
        stack.push_back({u, 0});
      } else if (color[u] == kGray) {
        size_t start = stack.size() - 1;
        while (stack[start].v != u) --start;
        cycle->clear();
        for (size_t i = start; i < stack.size(); ++i) cycle->push_back(ch.channel[stack[i].v]);
        return true;
      }
    }
  }
  return false;
}

}  // namespace

namespace internal {

std::unique_ptr<SweepVisitor> NewDeadlockVisitor(
    const SweepContext& ctx, const VirtualLayers* layers, bool switch_lids, DeadlockReport* out,
    const std::vector<uint8_t>* only_lids, const DependencyGraphs* base, DependencyGraphs* keep) {
  return std::make_unique<DeadlockVisitor>(ctx, layers, switch_lids, out, only_lids, base, keep);
}

int DependencyWords(const Fabric& fabric) {
  int max_ports = 1;
  for (NodeId sw : fabric.switches()) max_ports = std::max(max_ports, fabric.num_ports(sw));
  return std::min(kMaxWords, (max_ports - 1) / 64 + 1);
}

std::vector<size_t> DenseDependencyOffsets(const Fabric& fabric, int words, size_t* total) {
  std::vector<size_t> first(fabric.num_switches());
  size_t at = 0;
  for (int s = 0; s < fabric.num_switches(); ++s) {
    first[s] = at;
    at += static_cast<size_t>(fabric.num_ports(fabric.switches()[s])) * words;
  }
  *total = at;
  return first;
}

void FinishDependencyCheck(const Fabric& fabric, const RouteTracer& tracer, int words,
                           bool switch_lids, const DependencyGraphs* base, DependencyGraphs* keep,
                           std::vector<std::vector<uint64_t>>* dense_layers, DeadlockReport* out) {
  const int num_layers = static_cast<int>(dense_layers->size());
  size_t dense_words = 0;
  const std::vector<size_t> first = DenseDependencyOffsets(fabric, words, &dense_words);
  Channels ch;
  ch.compact.assign(fabric.num_port_slots(), -1);
  for (PortId id = 0; id < fabric.num_port_slots(); ++id) {
    if (tracer.next_switch(id) >= 0 && fabric.is_switch(fabric.port_node(id))) {
      ch.compact[id] = static_cast<int32_t>(ch.channel.size());
      ch.channel.push_back(id);
    }
  }
  DeadlockReport report;
  report.switch_lids = switch_lids;
  report.layers = num_layers;
  for (int layer = 0; layer < num_layers; ++layer) {
    std::vector<uint64_t>& dense = (*dense_layers)[layer];
    // The base's bits may name channels whose cable is gone since (compact -1): the copy
    // below leaves out those it starts from, FindCycle those it leads to.
    if (base != nullptr) {
      const std::vector<uint64_t>& b = base->layers[layer];
      for (size_t i = 0; i < dense_words; ++i) dense[i] |= b[i];
    }
    // Only inter-switch channels get bits (the walk adds one where a route goes on to a switch).
    std::vector<uint64_t> deps(ch.channel.size() * words);
    for (size_t c = 0; c < ch.channel.size(); ++c) {
      const PortRef p = fabric.port_ref(ch.channel[c]);
      const uint64_t* from =
          &dense[first[fabric.switch_index(p.node)] + static_cast<size_t>(p.port - 1) * words];
      std::copy(from, from + words, &deps[c * words]);
    }
    for (uint64_t word : deps) report.dependencies += std::popcount(word);
    if (report.deadlock_free && FindCycle(fabric, ch, words, deps, &report.cycle)) {
      report.deadlock_free = false;
      report.cyclic_layer = layer;
    }
    if (keep != nullptr) {
      keep->words = words;
      keep->layers.resize(num_layers);
      keep->layers[layer] = std::move(dense);
    }
  }
  *out = std::move(report);
}

Status CheckDependencyBase(const Fabric& fabric, const VirtualLayers* layers,
                           const DependencyGraphs& base) {
  size_t ports = 0;
  for (NodeId sw : fabric.switches()) ports += static_cast<size_t>(fabric.num_ports(sw));
  const int words = DependencyWords(fabric);
  const size_t num_layers = layers != nullptr ? static_cast<size_t>(layers->num_layers()) : 1;
  bool fits = base.words == words && base.layers.size() == num_layers;
  for (const std::vector<uint64_t>& g : base.layers) fits &= g.size() == ports * words;
  if (!fits) {
    return Status::InvalidArgument("dependency base: " + std::to_string(base.layers.size()) +
                                   " layers of another fabric's ports (" +
                                   std::to_string(num_layers) + " layers here)");
  }
  return Status::OK();
}

}  // namespace internal

}  // namespace sar
