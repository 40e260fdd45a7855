#include "sar/model/fabric_order.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

namespace sar {

Status CanonicalNodeOrder(const Fabric& in, Fabric* out) {
  std::vector<NodeId> order(in.num_nodes());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](NodeId a, NodeId b) {
    if (in.is_switch(a) != in.is_switch(b)) return in.is_switch(a);
    return in.node_guid(a) < in.node_guid(b);
  });
  Fabric f;
  std::vector<NodeId> new_id(in.num_nodes(), kNoNode);
  for (NodeId n : order) {
    std::string err;
    new_id[n] = f.AddNode(in.kind(n), in.num_ports(n), in.node_guid(n), in.name(n),
                          in.description(n), &err);
    if (new_id[n] == kNoNode) return Status::InvalidArgument(err);
  }
  for (NodeId n : order) {
    for (int p = 0; p <= in.num_ports(n); ++p) {
      const PortRef old_ref{n, p};
      const PortRef ref{new_id[n], p};
      f.set_port_guid(ref, in.port_guid(old_ref));
      f.set_port_rate(ref, in.port_rate(in.port_id(old_ref)));
      const Lid base = in.base_lid(old_ref);
      // A switch's LID lives on port 0; only the port that owns a LID range sets it.
      if (base != 0 && in.lid_owner(base) == old_ref) {
        SAR_RETURN_IF_ERROR(f.SetLid(ref, base, in.lmc(old_ref)));
      }
    }
  }
  for (NodeId n : order) {
    for (int p = 1; p <= in.num_ports(n); ++p) {
      const PortRef peer = in.peer({n, p});
      // Each cable once: from the end with the smaller (new id, port).
      if (!peer.valid() || std::pair(new_id[peer.node], peer.port) < std::pair(new_id[n], p)) {
        continue;
      }
      SAR_RETURN_IF_ERROR(f.Connect({new_id[n], p}, {new_id[peer.node], peer.port}));
    }
  }
  *out = std::move(f);
  return Status::OK();
}

}  // namespace sar
