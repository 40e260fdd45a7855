#include "engines/osrm_core.h"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <string>
#include <vector>

namespace sar::internal {
namespace {

// The tree as the rules see it: switch ranks (1 = leaf, the switches with HCAs), the port from
// a switch to a neighbour (the first cable; 0 = none), and each endpoint's index on its leaf
// (its position among the leaf's HCA cables in port order), which the paper's node labels use.
struct Tree {
  int n = 0;
  std::vector<int> rank;
  std::vector<uint8_t> port_to;  // [s * n + t]
  std::vector<int> index_on_leaf;
  int hosts_per_leaf = 0;  // the largest leaf's count
  uint8_t port(int s, int t) const { return port_to[static_cast<size_t>(s) * n + t]; }
};

Status BuildTree(const Fabric& f, const SwitchGraph& g, int levels, std::string_view engine,
                 Tree* t) {
  const std::string who =
      std::string(engine) + " needs an intact " + std::to_string(levels) + "-level fat-tree: ";
  auto name = [&](int s) { return "switch '" + f.name(f.switches()[s]) + "'"; };
  t->n = g.num_switches;
  t->rank.assign(t->n, 0);
  std::deque<int> q;
  for (int s = 0; s < t->n; ++s) {
    if (g.hcas_on_switch[s] > 0) {
      t->rank[s] = 1;
      q.push_back(s);
    }
  }
  while (!q.empty()) {
    const int s = q.front();
    q.pop_front();
    for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
      if (t->rank[g.arc_to[a]] == 0) {
        t->rank[g.arc_to[a]] = t->rank[s] + 1;
        q.push_back(g.arc_to[a]);
      }
    }
  }
  t->port_to.assign(static_cast<size_t>(t->n) * t->n, 0);
  for (int s = 0; s < t->n; ++s) {
    if (t->rank[s] < 1 || t->rank[s] > levels) {
      return Status::Failed(
          who + name(s) +
          (t->rank[s] == 0 ? " reaches no leaf" : " is at level " + std::to_string(t->rank[s])));
    }
    for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
      const int u = g.arc_to[a];
      if (std::abs(t->rank[u] - t->rank[s]) != 1) {
        return Status::Failed(who + name(s) + " has a cable to " + name(u) +
                              " that is not one level up or down");
      }
      uint8_t& p = t->port_to[static_cast<size_t>(s) * t->n + u];
      if (p == 0) p = g.arc_port[a];
    }
  }
  // Endpoint indices on their leaves, by leaf port.
  std::vector<std::vector<int>> on_leaf(t->n);
  for (int i = 0; i < g.num_endpoint_dests; ++i) on_leaf[g.dests[i].sw].push_back(i);
  t->index_on_leaf.assign(g.num_endpoint_dests, 0);
  for (std::vector<int>& eps : on_leaf) {
    std::sort(eps.begin(), eps.end(),
              [&](int a, int b) { return g.dests[a].sw_port < g.dests[b].sw_port; });
    for (size_t k = 0; k < eps.size(); ++k) t->index_on_leaf[eps[k]] = static_cast<int>(k);
    t->hosts_per_leaf = std::max(t->hosts_per_leaf, static_cast<int>(eps.size()));
  }
  return Status::OK();
}

// Every source group needs its own LID of every destination: 2^LMC >= groups.
Status CheckLmc(const Fabric& f, const SwitchGraph& g, std::string_view engine, int groups) {
  int need = 0;
  while ((1 << need) < groups) ++need;
  if (need > 7) {
    return Status::Failed(std::string(engine) + " needs " + std::to_string(groups) +
                          " source groups, more than the 128 LIDs per port LMC 7 allows");
  }
  for (int i = 0; i < g.num_endpoint_dests; ++i) {
    if (g.dests[i].num_lids < groups) {
      const PortRef p{g.dests[i].node, g.dests[i].port};
      return Status::Failed(
          std::string(engine) + " on this fabric needs LMC >= " + std::to_string(need) + " (" +
          std::to_string(groups) + " source groups, one destination LID each); HCA '" +
          f.name(p.node) + "' port " + std::to_string(p.port) + " has LMC " +
          std::to_string(f.lmc(p)) + " (assign LIDs with --lmc " + std::to_string(need) + ")");
    }
  }
  return Status::OK();
}

// Switch LIDs are management traffic, outside the paper: plain shortest paths, first port.
void RouteSwitchLids(const SwitchGraph& g, LftSet* lfts) {
  std::vector<int> hops;
  for (size_t d = g.num_endpoint_dests; d < g.dests.size(); ++d) {
    const Destination& dst = g.dests[d];
    if (dst.base_lid == 0) continue;
    HopsTo(g, dst.sw, &hops);
    for (int s = 0; s < g.num_switches; ++s) {
      if (s == dst.sw) {
        lfts->set_port(s, dst.base_lid, 0);
        continue;
      }
      for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
        if (hops[s] > 0 && hops[g.arc_to[a]] == hops[s] - 1) {
          lfts->set_port(s, dst.base_lid, g.arc_port[a]);
          break;
        }
      }
    }
  }
}

int CeilDiv(int a, int b) { return (a + b - 1) / b; }

// OSRM2 (Fig. 8): the up-link from a leaf to spine (gs * Gd + gd) carries the pairs from source
// group gs on that leaf to destination group gd on other leaves. The paper's Z_s/Z_d split for
// a non-square m/2 is generalised to any leaf size h and spine count T: the group counts minimise
// the larger group size (which bounds mds on the up- and down-links) with Gs * Gd <= T, then use
// the fewest source groups (LIDs). With h = T = Z^2 this is the paper's Z x Z.
Status RouteOsrm2(const Fabric& f, const SwitchGraph& g, const Tree& t, RoutingOutput* out) {
  std::vector<int> tops;
  for (int s = 0; s < t.n; ++s) {
    if (t.rank[s] == 2) tops.push_back(s);
  }
  for (int s = 0; s < t.n; ++s) {
    if (t.rank[s] != 1) continue;
    for (int top : tops) {
      if (t.port(s, top) == 0) {
        return Status::Failed("osrm2 needs every leaf cabled to every spine: leaf '" +
                              f.name(f.switches()[s]) + "' has no cable to '" +
                              f.name(f.switches()[top]) + "'");
      }
    }
  }
  const int h = t.hosts_per_leaf, T = static_cast<int>(tops.size());
  int gs = 1, gd = 1, best = h;
  for (int a = 1; a <= std::min(h, std::min(T, 128)); ++a) {
    for (int b = 1; a * b <= T && b <= h; ++b) {
      const int v = std::max(CeilDiv(h, a), CeilDiv(h, b));
      if (v < best) {
        best = v;
        gs = a;
        gd = b;
      }
    }
  }
  const int ns = CeilDiv(h, gs), nd = CeilDiv(h, gd);
  gs = CeilDiv(h, ns);  // groups actually populated
  SAR_RETURN_IF_ERROR(CheckLmc(f, g, "osrm2", gs));
  out->source_lid_offset.resize(g.num_endpoint_dests);
  for (int i = 0; i < g.num_endpoint_dests; ++i) {
    out->source_lid_offset[i] = static_cast<uint8_t>(t.index_on_leaf[i] / ns);
  }
  for (int i = 0; i < g.num_endpoint_dests; ++i) {
    const Destination& d = g.dests[i];
    const int b = d.sw, gdst = t.index_on_leaf[i] / nd;
    for (int o = 0; o < d.num_lids; ++o) {
      const Lid lid = d.base_lid + o;
      const int spine = tops[(o % gs) * CeilDiv(h, nd) + gdst];
      for (int s = 0; s < t.n; ++s) {
        const uint8_t p = s == b ? d.sw_port : t.rank[s] == 1 ? t.port(s, spine) : t.port(s, b);
        out->lfts.set_port(s, lid, p);
      }
    }
  }
  out->notes.push_back("osrm2: " + std::to_string(gs) + " source groups of " + std::to_string(ns) +
                       " (one LID each), " + std::to_string(CeilDiv(h, nd)) +
                       " destination groups of " + std::to_string(nd) + ", " +
                       std::to_string(gs * CeilDiv(h, nd)) + " of " + std::to_string(T) +
                       " spines used; oblivious ratio at most " + std::to_string(std::max(ns, nd)));
  return Status::OK();
}

// OSRM3 (Fig. 9): leaves (rank 1) and middles (rank 2) form pods; a middle's class is the set of
// tops it is cabled to (the paper's i1). Source (pod, leaf, x) goes up to its pod's middle of
// class c = x mod G, then to that class's top X = y mod V for destination index y, then down
// to the destination pod's middle of class c and leaf. Within a pod: leaf, middle c, leaf.
Status RouteOsrm3(const Fabric& f, const SwitchGraph& g, const Tree& t, RoutingOutput* out) {
  auto name = [&](int s) { return "'" + f.name(f.switches()[s]) + "'"; };
  const std::string who = "osrm3 needs an intact 3-level fat-tree: ";
  // Pods: leaves and middles joined by their cables.
  std::vector<int> pod(t.n, -1);
  int num_pods = 0;
  for (int s = 0; s < t.n; ++s) {
    if (t.rank[s] != 1 || pod[s] >= 0) continue;
    std::vector<int> stack{s};
    pod[s] = num_pods;
    while (!stack.empty()) {
      const int u = stack.back();
      stack.pop_back();
      for (int a = g.arc_begin[u]; a < g.arc_begin[u + 1]; ++a) {
        const int v = g.arc_to[a];
        if (t.rank[v] <= 2 && pod[v] < 0) {
          pod[v] = num_pods;
          stack.push_back(v);
        }
      }
    }
    ++num_pods;
  }
  // Classes of middles by their tops.
  std::map<std::vector<int>, int> class_of_tops;
  std::vector<int> cls(t.n, -1);
  for (int s = 0; s < t.n; ++s) {
    if (t.rank[s] != 2) continue;
    std::vector<int> up;
    for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
      if (t.rank[g.arc_to[a]] == 3) up.push_back(g.arc_to[a]);
    }
    std::sort(up.begin(), up.end());
    up.erase(std::unique(up.begin(), up.end()), up.end());
    class_of_tops.emplace(up, 0);
  }
  std::vector<std::vector<int>> tops_of;
  std::vector<int> top_class(t.n, -1);
  for (auto& [tops, c] : class_of_tops) {
    c = static_cast<int>(tops_of.size());
    tops_of.push_back(tops);
    for (int top : tops) {
      if (top_class[top] >= 0)
        return Status::Failed(who + "top " + name(top) + " serves two classes of middle switches");
      top_class[top] = c;
    }
  }
  const int u = static_cast<int>(tops_of.size());
  const int v = static_cast<int>(tops_of.empty() ? 0 : tops_of[0].size());
  std::vector<int> mid_of(static_cast<size_t>(num_pods) * u, -1);
  for (int s = 0; s < t.n; ++s) {
    if (t.rank[s] != 2) continue;
    std::vector<int> up;
    for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
      if (t.rank[g.arc_to[a]] == 3) up.push_back(g.arc_to[a]);
    }
    std::sort(up.begin(), up.end());
    up.erase(std::unique(up.begin(), up.end()), up.end());
    cls[s] = class_of_tops.at(up);
    int& m = mid_of[static_cast<size_t>(pod[s]) * u + cls[s]];
    if (m >= 0)
      return Status::Failed(who + "middle switches " + name(m) + " and " + name(s) +
                            " of one pod reach the same tops");
    m = s;
  }
  for (int c = 0; c < u; ++c) {
    if (static_cast<int>(tops_of[c].size()) != v || v == 0) {
      return Status::Failed(who + "the middle switches reach different numbers of tops");
    }
  }
  for (int s = 0; s < t.n; ++s) {
    for (int c = 0; c < u; ++c) {
      const int m = pod[s] >= 0 ? mid_of[static_cast<size_t>(pod[s]) * u + c] : -1;
      if (t.rank[s] == 1 && (m < 0 || t.port(s, m) == 0)) {
        return Status::Failed(who + "leaf " + name(s) +
                              " has no cable to a middle switch of class " + std::to_string(c));
      }
    }
    if (t.rank[s] == 3) {
      for (int p = 0; p < num_pods; ++p) {
        const int m = mid_of[static_cast<size_t>(p) * u + top_class[s]];
        if (m < 0 || t.port(s, m) == 0) {
          return Status::Failed(who + "top " + name(s) + " has no cable to pod " +
                                std::to_string(p));
        }
      }
    }
  }
  const int h = t.hosts_per_leaf, groups = std::min(h, u);
  SAR_RETURN_IF_ERROR(CheckLmc(f, g, "osrm3", groups));
  out->source_lid_offset.resize(g.num_endpoint_dests);
  for (int i = 0; i < g.num_endpoint_dests; ++i) {
    out->source_lid_offset[i] = static_cast<uint8_t>(t.index_on_leaf[i] % groups);
  }
  for (int i = 0; i < g.num_endpoint_dests; ++i) {
    const Destination& d = g.dests[i];
    const int b = d.sw, pb = pod[b], y = t.index_on_leaf[i];
    for (int o = 0; o < d.num_lids; ++o) {
      const Lid lid = d.base_lid + o;
      const int c = o % groups;
      for (int s = 0; s < t.n; ++s) {
        uint8_t p = 0;
        if (s == b) {
          p = d.sw_port;
        } else if (t.rank[s] == 1) {
          p = t.port(s, mid_of[static_cast<size_t>(pod[s]) * u + c]);
        } else if (t.rank[s] == 2) {
          p = pod[s] == pb ? t.port(s, b) : t.port(s, tops_of[cls[s]][y % v]);
        } else {
          p = t.port(s, mid_of[static_cast<size_t>(pb) * u + top_class[s]]);
        }
        out->lfts.set_port(s, lid, p);
      }
    }
  }
  out->notes.push_back("osrm3: " + std::to_string(num_pods) + " pods, " + std::to_string(groups) +
                       " source groups (one LID each), " + std::to_string(u) + " x " +
                       std::to_string(v) + " tops");
  return Status::OK();
}

}  // namespace

Status RouteOsrm(const RoutingInput& in, int levels, RoutingOutput* out) {
  const Fabric& f = *in.fabric;
  const SwitchGraph g = BuildSwitchGraph(f);
  const std::string_view engine = levels == 2 ? "osrm2" : "osrm3";
  Tree t;
  SAR_RETURN_IF_ERROR(BuildTree(f, g, levels, engine, &t));
  const int height = *std::max_element(t.rank.begin(), t.rank.end());
  if (height != levels) {
    return Status::Failed(std::string(engine) + " needs a " + std::to_string(levels) +
                          "-level fat-tree, this one has " + std::to_string(height) +
                          " switch levels");
  }
  out->lfts = LftSet(f);
  RouteSwitchLids(g, &out->lfts);
  return levels == 2 ? RouteOsrm2(f, g, t, out) : RouteOsrm3(f, g, t, out);
}

}  // namespace sar::internal
