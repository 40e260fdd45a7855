// Dmodk (Zahavi, "D-Mod-K routing ... on real life fat trees", 2010) in the form the Dmodc paper
// gives it (Sec. 2): up port floor(d / prod_{k<=l} w_k) mod (w_{l+1} p_{l+1}), down to the one
// child above d. It only applies to intact PGFTs: the level-wide constants w_l and p_l are read
// off the fabric (upward arity and parallel cables per rank), and a fabric where they are not
// level-wide, or where some up port does not lead closer to every leaf it does not hold, is
// refused (use dmodc, which is the same formula on local information). The up port index q
// counts parents fastest: q = k * w_{l+1} + b for cable k to parent b (parents by GUID), which is
// the order under which Dmodk and Eqs. 3-4 of Dmodc coincide (docs/engines.md).
#include <atomic>
#include <string>

#include "analysis/trace_parallel.h"
#include "engines/dmodc_core.h"
#include "engines/engines.h"
#include "sar/engines/engine.h"

namespace sar::internal {
namespace {

// Why `p` is not an intact PGFT, or "" if it is one Dmodk can route.
std::string NotIntact(const Fabric& f, const DmodcPlan& p, int threads) {
  const int n = p.num_switches, L = p.num_leaves;
  auto name = [&](int s) { return "switch '" + f.name(f.switches()[s]) + "'"; };
  std::vector<int> up_groups(p.max_rank + 1, -1), up_size(p.max_rank + 1, -1);
  for (int s = 0; s < n; ++s) {
    if (p.rank[s] < 0) return name(s) + " is cut off from every leaf";
    const int r = p.rank[s];
    if (up_groups[r] < 0) up_groups[r] = p.num_up_groups[s];
    if (up_groups[r] != p.num_up_groups[s]) {
      return name(s) + " has " + std::to_string(p.num_up_groups[s]) + " up neighbours, others " +
             "at its level " + std::to_string(up_groups[r]);
    }
    for (int gi = p.group_begin[s]; gi < p.group_begin[s + 1]; ++gi) {
      if (p.group_dir[gi] == 0) return name(s) + " has a cable within its own level";
      if (p.group_dir[gi] != 1) continue;
      const int size = p.group_port_begin[gi + 1] - p.group_port_begin[gi];
      if (up_size[r] < 0) up_size[r] = size;
      if (up_size[r] != size) return name(s) + " has up links of different multiplicity";
    }
  }
  // Up: every up neighbour is closer; down: exactly one down neighbour is.
  std::atomic<int> bad{-1};
  ParallelFor(WorkerCount(threads, n, 8), n, 8, [&](int, size_t si) {
    const int s = static_cast<int>(si);
    for (int l = 0; l < L && bad.load(std::memory_order_relaxed) < 0; ++l) {
      if (p.leaves[l] == s || p.c(s, l) == kDmodcInf) continue;
      int closer_down = 0;
      for (int gi = p.group_begin[s]; gi < p.group_begin[s + 1]; ++gi) {
        const int u = p.group_to[gi];
        if (p.dc(s, l) != kDmodcInf) {
          closer_down += p.group_dir[gi] == -1 && p.dc(u, l) < p.dc(s, l);
        } else if (p.group_dir[gi] == 1 && p.c(u, l) >= p.c(s, l)) {
          bad = s;
        }
      }
      if (p.dc(s, l) != kDmodcInf && closer_down != 1) bad = s;
    }
  });
  if (bad >= 0) return name(bad) + " does not see the tree's regular up and down paths";
  return "";
}

class DmodkEngine : public RoutingEngine {
 public:
  std::string_view name() const override { return "dmodk"; }

 protected:
  Status DoRoute(const RoutingInput& in, RoutingOutput* out) const override {
    const Fabric& f = *in.fabric;
    const SwitchGraph g = BuildSwitchGraph(f);
    DmodcPlan plan;
    SAR_RETURN_IF_ERROR(BuildDmodcPlan(g, in.threads, &plan));
    SAR_RETURN_IF_ERROR(CheckDmodcValidity(f, g, plan, false, &out->notes));
    const std::string why = NotIntact(f, plan, in.threads);
    if (!why.empty()) {
      return Status::Failed("dmodk needs an intact PGFT (dmodc routes degraded ones): " + why);
    }
    // prod_{k<=l} w_k per level (w_1 = 1: each HCA port is its own node on one leaf).
    std::vector<uint64_t> level_divider(plan.max_rank + 1, 1);
    for (int s = 0; s < plan.num_switches; ++s) {
      if (plan.rank[s] < plan.max_rank) {
        level_divider[plan.rank[s] + 1] = plan.num_up_groups[s];  // level-wide, checked above
      }
    }
    for (int r = 1; r <= plan.max_rank; ++r) level_divider[r] *= level_divider[r - 1];
    std::vector<uint64_t> divider(plan.num_switches);
    for (int s = 0; s < plan.num_switches; ++s) divider[s] = level_divider[plan.rank[s]];
    out->lfts = LftSet(f);
    FillDmodcTables(g, plan, DmodcNodeIndex(g, plan), divider, in.threads, &out->lfts);
    return Status::OK();
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> NewDmodkEngine() { return std::make_unique<DmodkEngine>(); }

}  // namespace sar::internal
