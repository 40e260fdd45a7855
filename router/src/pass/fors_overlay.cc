// The FORS overlay: alltoall jobs first. With engine "sar" on a 2-level fat-tree
// (DetectFatTree2) each alltoall job gets a per-job FORS plan (fors_job.h) before the engine
// runs; the entries for the job's base LIDs go to the engine as fixed entries
// (RoutingInput::fixed), which SAR routes first and balances every other job around, and no
// later stage moves them, so the delta keep, the stability rule, the all-pairs budget and the
// layers all judge the final tables. Jobs must not share hosts (entries are per destination), so
// a job overlapping an earlier one is routed by SAR. Later jobs are planned against the routes of
// the plans before them (PlanForsJobJointly). With fors_only_where_faster a plan slower for its
// job than the pass without FORS is dropped (JudgeAlltoallJobs). Guaranteed: no link twice within
// one phase of one job. Not guaranteed: anything across jobs (they are not synchronised). Elsewhere
// alltoall jobs are SAR jobs, noted once. FORS never fails a pass (pass.cc): a job it cannot plan
// is routed by SAR, and if routing or validation fails with the entries, the pass routes again
// without them (noted). In migration mode the entries are written over the engine's base tables
// after it ran (noted).
#include <cstdio>
#include <string>
#include <utility>

#include "pass/stages.h"

namespace sar::pass {

void PlanAlltoallJobs(const RoutingInputs& in, AlltoallPlans* out, std::vector<std::string>* notes,
                      std::vector<ForsJobNone>* none) {
  std::vector<const ResolvedJob*> jobs;
  std::string names;
  for (const ResolvedJob& j : in.jobs) {
    if (j.pattern != JobPattern::kAllToAll) continue;
    jobs.push_back(&j);
    names += (names.empty() ? "" : " ") + j.id;
  }
  // Every alltoall job without a plan goes to *none with the reason (its "none" schedule file
  // says it; one rule for all callers).
  auto no_fors = [&](const ResolvedJob& job, std::string reason) {
    none->push_back({job.id, std::move(reason), job.endpoints.size()});
  };
  if (jobs.empty()) return;
  if (in.engine != "sar") {
    for (const ResolvedJob* job : jobs) {
      no_fors(*job, "routing engine " + in.engine + ", FORS needs engine sar");
    }
    return;
  }
  const Fabric& f = *in.fabric;
  if (const Status s = DetectFatTree2(f, &out->topo); !s.ok()) {
    notes->push_back(
        "alltoall jobs routed as ordinary SAR jobs, the fabric is not a 2-level "
        "fat-tree (" +
        s.message() + "): " + names);
    for (const ResolvedJob* job : jobs) {
      no_fors(*job, "the fabric is not a 2-level fat-tree (" + s.message() + ")");
    }
    return;
  }
  std::vector<uint8_t> taken(f.num_port_slots(), 0);
  std::vector<int> spine_load;
  ForsChannelLoads loads;  // the routes of the plans so far (joint planning)
  for (const ResolvedJob* job : jobs) {
    if (job->endpoints.size() < 2) {
      no_fors(*job, std::to_string(job->endpoints.size()) +
                        " of the job's hosts in the fabric: nothing to exchange");
      continue;
    }
    bool overlap = false;
    for (const PortRef& e : job->endpoints) overlap = overlap || taken[f.port_id(e)];
    if (overlap) {
      notes->push_back("alltoall job " + job->id +
                       " shares hosts with an earlier alltoall job: routed by SAR");
      no_fors(*job, "shares hosts with an earlier alltoall job: routed by SAR");
      continue;
    }
    ForsJobPlan plan;
    const Status s = PlanForsJobJointly(f, out->topo, *job, &loads, &spine_load, &plan);
    if (!s.ok()) {
      notes->push_back("alltoall job " + job->id + " routed by SAR: " + s.message());
      no_fors(*job, "routed by SAR: " + s.message());
      continue;
    }
    ForEachForsJobEntry(f, out->topo, plan, [out](int sw, Lid lid, uint8_t port) {
      out->entries.push_back({sw, lid, port});
    });
    for (const PortRef& e : job->endpoints) taken[f.port_id(e)] = 1;
    out->plans.push_back(std::move(plan));
  }
}

// After the engine: the plans' entries are in the tables (the engine routed with them; where it
// did not, as migration mode's base view or a test's engine, they are written over its tables,
// noted). Entries of different jobs are for different LIDs, so each plan is judged on the
// tables once all are in.
void CheckAlltoallJobs(const RoutingInputs& in, const AlltoallPlans& a, RoutingOutput* out) {
  if (a.plans.empty()) return;
  const Fabric& f = *in.fabric;
  uint64_t written = 0;
  for (const FixedEntry& x : a.entries) {
    if (x.lid > out->lfts.max_lid() || out->lfts.port(x.sw, x.lid) == x.port) continue;
    out->lfts.set_port(x.sw, x.lid, x.port);
    ++written;
  }
  if (written > 0) {
    out->notes.push_back("alltoall entries written over the engine's tables: " +
                         std::to_string(written) + " of " + std::to_string(a.entries.size()));
  }
  for (const ForsJobPlan& plan : a.plans) {
    const ForsJobStats& st = plan.stats;
    std::string note = "fors job " + plan.job_id + ": " + std::to_string(plan.hosts.size()) +
                       " hosts, " + std::to_string(st.phases) + " phases (lower bound " +
                       std::to_string(st.lower_bound) + "), spines " +
                       (st.spines_permuted ? "in a joint order from " : "") +
                       std::to_string(st.spine_offset) + "+" + std::to_string(st.spines_used) +
                       " of " + std::to_string(a.topo.num_spines());
    if (st.rerouted > 0) {
      note += ", " + std::to_string(st.rerouted) + " entries around failed links, " +
              std::to_string(st.moved) + " transfers moved to " + std::to_string(st.split_phases) +
              " extra phases";
    }
    if (st.compacted > 0) note += ", " + std::to_string(st.compacted) + " phases compacted away";
    const Status c = CheckForsJobOnTables(f, out->lfts, plan.hosts, plan.phases);
    note += c.ok() ? "; every phase conflict-free on the tables" : "; CHECK FAILED: " + c.message();
    out->notes.push_back(note);
  }
}

// FORS only where it helps (docs/fors.md): the pass routed with every plan's entries (*out);
// each plan is judged against the same pass routed without FORS entries. Slower plans go to
// *none with the figures; the tables are then routed again with the plans kept (or are the
// plain ones when none is kept). Any failure keeps what *out holds.
void JudgeAlltoallJobs(const RoutingInputs& in, const RoutingEngine& engine, AlltoallPlans* a,
                       RoutingOutput* out, std::vector<std::string>* notes,
                       std::vector<ForsJobNone>* none) {
  if (a->plans.empty() || !in.options.fors_only_where_faster) return;
  const Fabric& f = *in.fabric;
  LftSet with = out->lfts;  // as CheckAlltoallJobs leaves them (migration mode writes over)
  for (const FixedEntry& x : a->entries) {
    if (x.lid <= with.max_lid()) with.set_port(x.sw, x.lid, x.port);
  }
  RoutingOutput plain;
  if (!RouteTables(in, engine, nullptr, &plain).ok()) return;
  std::vector<ForsVerdict> verdicts;
  JudgeForsPlans(f, in.jobs, a->plans, with, plain.lfts, in.options.threads, kDefaultForsJudgePairs,
                 &verdicts);
  std::vector<ForsJobPlan> kept;
  for (size_t i = 0; i < a->plans.size(); ++i) {
    const ForsVerdict& v = verdicts[i];
    if (!v.judged) {
      notes->push_back("fors job " + v.job_id +
                       ": kept unjudged (the flow model is over its bound or has no figure)");
    }
    if (v.keep) {
      kept.push_back(std::move(a->plans[i]));
      continue;
    }
    char why[200];
    std::snprintf(why, sizeof why,
                  "its FORS phases are slower than SAR's routes all at once (exchange %.1f "
                  "against %.1f, message / line rate): routed by SAR",
                  v.phased_time, v.plain_time);
    notes->push_back("alltoall job " + v.job_id + " " + why);
    none->push_back({v.job_id, why, a->plans[i].hosts.size()});
  }
  if (kept.size() == a->plans.size()) return;
  a->plans = std::move(kept);
  a->entries.clear();
  for (const ForsJobPlan& plan : a->plans) {
    ForEachForsJobEntry(f, a->topo, plan, [a](int sw, Lid lid, uint8_t port) {
      a->entries.push_back({sw, lid, port});
    });
  }
  if (a->plans.empty() || !RouteTables(in, engine, a, out).ok()) {
    *out = std::move(plain);
    for (const ForsJobPlan& plan : a->plans) {
      none->push_back(
          {plan.job_id, "FORS entries withdrawn, routing with them failed", plan.hosts.size()});
    }
    a->plans.clear();
    a->entries.clear();
  }
}

}  // namespace sar::pass
