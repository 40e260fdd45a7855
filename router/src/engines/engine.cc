#include "sar/engine.h"

#include "engines/engines.h"

namespace sar {
namespace {

struct EngineEntry {
  const char* name;
  std::unique_ptr<RoutingEngine> (*make)();
};

// One line per engine; the order is the order RoutingEngineNames() lists.
const EngineEntry kEngines[] = {
    {"minhop", internal::NewMinHopEngine},
    {"updn", internal::NewUpDownEngine},
    {"dfsssp", internal::NewDfssspEngine},
    {"sar", internal::NewSarEngine},
};

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

}  // namespace sar
