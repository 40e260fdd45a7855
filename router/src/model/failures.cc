#include "sar/model/failures.h"

#include <random>
#include <utility>

namespace sar {

namespace {

// Uniform index in [0, n) by rejection, so the sequence depends only on mt19937_64 (fully
// specified by the standard) and not on a library's distribution implementation.
uint64_t UniformIndex(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;  // largest multiple of n, exclusive
  uint64_t x;
  do {
    x = rng();
  } while (x >= limit);
  return x % n;
}

// The working state of a pick: which switches are gone and which port slots have a cut cable.
struct Damage {
  std::vector<char> removed;  // per node
  std::vector<char> cut;      // per port slot, set on both ends of a cut cable
};

bool Alive(const Fabric& f, const Damage& d, PortId slot) {
  const PortId peer = f.peer_id(slot);
  return peer != kNoPort && !d.cut[slot] && !d.removed[f.port_node(slot)] &&
         !d.removed[f.port_node(peer)];
}

// True if every port in `terminals` (HCA ports) is still cabled and reaches all the others.
// Traffic leaves an HCA port into its switch and an HCA does not forward, so that means: all
// their switches lie in one component of the live switch-to-switch graph (BFS).
bool TerminalsConnected(const Fabric& f, const Damage& d, const std::vector<PortId>& terminals) {
  if (terminals.empty()) return true;
  for (PortId t : terminals) {
    if (!Alive(f, d, t)) return false;
  }
  std::vector<char> seen(f.num_nodes(), 0);
  std::vector<NodeId> queue;
  queue.reserve(f.num_switches());
  const NodeId first = f.port_node(f.peer_id(terminals[0]));
  queue.push_back(first);
  seen[first] = 1;
  for (size_t head = 0; head < queue.size(); ++head) {
    const NodeId n = queue[head];
    for (int p = 1; p <= f.num_ports(n); ++p) {
      const PortId slot = f.port_id(n, p);
      if (!Alive(f, d, slot)) continue;
      const NodeId next = f.port_node(f.peer_id(slot));
      if (!seen[next] && f.is_switch(next)) {
        seen[next] = 1;
        queue.push_back(next);
      }
    }
  }
  for (PortId t : terminals) {
    if (!seen[f.port_node(f.peer_id(t))]) return false;
  }
  return true;
}

// The cabled HCA ports: the endpoints that must stay mutually reachable.
std::vector<PortId> EndpointSlots(const Fabric& f) {
  std::vector<PortId> out;
  for (const PortRef& p : f.Endpoints()) out.push_back(f.port_id(p));
  return out;
}

bool HasHca(const Fabric& f, NodeId sw) {
  for (int p = 1; p <= f.num_ports(sw); ++p) {
    const PortId peer = f.peer_id(f.port_id(sw, p));
    if (peer != kNoPort && !f.is_switch(f.port_node(peer))) return true;
  }
  return false;
}

}  // namespace

Status PickRandomFailures(const Fabric& fabric, const RandomFailureOptions& options,
                          FailureSet* out) {
  if (options.num_links < 0 || options.num_switches < 0) {
    return Status::InvalidArgument("failure counts must not be negative");
  }
  if (options.num_switches > fabric.num_switches()) {
    return Status::InvalidArgument("asked to remove " + std::to_string(options.num_switches) +
                                   " switches, the fabric has " +
                                   std::to_string(fabric.num_switches()));
  }
  std::mt19937_64 rng(options.seed);
  Damage damage{std::vector<char>(fabric.num_nodes(), 0),
                std::vector<char>(fabric.num_port_slots(), 0)};
  const std::vector<PortId> terminals = EndpointSlots(fabric);
  FailureSet result;

  // Switches first, so that cables are then only picked among the survivors.
  std::vector<NodeId> switch_pool;
  switch_pool.reserve(fabric.num_switches());
  for (NodeId sw : fabric.switches()) {
    // Removing a switch that has HCAs cuts those HCAs' cables; never allowed when keeping them.
    if (!options.keep_hcas_connected || !HasHca(fabric, sw)) switch_pool.push_back(sw);
  }
  int picked = 0;
  while (picked < options.num_switches && !switch_pool.empty()) {
    const size_t i = UniformIndex(rng, switch_pool.size());
    const NodeId sw = switch_pool[i];
    switch_pool[i] = switch_pool.back();
    switch_pool.pop_back();
    damage.removed[sw] = 1;
    if (options.keep_hcas_connected && !TerminalsConnected(fabric, damage, terminals)) {
      damage.removed[sw] = 0;
      continue;
    }
    result.switches.push_back(fabric.name(sw));
    ++picked;
  }
  if (picked < options.num_switches) {
    return Status::Failed("cannot remove " + std::to_string(options.num_switches) +
                          " switches without disconnecting HCAs: only " + std::to_string(picked) +
                          " could be removed");
  }

  // Each switch-to-switch cable once, by its lower port slot, among surviving switches.
  std::vector<PortId> cable_pool;
  for (PortId slot = 0; slot < fabric.num_port_slots(); ++slot) {
    if (fabric.is_inter_switch(slot) && slot < fabric.peer_id(slot) &&
        Alive(fabric, damage, slot)) {
      cable_pool.push_back(slot);
    }
  }
  if (options.num_links > static_cast<int>(cable_pool.size())) {
    return Status::InvalidArgument("asked to cut " + std::to_string(options.num_links) +
                                   " switch-to-switch cables, only " +
                                   std::to_string(cable_pool.size()) + " exist" +
                                   (options.num_switches > 0 ? " after the switch removals" : ""));
  }
  picked = 0;
  while (picked < options.num_links && !cable_pool.empty()) {
    const size_t i = UniformIndex(rng, cable_pool.size());
    const PortId slot = cable_pool[i];
    cable_pool[i] = cable_pool.back();
    cable_pool.pop_back();
    const PortId peer = fabric.peer_id(slot);
    damage.cut[slot] = damage.cut[peer] = 1;
    if (options.keep_hcas_connected && !TerminalsConnected(fabric, damage, terminals)) {
      damage.cut[slot] = damage.cut[peer] = 0;
      continue;
    }
    const PortRef end = fabric.port_ref(slot);
    result.links.emplace_back(fabric.name(end.node), end.port);
    ++picked;
  }
  if (picked < options.num_links) {
    return Status::Failed("cannot cut " + std::to_string(options.num_links) +
                          " switch-to-switch cables without disconnecting HCAs: only " +
                          std::to_string(picked) + " could be cut");
  }
  *out = std::move(result);
  return Status::OK();
}

Status ApplyFailures(const Fabric& in, const FailureSet& failures, Fabric* out) {
  std::vector<char> removed(in.num_nodes(), 0);
  for (const std::string& name : failures.switches) {
    const NodeId n = in.FindByName(name);
    if (n == kNoNode) return Status::NotFound("no switch named '" + name + "' to remove");
    if (!in.is_switch(n)) {
      return Status::InvalidArgument("'" + name + "' is an HCA, only switches can be removed");
    }
    removed[n] = 1;
  }
  std::vector<char> cut(in.num_port_slots(), 0);
  for (const auto& [name, port] : failures.links) {
    const NodeId n = in.FindByName(name);
    if (n == kNoNode) return Status::NotFound("no node named '" + name + "' for a cable cut");
    if (port < 1 || port > in.num_ports(n)) {
      return Status::NotFound("node '" + name + "' has no port " + std::to_string(port) +
                              " (ports 1.." + std::to_string(in.num_ports(n)) + ")");
    }
    const PortId slot = in.port_id(n, port);
    const PortId peer = in.peer_id(slot);
    if (peer == kNoPort) {
      return Status::NotFound("port " + std::to_string(port) + " of '" + name +
                              "' has no cable to cut");
    }
    cut[slot] = cut[peer] = 1;
  }

  Fabric result;
  std::vector<NodeId> new_id(in.num_nodes(), kNoNode);
  std::string err;
  for (NodeId n = 0; n < in.num_nodes(); ++n) {
    if (removed[n]) continue;
    new_id[n] = result.AddNode(in.kind(n), in.num_ports(n), in.node_guid(n), in.name(n),
                               in.description(n), &err);
    if (new_id[n] == kNoNode) return Status::Failed("copying the fabric: " + err);
    for (int p = 0; p <= in.num_ports(n); ++p) {
      const Guid g = in.port_guid({n, p});
      if (result.port_guid({new_id[n], p}) != g) result.set_port_guid({new_id[n], p}, g);
      result.set_port_rate({new_id[n], p}, in.port_rate(in.port_id(n, p)));
    }
  }
  for (PortId slot = 0; slot < in.num_port_slots(); ++slot) {
    const PortId peer = in.peer_id(slot);
    if (peer == kNoPort || peer < slot || cut[slot]) continue;
    const PortRef a = in.port_ref(slot), b = in.port_ref(peer);
    if (removed[a.node] || removed[b.node]) continue;
    SAR_RETURN_IF_ERROR(result.Connect({new_id[a.node], a.port}, {new_id[b.node], b.port}));
  }
  for (PortId slot = 0; slot < in.num_port_slots(); ++slot) {
    const PortRef p = in.port_ref(slot);
    if (removed[p.node] || in.base_lid(p) == 0) continue;
    SAR_RETURN_IF_ERROR(result.SetLid({new_id[p.node], p.port}, in.base_lid(p), in.lmc(p)));
  }
  *out = std::move(result);
  return Status::OK();
}

bool HcasConnected(const Fabric& fabric) {
  const Damage none{std::vector<char>(fabric.num_nodes(), 0),
                    std::vector<char>(fabric.num_port_slots(), 0)};
  return TerminalsConnected(fabric, none, EndpointSlots(fabric));
}

}  // namespace sar
