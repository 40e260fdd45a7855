// Placeholder until the minhop engine lands: it fails clearly rather than route.
#include "engines/engines.h"

namespace sar::internal {
namespace {

class MinHopEngine : public RoutingEngine {
 public:
  std::string_view name() const override { return "minhop"; }
  Status Route(const RoutingInput&, RoutingOutput*) const override {
    return Status::Failed("the minhop engine is not built yet");
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> NewMinHopEngine() { return std::make_unique<MinHopEngine>(); }

}  // namespace sar::internal
