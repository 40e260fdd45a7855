// MinHop, like OpenSM's minhop: every route is a shortest switch path, and among the shortest
// next hops each switch spreads the destination LIDs evenly over its ports (balanced_fill.h).
// No virtual layers: MinHop is not deadlock-free on every topology (a ring is the classic case);
// on fat-trees shortest paths are up*/down* anyway.
#include <cstdint>
#include <vector>

#include "analysis/trace_parallel.h"
#include "engines/balanced_fill.h"
#include "engines/engines.h"
#include "engines/switch_graph.h"
#include "sar/engines/engine.h"

namespace sar::internal {
namespace {

class MinHopEngine : public RoutingEngine {
 public:
  std::string_view name() const override { return "minhop"; }

 protected:
  // Route has checked the input, including that every endpoint pair has a cable path, so
  // every shortest path below exists unless allow_disconnected left holes.
  Status DoRoute(const RoutingInput& in, RoutingOutput* out) const override {
    const Fabric& f = *in.fabric;
    const SwitchGraph g = BuildSwitchGraph(f);
    const int n = g.num_switches;

    // hops[t * n + s]: cables from switch s to switch t (-1 = unreachable). int16 keeps the
    // matrix at 2 bytes a pair; no fabric has a switch path of 32k hops.
    std::vector<int16_t> hops(static_cast<size_t>(n) * n);
    const int workers = WorkerCount(in.threads, n, 16);
    ParallelFor(workers, n, 16, [&](int, size_t t) {
      std::vector<int> row;
      HopsTo(g, static_cast<int>(t), &row);
      std::copy(row.begin(), row.end(), hops.begin() + t * n);
    });

    out->lfts = LftSet(f);
    FillBalanced(
        g, in.threads,
        [&](int s, int t, bool, std::vector<int>* arcs) {
          const int16_t* row = hops.data() + static_cast<size_t>(t) * n;
          if (row[s] <= 0) return;
          for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
            if (row[g.arc_to[a]] == row[s] - 1) arcs->push_back(a);
          }
        },
        &out->lfts);
    return Status::OK();
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> NewMinHopEngine() { return std::make_unique<MinHopEngine>(); }

}  // namespace sar::internal
