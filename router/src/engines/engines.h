// The engine factories behind MakeRoutingEngine (the registry in engine.cc). One engine per file.
// RoutingEngine is only declared here, so the registry can include this beside engine.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace sar {
class RoutingEngine;
}  // namespace sar

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

}  // namespace sar::internal
