// Failure injection: a degraded copy of a fabric with given or random cables and switches removed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/status.h"

namespace sar {

struct FailureSet {
  /// Cables to cut, each named by one of its ends (node name, port number).
  std::vector<std::pair<std::string, int>> links;
  /// Switches to remove entirely (by node name).
  std::vector<std::string> switches;
};

struct RandomFailureOptions {
  int num_links = 0;     // switch-to-switch cables to cut
  int num_switches = 0;  // switches to remove
  uint64_t seed = 1;
  /// Never pick a failure after which some endpoint (cabled HCA port) cannot reach every other
  /// one (so a switch with HCAs attached is never removed). If that makes the request
  /// impossible, fail with kFailed.
  bool keep_hcas_connected = true;
};

/// Chooses failures deterministically from the seed (same fabric + options = same set).
Status PickRandomFailures(const Fabric& fabric, const RandomFailureOptions& options,
                          FailureSet* out);

/// Builds *out: `in` without the failed switches (other node ids are renumbered, names, GUIDs,
/// descriptions and LIDs kept) and with the failed cables cut. Unknown names are an error.
Status ApplyFailures(const Fabric& in, const FailureSet& failures, Fabric* out);

/// True if every HCA endpoint (cabled HCA port) can reach every other one over cabled links: all
/// their switches lie in one connected component of the switch graph (HCAs do not forward).
bool HcasConnected(const Fabric& fabric);

}  // namespace sar
