// Placeholder until the dfsssp engine lands: it fails clearly rather than route.
#include "engines/engines.h"

namespace sar::internal {
namespace {

class DfssspEngine : public RoutingEngine {
 public:
  std::string_view name() const override { return "dfsssp"; }
  Status Route(const RoutingInput&, RoutingOutput*) const override {
    return Status::Failed("the dfsssp engine is not built yet");
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> NewDfssspEngine() { return std::make_unique<DfssspEngine>(); }

}  // namespace sar::internal
