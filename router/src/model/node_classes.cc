#include "sar/model/node_classes.h"

#include <unordered_map>
#include <unordered_set>

namespace sar {

NodeClassCounts CountNodeClasses(const Fabric& fabric) {
  NodeClassCounts c;
  std::unordered_set<std::string_view> hosts;
  for (NodeId h : fabric.hcas()) {
    if (fabric.is_aggregation_node(h)) {
      ++c.aggregation_nodes;
      continue;
    }
    ++c.host_hcas;
    c.nameless_hcas += IsNamelessDescription(fabric.description(h));
    hosts.insert(fabric.hostname(h));
  }
  c.hosts = static_cast<int>(hosts.size());
  return c;
}

Status MakeNodeClasses(const Fabric& fabric, const std::vector<Guid>* cn,
                       const std::vector<Guid>* io, NodeClasses* out,
                       std::vector<std::string>* unknown) {
  // Each GUID to the HCA it names (node GUID or any port GUID); kNoNode if none.
  auto hca_of = [&fabric](Guid g) {
    NodeId n = fabric.FindByNodeGuid(g);
    if (n == kNoNode) n = fabric.FindByPortGuid(g).node;
    return n != kNoNode && !fabric.is_switch(n) ? n : kNoNode;
  };
  std::unordered_set<Guid> reported;
  auto mark = [&](const std::vector<Guid>& list, std::vector<uint8_t>* in_list) {
    in_list->assign(fabric.num_nodes(), 0);
    for (Guid g : list) {
      const NodeId n = hca_of(g);
      if (n != kNoNode) {
        (*in_list)[n] = 1;
      } else if (unknown != nullptr && reported.insert(g).second) {
        unknown->push_back(GuidString(g));
      }
    }
  };
  std::vector<uint8_t> in_cn, in_io;
  if (cn != nullptr) mark(*cn, &in_cn);
  if (io != nullptr) mark(*io, &in_io);

  NodeClasses result;
  result.of_node.assign(fabric.num_nodes(), NodeClass::kOther);
  for (NodeId h : fabric.hcas()) {
    const bool storage = io != nullptr && in_io[h];
    const bool compute = cn != nullptr && in_cn[h];
    if (storage && compute) {
      return Status::InvalidArgument("HCA '" + fabric.name(h) + "' (" +
                                     GuidString(fabric.node_guid(h)) +
                                     ") is listed as both compute and storage");
    }
    if (storage) {
      result.of_node[h] = NodeClass::kStorage;
    } else if (compute || cn == nullptr) {
      result.of_node[h] = NodeClass::kCompute;
    }
  }
  *out = std::move(result);
  return Status::OK();
}

}  // namespace sar
