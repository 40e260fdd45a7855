// Test-only: one small fabric and a valid table set plus the four invalid kinds every caller of
// the routing pass must refuse (a hole, a loop, a cyclic layer, too many layers), with the one
// message each gets from ValidateRouting. Shared by the tests of routing_pass, the C API, the
// sar-route CLI and sar-filterd's planner, so "rejects the same set with the same message" is
// checked against one literal per case.
#pragma once

#include <string>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/model/lft.h"
#include "test_fabrics.h"

namespace sar::invalidtables {

// Three switches in a ring (sw00, sw01, sw02), host h000<i> on sw0<i>; LIDs 1-3 hosts, 4-6
// switches. Every switch neighbours every other, so min-hop tables have no two-channel routes.
inline Fabric Triangle() { return testfab::Ring(3, 1); }

// The port of switch `from` cabled to switch `to`.
inline uint8_t PortTowards(const Fabric& f, int from, int to) {
  const NodeId a = f.switches()[from], b = f.switches()[to];
  for (int p = 1; p <= f.num_ports(a); ++p) {
    if (f.peer({a, p}).node == b) return static_cast<uint8_t>(p);
  }
  return LftSet::kNoRoute;
}

struct Case {
  std::string name;
  LftSet lfts;
  VirtualLayers layers;  // empty = every route in layer 0
  int num_layers = 1;
  int num_vls = 8;
  std::string message;  // ValidateRouting's, after "failed: "
};

inline LftSet Valid(const Fabric& f) { return testfab::MinHopLfts(f); }

/// Valid min-hop tables, but every route to h0001 (LID 2) carries layer 1 or 2: three layers on
/// a fabric given two virtual lanes.
inline Case TooManyLayers(const Fabric& f, int num_vls = 2) {
  Case c{"too many layers", Valid(f), {}, 3, num_vls, ""};
  c.layers.set(1, 2, 2);
  c.layers.set(3, 2, 1);
  c.message =
      "invalid routing: the routes need 3 virtual layers, " + std::to_string(num_vls) + " usable";
  return c;
}

/// `message` with the node names of Triangle() replaced by the names a fabric built from GUIDs
/// gets ("S-<guid>" / "H-<guid>": the C API's, which has no names of its own).
inline std::string WithGuidNames(const Fabric& f, std::string message) {
  for (NodeId n = 0; n < f.num_nodes(); ++n) {
    const std::string guid_name =
        (f.is_switch(n) ? "S-" : "H-") + GuidString(f.node_guid(n)).substr(2);
    for (size_t pos; (pos = message.find(f.name(n))) != std::string::npos;) {
      message.replace(pos, f.name(n).size(), guid_name);
    }
  }
  return message;
}

inline std::vector<Case> InvalidCases(const Fabric& f) {
  std::vector<Case> cases;
  // sw00 has no entry for h0001's LID.
  Case hole{"hole", Valid(f), {}, 1, 8, ""};
  hole.lfts.set_port(0, 2, LftSet::kNoRoute);
  hole.message =
      "invalid routing: 1 unreachable pairs, 0 loops; first: h0000 -> lid 0x0002 (h0001): hole "
      "at sw00 (no entry)";
  cases.push_back(hole);
  // sw00 and sw01 hand h0002's LID to each other.
  Case loop{"loop", Valid(f), {}, 1, 8, ""};
  loop.lfts.set_port(0, 3, PortTowards(f, 0, 1));
  loop.lfts.set_port(1, 3, PortTowards(f, 1, 0));
  loop.message =
      "invalid routing: 0 unreachable pairs, 2 loops; first: h0000 -> lid 0x0003 (h0002): loop "
      "at sw00";
  cases.push_back(loop);
  // Every switch sends the other switches' hosts clockwise: sw00 -> sw01 -> sw02 -> sw00 is a
  // dependency cycle in the single layer, though every route arrives.
  Case cyclic{"cyclic layer", Valid(f), {}, 1, 8, ""};
  for (int s = 0; s < 3; ++s) {
    for (int h = 0; h < 3; ++h) {
      if (h != s) cyclic.lfts.set_port(s, static_cast<Lid>(1 + h), PortTowards(f, s, (s + 1) % 3));
    }
  }
  cyclic.message =
      "invalid routing: virtual layer 0 has a cyclic channel dependency: sw00/2 -> sw01/3 -> "
      "sw02/3 -> sw00/2";
  cases.push_back(cyclic);
  cases.push_back(TooManyLayers(f));
  return cases;
}

}  // namespace sar::invalidtables
