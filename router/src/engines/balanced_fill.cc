#include "engines/balanced_fill.h"

#include <cstdio>

namespace sar::internal {

Status CheckEndpointReach(const Fabric& fabric, const SwitchGraph& g,
                          const std::function<bool(int s, int t)>& reachable,
                          bool allow_disconnected, const std::string& why,
                          std::vector<std::string>* notes) {
  // One endpoint per HCA-hosting switch is enough to name a pair; the count weighs by hosts.
  std::vector<int> some_dest(g.num_switches, -1);
  for (int d = 0; d < g.num_endpoint_dests; ++d) {
    const int sw = g.dests[d].sw;
    if (sw >= 0 && some_dest[sw] < 0) some_dest[sw] = d;
  }
  uint64_t pairs = 0;
  std::string example;
  for (int t = 0; t < g.num_switches; ++t) {
    if (some_dest[t] < 0) continue;
    for (int s = 0; s < g.num_switches; ++s) {
      if (s == t || some_dest[s] < 0 || reachable(s, t)) continue;
      pairs += static_cast<uint64_t>(g.hcas_on_switch[s]) * g.hcas_on_switch[t];
      if (!example.empty()) continue;
      const Destination& from = g.dests[some_dest[s]];
      const Destination& to = g.dests[some_dest[t]];
      char lid[16];
      std::snprintf(lid, sizeof(lid), "0x%04x", to.base_lid);
      example = fabric.name(from.node) + " cannot reach " + fabric.name(to.node) + " (lid " + lid +
                "): " + why + " from " + fabric.name(fabric.switches()[s]) + " to " +
                fabric.name(fabric.switches()[t]);
      if (!allow_disconnected) return Status::Failed(example);
    }
  }
  if (pairs > 0) {
    notes->push_back(std::to_string(pairs) + " endpoint pairs have no route, e.g. " + example);
  }
  return Status::OK();
}

}  // namespace sar::internal
