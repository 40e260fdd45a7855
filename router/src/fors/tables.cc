// FORS on a real fabric: the degraded FT(2), its LMC tables and the application's LID table.
#include <cstdio>
#include <deque>
#include <string>

#include "sar/analysis/route_tracer.h"
#include "sar/fors/fors_tables.h"
#include "sar/model/failures.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"

namespace sar {
namespace {

std::string Name(const char* fmt, int index) {
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, index);
  return buf;
}

// Node ids of hosts, leaves and spines by the generator's names, so the tables never depend on
// node-id order (ApplyFailures may renumber).
struct Ft2Nodes {
  std::vector<NodeId> host, leaf, spine;
};

Status FindFt2Nodes(const Fabric& fabric, int m0, int m1, Ft2Nodes* out) {
  out->host.resize(static_cast<size_t>(m0) * m1);
  out->leaf.resize(m1);
  out->spine.resize(m0);
  auto find = [&](const std::string& name, NodeId* id) {
    *id = fabric.FindByName(name);
    return *id == kNoNode ? Status::InvalidArgument("fabric has no node '" + name +
                                                    "': not an FT(2;M0,M1) from the generator")
                          : Status::OK();
  };
  for (size_t s = 0; s < out->host.size(); ++s) {
    SAR_RETURN_IF_ERROR(find(Name("h%05d", static_cast<int>(s)), &out->host[s]));
  }
  for (int l = 0; l < m1; ++l) SAR_RETURN_IF_ERROR(find(Name("leaf%03d", l), &out->leaf[l]));
  for (int k = 0; k < m0; ++k) SAR_RETURN_IF_ERROR(find(Name("spine%03d", k), &out->spine[k]));
  return Status::OK();
}

}  // namespace

int ForsLmc(int m0) {
  int lmc = 0;
  while ((1 << lmc) < m0) ++lmc;
  return lmc;
}

Status BuildForsFabric(int m0, int m1, const std::vector<FailedLink>& failed, Fabric* out) {
  Fabric full;
  SAR_RETURN_IF_ERROR(GenerateFatTree2(m0, m1, 1, GenerateOptions{}, &full));
  FailureSet cuts;
  for (const FailedLink& l : failed) {
    if (l.leaf < 0 || l.leaf >= m1 || l.spine < 0 || l.spine >= m0) {
      return Status::InvalidArgument("failed link " + std::to_string(l.leaf) + " " +
                                     std::to_string(l.spine) + " out of range");
    }
    cuts.links.emplace_back(Name("leaf%03d", l.leaf), m0 + 1 + l.spine);
  }
  Fabric degraded;
  SAR_RETURN_IF_ERROR(ApplyFailures(full, cuts, &degraded));
  LidOptions lids;
  lids.lmc = ForsLmc(m0);
  SAR_RETURN_IF_ERROR(AssignLids(lids, &degraded));
  *out = std::move(degraded);
  return Status::OK();
}

Status BuildForsLfts(const Fabric& fabric, int m0, int m1, const std::vector<FailedLink>& failed,
                     LftSet* out) {
  Ft2Nodes nodes;
  SAR_RETURN_IF_ERROR(FindFt2Nodes(fabric, m0, m1, &nodes));
  const std::vector<uint8_t> broken = FailedMask(m0, m1, failed);
  // Trust the fabric, not only the list: a cable must really be there to be used.
  auto works = [&](int leaf, int spine) {
    return !broken[static_cast<size_t>(leaf) * m0 + spine] &&
           fabric.peer({nodes.leaf[leaf], m0 + 1 + spine}).node == nodes.spine[spine];
  };
  LftSet lfts(fabric);
  for (int s = 0; s < m0 * m1; ++s) {
    const PortRef hca{nodes.host[s], 1};
    const Lid base = fabric.base_lid(hca);
    const int lids = 1 << fabric.lmc(hca);
    if (base == 0) return Status::InvalidArgument("host " + std::to_string(s) + " has no LID");
    const int dl = s / m0;
    for (int l = 0; l < m1; ++l) {
      const int sw = fabric.switch_index(nodes.leaf[l]);
      for (int k = 0; k < lids; ++k) {
        if (l == dl) {
          lfts.set_port(sw, base + k, static_cast<uint8_t>(s % m0 + 1));
          continue;
        }
        int spine = -1;
        for (int i = 0; i < m0 && spine < 0; ++i) {
          const int c = (k + i) % m0;
          if (works(l, c) && works(dl, c)) spine = c;
        }
        if (spine < 0) {
          return Status::Failed("leaves " + std::to_string(l) + " and " + std::to_string(dl) +
                                " share no working spine");
        }
        lfts.set_port(sw, base + k, static_cast<uint8_t>(m0 + 1 + spine));
      }
    }
    for (int k = 0; k < m0; ++k) {
      if (!works(dl, k)) continue;
      const int sw = fabric.switch_index(nodes.spine[k]);
      for (int x = 0; x < lids; ++x) lfts.set_port(sw, base + x, static_cast<uint8_t>(dl + 1));
    }
  }
  // Switch LIDs: BFS from each target switch; every other switch takes its lowest port towards a
  // neighbour one hop closer (so routes are loop-free and min-hop).
  const int num_sw = fabric.num_switches();
  std::vector<int> dist(num_sw);
  for (int t = 0; t < num_sw; ++t) {
    const NodeId target = fabric.switches()[t];
    const Lid lid = fabric.switch_lid(target);
    if (lid == 0) continue;
    std::fill(dist.begin(), dist.end(), -1);
    dist[t] = 0;
    std::deque<int> queue{t};
    while (!queue.empty()) {
      const int x = queue.front();
      queue.pop_front();
      const NodeId node = fabric.switches()[x];
      for (int p = 1; p <= fabric.num_ports(node); ++p) {
        const PortRef peer = fabric.peer({node, p});
        if (!peer.valid() || !fabric.is_switch(peer.node)) continue;
        const int y = fabric.switch_index(peer.node);
        if (dist[y] < 0) {
          dist[y] = dist[x] + 1;
          queue.push_back(y);
        }
      }
    }
    for (int x = 0; x < num_sw; ++x) {
      if (x == t) {
        lfts.set_port(x, lid, 0);
        continue;
      }
      if (dist[x] < 0) continue;
      const NodeId node = fabric.switches()[x];
      for (int p = 1; p <= fabric.num_ports(node); ++p) {
        const PortRef peer = fabric.peer({node, p});
        if (peer.valid() && fabric.is_switch(peer.node) &&
            dist[fabric.switch_index(peer.node)] == dist[x] - 1) {
          lfts.set_port(x, lid, static_cast<uint8_t>(p));
          break;
        }
      }
    }
  }
  *out = std::move(lfts);
  return Status::OK();
}

Lid ForsDestinationLid(const Fabric& fabric, const Transfer& t) {
  const NodeId host = fabric.FindByName(Name("h%05d", t.dst));
  if (host == kNoNode) return 0;
  const Lid base = fabric.base_lid({host, 1});
  return t.spine < 0 ? base : base + static_cast<Lid>(t.spine);
}

std::string FormatForsLidTable(const Fabric& fabric, const ForsPlan& plan) {
  std::vector<Lid> base(static_cast<size_t>(plan.m0) * plan.m1, 0);
  for (size_t s = 0; s < base.size(); ++s) {
    const NodeId host = fabric.FindByName(Name("h%05d", static_cast<int>(s)));
    if (host != kNoNode) base[s] = fabric.base_lid({host, 1});
  }
  std::string out = "phase,src,dst,dlid\n";
  char buf[64];
  for (size_t p = 0; p < plan.phases.size(); ++p) {
    for (const Transfer& t : plan.phases[p]) {
      const Lid lid = base[t.dst] + (t.spine < 0 ? 0 : static_cast<Lid>(t.spine));
      const int n = std::snprintf(buf, sizeof buf, "%zu,%d,%d,%u\n", p, t.src, t.dst, lid);
      out.append(buf, n);
    }
  }
  return out;
}

Status CheckPhasesOnTables(const Fabric& fabric, const LftSet& lfts, const ForsPlan& plan) {
  SAR_RETURN_IF_ERROR(lfts.CheckFits(fabric));
  Ft2Nodes nodes;
  SAR_RETURN_IF_ERROR(FindFt2Nodes(fabric, plan.m0, plan.m1, &nodes));
  const RouteTracer tracer(fabric, lfts);
  std::vector<int64_t> used(fabric.num_port_slots(), -1);  // phase that last used a channel
  for (size_t p = 0; p < plan.phases.size(); ++p) {
    for (const Transfer& t : plan.phases[p]) {
      const Lid lid = ForsDestinationLid(fabric, t);
      RouteFate fate;
      const std::vector<PortId> path = tracer.Path({nodes.host[t.src], 1}, lid, &fate);
      const std::string what = "phase " + std::to_string(p) + ": h" + std::to_string(t.src) +
                               " -> lid " + std::to_string(lid) + " (server " +
                               std::to_string(t.dst) + ")";
      if (fate != RouteFate::kDelivered) return Status::Failed(what + " is not delivered");
      if (fabric.port_node(fabric.peer_id(path.back())) != nodes.host[t.dst]) {
        return Status::Failed(what + " reaches the wrong host");
      }
      for (PortId c : path) {
        if (used[c] == static_cast<int64_t>(p)) {
          const PortRef r = fabric.port_ref(c);
          return Status::Failed(what + " shares the link leaving " + fabric.name(r.node) + "[" +
                                std::to_string(r.port) + "]");
        }
        used[c] = static_cast<int64_t>(p);
      }
    }
  }
  return Status::OK();
}

}  // namespace sar
