// Fabric: the InfiniBand subnet as switches, HCAs, ports and cables.
//
// Data-oriented: nodes and ports are integer ids into flat arrays, no pointer graph. Every node
// has port slots 0..num_ports; slot 0 is a switch's management port (its LID lives there) and is
// unused on an HCA. A cable joins two port slots; parallel cables between the same two nodes are
// allowed. A port slot with a peer is also a directed *channel*: the link leaving that port.
//
// Each port slot may declare the rate its link trained to ("4xEDR": lanes x per-lane speed, as
// ibnetdiscover prints it); a cable's capacity is the lower of what its two ends declare, and a
// cable neither end declares runs at the fabric's nominal (highest declared) rate.
//
// Built once (by a reader or a generator), then read-only. Lookups by name and GUID are O(1).
// Thread-safety: const methods may be called concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sar/status.h"

namespace sar {

using NodeId = int32_t;  // index of a node, 0..num_nodes()-1
using PortId = int32_t;  // index of a port slot, 0..num_port_slots()-1; also a channel id
using Lid = uint32_t;    // InfiniBand LID (unicast 1..0xBFFF); 0 = none
using Guid = uint64_t;

inline constexpr NodeId kNoNode = -1;
inline constexpr PortId kNoPort = -1;
inline constexpr int kMaxPorts = 254;  // ports per node (IB allows 1..254 external ports)
inline constexpr Lid kMaxUnicastLid = 0xBFFF;

enum class NodeKind : uint8_t { kSwitch, kHca };

/// "0x0002c90000100000": a GUID as OpenSM and ibnetdiscover print it.
std::string GuidString(Guid guid);

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

/// Per-lane link speed, as PortInfo's LinkSpeedActive/LinkSpeedExtActive (and ibnetdiscover) name
/// it.
enum class LaneSpeed : uint8_t { kNone, kSdr, kDdr, kQdr, kFdr10, kFdr, kEdr, kHdr, kNdr, kXdr };

/// A port's active link rate: `width` lanes at `speed` ("4xEDR"). width 0 / kNone: not declared.
struct LinkRate {
  uint8_t width = 0;  // lanes: 1, 2, 4, 8 or 12
  LaneSpeed speed = LaneSpeed::kNone;
  bool declared() const { return width != 0 && speed != LaneSpeed::kNone; }
  /// Data rate in Mb/s after line coding (4xEDR = 100000, 4xDDR = 16000); 0 if not declared.
  uint32_t mbps() const;
  friend bool operator==(const LinkRate&, const LinkRate&) = default;
};

/// "4xEDR"; "" if not declared.
std::string LinkRateString(LinkRate rate);
/// Parses "<1|2|4|8|12>x<SDR|DDR|QDR|FDR10|FDR|EDR|HDR|NDR|XDR>"; false on anything else.
bool ParseLinkRate(std::string_view text, LinkRate* out);

/// A (node, port number) pair, the way files and tools name a port.
struct PortRef {
  NodeId node = kNoNode;
  int port = 0;
  bool valid() const { return node != kNoNode; }
  friend bool operator==(const PortRef&, const PortRef&) = default;
};

class Fabric {
 public:
  /// Adds a node with ports 1..num_ports (plus slot 0). `name` is the node's id in topology
  /// files ("leaf01", or "S-0002c90000100000" in ibnetdiscover output) and must be unique;
  /// `description` is its NodeDescription ("h0101 HCA-1"). Port GUIDs default to the node GUID
  /// for switches and node GUID + port number for HCAs (what ibsim assigns). A default is only a
  /// default: it may equal a GUID another node's port has or will be given (a dual-port HCA whose
  /// second function's node GUID is the first's + 1), so it is not checked here; set the real
  /// GUIDs with set_port_guid(), then CheckPortGuids().
  /// REQUIRES: 1 <= num_ports <= kMaxPorts. Returns kNoNode and sets *err on a duplicate name or
  /// node GUID.
  NodeId AddNode(NodeKind kind, int num_ports, Guid node_guid, std::string name,
                 std::string description, std::string* err = nullptr);
  /// Sets a port's GUID. Only a switch's port 0 and an HCA's ports 1..N carry a GUID that
  /// FindByPortGuid() finds (a switch's external ports share port 0's); on other slots the value
  /// is only stored.
  void set_port_guid(PortRef p, Guid guid);
  /// InvalidArgument if two ports in use (every switch's port 0, every cabled HCA port) have the
  /// same GUID, naming both; *clash (if given) receives the later of the two.
  Status CheckPortGuids(PortRef* clash = nullptr) const;
  /// Declares the rate this port's link trained to (what the port itself reports).
  void set_port_rate(PortRef p, LinkRate rate) { rate_[port_id(p)] = rate; }

  /// Cables two ports. Fails if a port is out of range, is slot 0, or is already cabled.
  Status Connect(PortRef a, PortRef b);
  /// Removes the cable at `p` (both directions). No-op if unconnected.
  void Disconnect(PortRef p);

  /// Assigns LIDs base..base+2^lmc-1 to a port (switches: port 0). Fails on a LID clash.
  Status SetLid(PortRef p, Lid base, int lmc);
  /// Forgets every LID assignment.
  void ClearLids();

  // --- Nodes ---
  int num_nodes() const { return static_cast<int>(kind_.size()); }
  NodeKind kind(NodeId n) const { return kind_[n]; }
  bool is_switch(NodeId n) const { return kind_[n] == NodeKind::kSwitch; }
  int num_ports(NodeId n) const { return num_ports_[n]; }
  Guid node_guid(NodeId n) const { return node_guid_[n]; }
  const std::string& name(NodeId n) const { return name_[n]; }
  const std::string& description(NodeId n) const { return description_[n]; }
  /// The host name SLURM knows: the first word of the node description; for an HCA whose
  /// description names no host (empty, or the firmware default "MT4129 ConnectX7 ..."),
  /// "H-<node GUID, 16 hex digits>"; "" for an Aggregation Node, which is no host (rules in
  /// sar/model/node_classes.h).
  std::string_view hostname(NodeId n) const;
  /// A SHARP Aggregation Node: a CA on a switch port, routed as an endpoint, never a job's host.
  bool is_aggregation_node(NodeId n) const { return aggregation_node_[n] != 0; }

  /// All switches, in insertion order; switch_index(n) is n's position there (-1 for an HCA).
  const std::vector<NodeId>& switches() const { return switches_; }
  const std::vector<NodeId>& hcas() const { return hcas_; }
  int switch_index(NodeId n) const { return switch_index_[n]; }
  int num_switches() const { return static_cast<int>(switches_.size()); }

  NodeId FindByName(std::string_view name) const;
  NodeId FindByNodeGuid(Guid guid) const;
  /// The port with this GUID; where several have it (defaults, see AddNode), a port in use
  /// before one that is not, then the lowest port slot.
  PortRef FindByPortGuid(Guid guid) const;

  // --- Ports and channels ---
  int num_port_slots() const { return static_cast<int>(port_node_.size()); }
  PortId port_id(PortRef p) const { return port_offset_[p.node] + p.port; }
  PortId port_id(NodeId n, int port) const { return port_offset_[n] + port; }
  PortRef port_ref(PortId id) const { return {port_node_[id], id - port_offset_[port_node_[id]]}; }
  NodeId port_node(PortId id) const { return port_node_[id]; }
  Guid port_guid(PortRef p) const { return port_guid_[port_id(p)]; }
  /// The port at the far end of the cable, or an invalid PortRef.
  PortRef peer(PortRef p) const {
    return peer_id(port_id(p)) == kNoPort ? PortRef{} : port_ref(peer_id(port_id(p)));
  }
  PortId peer_id(PortId id) const { return peer_[id]; }
  /// True if the channel leaving port slot `id` joins two switches (the set C* of the SAR paper).
  bool is_inter_switch(PortId id) const {
    return peer_[id] != kNoPort && is_switch(port_node_[id]) && is_switch(port_node_[peer_[id]]);
  }
  /// What port slot `id` declares (may be undeclared).
  LinkRate port_rate(PortId id) const { return rate_[id]; }
  /// The rate of the cable at port slot `id`: the lower width and the lower speed of what its two
  /// ends declare (a link trains to what both ends support); undeclared if neither end declares.
  LinkRate link_rate(PortId id) const;
  /// The fabric's full rate: the highest link rate declared on any cable; undeclared if none.
  LinkRate nominal_rate() const;
  /// Per port slot: link capacity in Mb/s, undeclared links at the nominal rate; every slot 1
  /// when no link declares a rate (all links equal). Unconnected slots get the nominal value.
  std::vector<uint32_t> ChannelCapacities() const;

  /// Number of cables (each counted once).
  int num_links() const { return num_links_; }

  // --- LIDs ---
  Lid base_lid(PortRef p) const { return base_lid_[port_id(p)]; }
  int lmc(PortRef p) const { return lmc_[port_id(p)]; }
  /// Highest LID assigned (0 if none).
  Lid max_lid() const { return lid_owner_.empty() ? 0 : static_cast<Lid>(lid_owner_.size() - 1); }
  /// The port owning `lid` (any of its 2^lmc LIDs), or an invalid PortRef.
  PortRef lid_owner(Lid lid) const;
  /// The LID that reaches switch `n` (its port 0), 0 if none.
  Lid switch_lid(NodeId n) const { return base_lid_[port_offset_[n]]; }

  /// The HCA ports that are cabled: the terminals that send and receive traffic, in HCA order.
  std::vector<PortRef> Endpoints() const;
  /// InvalidArgument naming the first endpoint without a LID ("HCA '<name>' port <n> has no
  /// LID"): routing needs every endpoint addressed.
  Status CheckEndpointLids() const;

 private:
  static bool carries_guid(NodeKind kind, int port) {
    return kind == NodeKind::kSwitch ? port == 0 : port >= 1;
  }
  /// A switch's port 0 (always), or a cabled HCA port.
  bool port_in_use(PortId id) const;

  std::vector<NodeKind> kind_;
  std::vector<int> num_ports_;
  std::vector<Guid> node_guid_;
  std::vector<std::string> name_;
  std::vector<std::string> description_;
  std::vector<std::string> hostname_;      // see hostname()
  std::vector<uint8_t> aggregation_node_;  // see is_aggregation_node()
  std::vector<PortId> port_offset_;        // first slot (port 0) of each node
  std::vector<int> switch_index_;
  std::vector<NodeId> switches_;
  std::vector<NodeId> hcas_;

  std::vector<NodeId> port_node_;  // per slot
  std::vector<Guid> port_guid_;
  std::vector<LinkRate> rate_;  // declared by the port; see link_rate()
  std::vector<PortId> peer_;
  std::vector<Lid> base_lid_;
  std::vector<uint8_t> lmc_;
  int num_links_ = 0;

  std::vector<PortId> lid_owner_;  // LID -> slot, kNoPort if unassigned

  std::unordered_map<std::string, NodeId> by_name_;
  std::unordered_map<Guid, NodeId> by_node_guid_;
  std::unordered_multimap<Guid, PortId> by_port_guid_;  // see FindByPortGuid
};

}  // namespace sar
