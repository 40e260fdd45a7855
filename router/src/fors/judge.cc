// JudgeForsPlans: a FORS plan is kept only where its phases are not slower for its job than
// the job's routes all at once without FORS (docs/fors.md, "Only where it helps").
#include <algorithm>

#include "sar/analysis/flows.h"
#include "sar/fors/fors_job.h"

namespace sar {

FlowJob ForsFlowJob(const ForsJobPlan& plan) {
  FlowJob j;
  j.id = plan.job_id;
  j.endpoints = plan.hosts;
  for (const std::vector<ForsJobTransfer>& phase : plan.phases) {
    j.phases.emplace_back();
    for (const ForsJobTransfer& t : phase) j.phases.back().push_back({t.src, t.dst});
  }
  return j;
}

Status AddForsPhases(const Fabric& fabric, const ForsScheduleFile& schedule, FlowJob* job) {
  auto index_of = [&](const std::string& host) {
    for (size_t i = 0; i < job->endpoints.size(); ++i) {
      if (fabric.hostname(job->endpoints[i].node) == host) return static_cast<int32_t>(i);
    }
    return int32_t{-1};
  };
  std::vector<std::pair<int64_t, std::pair<int32_t, int32_t>>> rows;
  for (const ForsScheduleRow& r : schedule.rows) {
    const int32_t s = index_of(r.src), d = index_of(r.dst);
    if (s < 0 || d < 0) {
      return Status::InvalidArgument("FORS schedule of job " + schedule.job_id + ": host '" +
                                     (s < 0 ? r.src : r.dst) + "' is not one of job " + job->id +
                                     "'s hosts");
    }
    rows.push_back({r.phase, {s, d}});
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  job->phases.clear();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i == 0 || rows[i].first != rows[i - 1].first) job->phases.emplace_back();
    job->phases.back().push_back(rows[i].second);
  }
  return Status::OK();
}

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
