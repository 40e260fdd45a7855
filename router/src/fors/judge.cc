// JudgeForsPlans: a FORS plan is kept only where its phases are not slower for its job than
// the job's routes all at once without FORS (docs/fors.md, "Only where it helps").
#include <algorithm>

#include "sar/analysis/flows.h"
#include "sar/fors/fors_job.h"

namespace sar {

void JudgeForsPlans(const Fabric& fabric, const std::vector<ResolvedJob>& jobs,
                    const std::vector<ForsJobPlan>& plans, const LftSet& with_fors,
                    const LftSet& without, int threads, uint64_t max_pairs,
                    std::vector<ForsVerdict>* out) {
  out->assign(plans.size(), ForsVerdict());
  for (size_t i = 0; i < plans.size(); ++i) (*out)[i].job_id = plans[i].job_id;
  std::vector<FlowJob> plain = AllToAllFlowJobs(jobs), phased = plain;
  // Work of the phased run: every round runs all jobs without phases (flows.h, "Rounds").
  uint64_t rounds = 1, others = 0, phase_pairs = 0;
  std::vector<int> plan_of(phased.size(), -1);
  for (size_t j = 0; j < phased.size(); ++j) {
    for (size_t i = 0; i < plans.size(); ++i) {
      if (plans[i].job_id == phased[j].id) {
        phased[j] = ForsFlowJob(plans[i]);
        plan_of[j] = static_cast<int>(i);
      }
    }
    const uint64_t n = phased[j].endpoints.size();
    if (plan_of[j] >= 0) {
      rounds = std::max<uint64_t>(rounds, phased[j].phases.size());
      phase_pairs += n * (n - 1);
    } else {
      others += n * (n > 0 ? n - 1 : 0);
    }
  }
  if (rounds * others + phase_pairs > max_pairs) return;
  FlowOptions fo;
  fo.alone = false;
  fo.threads = threads;
  fo.max_flows = max_pairs;
  FlowReport with, plain_report;
  if (!ComputeJobFlows(fabric, with_fors, phased, fo, &with).ok() ||
      !ComputeJobFlows(fabric, without, plain, fo, &plain_report).ok()) {
    return;
  }
  for (size_t j = 0; j < phased.size(); ++j) {
    if (plan_of[j] < 0) continue;
    ForsVerdict& v = (*out)[plan_of[j]];
    v.phased_time = with.jobs[j].shared.time;
    v.plain_time = plain_report.jobs[j].shared.time;
    // A job without flows in either run (hosts without LIDs, undelivered) is not judged.
    if (v.phased_time <= 0 || v.plain_time <= 0 || with.jobs[j].undelivered > 0) continue;
    v.judged = true;
    v.keep = v.phased_time <= v.plain_time * (1 + 1e-9);
  }
}

}  // namespace sar
