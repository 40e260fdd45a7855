// The engine registry: MakeRoutingEngine and the engine names (declared in
// sar/engines/engine.h), one line per engine. Above every engine; the RoutingEngine base
// (engine.cc) knows none of them.
#include "engines/engines.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sar {
namespace {

struct EngineEntry {
  const char* name;
  std::unique_ptr<RoutingEngine> (*make)();
};

// One line per engine; the order is the order RoutingEngineNames() lists.
// clang-format off
const EngineEntry kEngines[] = {
    {"minhop", internal::NewMinHopEngine},
    {"updn", internal::NewUpDownEngine},
    {"dfsssp", internal::NewDfssspEngine},
    {"sar", internal::NewSarEngine},
    {"dmodk", internal::NewDmodkEngine},
    {"dmodc", internal::NewDmodcEngine},
    {"sar-dmodc", internal::NewSarDmodcEngine},
    {"osrm2", internal::NewOsrm2Engine},
    {"osrm3", internal::NewOsrm3Engine},
};
// clang-format on

}  // namespace

std::unique_ptr<RoutingEngine> MakeRoutingEngine(std::string_view name) {
  for (const EngineEntry& e : kEngines) {
    if (name == e.name) return e.make();
  }
  return nullptr;
}

std::vector<std::string> RoutingEngineNames() {
  std::vector<std::string> names;
  for (const EngineEntry& e : kEngines) names.emplace_back(e.name);
  return names;
}

std::string RoutingEngineList() {
  std::string list;
  for (const EngineEntry& e : kEngines) list += (list.empty() ? "" : ", ") + std::string(e.name);
  return list;
}

}  // namespace sar
