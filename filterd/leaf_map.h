// Host -> leaf switches: which switch each of a SLURM host's HCA ports is cabled to, and the
// port's rail (sar/model/jobs.h RailsOfPorts, the router's rule). Built from the fabric (an
// ibnetdiscover/ibsim topology file; host = first word of the HCA's node description, or a name
// from a node-name-map file), from OpenSM's subnet dump, or from SLURM's topology.conf (leaf = a
// switch with Nodes=; it names no HCAs, so a host's ports there are on every rail).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/status.h"

namespace sar::filterd {

class LeafMap {
 public:
  static constexpr int kUnknown = -1;

  /// One HCA port of a host: its leaf index and rail (kAnyRail until AssignRails, and for Add).
  struct Port {
    int leaf;
    int rail;
  };

  /// Adds `host` under leaf `leaf_name`, a port without rail (topology.conf); a host listed
  /// under one leaf twice has one port there.
  void Add(std::string_view host, std::string_view leaf_name);
  /// Adds an HCA port of `host` on `leaf_name`, named by its node `description` and `guid` for
  /// AssignRails.
  void AddHcaPort(std::string_view host, std::string_view leaf_name, std::string_view description,
                  Guid guid);
  /// Gives the ports added by AddHcaPort their rails (RailsOfPorts over all of them).
  void AssignRails();

  /// The leaf index of `host`'s first port, kUnknown if the topology does not know it.
  int LeafOf(std::string_view host) const {
    const std::vector<Port>* p = PortsOf(host);
    return p == nullptr ? kUnknown : p->front().leaf;
  }
  /// All HCA ports of `host`, nullptr if the topology does not know it.
  const std::vector<Port>* PortsOf(std::string_view host) const {
    auto it = host_index_.find(std::string(host));
    return it == host_index_.end() ? nullptr : &ports_[it->second];
  }
  int num_leaves() const { return static_cast<int>(leaf_names_.size()); }
  int num_hosts() const { return static_cast<int>(ports_.size()); }
  const std::string& leaf_name(int leaf) const { return leaf_names_[leaf]; }
  /// Every host, in no particular order (for "known to the fabric, not to SLURM" reports).
  std::vector<std::string> Hosts() const;

 private:
  Port* AddPort(std::string_view host, std::string_view leaf_name);

  struct Named {  // a port of AddHcaPort, for AssignRails
    int host, index;
    std::string description;
    Guid guid;
  };
  std::unordered_map<std::string, int> host_index_;
  std::vector<std::string> host_names_;
  std::vector<std::vector<Port>> ports_;  // per host index
  std::unordered_map<std::string, int> leaf_index_;
  std::vector<std::string> leaf_names_;
  std::vector<Named> named_;
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
