// What every routing engine starts from: the switch-to-switch multigraph as flat arrays (CSR)
// and the list of destinations to route, built once per routing pass.
//
// Parallel cables stay separate arcs, because engines balance over them. Destinations are every
// cabled HCA port (with its 2^LMC LIDs) and every switch (its port-0 LID).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/status.h"

namespace sar::internal {

struct Destination {
  NodeId node = kNoNode;  // the HCA or switch owning the LIDs
  int port = 0;           // HCA port number; 0 for a switch
  Lid base_lid = 0;
  int num_lids = 1;     // 2^lmc
  int sw = -1;          // switch index the LIDs live on: the HCA port's peer switch, or itself
  uint8_t sw_port = 0;  // port of `sw` that delivers: the cable to the HCA, or 0
  bool is_switch = false;
};

struct SwitchGraph {
  int num_switches = 0;
  /// Arcs of switch s: [arc_begin[s], arc_begin[s + 1]), one per cabled switch-to-switch port.
  std::vector<int> arc_begin;
  std::vector<int> arc_to;          // neighbour switch index
  std::vector<uint8_t> arc_port;    // port number on the arc's own switch
  std::vector<PortId> arc_channel;  // the directed channel (port slot) of the arc
  std::vector<int> arc_reverse;     // the arc of the same cable in the other direction
  /// HCA ports first (in Fabric::Endpoints() order), then switches (in switches() order).
  std::vector<Destination> dests;
  int num_endpoint_dests = 0;  // dests[0, num_endpoint_dests) are HCA ports
  /// Per switch index: how many HCA ports are cabled to it.
  std::vector<int> hcas_on_switch;
  /// Per switch index: its node GUID (OpenSM's fill order depends on it, balanced_fill.h).
  std::vector<Guid> switch_guid;

  int degree(int s) const { return arc_begin[s + 1] - arc_begin[s]; }
};

SwitchGraph BuildSwitchGraph(const Fabric& fabric);

/// Hop counts (switch-to-switch cables) from every switch to switch `to`; -1 = unreachable.
void HopsTo(const SwitchGraph& g, int to, std::vector<int>* hops);

/// Labels each switch with its connected component (0, 1, ...); returns the number of
/// components that contain at least one HCA port. Switches without cables get their own.
int SwitchComponents(const SwitchGraph& g, std::vector<int>* component);

/// Checks that every HCA-hosting switch can route to every other one (`reachable(s, t)`), so
/// that every endpoint reaches every other. On the first failure returns Failed naming an
/// endpoint pair and `why` ("h1 cannot reach h7 (lid 0x0008): <why> from sw1 to sw4"), unless
/// `allow_disconnected`, in which case it adds a note with the number of endpoint pairs left
/// without a route and returns OK. RoutingEngine::Route calls it for plain cable connectivity;
/// engines with routing restrictions (updn) call it for the pairs their rules leave out.
Status CheckEndpointReach(const Fabric& fabric, const SwitchGraph& g,
                          const std::function<bool(int s, int t)>& reachable,
                          bool allow_disconnected, const std::string& why,
                          std::vector<std::string>* notes);

}  // namespace sar::internal
