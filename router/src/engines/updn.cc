// Up*/Down*, like OpenSM's updn: switches are ranked by BFS distance from the root switches; a
// cable is "up" towards the lower (rank, switch index) end, so every cable has a direction even
// between equal ranks. A legal route climbs up zero or more cables, then goes down, and never
// goes up again after going down, so the channel dependency graph of one layer is acyclic
// without any virtual layers.
//
// Destination-based tables see no packet history, so for each destination switch t:
//  - a switch from which t is reachable by going only down routes down, on the shortest such
//    path (a packet that already went down may arrive there);
//  - any other switch routes up, on the shortest legal up-then-down path.
// Among equally short legal next hops, LIDs are balanced over ports as in MinHop.
//
// Roots: RoutingInput::roots if given. Otherwise the switches farthest (in cables) from any
// HCA-attached switch, per connected part of the fabric: the top level of a fat-tree, also
// when degraded. If with those roots some endpoint pair has no legal route (possible when
// failures cut the top level into pieces, or on irregular fabrics where every switch hosts
// HCAs), the engine falls back to one root, the switch whose longest distance to an
// HCA-attached switch is smallest (lowest index on ties); with one root every connected pair
// has a legal route. The roots used are put into the notes.
//
// A switch with no legal route to a destination is one no legal endpoint route ever enters
// (the rest of a legal route is legal from every switch on it). It still gets a shortest-path
// entry, so that switch-originated traffic (management on VL15, outside the deadlock question,
// e.g. traps to the SM) arrives: with several roots one top switch cannot reach another, or an
// HCA below a failed link, without going down and up again. That fallback cannot loop: it
// descends in hop count until it meets a switch with a legal route, which never leads back.
// HCA-attached switches are the exception for HCA destinations: a missing legal route there is
// a disconnected pair (an error, or a hole with allow_disconnected), not something to paper over.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "analysis/trace_parallel.h"
#include "engines/balanced_fill.h"
#include "engines/engines.h"
#include "engines/switch_graph.h"
#include "sar/engines/engine.h"

namespace sar::internal {
namespace {

constexpr int16_t kFar = std::numeric_limits<int16_t>::max();

/// Legal up*/down* distances for one choice of roots.
struct UpDownCosts {
  std::vector<int> rank;  // per switch: BFS distance from the roots, -1 = no root in its part
  std::vector<int> pos;   // per switch: position in (rank, index) order; up = towards lower pos
  // [t * n + s]: legal hops from s to t (kFar = none), and whether s routes down (t is below it).
  std::vector<int16_t> cost;
  std::vector<uint8_t> down;
};

void ComputeCosts(const SwitchGraph& g, const std::vector<int>& roots, int threads,
                  UpDownCosts* c) {
  const int n = g.num_switches;
  c->rank.assign(n, -1);
  std::vector<int> queue;
  for (int r : roots) {
    if (c->rank[r] < 0) queue.push_back(r);
    c->rank[r] = 0;
  }
  for (size_t head = 0; head < queue.size(); ++head) {
    const int s = queue[head];
    for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
      if (c->rank[g.arc_to[a]] >= 0) continue;
      c->rank[g.arc_to[a]] = c->rank[s] + 1;
      queue.push_back(g.arc_to[a]);
    }
  }
  std::vector<int> order(n);  // ranked switches by (rank, index), unranked last
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const int ra = c->rank[a] < 0 ? std::numeric_limits<int>::max() : c->rank[a];
    const int rb = c->rank[b] < 0 ? std::numeric_limits<int>::max() : c->rank[b];
    return ra < rb;
  });
  c->pos.assign(n, 0);
  for (int i = 0; i < n; ++i) c->pos[order[i]] = i;
  const int ranked = static_cast<int>(queue.size());

  c->cost.assign(static_cast<size_t>(n) * n, kFar);
  c->down.assign(static_cast<size_t>(n) * n, 0);
  const int workers = WorkerCount(threads, n, 16);
  ParallelFor(workers, n, 16, [&](int, size_t ti) {
    const int t = static_cast<int>(ti);
    if (c->rank[t] < 0) return;
    int16_t* cost = c->cost.data() + ti * n;
    uint8_t* down = c->down.data() + ti * n;
    // Down-only distances: a down move raises pos, so only switches before t can get there,
    // and walking them from t backwards sees every successor first.
    cost[t] = 0;
    down[t] = 1;
    for (int i = c->pos[t] - 1; i >= 0; --i) {
      const int s = order[i];
      for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
        const int u = g.arc_to[a];
        if (c->pos[u] > i && down[u] && cost[u] + 1 < cost[s]) cost[s] = cost[u] + 1;
      }
      down[s] = cost[s] != kFar;
    }
    // Everyone else climbs: an up move lowers pos, so walk forwards.
    for (int i = 0; i < ranked; ++i) {
      const int s = order[i];
      if (down[s]) continue;
      for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
        const int u = g.arc_to[a];
        if (c->pos[u] < i && cost[u] != kFar && cost[u] + 1 < cost[s]) cost[s] = cost[u] + 1;
      }
    }
  });
}

/// Endpoint pairs of switches (both hosting HCAs) without a legal route.
bool AllEndpointsReach(const SwitchGraph& g, const UpDownCosts& c) {
  const int n = g.num_switches;
  for (int t = 0; t < n; ++t) {
    if (g.hcas_on_switch[t] == 0) continue;
    for (int s = 0; s < n; ++s) {
      if (g.hcas_on_switch[s] > 0 && c.cost[static_cast<size_t>(t) * n + s] == kFar) return false;
    }
  }
  return true;
}

/// Per connected part: the switches at the largest distance from an HCA-attached switch.
std::vector<int> TopLevelRoots(const SwitchGraph& g) {
  const int n = g.num_switches;
  std::vector<int> height(n, -1), queue;
  for (int s = 0; s < n; ++s) {
    if (g.hcas_on_switch[s] > 0) {
      height[s] = 0;
      queue.push_back(s);
    }
  }
  for (size_t head = 0; head < queue.size(); ++head) {
    const int s = queue[head];
    for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
      if (height[g.arc_to[a]] >= 0) continue;
      height[g.arc_to[a]] = height[s] + 1;
      queue.push_back(g.arc_to[a]);
    }
  }
  std::vector<int> component;
  const int parts = [&] {
    SwitchComponents(g, &component);
    return *std::max_element(component.begin(), component.end()) + 1;
  }();
  std::vector<int> top(parts, -1);
  for (int s = 0; s < n; ++s) top[component[s]] = std::max(top[component[s]], height[s]);
  std::vector<int> roots;
  for (int s = 0; s < n; ++s) {
    if (height[s] >= 0 && height[s] == top[component[s]]) roots.push_back(s);
  }
  return roots;
}

/// The switch whose longest distance to an HCA-attached switch is smallest.
int CenterRoot(const SwitchGraph& g) {
  const int n = g.num_switches;
  std::vector<int> worst(n, 0), hops;
  for (int t = 0; t < n; ++t) {
    if (g.hcas_on_switch[t] == 0) continue;
    HopsTo(g, t, &hops);
    for (int s = 0; s < n; ++s) {
      worst[s] = hops[s] < 0 ? std::numeric_limits<int>::max() : std::max(worst[s], hops[s]);
    }
  }
  return static_cast<int>(std::min_element(worst.begin(), worst.end()) - worst.begin());
}

std::string RootNote(const Fabric& f, const std::vector<int>& roots, const char* how) {
  std::string note = "updn: " + std::to_string(roots.size()) + " root(s), " + how + ":";
  constexpr size_t kShown = 16;
  for (size_t i = 0; i < roots.size() && i < kShown; ++i) {
    note += " " + f.name(f.switches()[roots[i]]);
  }
  if (roots.size() > kShown) note += " and " + std::to_string(roots.size() - kShown) + " more";
  return note;
}

class UpDownEngine : public RoutingEngine {
 public:
  std::string_view name() const override { return "updn"; }

 protected:
  Status DoRoute(const RoutingInput& in, RoutingOutput* out) const override {
    const Fabric& f = *in.fabric;
    std::vector<int> roots;  // Route has checked that they are switches
    for (NodeId r : in.roots) roots.push_back(f.switch_index(r));
    const SwitchGraph g = BuildSwitchGraph(f);
    const int n = g.num_switches;

    std::vector<int> part;
    const int parts = SwitchComponents(g, &part);
    UpDownCosts costs;
    const char* how = "given";
    if (!roots.empty()) {
      ComputeCosts(g, roots, in.threads, &costs);
    } else {
      how = "auto (farthest from HCA-attached switches)";
      roots = TopLevelRoots(g);
      ComputeCosts(g, roots, in.threads, &costs);
      if (!AllEndpointsReach(g, costs) && parts <= 1) {  // one root only helps a connected fabric
        roots = {CenterRoot(g)};
        ComputeCosts(g, roots, in.threads, &costs);
        how = "auto (the top level left some pairs without a legal route; central switch)";
      }
    }
    out->notes.push_back(RootNote(f, roots, how));
    // Pairs without any cable path Route has already failed or noted; here only the pairs the
    // up*/down* rule leaves out (possible with given roots).
    SAR_RETURN_IF_ERROR(CheckEndpointReach(
        f, g,
        [&](int s, int t) {
          return part[s] != part[t] || costs.cost[static_cast<size_t>(t) * n + s] != kFar;
        },
        in.allow_disconnected, "no legal up*/down* route", &out->notes));

    // Plain hop counts, only towards switches that some switch cannot reach legally (see the
    // top comment).
    std::vector<std::vector<int>> plain(n);
    const int workers = WorkerCount(in.threads, n, 16);
    ParallelFor(workers, n, 16, [&](int, size_t t) {
      const int16_t* cost = costs.cost.data() + t * n;
      if (std::find(cost, cost + n, kFar) != cost + n) HopsTo(g, static_cast<int>(t), &plain[t]);
    });
    out->lfts = LftSet(f);
    FillBalanced(
        g, in.threads,
        [&](int s, int t, bool to_switch, std::vector<int>* arcs) {
          const size_t row = static_cast<size_t>(t) * n;
          const int16_t* cost = costs.cost.data() + row;
          if (cost[s] != kFar) {
            const bool down = costs.down[row + s];
            for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
              const int u = g.arc_to[a];
              const bool goes_down = costs.pos[u] > costs.pos[s];
              if (goes_down != down) continue;  // down stays down; up only climbs
              if (down && !costs.down[row + u]) continue;
              if (cost[u] == cost[s] - 1) arcs->push_back(a);
            }
            return;
          }
          if (!to_switch && g.hcas_on_switch[s] > 0) return;
          const std::vector<int>& hops = plain[t];
          if (hops[s] <= 0) return;
          for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
            if (hops[g.arc_to[a]] == hops[s] - 1) arcs->push_back(a);
          }
        },
        &out->lfts);
    return Status::OK();
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> NewUpDownEngine() { return std::make_unique<UpDownEngine>(); }

}  // namespace sar::internal
