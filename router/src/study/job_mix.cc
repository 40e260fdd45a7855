#include "sar/study/job_mix.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "sar/study/host_allocator.h"

namespace sar {
namespace {

struct RunningJob {
  int id;
  std::vector<int> hosts;  // HostAllocator indices
};

}  // namespace

Status GenerateJobMix(const Fabric& fabric, const JobMixOptions& o, JobMapping* out) {
  if (o.min_size < 1 || o.max_size < o.min_size) {
    return Status::InvalidArgument("job sizes must satisfy 1 <= min <= max");
  }
  if (o.run_length < 0) return Status::InvalidArgument("run length must be >= 0");
  if (o.utilization < 0 || o.utilization > 1 || o.departures < 0 || o.departures > 1) {
    return Status::InvalidArgument("utilization and departures are shares in [0, 1]");
  }
  HostAllocator m(fabric);
  std::mt19937_64 rng(o.seed);
  const double lo = std::log(static_cast<double>(o.min_size));
  const double hi = std::log(static_cast<double>(o.max_size) + 1);
  std::uniform_real_distribution<double> log_size(lo, hi);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<RunningJob> running;
  int next_id = 1;
  for (int round = 0; round < std::max(1, o.rounds); ++round) {
    // Arrivals until the target is reached; a job too big for the holes left waits (is
    // dropped here), as a backfilling scheduler would start smaller ones instead.
    const int target = static_cast<int>(o.utilization * m.total());
    for (int misses = 0; m.busy() < target && misses < 50;) {
      int size = static_cast<int>(std::exp(log_size(rng)));
      size = std::clamp(size, o.min_size, std::min(o.max_size, m.total()));
      RunningJob job;
      job.id = next_id;
      if (size > target - m.busy() + o.min_size ||
          !(o.run_length > 0 ? m.PlaceRuns(size, o.run_length, &rng, &job.hosts)
                             : m.Place(size, &job.hosts))) {
        ++misses;
        continue;
      }
      ++next_id;
      running.push_back(std::move(job));
    }
    if (round + 1 == std::max(1, o.rounds)) break;
    std::vector<RunningJob> staying;
    for (RunningJob& j : running) {
      if (unit(rng) < o.departures) {
        m.Release(j.hosts);
      } else {
        staying.push_back(std::move(j));
      }
    }
    running = std::move(staying);
  }
  out->jobs.clear();
  for (const RunningJob& j : running) {
    Job job;
    job.id = "job" + std::to_string(j.id);
    for (int h : j.hosts) job.hosts.push_back(m.host(h));
    out->jobs.push_back(std::move(job));
  }
  return Status::OK();
}

}  // namespace sar
