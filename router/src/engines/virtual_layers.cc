#include "sar/engines/virtual_layers.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "analysis/trace_parallel.h"
#include "big_array.h"

namespace sar {
namespace {

// Routes are read per (source switch, destination LID): every HCA on a leaf follows the same
// switch path to a LID, so the channel dependency graph (CDG) only needs one route per leaf.
// CDG nodes are the switch-to-switch channels; the dependency c1 -> c2 has c2 leaving the
// switch c1 enters, so it is numbered edge_base_[c1] + (c2's position among that switch's
// outgoing channels), giving dense per-layer counters of the routes using each dependency.
//
// The walk only marks which dependencies are used (one bit each: the set stays in a core's L2,
// where a counter per dependency, 24 MB at 45k hosts, missed the cache on nearly every route
// hop). Counts are needed only to break cycles, so they are taken from the stored routes when
// the used set has a cycle; an acyclic first layer (fat trees) never counts.
class Layerer {
 public:
  Layerer(const Fabric& fabric, const LftSet& lfts, const LayerOptions& opts)
      : fabric_(fabric), lfts_(lfts), opts_(opts) {}

  Status Run(VirtualLayers* out, LayerStats* stats);

 private:
  void Prepare();
  void WalkOne(size_t d, std::vector<uint64_t>* used, const int32_t* next,
               std::vector<int32_t>* channels);
  // Walks the routes to dests_[block * walk_block_, +walk_block_) once: their block-relative
  // offsets, their channels (block_channels_[block]) and the dependencies they use (a bit per
  // dependency in `used`). `next` and `channels`: the worker's scratch.
  void Walk(size_t block, std::vector<uint64_t>* used, std::vector<int32_t>* next,
            std::vector<int32_t>* channels, internal::BigArena<int32_t>* arena);
  // Depth-first search over the dependencies e with present(e). On a cycle, closed by the
  // stack's top -> stack[start], calls on_cycle(&stack, start, &color): false stops the search,
  // true goes on from the (possibly shortened) stack. Returns whether it was stopped.
  struct Frame {
    int32_t c;
    int32_t next;  // position of the next dependency to try among head's channels
  };
  enum : uint8_t { kWhite, kGray, kBlack };
  template <class Present, class OnCycle>
  bool SearchCycles(Present present, OnCycle on_cycle) const;
  // Whether the dependencies marked in `used` close a cycle.
  bool HasCycle(const std::vector<uint64_t>& used) const;
  // Per channel, its position in a topological order of the (acyclic) dependencies in `used`.
  std::vector<int32_t> TopologicalPositions(const std::vector<uint64_t>& used) const;
  // Marks in on_cycle_ the dependencies of `used` whose two channels are in one strongly
  // connected component: the only ones any cycle of any layer can hold, since every layer's
  // dependencies are a subset of the first layer's before any route moves.
  void MarkCyclicDependencies(const std::vector<uint64_t>& used);
  // count_[0]: the routes using each dependency, from the stored routes.
  void CountFirstLayer(int threads);
  // pinned_count_, where some source has no LID.
  void CountPinned();
  // Destinations walked together: their LIDs are (nearly) consecutive, so reading their next
  // hops switch by switch reads one cache line of each switch's table instead of one per LID.
  static constexpr size_t kWalkBlock = 32;
  // Route r's channels: block_channels_[b] + [offset_[r + b], offset_[r + b + 1]), b its block.
  size_t BlockOfDest(size_t d) const { return d / walk_block_; }
  const int32_t* RouteChannels(size_t r, size_t b, uint32_t* length) const {
    *length = offset_[r + b + 1] - offset_[r + b];
    return block_channels_[b] + offset_[r + b];
  }
  bool Crosses(size_t r, size_t b) const { return offset_[r + b + 1] > offset_[r + b]; }
  // Calls f(route, dependency) for every dependency of every stored route of destinations
  // [first, last) (all by default), in route order.
  template <class F>
  void ForEachDependency(F&& f, size_t first = 0, size_t last = SIZE_MAX) const {
    last = std::min(last, dests_.size());
    for (size_t d = first; d < last; ++d) {
      const size_t b = BlockOfDest(d);
      for (size_t r = d * slots_; r < (d + 1) * slots_; ++r) {
        uint32_t length = 0;
        const int32_t* ch = RouteChannels(r, b, &length);
        for (uint32_t i = 1; i < length; ++i) f(r, EdgeOf(ch[i - 1], ch[i]));
      }
    }
  }
  Status BreakCycles(int layer, bool last);
  // Breaks cycles layer by layer from the layers in layer_ (count_ empty): needed layers or an
  // error naming the count.
  Status Layer(int* needed);
  // The second way, where breaking cycles one at a time needs too many layers (switch LIDs on a
  // large fat-tree: hundreds of thousands of cycles through few down-up turns). Switches get a
  // total order (their distance from the switches with compute endpoints, then their index); a
  // route that never turns from a channel down that order to one up it is up*/down* and all such
  // routes together have an acyclic CDG (every cycle needs a down-up turn). They stay in layer
  // 0 with the pinned routes; the down*/up* routes (no up-down turn, acyclic for the mirror
  // reason) go to layer 1, routes with both turns into layers by groups (see the body), and
  // what is left has its cycles broken above them.
  void SplitUpDown();
  std::vector<int32_t> UpDownRank() const;
  void BuildEdgeIndex();
  void Move(uint32_t route, int from, int to);
  uint32_t EdgeOf(int32_t c1, int32_t c2) const { return edge_base_[c1] + local_[c2]; }
  void Balance(int needed);
  Status Fill(VirtualLayers* out) const;

  const Fabric& fabric_;
  const LftSet& lfts_;
  const LayerOptions& opts_;

  // Channels.
  std::vector<int32_t> compact_;    // per port slot: inter-switch channel index or -1
  std::vector<PortId> channel_;     // per channel: its port slot
  std::vector<int32_t> head_;       // per channel: switch index it enters
  std::vector<int32_t> local_;      // per channel: position among its own switch's channels
  std::vector<int32_t> out_begin_;  // per switch: its channels in out_chan_
  std::vector<int32_t> out_chan_;
  std::vector<uint32_t> edge_base_;  // per channel
  uint32_t num_edges_ = 0;

  // Sources and destinations.
  std::vector<PortRef> endpoints_;
  std::vector<int32_t> leaf_;               // per endpoint: switch index or -1
  std::vector<std::vector<int>> of_node_;   // per node: its endpoints
  std::vector<int32_t> slot_of_switch_;     // per switch: source slot or -1
  std::vector<int32_t> switch_of_slot_;     // per source slot
  std::vector<uint32_t> endpoints_on_;      // per source slot: endpoints cabled there
  std::vector<uint32_t> lidless_on_;        // per source slot: those of them without a LID
  std::vector<uint64_t> lids_on_;           // per source slot: source LIDs there
  std::vector<std::pair<Lid, int>> dests_;  // (LID, endpoint), by LID
  size_t slots_ = 0;

  // Routes: r = dest index * slots_ + slot, kept per walk block (walk_block_ destinations) so
  // one walk writes them in place: offsets are relative to the block's channels, and each block
  // has one more offset than routes (route r of block b: offset_[r + b], offset_[r + b + 1]).
  // A block holds walk_block_ x slots_ routes of at most n channels each; walk_block_ is chosen
  // so that fits 32 bits.
  size_t walk_block_ = kWalkBlock;
  // (In 2 MB pages, big_array.h: at 10k hosts these are ~60 MB, and their first touch in 4 KB
  // pages cost more than the walk.)
  internal::BigArray<uint32_t> offset_;
  std::vector<const int32_t*> block_channels_;       // in arenas_
  std::vector<internal::BigArena<int32_t>> arenas_;  // per walk worker
  internal::BigArray<uint8_t> layer_;
  // Routes that some source without a LID takes (any_lidless_ only; else empty): such a source
  // has no row in the layers, so it sends in the default layer 0 whatever its leaf's route is
  // given (as CheckDeadlock reads it). The route's dependencies stay in layer 0 for good, so a
  // cycle there is broken only at a dependency no pinned route uses (pinned_count_).
  bool any_lidless_ = false;
  std::vector<uint64_t> pinned_;        // a bit per route
  std::vector<uint32_t> pinned_count_;  // per dependency: pinned routes using it
  bool Pinned(size_t r) const { return any_lidless_ && ((pinned_[r >> 6] >> (r & 63)) & 1); }
  std::atomic<bool> loop_{false};
  std::atomic<size_t> loop_dest_{0};

  // Per layer: routes using each dependency; the routes of each dependency (built lazily).
  std::vector<std::vector<uint32_t>> count_;
  // Only dependencies on a cycle (on_cycle_) are ever broken, so only theirs are indexed: with
  // switch LIDs a fat-tree's first layer is cyclic through few down-up turns, and indexing every
  // route's every dependency (64M entries at 10k hosts) cost more than the rest of the layering.
  std::vector<uint64_t> on_cycle_;  // a bit per dependency
  bool Cyclic(uint32_t e) const { return (on_cycle_[e >> 6] >> (e & 63)) & 1; }
  std::vector<uint64_t> edge_route_begin_;
  std::vector<uint32_t> edge_routes_;
  uint64_t cycles_ = 0;
  bool up_down_first_ = false;  // SplitUpDown was needed
  // The first layer routes cut from a cycle may move to: above SplitUpDown's shape layers, so
  // cuts from one shape's layer do not mix into the next shape's (0: the next layer).
  int spill_ = 0;
  // SplitUpDown: per finished layer, a topological order of its dependencies (positions per
  // channel). A route whose every dependency goes forward in one may join that layer: the order
  // stays one, so the layer stays acyclic.
  std::vector<std::vector<int32_t>> order_;
  // The lowest finished layer below `layer` that route r may join, or -1.
  int FitBelow(uint32_t route, int layer) const;
  std::vector<int> split_;  // per needed layer after balancing: how many layers it spreads over
  std::vector<int> base_;   // per needed layer: first layer of its spread
};

void Layerer::Prepare() {
  const int n = fabric_.num_switches();
  compact_.assign(fabric_.num_port_slots(), -1);
  out_begin_.assign(n + 1, 0);
  for (int s = 0; s < n; ++s) {
    const NodeId node = fabric_.switches()[s];
    out_begin_[s] = static_cast<int32_t>(out_chan_.size());
    for (int p = 1; p <= fabric_.num_ports(node); ++p) {
      const PortId id = fabric_.port_id(node, p);
      if (!fabric_.is_inter_switch(id)) continue;
      compact_[id] = static_cast<int32_t>(channel_.size());
      local_.push_back(static_cast<int32_t>(out_chan_.size()) - out_begin_[s]);
      out_chan_.push_back(compact_[id]);
      channel_.push_back(id);
      head_.push_back(fabric_.switch_index(fabric_.port_node(fabric_.peer_id(id))));
    }
  }
  out_begin_[n] = static_cast<int32_t>(out_chan_.size());
  edge_base_.resize(channel_.size());
  for (size_t c = 0; c < channel_.size(); ++c) {
    edge_base_[c] = num_edges_;
    num_edges_ += out_begin_[head_[c] + 1] - out_begin_[head_[c]];
  }

  endpoints_ = fabric_.Endpoints();
  slot_of_switch_.assign(n, -1);
  of_node_.assign(fabric_.num_nodes(), {});
  for (size_t e = 0; e < endpoints_.size(); ++e) {
    of_node_[endpoints_[e].node].push_back(static_cast<int>(e));
    const PortRef peer = fabric_.peer(endpoints_[e]);
    const int s = fabric_.is_switch(peer.node) ? fabric_.switch_index(peer.node) : -1;
    leaf_.push_back(s);
    const Lid base = fabric_.base_lid(endpoints_[e]);
    const int lids = base == 0 ? 0 : 1 << fabric_.lmc(endpoints_[e]);
    for (int k = 0; k < lids; ++k) dests_.push_back({base + k, static_cast<int>(e)});
    if (s < 0) continue;
    if (slot_of_switch_[s] < 0) {
      slot_of_switch_[s] = static_cast<int32_t>(switch_of_slot_.size());
      switch_of_slot_.push_back(s);
      endpoints_on_.push_back(0);
      lidless_on_.push_back(0);
      lids_on_.push_back(0);
    }
    ++endpoints_on_[slot_of_switch_[s]];
    if (lids == 0) {
      ++lidless_on_[slot_of_switch_[s]];
      any_lidless_ = true;
    }
    lids_on_[slot_of_switch_[s]] += lids;
  }
  // Each switch's port 0 is a terminal too (LayerOptions::switch_lids), on a source slot of its
  // own switch: its routes start there.
  for (int s = 0; opts_.switch_lids && s < n; ++s) {
    const PortRef port0{fabric_.switches()[s], 0};
    const Lid base = fabric_.base_lid(port0);
    if (base == 0) continue;  // a switch without a LID is neither source nor destination
    const int e = static_cast<int>(endpoints_.size());
    endpoints_.push_back(port0);
    of_node_[port0.node].push_back(e);
    leaf_.push_back(s);
    const int lids = 1 << fabric_.lmc(port0);
    for (int k = 0; k < lids; ++k) dests_.push_back({base + k, e});
    if (slot_of_switch_[s] < 0) {
      slot_of_switch_[s] = static_cast<int32_t>(switch_of_slot_.size());
      switch_of_slot_.push_back(s);
      endpoints_on_.push_back(0);
      lidless_on_.push_back(0);
      lids_on_.push_back(0);
    }
    ++endpoints_on_[slot_of_switch_[s]];
    lids_on_[slot_of_switch_[s]] += lids;
  }
  std::sort(dests_.begin(), dests_.end());
  slots_ = switch_of_slot_.size();
}

void Layerer::Walk(size_t block, std::vector<uint64_t>* used, std::vector<int32_t>* next_block,
                   std::vector<int32_t>* channels, internal::BigArena<int32_t>* arena) {
  const size_t first = block * walk_block_;
  const size_t count = std::min(walk_block_, dests_.size() - first);
  const int n = fabric_.num_switches();
  // The next inter-switch channel of every switch towards each LID (-1: the route leaves the
  // switch fabric or ends here): next_block[i * n + s] for dests_[first + i].
  // The block's LIDs are one or two cache lines of each switch's table, a miss per switch:
  // fetch them a few switches ahead.
  constexpr int kAhead = 8;
  const Lid lo = std::min(dests_[first].first, lfts_.max_lid());
  const Lid hi = std::min(dests_[first + count - 1].first, lfts_.max_lid());
  for (int s = 0; s < n; ++s) {
    if (s + kAhead < n) {
      __builtin_prefetch(lfts_.row(s + kAhead) + lo);
      __builtin_prefetch(lfts_.row(s + kAhead) + hi);
    }
    const NodeId node = fabric_.switches()[s];
    const int ports = fabric_.num_ports(node);
    const int32_t* compact = &compact_[fabric_.port_id(node, 0)];
    for (size_t i = 0; i < count; ++i) {
      const uint8_t port = lfts_.port(s, dests_[first + i].first);
      (*next_block)[i * n + s] = port == 0 || port > ports ? -1 : compact[port];
    }
  }
  channels->clear();
  offset_[first * slots_ + block] = 0;
  for (size_t i = 0; i < count; ++i) {
    WalkOne(first + i, used, &(*next_block)[i * n], channels);
  }
  block_channels_[block] = arena->Copy(channels->data(), channels->size());
}

void Layerer::WalkOne(size_t d, std::vector<uint64_t>* used, const int32_t* next,
                      std::vector<int32_t>* channels) {
  const NodeId dest_node = endpoints_[dests_[d].second].node;
  const int n = fabric_.num_switches();
  const size_t b = BlockOfDest(d);
  for (size_t slot = 0; slot < slots_; ++slot) {
    const size_t r = d * slots_ + slot;
    const int src = switch_of_slot_[slot];
    // Live if some endpoint on this switch belongs to another node than the destination;
    // pinned if one of those has no LID.
    uint32_t own = 0, own_lidless = 0;
    for (int e : of_node_[dest_node]) {
      own += leaf_[e] == src;
      own_lidless += leaf_[e] == src && fabric_.base_lid(endpoints_[e]) == 0;
    }
    const bool live = own < endpoints_on_[slot];
    if (any_lidless_ && own_lidless < lidless_on_[slot]) {
      // Routes of one block are one worker's, and a block's routes fill whole words of pinned_
      // only if walk_block_ x slots_ is a multiple of 64: set the bit atomically.
      std::atomic_ref<uint64_t>(pinned_[r >> 6])
          .fetch_or(uint64_t{1} << (r & 63), std::memory_order_relaxed);
    }
    int32_t prev = -1;
    int s = src;
    int steps = 0;
    while (live) {
      const int32_t c = next[s];
      if (c < 0) break;
      if (++steps > n) {  // more hops than switches: the route loops
        loop_.store(true);
        loop_dest_.store(d);
        break;
      }
      channels->push_back(c);
      if (prev >= 0) {
        const uint32_t e = EdgeOf(prev, c);
        (*used)[e >> 6] |= uint64_t{1} << (e & 63);
      }
      prev = c;
      s = head_[c];
    }
    offset_[r + b + 1] = static_cast<uint32_t>(channels->size());
  }
}

template <class Present, class OnCycle>
bool Layerer::SearchCycles(Present present, OnCycle on_cycle) const {
  std::vector<uint8_t> color(channel_.size(), kWhite);
  std::vector<Frame> stack;
  for (size_t root = 0; root < channel_.size(); ++root) {
    if (color[root] != kWhite) continue;
    color[root] = kGray;
    stack.push_back({static_cast<int32_t>(root), 0});
    while (!stack.empty()) {
      Frame& top = stack.back();
      const int h = head_[top.c];
      const int deg = out_begin_[h + 1] - out_begin_[h];
      while (top.next < deg && !present(edge_base_[top.c] + top.next)) ++top.next;
      if (top.next == deg) {
        color[top.c] = kBlack;
        stack.pop_back();
        continue;
      }
      const int32_t u = out_chan_[out_begin_[h] + top.next];
      ++top.next;
      if (color[u] == kWhite) {
        color[u] = kGray;
        stack.push_back({u, 0});
        continue;
      }
      if (color[u] == kBlack) continue;
      size_t start = stack.size() - 1;
      while (stack[start].c != u) --start;
      if (!on_cycle(&stack, start, &color)) return true;
    }
  }
  return false;
}

bool Layerer::HasCycle(const std::vector<uint64_t>& used) const {
  return SearchCycles([&](uint32_t e) { return (used[e >> 6] >> (e & 63)) & 1; },
                      [](std::vector<Frame>*, size_t, std::vector<uint8_t>*) { return false; });
}

// Reverse postorder of a depth-first search: for every dependency c1 -> c2, c1 comes first.
std::vector<int32_t> Layerer::TopologicalPositions(const std::vector<uint64_t>& used) const {
  const size_t n = channel_.size();
  std::vector<int32_t> position(n, -1);
  std::vector<uint8_t> seen(n, 0);
  std::vector<Frame> stack;
  int32_t next = static_cast<int32_t>(n);
  for (size_t root = 0; root < n; ++root) {
    if (seen[root]) continue;
    seen[root] = 1;
    stack.push_back({static_cast<int32_t>(root), 0});
    while (!stack.empty()) {
      Frame& top = stack.back();
      const int h = head_[top.c];
      const int deg = out_begin_[h + 1] - out_begin_[h];
      while (top.next < deg) {
        const uint32_t e = edge_base_[top.c] + top.next;
        if ((used[e >> 6] >> (e & 63)) & 1) break;
        ++top.next;
      }
      if (top.next == deg) {
        position[top.c] = --next;
        stack.pop_back();
        continue;
      }
      const int32_t u = out_chan_[out_begin_[h] + top.next];
      ++top.next;
      if (!seen[u]) {
        seen[u] = 1;
        stack.push_back({u, 0});
      }
    }
  }
  return position;
}

// Tarjan's strongly connected components, with an explicit stack.
void Layerer::MarkCyclicDependencies(const std::vector<uint64_t>& used) {
  const size_t n = channel_.size();
  auto present = [&](uint32_t e) { return (used[e >> 6] >> (e & 63)) & 1; };
  constexpr int32_t kUnvisited = -1;
  std::vector<int32_t> index(n, kUnvisited), low(n, 0), component(n, -1);
  std::vector<int32_t> members;  // Tarjan's stack of open channels
  std::vector<uint8_t> open(n, 0);
  std::vector<Frame> stack;
  int32_t next_index = 0, components = 0;
  for (size_t root = 0; root < n; ++root) {
    if (index[root] != kUnvisited) continue;
    stack.push_back({static_cast<int32_t>(root), 0});
    index[root] = low[root] = next_index++;
    members.push_back(static_cast<int32_t>(root));
    open[root] = 1;
    while (!stack.empty()) {
      Frame& top = stack.back();
      const int32_t c = top.c;
      const int h = head_[c];
      const int deg = out_begin_[h + 1] - out_begin_[h];
      while (top.next < deg && !present(edge_base_[c] + top.next)) ++top.next;
      if (top.next < deg) {
        const int32_t u = out_chan_[out_begin_[h] + top.next];
        ++top.next;
        if (index[u] == kUnvisited) {
          index[u] = low[u] = next_index++;
          members.push_back(u);
          open[u] = 1;
          stack.push_back({u, 0});
        } else if (open[u]) {
          low[c] = std::min(low[c], index[u]);
        }
        continue;
      }
      if (low[c] == index[c]) {
        int32_t m;
        do {
          m = members.back();
          members.pop_back();
          open[m] = 0;
          component[m] = components;
        } while (m != c);
        ++components;
      }
      stack.pop_back();
      if (!stack.empty()) low[stack.back().c] = std::min(low[stack.back().c], low[c]);
    }
  }
  on_cycle_.assign((num_edges_ + 63) / 64, 0);
  for (size_t c = 0; c < n; ++c) {
    const int h = head_[c];
    for (int k = 0; k < out_begin_[h + 1] - out_begin_[h]; ++k) {
      const uint32_t e = edge_base_[c] + k;
      if (present(e) && component[out_chan_[out_begin_[h] + k]] == component[c]) {
        on_cycle_[e >> 6] |= uint64_t{1} << (e & 63);
      }
    }
  }
}

std::vector<int32_t> Layerer::UpDownRank() const {
  // Breadth-first from the switches that carry compute endpoints (HCAs of hosts and storage;
  // not Aggregation Nodes, which sit on spines and cores too), over inter-switch channels.
  const int n = fabric_.num_switches();
  std::vector<int32_t> dist(n, -1), queue;
  for (size_t e = 0; e < endpoints_.size(); ++e) {
    const int s = leaf_[e];
    const NodeId node = endpoints_[e].node;
    if (s < 0 || fabric_.is_switch(node) || dist[s] == 0) continue;
    if (fabric_.is_aggregation_node(node)) continue;
    dist[s] = 0;
    queue.push_back(s);
  }
  for (size_t i = 0; i < queue.size(); ++i) {
    const int s = queue[i];
    for (int32_t k = out_begin_[s]; k < out_begin_[s + 1]; ++k) {
      const int t = head_[out_chan_[k]];
      if (dist[t] < 0) {
        dist[t] = dist[s] + 1;
        queue.push_back(t);
      }
    }
  }
  // Unreached switches (none in a connected fabric with hosts) go above everything.
  for (int s = 0; s < n; ++s) {
    if (dist[s] < 0) dist[s] = n;
  }
  return dist;
}

void Layerer::SplitUpDown() {
  const std::vector<int32_t> rank = UpDownRank();
  // Channel c is "up" when it enters a switch later in the order than the one it leaves.
  std::vector<uint8_t> up(channel_.size());
  for (size_t c = 0; c < channel_.size(); ++c) {
    const int from = fabric_.switch_index(fabric_.port_node(channel_[c]));
    const int to = head_[c];
    up[c] = rank[to] > rank[from] || (rank[to] == rank[from] && to > from);
  }
  // A cycle of channels is a closed walk over switches, so under a strict total order it holds
  // an up channel and a down one, hence both a down-up and an up-down dependency. Routes without
  // a down-up turn (up*/down*) are therefore acyclic together, and so are routes without an
  // up-down turn (down*/up*: the valleys every switch-to-switch route between two top switches
  // takes). They get layers 0 and 1.
  //
  // Routes with both turns are unavoidable too (on a 3-level fat tree an l2 switch's route to an
  // l2 switch of another pod and group is up-down-down-up or down-up-up-down). They are grouped
  // by the type transitions they make (a channel's type: the rank of the switch it leaves, and
  // up or down), their first and last type and their length: a few dozen groups on a fat tree.
  // The groups are placed first-fit, most routes first, into the lowest layer whose
  // dependencies stay acyclic with theirs (a cycle search of the union). The routes of groups
  // cyclic by themselves (detours) or fitting no layer go one by one into a lower layer whose
  // topological order they follow (FitBelow), else into the layer above all, whose cycles are
  // broken as before; cuts from it also try FitBelow first.
  constexpr int kTypedRanks = 8, kTypes = 2 * kTypedRanks;
  // Bit from * kTypes + to, then a word with the route's first and last type and its length.
  using Transitions = std::array<uint64_t, kTypes * kTypes / 64 + 1>;
  std::vector<int8_t> type(channel_.size());
  for (size_t c = 0; c < channel_.size(); ++c) {
    const int from = fabric_.switch_index(fabric_.port_node(channel_[c]));
    type[c] = rank[from] < kTypedRanks ? static_cast<int8_t>(2 * rank[from] + up[c]) : -1;
  }
  auto group_of = [&](const int32_t* ch, uint32_t length, Transitions* t) {
    t->fill(0);
    for (uint32_t i = 1; i < length; ++i) {
      const int a = type[ch[i - 1]], b = type[ch[i]];
      if (a < 0 || b < 0) {  // ranks beyond the typed ones: one group
        t->fill(~uint64_t{0});
        return;
      }
      const int bit = a * kTypes + b;
      (*t)[bit >> 6] |= uint64_t{1} << (bit & 63);
    }
    t->back() = uint64_t{length} << 16 | type[ch[0]] << 8 | type[ch[length - 1]];
  };
  enum Shape : uint8_t { kUpDown, kDownUp, kBoth };
  const size_t words = (num_edges_ + 63) / 64;
  std::vector<std::vector<uint64_t>> used(2, std::vector<uint64_t>(words, 0));  // per layer
  std::map<Transitions, size_t> group_index;
  std::vector<std::vector<uint64_t>> group_used;
  std::vector<uint64_t> group_routes;
  uint64_t of_shape[3] = {0, 0, 0};
  Transitions t;
  for (size_t d = 0; d < dests_.size(); ++d) {
    const size_t b = BlockOfDest(d);
    for (size_t r = d * slots_; r < (d + 1) * slots_; ++r) {
      uint32_t length = 0;
      const int32_t* ch = RouteChannels(r, b, &length);
      bool valley = false, peak = false;
      for (uint32_t i = 1; i < length; ++i) {
        valley |= !up[ch[i - 1]] && up[ch[i]];
        peak |= up[ch[i - 1]] && !up[ch[i]];
      }
      const Shape shape = !valley || Pinned(r) ? kUpDown : !peak ? kDownUp : kBoth;
      layer_[r] = shape;
      ++of_shape[shape];
      std::vector<uint64_t>* bits = &used[shape == kBoth ? 0 : shape];
      if (shape == kBoth) {
        group_of(ch, length, &t);
        const auto [it, added] = group_index.emplace(t, group_used.size());
        if (added) {
          group_used.emplace_back(words, 0);
          group_routes.push_back(0);
        }
        bits = &group_used[it->second];
        ++group_routes[it->second];
      }
      for (uint32_t i = 1; i < length; ++i) {
        const uint32_t e = EdgeOf(ch[i - 1], ch[i]);
        (*bits)[e >> 6] |= uint64_t{1} << (e & 63);
      }
    }
  }
  // Layer() stops at the first layer without routes: layers are numbered as they fill.
  if (of_shape[kDownUp] == 0) used.pop_back();
  const uint8_t down_up_layer = 1;
  // Groups cyclic by themselves are pooled into one candidate, placed like a group if the pool
  // is acyclic (small detour groups often are together); else their routes are left over.
  constexpr uint8_t kNoLayer = 0xFF;
  std::vector<uint8_t> layer_of_group(group_used.size(), kNoLayer);
  struct Candidate {
    uint64_t routes = 0;
    std::vector<size_t> groups;
  };
  std::vector<Candidate> candidates;
  Candidate pool;
  std::vector<uint64_t> pool_used(words, 0);
  for (size_t g = 0; g < group_used.size(); ++g) {
    if (!HasCycle(group_used[g])) {
      candidates.push_back({group_routes[g], {g}});
      continue;
    }
    pool.routes += group_routes[g];
    pool.groups.push_back(g);
    for (size_t w = 0; w < words; ++w) pool_used[w] |= group_used[g][w];
  }
  uint64_t residual = 0;
  if (!pool.groups.empty() && !HasCycle(pool_used)) {
    group_used.push_back(std::move(pool_used));
    for (size_t g : pool.groups) group_used[g].clear();
    candidates.push_back({pool.routes, pool.groups});
  } else {
    residual = pool.routes;
  }
  // Most routes first; ties by first appearance, which does not depend on the thread count.
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.routes > b.routes; });
  std::vector<uint64_t> merged(words);
  for (const Candidate& c : candidates) {
    const std::vector<uint64_t>& bits = c.groups.size() == 1 && !group_used[c.groups[0]].empty()
                                            ? group_used[c.groups[0]]
                                            : group_used.back();
    int placed = -1;
    for (size_t l = 0; l < static_cast<size_t>(opts_.max_layers) && placed < 0; ++l) {
      if (l == used.size()) {
        used.push_back(bits);
      } else {
        for (size_t w = 0; w < words; ++w) merged[w] = used[l][w] | bits[w];
        if (HasCycle(merged)) continue;
        used[l].swap(merged);
      }
      placed = static_cast<int>(l);
    }
    if (placed < 0) residual += c.routes;
    for (size_t g : c.groups) layer_of_group[g] = placed < 0 ? kNoLayer : placed;
  }
  const int typed_layers = static_cast<int>(used.size());
  group_used.clear();
  // The routes of the groups left over, one by one: into the lowest layer where every
  // dependency of the route goes forward in a topological order of the layer's dependencies
  // (so the order stays one and the layer acyclic), else into the layer above all.
  order_.clear();
  for (const std::vector<uint64_t>& u : used) order_.push_back(TopologicalPositions(u));
  used.clear();
  const uint8_t residual_layer = static_cast<uint8_t>(std::min(typed_layers, opts_.max_layers - 1));
  residual = 0;
  for (size_t d = 0; d < dests_.size(); ++d) {
    const size_t b = BlockOfDest(d);
    for (size_t r = d * slots_; r < (d + 1) * slots_; ++r) {
      if (layer_[r] == kDownUp) {
        layer_[r] = down_up_layer;
      } else if (layer_[r] == kBoth) {
        uint32_t length = 0;
        const int32_t* ch = RouteChannels(r, b, &length);
        group_of(ch, length, &t);
        uint8_t to = layer_of_group[group_index.at(t)];
        if (to == kNoLayer) {
          const int below = FitBelow(static_cast<uint32_t>(r), typed_layers);
          if (below >= 0) to = static_cast<uint8_t>(below);
        }
        if (to == kNoLayer) {
          to = residual_layer;
          ++residual;
        }
        layer_[r] = to;
      }
    }
  }
  const int layers = residual != 0 ? residual_layer + 1 : typed_layers;
  count_.assign(opts_.max_layers, {});
  for (int l = 0; l < layers; ++l) count_[l].assign(num_edges_, 0);
  spill_ = typed_layers;
  ForEachDependency([&](size_t r, uint32_t e) { ++count_[layer_[r]][e]; });
  cycles_ = 0;
  up_down_first_ = true;
}

Status Layerer::Layer(int* needed) {
  for (int l = 0; l < opts_.max_layers; ++l) {
    if (count_[l].empty()) break;
    *needed = l + 1;
    SAR_RETURN_IF_ERROR(BreakCycles(l, std::max(l + 1, spill_) >= opts_.max_layers));
    if (up_down_first_ && order_.size() == static_cast<size_t>(l)) {
      std::vector<uint64_t> used((num_edges_ + 63) / 64, 0);
      for (uint32_t e = 0; e < num_edges_; ++e) {
        if (count_[l][e] != 0) used[e >> 6] |= uint64_t{1} << (e & 63);
      }
      order_.push_back(TopologicalPositions(used));
    }
  }
  return Status::OK();
}

int Layerer::FitBelow(uint32_t route, int layer) const {
  uint32_t length = 0;
  const int32_t* ch = RouteChannels(route, BlockOfDest(route / slots_), &length);
  for (size_t l = 0; l < std::min(order_.size(), static_cast<size_t>(layer)); ++l) {
    uint32_t i = 1;
    while (i < length && order_[l][ch[i - 1]] < order_[l][ch[i]]) ++i;
    if (i == length) return static_cast<int>(l);
  }
  return -1;
}

void Layerer::CountFirstLayer(int threads) {
  const size_t blocks = block_channels_.size();
  const int workers = internal::WorkerCount(threads, blocks, 1);
  std::vector<std::vector<uint32_t>> counts(workers, std::vector<uint32_t>(num_edges_, 0));
  internal::ParallelFor(workers, blocks, 1, [&](int w, size_t b) {
    std::vector<uint32_t>& count = counts[w];
    const size_t last = std::min(dests_.size(), (b + 1) * walk_block_);
    for (size_t r = b * walk_block_ * slots_; r < last * slots_; ++r) {
      uint32_t length = 0;
      const int32_t* ch = RouteChannels(r, b, &length);
      for (uint32_t i = 1; i < length; ++i) ++count[EdgeOf(ch[i - 1], ch[i])];
    }
  });
  count_[0] = std::move(counts[0]);
  for (int w = 1; w < workers; ++w) {
    for (uint32_t e = 0; e < num_edges_; ++e) count_[0][e] += counts[w][e];
  }
  CountPinned();
}

void Layerer::CountPinned() {
  if (!any_lidless_) return;
  pinned_count_.assign(num_edges_, 0);
  ForEachDependency([&](size_t r, uint32_t e) { pinned_count_[e] += Pinned(r); });
}

// Two passes over every stored route (count, then place), each split over the workers in
// contiguous ranges of destinations: worker w's routes of a dependency go after those of the
// workers before it, so each dependency's routes stay in route order, whatever the threads.
void Layerer::BuildEdgeIndex() {
  const int workers = internal::WorkerCount(opts_.threads, dests_.size(), 256);
  const size_t per_worker = (dests_.size() + workers - 1) / workers;
  // Per worker: its routes on each dependency, then where it places the next one.
  std::vector<std::vector<uint64_t>> at(workers);
  internal::ParallelFor(workers, workers, 1, [&](int, size_t w) {
    at[w].assign(num_edges_, 0);
    std::vector<uint64_t>& count = at[w];
    ForEachDependency(
        [&](size_t, uint32_t e) {
          if (Cyclic(e)) ++count[e];
        },
        w * per_worker, (w + 1) * per_worker);
  });
  edge_route_begin_.assign(num_edges_ + 1, 0);
  uint64_t total = 0;
  for (uint32_t e = 0; e < num_edges_; ++e) {
    edge_route_begin_[e] = total;
    for (int w = 0; w < workers; ++w) {
      const uint64_t n = at[w][e];
      at[w][e] = total;
      total += n;
    }
  }
  edge_route_begin_[num_edges_] = total;
  edge_routes_.resize(total);
  internal::ParallelFor(workers, workers, 1, [&](int, size_t w) {
    std::vector<uint64_t>& next = at[w];
    ForEachDependency(
        [&](size_t r, uint32_t e) {
          if (Cyclic(e)) edge_routes_[next[e]++] = static_cast<uint32_t>(r);
        },
        w * per_worker, (w + 1) * per_worker);
  });
}

void Layerer::Move(uint32_t route, int from, int to) {
  layer_[route] = static_cast<uint8_t>(to);
  if (count_[to].empty()) count_[to].assign(num_edges_, 0);
  uint32_t length = 0;
  const int32_t* ch = RouteChannels(route, BlockOfDest(route / slots_), &length);
  for (uint32_t i = 1; i < length; ++i) {
    const uint32_t e = EdgeOf(ch[i - 1], ch[i]);
    --count_[from][e];
    ++count_[to][e];
  }
}

// Depth-first search over the dependencies the layer's routes use. A cycle found on the stack is
// broken at its weakest dependency: the routes using it move to the next layer, which only
// removes dependencies here, so the search resumes below the first stack edge that vanished.
// In layer 0 a dependency that a pinned route uses cannot vanish, so it is never the one
// chosen; a cycle of nothing else cannot be broken.
Status Layerer::BreakCycles(int layer, bool last) {
  const std::vector<uint32_t>& count = count_[layer];
  const int to = std::max(layer + 1, spill_);
  Status status;
  SearchCycles([&](uint32_t e) { return count[e] != 0; },
               [&](std::vector<Frame>* stack, size_t start, std::vector<uint8_t>* color) {
                 if (last) {
                   status = Status::Failed(
                       "deadlock-free routing needs more than " + std::to_string(opts_.max_layers) +
                       " virtual layers: a cycle remains in the channel dependency graph of "
                       "layer " +
                       std::to_string(layer));
                   return false;
                 }
                 std::vector<Frame>& st = *stack;
                 const bool pins = layer == 0 && !pinned_count_.empty();
                 auto movable = [&](uint32_t e) { return !pins || pinned_count_[e] == 0; };
                 uint32_t weakest = EdgeOf(st.back().c, st[start].c);
                 for (size_t i = start; i + 1 < st.size(); ++i) {
                   const uint32_t e = EdgeOf(st[i].c, st[i + 1].c);
                   if (!movable(weakest) || (movable(e) && count[e] < count[weakest])) {
                     weakest = e;
                   }
                 }
                 if (!movable(weakest)) {
                   status = Status::Failed(
                       "no virtual layers can make this routing deadlock-free: a cycle in the "
                       "channel dependency graph consists of routes of endpoints without a LID, "
                       "which always send in the default layer");
                   return false;
                 }
                 if (edge_route_begin_.empty()) BuildEdgeIndex();
                 for (uint64_t i = edge_route_begin_[weakest]; i < edge_route_begin_[weakest + 1];
                      ++i) {
                   const uint32_t route = edge_routes_[i];
                   if (layer_[route] != layer) continue;
                   const int below = FitBelow(route, layer);
                   Move(route, layer, below >= 0 ? below : to);
                 }
                 ++cycles_;
                 for (size_t i = start; i + 1 < st.size(); ++i) {
                   if (count[EdgeOf(st[i].c, st[i + 1].c)] != 0) continue;
                   for (size_t j = i + 1; j < st.size(); ++j) (*color)[st[j].c] = kWhite;
                   st.resize(i + 1);
                   break;
                 }
                 return true;
               });
  return status;
}

// As OpenSM's dfsssp: hand the unused layers to the layers with the most pairs per layer; a
// subset of an acyclic layer's routes is acyclic, so splitting never creates a cycle.
void Layerer::Balance(int needed) {
  std::vector<uint64_t> pairs(needed, 0);
  for (size_t d = 0; d < dests_.size(); ++d) {
    const size_t b = BlockOfDest(d);
    for (size_t slot = 0; slot < slots_; ++slot) {
      const size_t r = d * slots_ + slot;
      if (Crosses(r, b)) pairs[layer_[r]] += lids_on_[slot];
    }
  }
  split_.assign(needed, 1);
  if (opts_.balance) {
    for (int extra = needed; extra < opts_.max_layers; ++extra) {
      int most = 0;
      for (int l = 1; l < needed; ++l) {
        if (pairs[l] * split_[most] > pairs[most] * split_[l]) most = l;
      }
      if (pairs[most] == 0) break;
      ++split_[most];
    }
  }
  base_.assign(needed, 0);
  for (int l = 1; l < needed; ++l) base_[l] = base_[l - 1] + split_[l - 1];
}

// Hands the layers over factored (see VirtualLayers): every source on one leaf switch follows the
// same route to a destination LID, so one class byte per (source slot, destination LID) plus the
// per-class spread says it all; the own-node rule is applied when the layers are read.
Status Layerer::Fill(VirtualLayers* out) const {
  VirtualLayers::Factored f;
  f.lids = dests_.empty() ? 0 : dests_.back().first + 1;
  f.source_slot.assign(f.lids, -1);
  f.node.assign(f.lids, kNoNode);
  for (const auto& [lid, e] : dests_) {
    f.node[lid] = endpoints_[e].node;
    if (leaf_[e] >= 0) f.source_slot[lid] = slot_of_switch_[leaf_[e]];
  }
  f.layer_class.assign(slots_ * f.lids, VirtualLayers::kUnlisted);
  // Blocks of destinations, slot by slot: reads of layer_ stay within a block's routes and each
  // slot's writes are one run of nearly consecutive LIDs.
  constexpr size_t kBlock = 64;
  const size_t blocks = (dests_.size() + kBlock - 1) / kBlock;
  const int workers = internal::WorkerCount(opts_.threads, blocks, 4);
  internal::ParallelFor(workers, blocks, 4, [&](int, size_t b) {
    const size_t first = b * kBlock, last = std::min(dests_.size(), first + kBlock);
    size_t walk_block[kBlock];
    for (size_t d = first; d < last; ++d) walk_block[d - first] = BlockOfDest(d);
    for (size_t slot = 0; slot < slots_; ++slot) {
      uint8_t* row = &f.layer_class[slot * f.lids];
      for (size_t d = first; d < last; ++d) {
        const size_t r = d * slots_ + slot;
        if (Crosses(r, walk_block[d - first])) row[dests_[d].first] = layer_[r];
      }
    }
  });
  f.spread.assign(split_.begin(), split_.end());
  f.base.assign(base_.begin(), base_.end());
  *out = VirtualLayers();
  return out->SetFactored(std::move(f));
}

Status Layerer::Run(VirtualLayers* out, LayerStats* stats) {
  if (opts_.max_layers < 1 || opts_.max_layers > 15) {
    return Status::InvalidArgument("max_layers must be 1..15, got " +
                                   std::to_string(opts_.max_layers));
  }
  SAR_RETURN_IF_ERROR(lfts_.CheckFits(fabric_));
  Prepare();
  const size_t routes = dests_.size() * slots_;
  // A block's channel count must fit its 32-bit offsets: at most walk_block_ x slots_ routes of
  // at most n channels each (a longer walk is a loop and stops there).
  const uint64_t per_dest = uint64_t{slots_} * static_cast<uint64_t>(fabric_.num_switches() + 1);
  constexpr uint64_t kMaxBlockChannels = ~uint32_t{0};
  if (per_dest > kMaxBlockChannels) {
    return Status::InvalidArgument("too many switches for virtual layers: " +
                                   std::to_string(fabric_.num_switches()));
  }
  walk_block_ = std::max<size_t>(
      1, std::min<uint64_t>(kWalkBlock, kMaxBlockChannels / std::max<uint64_t>(per_dest, 1)));
  const size_t blocks = (dests_.size() + walk_block_ - 1) / walk_block_;
  offset_ = internal::Big<uint32_t>(routes + blocks);  // every entry is written by the walk
  if (any_lidless_) pinned_.assign((routes + 63) / 64, 0);
  block_channels_.assign(blocks, nullptr);
  const int workers = internal::WorkerCount(opts_.threads, blocks, 1);
  std::vector<std::vector<int32_t>> next(
      workers, std::vector<int32_t>(walk_block_ * fabric_.num_switches(), -1));
  std::vector<std::vector<int32_t>> scratch(workers);
  std::vector<std::vector<uint64_t>> used(workers, std::vector<uint64_t>((num_edges_ + 63) / 64));
  arenas_.resize(workers);
  internal::ParallelFor(workers, blocks, 1, [&](int w, size_t b) {
    Walk(b, &used[w], &next[w], &scratch[w], &arenas_[w]);
  });
  next.clear();
  scratch.clear();
  if (loop_.load()) {
    return Status::Failed("the route to LID " + std::to_string(dests_[loop_dest_.load()].first) +
                          " loops; virtual layers cannot make a looping route deadlock-free");
  }
  for (int w = 1; w < workers; ++w) {
    for (size_t i = 0; i < used[0].size(); ++i) used[0][i] |= used[w][i];
  }
  const bool cyclic = HasCycle(used[0]);
  if (cyclic) MarkCyclicDependencies(used[0]);
  used.clear();
  count_.assign(opts_.max_layers, {});
  layer_ = internal::BigFilled<uint8_t>(routes, 0);

  int needed = 1;
  // An acyclic first layer keeps every route; BreakCycles would find nothing to move.
  if (cyclic && opts_.split_first && opts_.max_layers > 1) {
    CountPinned();
    SplitUpDown();
    SAR_RETURN_IF_ERROR(Layer(&needed));
  } else if (cyclic) {
    CountFirstLayer(opts_.threads);
    Status first = Layer(&needed);
    // (One layer has no room above layer 0 for the other routes.)
    if (!first.ok() && opts_.max_layers > 1 &&
        first.message().find("virtual layers: a cycle remains") != std::string::npos) {
      // Too many layers one cycle at a time: layers by route shape (SplitUpDown).
      SplitUpDown();
      needed = 1;
      Status second = Layer(&needed);
      if (!second.ok()) {
        return Status::Failed(first.message() +
                              " (also with up*/down* routes kept in layer 0, down*/up* "
                              "ones and the others layered above them by shape: " +
                              second.message() + ")");
      }
    } else if (!first.ok()) {
      return first;
    }
  }
  Balance(needed);

  SAR_RETURN_IF_ERROR(Fill(out));
  if (stats != nullptr) {
    stats->layers_needed = needed;
    stats->layers_used = base_[needed - 1] + split_[needed - 1];
    stats->routes = 0;
    for (size_t d = 0; d < dests_.size(); ++d) {
      for (size_t r = d * slots_; r < (d + 1) * slots_; ++r) {
        stats->routes += Crosses(r, BlockOfDest(d));
      }
    }
    stats->cycles_broken = cycles_;
    stats->up_down_first = up_down_first_;
  }
  return Status::OK();
}

}  // namespace

Status AssignVirtualLayers(const Fabric& fabric, const LftSet& lfts, const LayerOptions& opts,
                           VirtualLayers* out, LayerStats* stats) {
  Layerer layerer(fabric, lfts, opts);
  return layerer.Run(out, stats);
}

}  // namespace sar
