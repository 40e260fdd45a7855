// RoutingEngine's input checks, shared with DmodcRouter. RoutingInput is declared, not included:
// the engine base includes this header, so it must not need the engine base
// (scripts/dev/include_layers.py).
#pragma once

#include <string>
#include <vector>

#include "sar/status.h"

namespace sar {

struct RoutingInput;  // sar/engines/engine.h

namespace internal {

/// RoutingEngine::Route's input checks (engine.cc), for a pass run outside an engine object
/// (DmodcRouter, sar/engines/dmodc.h).
Status CheckRoutingInput(const RoutingInput& in, std::vector<std::string>* notes);
/// The same without the cable-connectivity check (DmodcRouter's incremental pass, whose own
/// checks fall back to the full pass wherever connectivity could have changed).
Status CheckRoutingArguments(const RoutingInput& in);

}  // namespace internal
}  // namespace sar
