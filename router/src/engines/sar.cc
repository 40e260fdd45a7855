// SAR, scheduling-aware DFSSSP (Domke & Hoefler, SC16, Algorithm 1): destinations that run a
// multi-switch job go first, largest job first, and only routes between nodes that share a job
// raise the edge weights, so intra-job routes spread over the channels; then storage nodes, then
// everything else with DFSSSP's normal weight update (switch LIDs last); then the same virtual
// layers as DFSSSP. With no multi-switch jobs this is exactly DFSSSP's plan.
//
// Deliberate differences from the paper, both to serve the effective EFI (metrics.h):
// - Only the base LID of a job node is routed in the job phase; its other LMC LIDs follow with
//   the rest, because the metrics count base-LID routes and extra LIDs would only dilute the
//   intra-job weights.
// - In the job phase the tree of a destination grows one source switch at a time (see
//   SsspRouter::Run), so routes from different leaves to one node take different spines.
#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "engines/delta_keep.h"
#include "engines/engines.h"
#include "engines/sar_refine.h"
#include "engines/sssp_core.h"
#include "sar/analysis/flows.h"
#include "sar/analysis/lower_bound.h"
#include "sar/engines/engine.h"

namespace sar::internal {
namespace {

void PlanSar(const RoutingInput& in, SsspRouter* router, std::vector<SsspStep>* steps) {
  const SwitchGraph& g = router->graph();
  const Fabric& f = *in.fabric;
  std::vector<int> dest_of_port(f.num_port_slots(), -1);
  for (int e = 0; e < g.num_endpoint_dests; ++e) {
    dest_of_port[f.port_id(g.dests[e].node, g.dests[e].port)] = e;
  }
  // Algorithm 1, lines 1-4: the jobs of each node (multi-switch jobs only). A job with rails
  // is one member set per traffic group (JobTrafficGroups: rail-aligned, one per rail), so only
  // the pairs that exchange traffic raise the weights. The router skips a destination's own
  // node; with JobHcaPairs::kAll it counts a host's other HCAs to it (it knows nodes, not hosts).
  std::vector<std::vector<int>> members;
  std::vector<size_t> largest(g.num_endpoint_dests, 0);
  if (in.jobs != nullptr) {
    for (const ResolvedJob& job : *in.jobs) {
      if (job.num_leaf_switches < 2) continue;
      for (const std::vector<int>& group : JobTrafficGroups(f, job)) {
        std::vector<int> m;
        // Route has checked that every endpoint is a cabled HCA port, i.e. one of the dests.
        for (int i : group) m.push_back(dest_of_port[f.port_id(job.endpoints[i])]);
        std::sort(m.begin(), m.end());
        m.erase(std::unique(m.begin(), m.end()), m.end());
        for (int e : m) largest[e] = std::max(largest[e], m.size());
        members.push_back(std::move(m));
      }
    }
  }
  router->SetJobs(std::move(members));

  // Lines 5-10: job nodes, descending by the size of their largest job. Destinations with
  // fixed entries (RoutingInput::fixed: FORS jobs) go first: their routes are decided, so their
  // loads are the base every other job's routes are balanced on.
  std::vector<int> job_dests;
  for (int e = 0; e < g.num_endpoint_dests; ++e) {
    if (largest[e] > 0) job_dests.push_back(e);
  }
  std::stable_sort(job_dests.begin(), job_dests.end(), [&](int a, int b) {
    if (router->HasFixed(a) != router->HasFixed(b)) return router->HasFixed(a);
    return largest[a] > largest[b];
  });
  for (int e : job_dests) steps->push_back({e, 0, true});

  // Lines 11-16: storage, then the rest (compute, other, remaining LMC LIDs of job nodes).
  const NodeClasses none;
  const NodeClasses& classes = in.classes != nullptr ? *in.classes : none;
  // Base LIDs before extra LMC LIDs, as in DFSSSP's plan (dfsssp.cc).
  for (bool extra : {false, true}) {
    for (NodeClass cls : {NodeClass::kStorage, NodeClass::kCompute, NodeClass::kOther}) {
      for (int e = 0; e < g.num_endpoint_dests; ++e) {
        if (classes.get(g.dests[e].node) != cls) continue;
        if (!extra && largest[e] > 0) continue;  // routed in the job phase
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

// The refinement's all-pairs cap: the budget times the all-pairs lower bound.
uint64_t AllPairsCap(const RoutingInput& in) {
  if (in.sar_all_pairs_budget <= 0) return std::numeric_limits<uint64_t>::max();
  ResolvedJob all;
  all.endpoints = in.fabric->Endpoints();
  all.num_leaf_switches = 2;  // only read as "spans switches"
  const uint64_t bound = EffectiveEfiLowerBound(*in.fabric, {all}).value;
  return static_cast<uint64_t>(in.sar_all_pairs_budget * static_cast<double>(bound));
}

std::string RefineNote(const RefineStats& st) {
  if (st.skipped) return "refinement skipped: not one job's trees fit its memory cap";
  return "refinement: " + std::to_string(st.moves) + " moves" +
         (st.trees_partial
              ? " in " + std::to_string(st.trees_kept) + " job destinations' trees (memory cap)"
              : std::string()) +
         ", max effective load " + std::to_string(st.effective_before) + " -> " +
         std::to_string(st.effective_after) + ", max all-pairs load " +
         std::to_string(st.all_before) + " -> " + std::to_string(st.all_after) +
         ", per-job phase " + std::to_string(st.job_moves) + " moves lowering " +
         std::to_string(st.jobs_lowered) + " jobs' bottlenecks" +
         (st.work_limited ? " (stopped at the work limit)" : "");
}

// No job regrets SAR (RoutingInput::sar_no_regret): a multi-switch job whose exchange time
// (sar/analysis/flows.h: its slowest flow, every such job all-to-all at once) would be longer on
// `lfts` than on dfsssp's paths for the same fabric gets dfsssp's entries for its members' base
// LIDs, the LIDs its own traffic uses. Taking a job's routes back changes what the others share, so
// it repeats until no job is slower; a job once taken back stays so. A job taken back that is
// still slower is held back by other jobs' routes: every job sharing a channel with it comes
// back too (every job, if those all are). With every job taken back, every intra-job route is
// dfsssp's and every time equal to dfsssp's, so the loop ends; after 16 rounds every remaining
// slower-or-not job is taken back at once. Each destination's entries
// come whole from one table, so every route stays delivered and loop-free; the virtual layers
// are assigned afterwards on the final tables.
//
// Jobs with fixed entries (RoutingInput::fixed: FORS jobs, routed first) compare like with like:
// the reference is dfsssp routed with the same fixed entries, and their traffic (in their FORS
// phases, RoutingInput::fixed_jobs) counts in both figures. They are never taken back (their
// routes are the reference's already) but judged: one slower than the slower of the reference
// and SAR's tables before the stage is held back by other jobs' routes (the "stuck" rule).
//
// The price of taking routes back is the rest of the traffic's: after the loop, if the all-pairs
// maximum (plain EFI) ended above what the stage started from, `refine` (SAR's refinement, may
// be null) runs again with the taken-back entries and `pinned` held, to bring it back within the
// budget around them; the loop then runs again (taking back any job that the moves made slower),
// and the result is kept only if the all-pairs maximum fell and the effective one did not rise.
using RefineAround = std::function<void(const std::vector<uint8_t>* pinned)>;
void KeepNoJobSlower(const RoutingInput& in, const SwitchGraph& g,
                     const std::vector<uint8_t>* pinned, const RefineAround& refine, LftSet* lfts,
                     std::vector<std::string>* notes) {
  if (!in.sar_no_regret || in.jobs == nullptr) return;
  const Fabric& f = *in.fabric;
  // LIDs with fixed entries (FORS jobs) are never taken back, nor any job with such a member.
  std::vector<char> fixed_lid(lfts->max_lid() + 1, 0);
  if (in.fixed != nullptr) {
    for (const FixedEntry& x : *in.fixed) {
      if (x.lid <= lfts->max_lid()) fixed_lid[x.lid] = 1;
    }
  }
  std::vector<ResolvedJob> multi, fixed_multi;
  for (const ResolvedJob& j : *in.jobs) {
    if (j.num_leaf_switches < 2) continue;
    bool fixed = false;
    for (const PortRef& e : j.endpoints) {
      const Lid lid = f.base_lid(e);
      fixed = fixed || (lid <= lfts->max_lid() && fixed_lid[lid]);
    }
    (fixed ? fixed_multi : multi).push_back(j);
  }
  // One flow job per job of `multi`, in order (rail-aligned pairs: ResolvedJob::Sends); these
  // may be taken back. After them the jobs whose routes are fixed (FORS jobs): they send in both
  // figures, as the pass runs them (their phases: RoutingInput::fixed_jobs; all at once when not
  // given), and are judged like the others, but never move: one of them slower than on the
  // reference is held back by other jobs' routes (the "stuck" rule below).
  std::vector<FlowJob> jobs = AllToAllFlowJobs(multi);
  const size_t movable = jobs.size();
  if (movable == 0) return;
  const std::vector<FlowJob> fixed_jobs =
      in.fixed_jobs != nullptr ? *in.fixed_jobs : AllToAllFlowJobs(fixed_multi);
  jobs.insert(jobs.end(), fixed_jobs.begin(), fixed_jobs.end());
  uint64_t flows = 0;
  for (const FlowJob& j : jobs) {
    if (j.phases.empty()) flows += static_cast<uint64_t>(j.endpoints.size()) * j.endpoints.size();
    for (const auto& phase : j.phases) flows += phase.size();
  }
  if (flows > kSarNoRegretMaxFlows) {
    notes->push_back("no-regret check skipped: " + std::to_string(flows) + " flows over its " +
                     std::to_string(kSarNoRegretMaxFlows) + " budget");
    return;
  }
  // The reference compares like with like: dfsssp routed with the same fixed entries (as the
  // pass gives dfsssp the FORS plans), so the fixed jobs' routes are the same on both tables and
  // dfsssp balances the rest around them as SAR did.
  SsspRouter reference(f);
  if (in.fixed != nullptr && !in.fixed->empty()) reference.SetFixed(*in.fixed);
  std::vector<SsspStep> steps;
  PlanDfsssp(in, &reference, &steps);
  for (const SsspStep& step : steps) reference.Run(step);
  const LftSet base = reference.TakeLfts();
  FlowOptions fo;
  fo.alone = false;
  fo.threads = in.threads;
  FlowReport want;
  if (!ComputeJobFlows(f, base, jobs, fo, &want).ok()) return;
  const DeltaLoads start = MeasureLoads(f, g, in.jobs, *lfts);
  // [endpoint dest * switches + switch]: the entries taken back (and `pinned`), held by a
  // second refinement.
  std::vector<int> dest_of_lid(lfts->max_lid() + 1, -1);
  for (int e = 0; e < g.num_endpoint_dests; ++e) {
    if (g.dests[e].base_lid <= lfts->max_lid()) dest_of_lid[g.dests[e].base_lid] = e;
  }
  std::vector<uint8_t> held(static_cast<size_t>(g.num_endpoint_dests) * g.num_switches, 0);
  if (pinned != nullptr && pinned->size() == held.size()) held = *pinned;
  // Fixed jobs count as taken back from the start: their routes are the reference's already.
  std::vector<char> back(jobs.size(), 0);
  for (size_t j = movable; j < jobs.size(); ++j) back[j] = 1;
  // A job taken back gets dfsssp's entries on the switches its own routes cross there (from
  // each member's switch towards each other member's base LID); every other switch keeps SAR's
  // entry for that LID, so the rest of the traffic to it stays as SAR balanced it. Both tables
  // are min-hop, so any mix of their entries delivers every route without a loop.
  auto take_back = [&](size_t j) {
    back[j] = 1;
    for (const PortRef& e : jobs[j].endpoints) {
      const Lid lid = f.base_lid(e);
      if (lid == 0 || lid > lfts->max_lid() || fixed_lid[lid]) continue;
      const int root = f.switch_index(f.peer(e).node);
      for (const PortRef& a : jobs[j].endpoints) {
        if (a.node == e.node) continue;
        int s = f.switch_index(f.peer(a).node);
        for (int hops = 0; s != root && hops < f.num_switches(); ++hops) {
          const uint8_t port = base.port(s, lid);
          if (port == LftSet::kNoRoute) break;
          lfts->set_port(s, lid, port);
          if (dest_of_lid[lid] >= 0) {
            held[static_cast<size_t>(dest_of_lid[lid]) * g.num_switches + s] = 1;
          }
          const NodeId next = f.peer(PortRef{f.switches()[s], port}).node;
          if (next == kNoNode || !f.is_switch(next)) break;
          s = f.switch_index(next);
        }
      }
    }
  };
  // The channels each job's own routes cross on the current tables (HCA links included).
  std::vector<int> endpoint_of(f.num_port_slots(), -1);
  {
    const std::vector<PortRef> ends = f.Endpoints();
    for (size_t i = 0; i < ends.size(); ++i) endpoint_of[f.port_id(ends[i])] = static_cast<int>(i);
  }
  // The pairs of a flow job: all at once (distinct nodes) or the union of its phases.
  auto channels_of = [&](size_t j) {
    std::vector<Flow> pairs;
    const std::vector<PortRef>& ends = jobs[j].endpoints;
    auto add = [&](size_t a, size_t b) {
      const int src = endpoint_of[f.port_id(ends[a])], dst = endpoint_of[f.port_id(ends[b])];
      if (src >= 0 && dst >= 0 && src != dst) {
        pairs.push_back({static_cast<uint32_t>(src), static_cast<uint32_t>(dst)});
      }
    };
    if (jobs[j].phases.empty()) {
      for (size_t a = 0; a < ends.size(); ++a) {
        for (size_t b = 0; b < ends.size(); ++b) {
          if (ends[a].node != ends[b].node) add(a, b);
        }
      }
    }
    for (const auto& phase : jobs[j].phases) {
      for (const auto& [a, b] : phase) {
        if (a >= 0 && b >= 0 && static_cast<size_t>(a) < ends.size() &&
            static_cast<size_t>(b) < ends.size()) {
          add(static_cast<size_t>(a), static_cast<size_t>(b));
        }
      }
    }
    std::vector<std::vector<int32_t>> paths;
    uint64_t lost = 0;
    TraceFlows(f, *lfts, {}, pairs, &paths, &lost);
    std::vector<int32_t> out;
    for (const std::vector<int32_t>& p : paths) out.insert(out.end(), p.begin(), p.end());
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  };
  // Each job's limit: its time on the reference. A fixed job cannot fall back (its routes are
  // the reference's already), and making it as fast as there could take every other job back
  // (seen: an alltoall job 6% slower than on the reference, its sharers taken back, the other
  // alltoall job 2x slower and two jobs 1.5-2x slower than on SAR's tables); so its limit is
  // the slower of the reference's and SAR's tables as the stage found them: the stage never
  // makes it slower than both, and one slower than the reference is counted in the note.
  std::vector<double> limit(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) limit[j] = want.jobs[j].shared.time;
  bool limits_set = false;
  FlowReport last;
  // Until no job is over its limit; false when the flows could not be computed.
  int rounds = 0;
  auto settle = [&] {
    for (bool changed = true; changed; ++rounds) {
      changed = false;
      FlowReport& now = last;
      if (!ComputeJobFlows(f, *lfts, jobs, fo, &now).ok()) return false;
      if (!limits_set) {
        for (size_t j = movable; j < jobs.size(); ++j) {
          limit[j] = std::max(limit[j], now.jobs[j].shared.time);
        }
        limits_set = true;
      }
      std::vector<size_t> stuck;  // taken back, yet slower: others' routes hold them back
      for (size_t j = 0; j < jobs.size(); ++j) {
        if (now.jobs[j].flows == 0) continue;
        const bool slower = now.jobs[j].shared.time > limit[j] * (1 + 1e-9);
        if (back[j]) {
          if (slower) stuck.push_back(j);
        } else if (slower || rounds >= 16) {
          take_back(j);
          changed = true;
        }
      }
      if (changed || stuck.empty()) continue;
      // Take back every job that shares a channel with a stuck one; if they all are back
      // already, every job (then every intra-job route is dfsssp's).
      std::vector<char> hot(f.num_port_slots(), 0);
      for (size_t j : stuck) {
        for (int32_t c : channels_of(j)) hot[c] = 1;
      }
      for (size_t k = 0; k < jobs.size(); ++k) {
        if (back[k]) continue;
        for (int32_t c : channels_of(k)) {
          if (!hot[c]) continue;
          take_back(k);
          changed = true;
          break;
        }
      }
      for (size_t k = 0; k < jobs.size() && !changed; ++k) {
        if (back[k]) continue;
        take_back(k);
        changed = true;
      }
    }
    return true;
  };
  if (!settle()) return;
  const int first_rounds = rounds;
  std::string again;
  // The final tables' loads, for the note: measured once, whichever branch ends with them.
  std::optional<DeltaLoads> final_loads;
  if (refine) {
    const DeltaLoads after = MeasureLoads(f, g, in.jobs, *lfts);
    final_loads = after;
    if (after.efi_max > start.efi_max) {
      const LftSet kept = *lfts;
      const std::vector<char> kept_back = back;
      const FlowReport kept_last = last;
      refine(&held);
      const bool settled = settle();
      const DeltaLoads now = MeasureLoads(f, g, in.jobs, *lfts);
      const bool better = settled && now.efi_max < after.efi_max &&
                          now.effective_efi_max <= after.effective_efi_max;
      if (better) {
        final_loads = now;
      } else {
        *lfts = kept;
        back = kept_back;
        last = kept_last;
      }
      again = "; all-pairs max " + std::to_string(after.efi_max) + " -> " +
              std::to_string(better ? now.efi_max : after.efi_max) + ", refined around them" +
              (better ? "" : " in vain");
    }
  }
  int taken = 0, fixed_slower = 0;
  for (size_t j = 0; j < movable; ++j) taken += back[j];
  for (size_t j = movable; j < jobs.size() && j < last.jobs.size(); ++j) {
    fixed_slower += last.jobs[j].shared.time > want.jobs[j].shared.time * (1 + 1e-9);
  }
  if (!final_loads) final_loads = MeasureLoads(f, g, in.jobs, *lfts);
  notes->push_back(
      "no job regrets: " + std::to_string(taken) + " of " + std::to_string(movable) +
      " multi-switch jobs keep dfsssp's routes (" + std::to_string(first_rounds) + " rounds" +
      again +
      (jobs.size() > movable
           ? "; " + std::to_string(jobs.size() - movable) +
                 " fixed-route (FORS) jobs judged too, " + std::to_string(fixed_slower) +
                 " of them slower than on dfsssp with their entries, none made slower by the stage"
           : std::string()) +
      "), max effective load " + std::to_string(final_loads->effective_efi_max));
}

class SarEngine : public RoutingEngine {
 public:
  std::string_view name() const override { return "sar"; }
  bool uses_jobs() const override { return true; }

 protected:
  Status DoRoute(const RoutingInput& in, RoutingOutput* out) const override {
    if (!in.sar_refine) {
      return RouteSssp(in, PlanSar, out,
                       [&in](const SsspRouter& router, LftSet* lfts,
                             std::vector<std::string>* notes, const std::vector<uint8_t>* pinned) {
                         KeepNoJobSlower(in, router.graph(), pinned, nullptr, lfts, notes);
                       });
    }
    return RouteSssp(in, PlanSar, out,
                     [&in](const SsspRouter& router, LftSet* lfts, std::vector<std::string>* notes,
                           const std::vector<uint8_t>* pinned) {
                       RefineOptions options;
                       // Only when the search runs (the bound takes ~0.3 s at 45k hosts).
                       if (!router.job_members().empty()) {
                         options.all_pairs_cap = AllPairsCap(in);
                       }
                       options.pinned = pinned;
                       options.threads = in.threads;
                       options.max_work = std::max<uint64_t>(1, in.sar_refine_work);
                       RefineStats st;
                       RefineJobRoutes(router.graph(), router.job_members(), router.arc_units(),
                                       options, lfts, &st);
                       notes->push_back(RefineNote(st));
                       const RefineAround refine = [&](const std::vector<uint8_t>* held) {
                         RefineOptions around = options;
                         around.pinned = held;
                         RefineStats again;
                         RefineJobRoutes(router.graph(), router.job_members(), router.arc_units(),
                                         around, lfts, &again);
                       };
                       KeepNoJobSlower(in, router.graph(), pinned, refine, lfts, notes);
                     });
  }
};

}  // namespace

std::unique_ptr<RoutingEngine> NewSarEngine() { return std::make_unique<SarEngine>(); }

}  // namespace sar::internal
