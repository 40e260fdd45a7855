// The engine factories behind MakeRoutingEngine (engine.cc). One engine per file.
#pragma once

#include <memory>

#include "sar/engine.h"

namespace sar::internal {

std::unique_ptr<RoutingEngine> NewMinHopEngine();  // minhop.cc
std::unique_ptr<RoutingEngine> NewUpDownEngine();  // updn.cc
std::unique_ptr<RoutingEngine> NewDfssspEngine();  // dfsssp.cc
std::unique_ptr<RoutingEngine> NewSarEngine();     // sar.cc

}  // namespace sar::internal
