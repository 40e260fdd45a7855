#include "flows_report.h"

#include <cstdio>
#include <filesystem>

#include "sar/fors/fors_job.h"

namespace sarcli {

using Json = nlohmann::ordered_json;

std::vector<sar::FlowJob> FlowJobsFor(const sar::Fabric& fabric,
                                      const std::vector<sar::ResolvedJob>& jobs,
                                      const std::string& mapping_path, bool schedules,
                                      std::vector<std::string>* notes) {
  std::vector<sar::FlowJob> out = sar::AllToAllFlowJobs(jobs);
  if (!schedules || mapping_path.empty()) return out;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].pattern != sar::JobPattern::kAllToAll) continue;
    if (!sar::ForsJobIdIsFileSafe(jobs[i].id)) continue;
    const std::string path = sar::ForsSchedulePath(mapping_path, jobs[i].id);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      notes->push_back("job " + jobs[i].id + ": no FORS schedule (" + path +
                       "): all-to-all at once");
      continue;
    }
    sar::ForsScheduleFile file;
    sar::Status s = sar::ReadForsSchedule(path, &file);
    if (s.ok() && file.rows.empty()) {
      s = sar::Status::InvalidArgument(path + ": no phases");
    }
    if (s.ok()) s = sar::AddForsPhases(fabric, file, &out[i]);
    if (!s.ok()) {
      notes->push_back("job " + jobs[i].id + ": schedule not used (" + s.message() +
                       "): all-to-all at once");
    }
  }
  return out;
}

Json FlowsJson(const sar::FlowReport& r, const sar::FlowComparison* vs,
               const std::string& baseline) {
  Json j;
  const sar::FlowSummary& s = r.summary;
  j["summary"] = {{"jobs", s.jobs},
                  {"median_slowest", s.median_slowest},
                  {"min_slowest", s.min_slowest},
                  {"median_time", s.median_time},
                  {"p95_time", s.p95_time},
                  {"max_time", s.max_time},
                  {"median_slowdown", s.median_slowdown},
                  {"p95_slowdown", s.p95_slowdown},
                  {"max_slowdown", s.max_slowdown},
                  {"flows", r.flows},
                  {"bundles", r.bundles},
                  {"rounds", r.rounds}};
  Json jobs = Json::array();
  for (size_t i = 0; i < r.jobs.size(); ++i) {
    const sar::JobFlows& f = r.jobs[i];
    Json row = {
        {"id", f.id},         {"endpoints", f.endpoints}, {"leaf_switches", f.leaf_switches},
        {"phases", f.phases}, {"flows", f.flows},         {"undelivered", f.undelivered}};
    if (f.flows > 0) {
      row["slowest"] = f.shared.slowest;
      row["mean"] = f.shared.mean;
      row["time"] = f.shared.time;
      row["alone_slowest"] = f.alone.slowest;
      row["alone_time"] = f.alone.time;
      row["slowdown"] = f.slowdown();
    }
    if (vs != nullptr) {
      row["speedup_vs_baseline"] = vs->speedup[i] > 0 ? Json(vs->speedup[i]) : Json(nullptr);
    }
    jobs.push_back(std::move(row));
  }
  j["jobs"] = std::move(jobs);
  if (vs != nullptr) {
    j["vs_baseline"] = {{"baseline", baseline},
                        {"jobs", vs->jobs},
                        {"faster", vs->faster},
                        {"equal", vs->equal},
                        {"slower", vs->slower},
                        {"slower_over_2pct", vs->slower_2pct},
                        {"median_speedup", vs->median_speedup},
                        {"min_speedup", vs->min_speedup},
                        {"max_speedup", vs->max_speedup}};
  }
  return j;
}

void PrintFlows(const sar::FlowReport& r, const sar::FlowComparison* vs,
                const std::string& baseline) {
  std::printf(
      "per-job throughput (every job sending at once, max-min fair; rates in line rate, time in "
      "message/line rate):\n");
  std::printf("%-16s %6s %6s %6s %9s %9s %9s %9s", "job", "hosts", "leaves", "phases", "slowest",
              "mean", "time", "slowdown");
  if (vs != nullptr) std::printf("  vs %s", baseline.c_str());
  std::printf("\n");
  for (size_t i = 0; i < r.jobs.size(); ++i) {
    const sar::JobFlows& f = r.jobs[i];
    std::printf("%-16s %6d %6d %6d ", f.id.c_str(), f.endpoints, f.leaf_switches, f.phases);
    if (f.flows == 0) {
      std::printf("%s",
                  f.endpoints == 0 ? "no flows: no host of this job is in the fabric" : "no flows");
    } else {
      std::printf("%9.4f %9.4f %9.1f %9.2f", f.shared.slowest, f.shared.mean, f.shared.time,
                  f.slowdown());
      if (vs != nullptr && vs->speedup[i] > 0) std::printf("  %.2fx", vs->speedup[i]);
    }
    if (f.undelivered > 0) {
      std::printf("  %llu pairs without a delivered route",
                  static_cast<unsigned long long>(f.undelivered));
    }
    std::printf("\n");
  }
  const sar::FlowSummary& s = r.summary;
  std::printf(
      "jobs' time:     median %.1f, p95 %.1f, max %.1f; slowest flow median %.4f, min %.4f; "
      "slowdown by the others median %.2f, max %.2f\n",
      s.median_time, s.p95_time, s.max_time, s.median_slowest, s.min_slowest, s.median_slowdown,
      s.max_slowdown);
  if (vs != nullptr) {
    std::printf(
        "vs %-12s %d jobs faster, %d equal, %d slower (%d by more than 2%%); speedup median "
        "%.2fx, min %.2fx, max %.2fx\n",
        (baseline + ":").c_str(), vs->faster, vs->equal, vs->slower, vs->slower_2pct,
        vs->median_speedup, vs->min_speedup, vs->max_speedup);
  }
}

std::string FlowsVersusEfiNote(const std::string& name, uint64_t efi, const std::string& baseline,
                               uint64_t baseline_efi, const sar::FlowComparison& vs) {
  char buf[512];
  if (efi <= baseline_efi && vs.slower_2pct > 0) {
    std::snprintf(buf, sizeof buf,
                  "note: %s's max effective EFI (%llu) is at or below %s's (%llu), yet %d of %d "
                  "jobs' slowest flow is more than 2%% slower (worst %.2fx): the per-job "
                  "throughput, not the EFI, predicts a job's time",
                  name.c_str(), static_cast<unsigned long long>(efi), baseline.c_str(),
                  static_cast<unsigned long long>(baseline_efi), vs.slower_2pct, vs.jobs,
                  vs.min_speedup);
    return buf;
  }
  if (efi > baseline_efi && vs.jobs > 0 && vs.slower == 0) {
    std::snprintf(buf, sizeof buf,
                  "note: %s's max effective EFI (%llu) is above %s's (%llu), yet no job is "
                  "slower (median speedup %.2fx): the per-job throughput, not the EFI, predicts "
                  "a job's time",
                  name.c_str(), static_cast<unsigned long long>(efi), baseline.c_str(),
                  static_cast<unsigned long long>(baseline_efi), vs.median_speedup);
    return buf;
  }
  return "";
}

}  // namespace sarcli
