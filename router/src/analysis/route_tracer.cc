#include "sar/analysis/route_tracer.h"

#include <vector>

namespace sar {

namespace {

// Build() keeps its walk state in `hops` until a switch is classified; real hop counts never
// reach these values because a route has at most one hop per switch and LIDs (hence switches)
// are fewer than 0xC000.
constexpr uint16_t kUnknown = 0xFFFF;
constexpr uint16_t kVisiting = 0xFFFE;

}  // namespace

RouteTracer::RouteTracer(const Fabric& fabric, const LftSet& lfts)
    : fabric_(fabric), lfts_(lfts), next_switch_(fabric.num_port_slots(), kNowhere) {
  for (PortId id = 0; id < fabric.num_port_slots(); ++id) {
    const PortId peer = fabric.peer_id(id);
    if (peer == kNoPort) continue;
    const NodeId n = fabric.port_node(peer);
    next_switch_[id] = fabric.is_switch(n) ? fabric.switch_index(n) : kToHca;
  }
  for (NodeId sw : fabric.switches()) {
    port0_.push_back(fabric.port_id(sw, 0));
    ports_.push_back(fabric.num_ports(sw));
  }
}

void RouteTracer::LoadColumns(Lid block, LftColumns* c) const {
  const int n = fabric_.num_switches();
  c->num_switches_ = n;
  c->block_ = block;
  c->loaded_ = true;
  const size_t size = static_cast<size_t>(n) * LftColumns::kLids;
  c->port_.resize(size);
  c->next_.resize(size);
  const size_t first = static_cast<size_t>(block) * LftColumns::kLids;
  // Entries past max_lid: kNoRoute, as LftSet::port says.
  const size_t end = std::min(first + LftColumns::kLids, static_cast<size_t>(lfts_.max_lid()) + 1);
  const size_t count = end > first ? end - first : 0;
  if (count < LftColumns::kLids) {
    std::fill(c->port_.begin(), c->port_.end(), LftSet::kNoRoute);
    std::fill(c->next_.begin(), c->next_.end(), static_cast<int16_t>(kNowhere));
  }
  if (count == 0) return;
  uint8_t* port = c->port_.data();
  int16_t* next = c->next_.data();
  // Each switch's row line and port slots are cache misses of their own: ask for a few switches
  // ahead so that the misses overlap.
  constexpr int kAhead = 16;
  for (int s = 0; s < n; ++s) {
    if (s + kAhead < n) {
      const int a = s + kAhead;
      __builtin_prefetch(lfts_.row(a) + first);
      const char* slots = reinterpret_cast<const char*>(&next_switch_[port0_[a]]);
      for (int b = 0; b <= ports_[a] * 4; b += 64) __builtin_prefetch(slots + b);
    }
    const uint8_t* in = lfts_.row(s) + first;
    const int32_t* to = &next_switch_[port0_[s]];
    const int ports = ports_[s];
    for (size_t k = 0; k < count; ++k) {
      const uint8_t p = in[k];
      port[k * n + s] = p;
      next[k * n + s] = static_cast<int16_t>(p <= ports ? to[p] : kNowhere);
    }
  }
}

void RouteTracer::Build(Lid lid, DestinationTree* tree) const {
  BuildImpl(
      lid, nullptr, [&](int s) { return lfts_.port(s, lid); },
      [&](int, PortId ch) { return next_switch_[ch]; }, tree);
}

void RouteTracer::BuildFrom(Lid lid, const std::vector<int>& from, DestinationTree* tree) const {
  BuildImpl(
      lid, &from, [&](int s) { return lfts_.port(s, lid); },
      [&](int, PortId ch) { return next_switch_[ch]; }, tree);
}

void RouteTracer::BuildFrom(Lid lid, const std::vector<int>& from, const LftColumns& columns,
                            DestinationTree* tree) const {
  const size_t at = static_cast<size_t>(lid % LftColumns::kLids) * columns.num_switches_;
  const uint8_t* port = columns.port_.data() + at;
  const int16_t* next = columns.next_.data() + at;
  BuildImpl(
      lid, &from, [port](int s) { return port[s]; },
      [next](int s, PortId) { return static_cast<int32_t>(next[s]); }, tree);
}

// One walk per unclassified start switch: each switch's own step (its LFT entry) is read when
// the walk first reaches it; the walk marks switches as visiting until it meets a classified
// switch (the chain inherits its fate), a visiting one (the chain runs into a loop) or a switch
// whose own step ends the route. The second walk writes the result. Each switch is read once and
// walked at most twice; switches no walk reaches stay unknown.
// `entry(s)` is switch s's LFT entry for `lid`; `next_of(s, ch)` is next_switch(ch) for the
// channel ch it names.
template <class Entry, class Next>
void RouteTracer::BuildImpl(Lid lid, const std::vector<int>* from, Entry entry, Next next_of,
                            DestinationTree* tree) const {
  const int n = fabric_.num_switches();
  tree->lid = lid;
  tree->fate.assign(n, RouteFate::kHole);
  tree->hops.assign(n, kUnknown);
  tree->out.assign(n, kNoPort);
  tree->port.resize(n);
  tree->next.resize(n);
  const PortRef owner = fabric_.lid_owner(lid);
  const PortId owner_id = owner.valid() ? fabric_.port_id(owner) : kNoPort;
  std::vector<RouteFate>& fate = tree->fate;
  std::vector<uint16_t>& hops = tree->hops;
  std::vector<PortId>& out = tree->out;
  const std::vector<int32_t>& next_sw = tree->next;  // valid where out is set

  // Switch s's own step: classifies s if the step ends the route (hops 0 or 1, fate set), else
  // records its channel and marks it visiting.
  auto step = [&](int s) {
    const uint8_t p = entry(s);
    hops[s] = 0;
    if (p == LftSet::kNoRoute || p > ports_[s]) return;  // hole
    const PortId ch = port0_[s] + p;
    if (p == 0) {
      fate[s] = ch == owner_id ? RouteFate::kDelivered : RouteFate::kMisdelivered;
      return;
    }
    const int32_t next = next_of(s, ch);
    if (next == kNowhere) return;  // hole: uncabled port
    out[s] = ch;
    tree->port[s] = p;
    tree->next[s] = next;
    if (next == kToHca) {
      if (fabric_.peer_id(ch) == owner_id) {
        fate[s] = RouteFate::kDelivered;
        hops[s] = 1;
      } else {
        fate[s] = RouteFate::kMisdelivered;
      }
      return;
    }
    hops[s] = kVisiting;
  };

  const int starts = from != nullptr ? static_cast<int>(from->size()) : n;
  for (int i = 0; i < starts; ++i) {
    const int s = from != nullptr ? (*from)[i] : i;
    if (hops[s] != kUnknown) continue;
    int length = 0;
    int t = s;
    while (hops[t] == kUnknown) {
      step(t);
      if (hops[t] != kVisiting) break;  // t ends the route: classified
      ++length;
      t = next_sw[t];
    }
    if (hops[t] == kVisiting) {
      // Only this walk leaves switches visiting: the chain runs into a loop of its own.
      for (int u = s; hops[u] == kVisiting; u = next_sw[u]) {
        fate[u] = RouteFate::kLoop;
        hops[u] = 0;
      }
      continue;
    }
    const RouteFate f = fate[t];
    const int base = f == RouteFate::kDelivered ? hops[t] : 0;
    for (int u = s, k = 0; k < length; ++k, u = next_sw[u]) {
      fate[u] = f;
      hops[u] = f == RouteFate::kDelivered ? static_cast<uint16_t>(base + length - k) : 0;
    }
  }
  for (int s = 0; s < n; ++s) {
    if (hops[s] == kUnknown) hops[s] = 0;
  }
}

std::vector<PortId> RouteTracer::Path(PortRef src, Lid lid, RouteFate* fate) const {
  std::vector<PortId> path;
  const PortId up = fabric_.port_id(src);
  if (next_switch_[up] < 0) {  // uncabled, or (impossibly) cabled to an HCA
    *fate = next_switch_[up] == kNowhere ? RouteFate::kHole : RouteFate::kMisdelivered;
    return path;
  }
  path.push_back(up);
  const PortRef owner = fabric_.lid_owner(lid);
  const PortId owner_id = owner.valid() ? fabric_.port_id(owner) : kNoPort;
  std::vector<bool> visited(fabric_.num_switches(), false);
  int s = next_switch_[up];
  for (;;) {
    if (visited[s]) {
      *fate = RouteFate::kLoop;
      return path;
    }
    visited[s] = true;
    const NodeId node = fabric_.switches()[s];
    const uint8_t p = lfts_.port(s, lid);
    if (p == LftSet::kNoRoute || p > fabric_.num_ports(node)) {
      *fate = RouteFate::kHole;
      return path;
    }
    const PortId ch = fabric_.port_id(node, p);
    if (p == 0) {
      *fate = ch == owner_id ? RouteFate::kDelivered : RouteFate::kMisdelivered;
      return path;
    }
    const int32_t next = next_switch_[ch];
    if (next == kNowhere) {
      *fate = RouteFate::kHole;
      return path;
    }
    path.push_back(ch);
    if (next == kToHca) {
      *fate = fabric_.peer_id(ch) == owner_id ? RouteFate::kDelivered : RouteFate::kMisdelivered;
      return path;
    }
    s = next;
  }
}

}  // namespace sar
