// Placeholder until the updn engine lands: it fails clearly rather than route.
#include "engines/engines.h"

namespace sar::internal {
namespace {

class UpDownEngine : public RoutingEngine {
 public:
  std::string_view name() const override { return "updn"; }
  Status Route(const RoutingInput&, RoutingOutput*) const override {
    return Status::Failed("the updn engine is not built yet");
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> NewUpDownEngine() { return std::make_unique<UpDownEngine>(); }

}  // namespace sar::internal
