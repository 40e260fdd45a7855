// Host -> leaf switch: which switch each SLURM host's HCA is cabled to. Built from the fabric
// (an ibnetdiscover/ibsim topology file; host = first word of the HCA's node description, or a
// name from a node-name-map file) or from SLURM's topology.conf (leaf = a switch with Nodes=).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sar/fabric.h"
#include "sar/status.h"

namespace sar::filterd {

class LeafMap {
 public:
  static constexpr int kUnknown = -1;

  /// Adds `host` under leaf `leaf_name`; a host seen twice keeps its first leaf (an HCA with two
  /// ports on two leaves is still one host, and any of its leaves tells whether a job spans).
  void Add(std::string_view host, std::string_view leaf_name);

  /// The leaf index of `host`, kUnknown if the topology does not know it.
  int LeafOf(std::string_view host) const {
    auto it = leaf_of_.find(std::string(host));
    return it == leaf_of_.end() ? kUnknown : it->second;
  }
  int num_leaves() const { return static_cast<int>(leaf_names_.size()); }
  int num_hosts() const { return static_cast<int>(leaf_of_.size()); }
  const std::string& leaf_name(int leaf) const { return leaf_names_[leaf]; }
  /// Every host, in no particular order (for "known to the fabric, not to SLURM" reports).
  std::vector<std::string> Hosts() const;

 private:
  std::unordered_map<std::string, int> leaf_of_;
  std::unordered_map<std::string, int> leaf_index_;
  std::vector<std::string> leaf_names_;
};

/// A node-name-map file as OpenSM reads it: "<guid> \"<name>\"" per line, '#' comments. Maps a
/// node GUID to the host name to use instead of the node description's first word.
Status ReadNodeNameMap(const std::string& path, std::unordered_map<Guid, std::string>* out);

/// Host -> leaf from the fabric: every cabled HCA port's peer switch. `name_map` may be empty.
LeafMap LeafMapFromFabric(const Fabric& fabric,
                          const std::unordered_map<Guid, std::string>& name_map);

/// Host -> leaf from OpenSM's subnet dump (opensm-subnet.lst in its dump_files_dir: one line
/// per link, "{ <type> ... NodeGUID:<hex> ... {<description>} LID:.. PN:.. } { ... } ..."). Every
/// link between a CA and a switch maps the CA's host (first word of its description, or its
/// `name_map` name) to that switch, named by its description and GUID. Errors carry "path:line:".
Status ParseSubnetLst(std::string_view text, const std::string& source,
                      const std::unordered_map<Guid, std::string>& name_map, LeafMap* out);
Status ReadSubnetLst(const std::string& path, const std::unordered_map<Guid, std::string>& name_map,
                     LeafMap* out);

/// Host -> leaf from topology.conf ("SwitchName=s1 Nodes=n[1-16]"; lines with Switches= only
/// describe upper levels and are skipped). Errors carry "path:line:".
Status ParseTopologyConf(std::string_view text, const std::string& source, LeafMap* out);
Status ReadTopologyConf(const std::string& path, LeafMap* out);

}  // namespace sar::filterd
