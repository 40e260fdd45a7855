// Routing engines: one interface, one file per engine (router/src/engines/<name>.cc), as in
// OpenSM. An engine turns a fabric with LIDs into linear forwarding tables for every switch and,
// if it needs them for deadlock freedom, a virtual layer for every endpoint-to-endpoint route.
//
// Engines: "minhop", "updn" (Up*/Down*), "dfsssp", "sar" (scheduling-aware DFSSSP).
// Every engine routes every LID of the fabric: each LID of each cabled HCA port (all 2^LMC of
// them) and each switch's port-0 LID, from every switch. Engines never print; they report
// through RoutingOutput and Status.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sar/fabric.h"
#include "sar/jobs.h"
#include "sar/lft.h"
#include "sar/node_classes.h"
#include "sar/status.h"

namespace sar {

struct RoutingInput {
  /// The fabric with its LIDs set (AssignLids or a guid2lid file). The LMC is the ports' own.
  const Fabric* fabric = nullptr;
  /// Virtual lanes usable as virtual layers (1..15); engines that need layers fail when they
  /// would need more.
  int num_vls = 8;
  /// Running jobs (SAR); null or empty = none. Jobs on fewer than two leaf switches are ignored.
  const std::vector<ResolvedJob>* jobs = nullptr;
  /// Compute / storage / other; null = every HCA is a compute node.
  const NodeClasses* classes = nullptr;
  /// Up*/Down*: the root switches; empty = chosen automatically (see updn.cc).
  std::vector<NodeId> roots;
  /// Worker threads; 0 = all hardware threads.
  int threads = 0;
  /// When false (the default) an engine fails if some endpoint cannot reach another, naming
  /// the pair; when true it routes what it can and leaves the rest kNoRoute (noted in output).
  bool allow_disconnected = false;
};

struct RoutingOutput {
  LftSet lfts;
  /// A layer per (source LID, destination LID) for endpoint-to-endpoint routes; empty (size 0)
  /// for engines without layers (every route then uses layer 0).
  VirtualLayers layers;
  int num_layers = 1;
  /// Wall time of the phases, milliseconds.
  double paths_ms = 0;   // computing the tables
  double layers_ms = 0;  // assigning virtual layers
  /// Facts worth telling the operator (chosen roots, unreachable pairs, layer counts).
  std::vector<std::string> notes;
};

class RoutingEngine {
 public:
  virtual ~RoutingEngine() = default;
  virtual std::string_view name() const = 0;
  /// Computes the tables. Errors: InvalidArgument (bad input such as num_vls out of range or a
  /// root that is not a switch), Failed (fabric disconnected, too few virtual lanes); *out is
  /// unspecified on error.
  virtual Status Route(const RoutingInput& in, RoutingOutput* out) const = 0;
};

/// The engine called `name`, or nullptr if there is none.
std::unique_ptr<RoutingEngine> MakeRoutingEngine(std::string_view name);
/// The names MakeRoutingEngine knows, in a stable order.
std::vector<std::string> RoutingEngineNames();

}  // namespace sar
