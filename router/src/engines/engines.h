// The engine factories behind MakeRoutingEngine (engine.cc). One engine per file.
#pragma once

#include <memory>

#include "sar/engine.h"

namespace sar::internal {

std::unique_ptr<RoutingEngine> NewMinHopEngine();    // minhop.cc
std::unique_ptr<RoutingEngine> NewUpDownEngine();    // updn.cc
std::unique_ptr<RoutingEngine> NewDfssspEngine();    // dfsssp.cc
std::unique_ptr<RoutingEngine> NewSarEngine();       // sar.cc
std::unique_ptr<RoutingEngine> NewDmodkEngine();     // dmodk.cc
std::unique_ptr<RoutingEngine> NewDmodcEngine();     // dmodc.cc
std::unique_ptr<RoutingEngine> NewSarDmodcEngine();  // sar_dmodc.cc

}  // namespace sar::internal
