// DFSSSP (Domke, Hoefler, Nagel): per destination LID a shortest-path tree over the switch
// multigraph whose edge weights count the routes already placed on each channel, then virtual
// layers for deadlock freedom. Destinations go compute nodes first, then storage, then the
// rest, then switch LIDs, as OpenSM's dfsssp orders them.
#include "engines/engines.h"
#include "engines/sssp_core.h"
#include "sar/engines/engine.h"

namespace sar::internal {

void PlanDfsssp(const RoutingInput& in, SsspRouter* router, std::vector<SsspStep>* steps) {
  const SwitchGraph& g = router->graph();
  const NodeClasses none;
  const NodeClasses& classes = in.classes != nullptr ? *in.classes : none;
  // Base LIDs of every class first, then the extra LMC LIDs: the base LIDs are what hosts use
  // by default (and what the EFI counts), so they get the balance LMC 0 would give them, and the
  // extra LIDs then take the channels the weights show as least used.
  for (bool extra : {false, true}) {
    for (NodeClass cls : {NodeClass::kCompute, NodeClass::kStorage, NodeClass::kOther}) {
      for (int e = 0; e < g.num_endpoint_dests; ++e) {
        if (classes.get(g.dests[e].node) != cls) continue;
        for (int k = extra ? 1 : 0; k < (extra ? g.dests[e].num_lids : 1); ++k) {
          steps->push_back({e, k, false});
        }
      }
    }
  }
  for (int e = g.num_endpoint_dests; e < static_cast<int>(g.dests.size()); ++e) {
    steps->push_back({e, 0, false});
  }
}

namespace {

class DfssspEngine : public RoutingEngine {
 public:
  std::string_view name() const override { return "dfsssp"; }

 protected:
  Status DoRoute(const RoutingInput& in, RoutingOutput* out) const override {
    return RouteSssp(in, PlanDfsssp, out);
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> NewDfssspEngine() { return std::make_unique<DfssspEngine>(); }

}  // namespace sar::internal
