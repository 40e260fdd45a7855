// Node classes: which HCAs are compute nodes, storage (I/O) nodes or other nodes.
//
// DFSSSP and SAR route the classes in turn (compute first, then storage, then the rest), as
// OpenSM's dfsssp does with its cn_guid_file / io_guid_file options. Those files list one GUID
// per line (port or node GUID, hex with or without 0x; '#' starts a comment; blank lines are
// ignored), and we read the same format.
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

// What a CA's NodeDescription says it is (docs/formats.md, "Node classes"). Fabric applies these
// when a node is added (Fabric::hostname, Fabric::is_aggregation_node).

/// A SHARP Aggregation Node: the description contains "Aggregation Node" (NVIDIA's switches
/// describe theirs "Mellanox Technologies Aggregation Node").
bool IsAggregationNodeDescription(std::string_view description);
/// The description names no host: it is empty, or its first word is a chip model, "MT" and
/// digits (the firmware's default, "MT4129 ConnectX7 Mellanox Technologies", before a host
/// sets its own).
bool IsNamelessDescription(std::string_view description);
/// The host name of a nameless HCA: "H-" and its node GUID as 16 lower-case hex digits (the
/// name ibnetdiscover gives the node, "H-e09d730300858468").
std::string NamelessHostName(Guid node_guid);
/// The first blank-separated word of `text` ("" if none).
std::string_view FirstWord(std::string_view text);

/// How many nodes of each class a fabric has (sar-route info).
struct NodeClassCounts {
  int hosts = 0;              // distinct host names of HCAs (a host with several HCAs once)
  int host_hcas = 0;          // HCAs that belong to a host
  int nameless_hcas = 0;      // of those, named by their GUID (IsNamelessDescription)
  int aggregation_nodes = 0;  // HCAs that are Aggregation Nodes
};
NodeClassCounts CountNodeClasses(const Fabric& fabric);

/// The largest GUID file ReadGuidFile reads: a subnet has at most 49,151 LIDs, so a list of all
/// its port GUIDs ("0x" + 16 hex digits a line) is under 1 MB; 16 MiB leaves room for comments.
inline constexpr size_t kMaxGuidFileBytes = size_t{16} << 20;

/// Reads a GUID list file. Malformed lines fail with "file:line: expected ...". The file is
/// opened as ReadJobMapping opens a mapping: a regular file, not a symlink, at most `max_bytes`,
/// quoted in errors only if FileInfo::may_quote() (sar/io/file_util.h).
Status ReadGuidFile(const std::string& path, std::vector<Guid>* guids,
                    size_t max_bytes = kMaxGuidFileBytes);

/// Classes from the two lists (either may be null): HCAs in `io` are storage; if `cn` is given,
/// HCAs in it are compute and the other HCAs are other; without `cn` every HCA not in `io` is
/// compute. A GUID matches an HCA by node GUID or by any of its port GUIDs. GUIDs the fabric
/// does not have go to *unknown (if given), as hex strings, once each; they are not an error.
/// An HCA in both lists is an InvalidArgument error naming it.
Status MakeNodeClasses(const Fabric& fabric, const std::vector<Guid>* cn,
                       const std::vector<Guid>* io, NodeClasses* out,
                       std::vector<std::string>* unknown = nullptr);

}  // namespace sar
