// The engine factories behind MakeRoutingEngine (engine.cc). One engine per file.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sar/engines/engine.h"

namespace sar::internal {

std::unique_ptr<RoutingEngine> NewMinHopEngine();    // minhop.cc
std::unique_ptr<RoutingEngine> NewUpDownEngine();    // updn.cc
std::unique_ptr<RoutingEngine> NewDfssspEngine();    // dfsssp.cc
std::unique_ptr<RoutingEngine> NewSarEngine();       // sar.cc
std::unique_ptr<RoutingEngine> NewDmodkEngine();     // dmodk.cc
std::unique_ptr<RoutingEngine> NewDmodcEngine();     // dmodc.cc
std::unique_ptr<RoutingEngine> NewSarDmodcEngine();  // sar_dmodc.cc
std::unique_ptr<RoutingEngine> NewOsrm2Engine();     // osrm2.cc
std::unique_ptr<RoutingEngine> NewOsrm3Engine();     // osrm3.cc

/// RoutingEngine::Route's input checks (engine.cc), for a pass run outside an engine object
/// (DmodcRouter, sar/engines/dmodc.h).
Status CheckRoutingInput(const RoutingInput& in, std::vector<std::string>* notes);
/// The same without the cable-connectivity check (DmodcRouter's incremental pass, whose own
/// checks fall back to the full pass wherever connectivity could have changed).
Status CheckRoutingArguments(const RoutingInput& in);

}  // namespace sar::internal
