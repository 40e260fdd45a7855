// OSRM3: Yuan et al.'s optimal oblivious single-path routing for 3-level fat-trees, one LID per
// source group (the rule and its LID budget: osrm_core.h, docs/engines.md).
#include "engines/engines.h"
#include "engines/osrm_core.h"
#include "sar/engines/engine.h"

namespace sar::internal {
namespace {

class Osrm3Engine : public RoutingEngine {
 public:
  std::string_view name() const override { return "osrm3"; }

 protected:
  Status DoRoute(const RoutingInput& in, RoutingOutput* out) const override {
    return RouteOsrm(in, 3, out);
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> NewOsrm3Engine() { return std::make_unique<Osrm3Engine>(); }

}  // namespace sar::internal
