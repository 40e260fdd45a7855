// Placeholder until the sar engine lands: it fails clearly rather than route.
#include "engines/engines.h"

namespace sar::internal {
namespace {

class SarEngine : public RoutingEngine {
 public:
  std::string_view name() const override { return "sar"; }
  Status Route(const RoutingInput&, RoutingOutput*) const override {
    return Status::Failed("the sar engine is not built yet");
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> NewSarEngine() { return std::make_unique<SarEngine>(); }

}  // namespace sar::internal
