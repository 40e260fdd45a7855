#include "engines/switch_graph.h"

#include <algorithm>
#include <cstdio>

namespace sar::internal {

SwitchGraph BuildSwitchGraph(const Fabric& fabric) {
  SwitchGraph g;
  g.num_switches = fabric.num_switches();
  g.arc_begin.assign(g.num_switches + 1, 0);
  g.hcas_on_switch.assign(g.num_switches, 0);
  g.switch_guid.assign(g.num_switches, 0);
  for (int s = 0; s < g.num_switches; ++s) {
    const NodeId n = fabric.switches()[s];
    g.switch_guid[s] = fabric.node_guid(n);
    g.arc_begin[s] = static_cast<int>(g.arc_to.size());
    for (int p = 1; p <= fabric.num_ports(n); ++p) {
      const PortId c = fabric.port_id(n, p);
      const PortId peer = fabric.peer_id(c);
      if (peer == kNoPort) continue;
      const NodeId other = fabric.port_node(peer);
      if (!fabric.is_switch(other)) {
        ++g.hcas_on_switch[s];
        continue;
      }
      g.arc_to.push_back(fabric.switch_index(other));
      g.arc_port.push_back(static_cast<uint8_t>(p));
      g.arc_channel.push_back(c);
    }
  }
  g.arc_begin[g.num_switches] = static_cast<int>(g.arc_to.size());

  // The reverse arc is the one whose channel is the peer of ours.
  std::vector<int> arc_of_channel(fabric.num_port_slots(), -1);
  for (int a = 0; a < static_cast<int>(g.arc_channel.size()); ++a) {
    arc_of_channel[g.arc_channel[a]] = a;
  }
  g.arc_reverse.resize(g.arc_channel.size());
  for (int a = 0; a < static_cast<int>(g.arc_channel.size()); ++a) {
    g.arc_reverse[a] = arc_of_channel[fabric.peer_id(g.arc_channel[a])];
  }

  for (const PortRef& e : fabric.Endpoints()) {
    const PortRef peer = fabric.peer(e);
    Destination d;
    d.node = e.node;
    d.port = e.port;
    d.base_lid = fabric.base_lid(e);
    d.num_lids = 1 << fabric.lmc(e);
    d.sw = fabric.is_switch(peer.node) ? fabric.switch_index(peer.node) : -1;
    d.sw_port = static_cast<uint8_t>(peer.port);
    g.dests.push_back(d);
  }
  g.num_endpoint_dests = static_cast<int>(g.dests.size());
  for (int s = 0; s < g.num_switches; ++s) {
    const NodeId n = fabric.switches()[s];
    Destination d;
    d.node = n;
    d.base_lid = fabric.switch_lid(n);
    d.num_lids = 1;
    d.sw = s;
    d.is_switch = true;
    g.dests.push_back(d);
  }
  return g;
}

void HopsTo(const SwitchGraph& g, int to, std::vector<int>* hops) {
  hops->assign(g.num_switches, -1);
  std::vector<int> queue;
  queue.reserve(g.num_switches);
  (*hops)[to] = 0;
  queue.push_back(to);
  for (size_t head = 0; head < queue.size(); ++head) {
    const int s = queue[head];
    for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
      const int t = g.arc_to[a];
      if ((*hops)[t] >= 0) continue;
      (*hops)[t] = (*hops)[s] + 1;
      queue.push_back(t);
    }
  }
}

int SwitchComponents(const SwitchGraph& g, std::vector<int>* component) {
  component->assign(g.num_switches, -1);
  int next = 0;
  std::vector<int> stack;
  for (int root = 0; root < g.num_switches; ++root) {
    if ((*component)[root] >= 0) continue;
    (*component)[root] = next;
    stack.push_back(root);
    while (!stack.empty()) {
      const int s = stack.back();
      stack.pop_back();
      for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
        if ((*component)[g.arc_to[a]] >= 0) continue;
        (*component)[g.arc_to[a]] = next;
        stack.push_back(g.arc_to[a]);
      }
    }
    ++next;
  }
  std::vector<bool> has_hca(next, false);
  for (const Destination& d : g.dests) {
    if (!d.is_switch && d.sw >= 0) has_hca[(*component)[d.sw]] = true;
  }
  return static_cast<int>(std::count(has_hca.begin(), has_hca.end(), true));
}

Status CheckEndpointReach(const Fabric& fabric, const SwitchGraph& g,
                          const std::function<bool(int s, int t)>& reachable,
                          bool allow_disconnected, const std::string& why,
                          std::vector<std::string>* notes) {
  // One endpoint per HCA-hosting switch is enough to name a pair; the count weighs by hosts.
  std::vector<int> some_dest(g.num_switches, -1);
  for (int d = 0; d < g.num_endpoint_dests; ++d) {
    const int sw = g.dests[d].sw;
    if (sw >= 0 && some_dest[sw] < 0) some_dest[sw] = d;
  }
  uint64_t pairs = 0;
  std::string example;
  for (int t = 0; t < g.num_switches; ++t) {
    if (some_dest[t] < 0) continue;
    for (int s = 0; s < g.num_switches; ++s) {
      if (s == t || some_dest[s] < 0 || reachable(s, t)) continue;
      pairs += static_cast<uint64_t>(g.hcas_on_switch[s]) * g.hcas_on_switch[t];
      if (!example.empty()) continue;
      const Destination& from = g.dests[some_dest[s]];
      const Destination& to = g.dests[some_dest[t]];
      char lid[16];
      std::snprintf(lid, sizeof(lid), "0x%04x", to.base_lid);
      example = fabric.name(from.node) + " cannot reach " + fabric.name(to.node) + " (lid " + lid +
                "): " + why + " from " + fabric.name(fabric.switches()[s]) + " to " +
                fabric.name(fabric.switches()[t]);
      if (!allow_disconnected) return Status::Failed(example);
    }
  }
  if (pairs > 0) {
    notes->push_back(std::to_string(pairs) + " endpoint pairs have no route, e.g. " + example);
  }
  return Status::OK();
}

}  // namespace sar::internal
