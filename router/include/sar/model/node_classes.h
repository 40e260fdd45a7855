// Node classes: which HCAs are compute nodes, storage (I/O) nodes or other nodes.
//
// DFSSSP and SAR route the classes in turn (compute first, then storage, then the rest), as
// OpenSM's dfsssp does with its cn_guid_file / io_guid_file options. Those files list one GUID
// per line (port or node GUID, hex with or without 0x; '#' starts a comment; blank lines are
// ignored); ReadGuidFile (sar/io/guid_file.h) reads them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/status.h"

namespace sar {

enum class NodeClass : uint8_t { kCompute = 0, kStorage = 1, kOther = 2 };

/// The class of every node (indexed by NodeId; switches are kOther). Empty = every HCA is a
/// compute node, which is what engines assume when no class files are given.
struct NodeClasses {
  std::vector<NodeClass> of_node;
  NodeClass get(NodeId n) const { return of_node.empty() ? NodeClass::kCompute : of_node[n]; }
};

/// How many nodes of each class a fabric has (sar-route info).
struct NodeClassCounts {
  int hosts = 0;              // distinct host names of HCAs (a host with several HCAs once)
  int host_hcas = 0;          // HCAs that belong to a host
  int nameless_hcas = 0;      // of those, named by their GUID (IsNamelessDescription)
  int aggregation_nodes = 0;  // HCAs that are Aggregation Nodes
};
NodeClassCounts CountNodeClasses(const Fabric& fabric);

/// Classes from the two lists (either may be null): HCAs in `io` are storage; if `cn` is given,
/// HCAs in it are compute and the other HCAs are other; without `cn` every HCA not in `io` is
/// compute. A GUID matches an HCA by node GUID or by any of its port GUIDs. GUIDs the fabric
/// does not have go to *unknown (if given), as hex strings, once each; they are not an error.
/// An HCA in both lists is an InvalidArgument error naming it.
Status MakeNodeClasses(const Fabric& fabric, const std::vector<Guid>* cn,
                       const std::vector<Guid>* io, NodeClasses* out,
                       std::vector<std::string>* unknown = nullptr);

}  // namespace sar
