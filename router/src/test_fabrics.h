// Test-only fabrics, routers and a naive route walker, built with nothing but the Fabric and
// LftSet APIs. The analyses under test (trace, deadlock, metrics) are checked against these, so
// nothing here may use them.
#pragma once

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sar/analysis/trace.h"
#include "sar/model/fabric.h"
#include "sar/model/lft.h"

namespace sar::testfab {

inline std::string Numbered(const char* prefix, int i, int width) {
  std::string digits = std::to_string(i);
  if (static_cast<int>(digits.size()) < width) digits.insert(0, width - digits.size(), '0');
  return prefix + digits;
}

inline NodeId AddSwitch(Fabric* f, int ports, const std::string& name) {
  const NodeId n = f->AddNode(NodeKind::kSwitch, ports, 0x1000000 + f->num_nodes() * 0x100, name,
                              name + " switch");
  EXPECT_NE(n, kNoNode);
  return n;
}

inline NodeId AddHost(Fabric* f, int ports, const std::string& name) {
  const NodeId n =
      f->AddNode(NodeKind::kHca, ports, 0x2000000 + f->num_nodes() * 0x100, name, name + " HCA-1");
  EXPECT_NE(n, kNoNode);
  return n;
}

/// Cables the first free port of `a` to the first free port of `b`.
inline void Cable(Fabric* f, NodeId a, NodeId b) {
  auto free_port = [f](NodeId n) {
    for (int p = 1; p <= f->num_ports(n); ++p) {
      if (!f->peer({n, p}).valid()) return p;
    }
    ADD_FAILURE() << "no free port on " << f->name(n);
    return 0;
  };
  const int pa = free_port(a), pb = free_port(b);
  ASSERT_TRUE(f->Connect({a, pa}, {b, pb}).ok());
}

/// LIDs like OpenSM hands them out: cabled HCA ports first (aligned to 2^lmc), then switches.
inline void AssignTestLids(Fabric* f, int lmc) {
  f->ClearLids();
  Lid next = 1;
  const Lid step = Lid{1} << lmc;
  for (const PortRef& e : f->Endpoints()) {
    next = (next + step - 1) / step * step;
    ASSERT_TRUE(f->SetLid(e, next, lmc).ok());
    next += step;
  }
  for (NodeId s : f->switches()) {
    ASSERT_TRUE(f->SetLid({s, 0}, next++, 0).ok());
  }
}

/// A rail-optimised 2-level fabric (a DGX SuperPOD's scalable units): `units` units of `hosts`
/// hosts "dgx-U-HH", each with `rails` single-port HCAs "dgx-U-HH <hca_prefix><r + hca_base>";
/// rail r of unit u is cabled to leaf "leaf-U-R" (one port left free), every leaf once to each of
/// `spines` spines. Unit
/// u's host h thus sits on `rails` leaves, and hosts of one unit share a leaf on every rail.
inline Fabric RailFabric(int units, int hosts, int rails, int spines,
                         const std::string& hca_prefix = "mlx5_", int hca_base = 0) {
  Fabric f;
  std::vector<NodeId> spine;
  for (int s = 0; s < spines; ++s)
    spine.push_back(AddSwitch(&f, units * rails, Numbered("spine", s, 2)));
  for (int u = 0; u < units; ++u) {
    std::vector<NodeId> leaf;
    for (int r = 0; r < rails; ++r) {
      leaf.push_back(
          AddSwitch(&f, hosts + spines + 1, "leaf-" + std::to_string(u) + "-" + std::to_string(r)));
      for (NodeId s : spine) Cable(&f, leaf.back(), s);
    }
    for (int h = 0; h < hosts; ++h) {
      const std::string host = "dgx-" + std::to_string(u) + "-" + Numbered("", h, 2);
      for (int r = 0; r < rails; ++r) {
        const NodeId n = f.AddNode(NodeKind::kHca, 1, 0x3000000 + f.num_nodes() * 0x100,
                                   host + "-" + std::to_string(r),
                                   host + " " + hca_prefix + std::to_string(r + hca_base));
        EXPECT_NE(n, kNoNode);
        Cable(&f, n, leaf[r]);
      }
    }
  }
  AssignTestLids(&f, 0);
  return f;
}

/// A 2-level fat tree: every leaf cabled once to every spine, `hosts` HCAs per leaf.
inline Fabric FatTree2(int leaves, int spines, int hosts, int lmc = 0) {
  Fabric f;
  std::vector<NodeId> leaf, spine;
  for (int i = 0; i < leaves; ++i)
    leaf.push_back(AddSwitch(&f, hosts + spines, Numbered("leaf", i, 2)));
  for (int i = 0; i < spines; ++i) spine.push_back(AddSwitch(&f, leaves, Numbered("spine", i, 2)));
  int h = 0;
  for (int i = 0; i < leaves; ++i) {
    for (int k = 0; k < hosts; ++k) Cable(&f, AddHost(&f, 1, Numbered("h", h++, 4)), leaf[i]);
    for (int k = 0; k < spines; ++k) Cable(&f, leaf[i], spine[k]);
  }
  AssignTestLids(&f, lmc);
  return f;
}

/// A ring of switches (switch i cabled to i+1), `hosts` HCAs on each.
inline Fabric Ring(int switches, int hosts) {
  Fabric f;
  std::vector<NodeId> sw;
  for (int i = 0; i < switches; ++i) sw.push_back(AddSwitch(&f, hosts + 2, Numbered("sw", i, 2)));
  int h = 0;
  for (int i = 0; i < switches; ++i) {
    for (int k = 0; k < hosts; ++k) Cable(&f, AddHost(&f, 1, Numbered("h", h++, 4)), sw[i]);
  }
  for (int i = 0; i < switches; ++i) Cable(&f, sw[i], sw[(i + 1) % switches]);
  AssignTestLids(&f, 0);
  return f;
}

/// A random connected switch graph (random spanning tree plus extra cables, parallel cables
/// allowed), random host placement (some switches host nobody), and a few dual-port HCAs cabled
/// to two switches; LMC 0..2.
inline Fabric RandomIrregular(uint64_t seed, int min_switches = 2, int max_switches = 9) {
  std::mt19937_64 rng(seed);
  auto pick = [&rng](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  Fabric f;
  const int n = min_switches + pick(max_switches - min_switches + 1);
  std::vector<NodeId> sw;
  for (int i = 0; i < n; ++i) sw.push_back(AddSwitch(&f, 40, Numbered("sw", i, 2)));
  for (int i = 1; i < n; ++i) Cable(&f, sw[i], sw[pick(i)]);
  const int extra = pick(n + 1);
  for (int k = 0; k < extra; ++k) {
    const int a = pick(n), b = pick(n);
    if (a != b) Cable(&f, sw[a], sw[b]);
  }
  const int hosts = 2 + pick(10);
  for (int h = 0; h < hosts; ++h) {
    const bool dual = pick(5) == 0;
    const NodeId host = AddHost(&f, dual ? 2 : 1, Numbered("h", h, 4));
    Cable(&f, host, sw[pick(n)]);
    if (dual) Cable(&f, host, sw[pick(n)]);
  }
  AssignTestLids(&f, /*lmc=*/pick(3));
  return f;
}

/// Shortest-path LFTs for every LID: BFS over the switch graph from the switch nearest the LID's
/// owner. Ties go to a random candidate with `rng`, else to the candidate (lid % count).
inline LftSet MinHopLfts(const Fabric& f, std::mt19937_64* rng = nullptr) {
  LftSet lfts(f);
  const int n = f.num_switches();
  for (Lid lid = 1; lid <= f.max_lid(); ++lid) {
    const PortRef owner = f.lid_owner(lid);
    if (!owner.valid()) continue;
    const NodeId target = f.is_switch(owner.node) ? owner.node : f.peer(owner).node;
    std::vector<int> dist(f.num_nodes(), -1);
    std::vector<NodeId> queue{target};
    dist[target] = 0;
    for (size_t i = 0; i < queue.size(); ++i) {
      const NodeId u = queue[i];
      for (int p = 1; p <= f.num_ports(u); ++p) {
        const PortRef q = f.peer({u, p});
        if (q.valid() && f.is_switch(q.node) && dist[q.node] < 0) {
          dist[q.node] = dist[u] + 1;
          queue.push_back(q.node);
        }
      }
    }
    for (int s = 0; s < n; ++s) {
      const NodeId u = f.switches()[s];
      if (u == target) {
        lfts.set_port(s, lid,
                      f.is_switch(owner.node) ? 0 : static_cast<uint8_t>(f.peer(owner).port));
        continue;
      }
      if (dist[u] < 0) continue;
      std::vector<int> candidates;
      for (int p = 1; p <= f.num_ports(u); ++p) {
        const PortRef q = f.peer({u, p});
        if (q.valid() && f.is_switch(q.node) && dist[q.node] == dist[u] - 1)
          candidates.push_back(p);
      }
      const size_t k = rng ? (*rng)() % candidates.size() : lid % candidates.size();
      lfts.set_port(s, lid, static_cast<uint8_t>(candidates[k]));
    }
  }
  return lfts;
}

/// Overwrites `count` random LFT entries with a random port number (possibly 0, uncabled, out of
/// range, or no route) or a random neighbour switch, making loops, holes, misdeliveries and
/// detours.
inline void Corrupt(const Fabric& f, int count, std::mt19937_64* rng, LftSet* lfts) {
  for (int k = 0; k < count; ++k) {
    const int s = static_cast<int>((*rng)() % f.num_switches());
    const Lid lid = 1 + static_cast<Lid>((*rng)() % f.max_lid());
    const NodeId node = f.switches()[s];
    const int choice = static_cast<int>((*rng)() % (f.num_ports(node) + 3));
    lfts->set_port(s, lid, choice == 0 ? LftSet::kNoRoute : static_cast<uint8_t>(choice - 1));
    if ((*rng)() % 2 == 0) {  // half the time a detour through a neighbour switch
      std::vector<int> to_switch;
      for (int p = 1; p <= f.num_ports(node); ++p) {
        const PortRef q = f.peer({node, p});
        if (q.valid() && f.is_switch(q.node)) to_switch.push_back(p);
      }
      if (!to_switch.empty()) {
        lfts->set_port(s, lid, static_cast<uint8_t>(to_switch[(*rng)() % to_switch.size()]));
      }
    }
  }
}

/// One route, walked one hop at a time with a visited set.
struct NaiveRoute {
  RouteFate fate = RouteFate::kHole;
  std::vector<PortId> channels;  // every channel entered, incl. the HCA uplink
};

inline NaiveRoute NaiveWalk(const Fabric& f, const LftSet& lfts, PortRef src, Lid lid) {
  NaiveRoute r;
  const PortRef owner = f.lid_owner(lid);
  // A switch's port 0 sends from the switch itself: no channel before its first hop.
  const bool from_switch = f.is_switch(src.node);
  PortRef at = from_switch ? src : f.peer(src);
  if (!at.valid()) return r;
  if (!from_switch) r.channels.push_back(f.port_id(src));
  std::set<NodeId> visited;
  for (;;) {
    if (!f.is_switch(at.node)) {
      r.fate = at == owner ? RouteFate::kDelivered : RouteFate::kMisdelivered;
      return r;
    }
    if (!visited.insert(at.node).second) {
      r.fate = RouteFate::kLoop;
      return r;
    }
    const int p = lfts.port(f.switch_index(at.node), lid);
    if (p == LftSet::kNoRoute || p > f.num_ports(at.node)) return r;  // hole
    if (p == 0) {
      r.fate = PortRef{at.node, 0} == owner ? RouteFate::kDelivered : RouteFate::kMisdelivered;
      return r;
    }
    const PortRef next = f.peer({at.node, p});
    if (!next.valid()) return r;  // hole
    r.channels.push_back(f.port_id(at.node, p));
    at = next;
  }
}

/// Shortest switch-to-switch distance by BFS over nodes (HCAs do not forward).
inline int SwitchDistance(const Fabric& f, NodeId from, NodeId to) {
  std::vector<int> dist(f.num_nodes(), -1);
  std::vector<NodeId> queue{from};
  dist[from] = 0;
  for (size_t i = 0; i < queue.size(); ++i) {
    const NodeId u = queue[i];
    if (u == to) return dist[u];
    for (int p = 1; p <= f.num_ports(u); ++p) {
      const PortRef q = f.peer({u, p});
      if (q.valid() && f.is_switch(q.node) && dist[q.node] < 0) {
        dist[q.node] = dist[u] + 1;
        queue.push_back(q.node);
      }
    }
  }
  return -1;
}

// Per port slot: delivered routes from every source to every destination (base LIDs, distinct
// nodes) that cross it, walked one route at a time. Counts every channel, HCA links included.
inline std::vector<uint64_t> NaiveLoad(const Fabric& f, const LftSet& lfts,
                                       const std::vector<std::pair<PortRef, PortRef>>& flows) {
  std::vector<uint64_t> load(f.num_port_slots(), 0);
  for (const auto& [src, dst] : flows) {
    if (src.node == dst.node || f.base_lid(dst) == 0) continue;
    const NaiveRoute r = NaiveWalk(f, lfts, src, f.base_lid(dst));
    if (r.fate != RouteFate::kDelivered) continue;
    for (PortId c : r.channels) ++load[c];
  }
  return load;
}

// Large switch counts with few hosts make the analyses walk single routes instead of pushing
// counts through the whole tree; both ways must give the same numbers.
inline Fabric MixedFabric(uint64_t seed) {
  if (seed % 5 == 0) return FatTree2(3, 2, 3);
  if (seed % 5 == 1) return RandomIrregular(seed, 34, 60);
  return RandomIrregular(seed);
}

}  // namespace sar::testfab
