#include "sar/job_mix.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace sar {
namespace {

struct RunningJob {
  int id;
  std::vector<std::pair<int, int>> slots;  // (leaf, host index within leaf)
};

class Machine {
 public:
  explicit Machine(const Fabric& fabric) {
    // Hosts grouped by the switch their first cabled port hangs off, in fabric order.
    std::map<NodeId, int> leaf_of_switch;
    std::set<std::string_view> seen;
    for (const PortRef& e : fabric.Endpoints()) {
      const std::string_view host = fabric.hostname(e.node);
      if (!seen.insert(host).second) continue;  // a host with two ports counts once
      const NodeId sw = fabric.peer(e).node;
      auto [it, added] = leaf_of_switch.emplace(sw, static_cast<int>(hosts_.size()));
      if (added) hosts_.emplace_back();
      hosts_[it->second].emplace_back(host);
    }
    for (const auto& leaf : hosts_) {
      free_.emplace_back(leaf.size(), true);
      free_count_.push_back(static_cast<int>(leaf.size()));
      total_ += static_cast<int>(leaf.size());
    }
  }

  int total() const { return total_; }
  int busy() const { return busy_; }
  int FreeOn(int leaf) const { return free_count_[leaf]; }

  // Places `size` hosts as topology/tree + select/linear would; false if they are not free.
  bool Place(int size, RunningJob* job) {
    if (size > total_ - busy_) return false;
    const int leaves = static_cast<int>(hosts_.size());
    int best = -1;
    for (int l = 0; l < leaves; ++l) {
      const int f = FreeOn(l);
      if (f >= size && (best < 0 || f < FreeOn(best))) best = l;
    }
    std::vector<int> order;
    if (best >= 0) {
      order.push_back(best);
    } else {
      for (int l = 0; l < leaves; ++l) order.push_back(l);
      std::stable_sort(order.begin(), order.end(),
                       [&](int a, int b) { return FreeOn(a) > FreeOn(b); });
    }
    int need = size;
    for (int l : order) {
      for (int h = 0; h < static_cast<int>(free_[l].size()) && need > 0; ++h) {
        if (!free_[l][h]) continue;
        free_[l][h] = false;
        --free_count_[l];
        job->slots.emplace_back(l, h);
        --need;
      }
      if (need == 0) break;
    }
    busy_ += size;
    return true;
  }

  void Release(const RunningJob& job) {
    for (const auto& [l, h] : job.slots) {
      free_[l][h] = true;
      ++free_count_[l];
    }
    busy_ -= static_cast<int>(job.slots.size());
  }

  const std::string& host(int leaf, int h) const { return hosts_[leaf][h]; }

 private:
  std::vector<std::vector<std::string>> hosts_;  // per leaf
  std::vector<std::vector<bool>> free_;
  std::vector<int> free_count_;  // per leaf: free hosts, kept with free_
  int total_ = 0;
  int busy_ = 0;
};

}  // namespace

Status GenerateJobMix(const Fabric& fabric, const JobMixOptions& o, JobMapping* out) {
  if (o.min_size < 1 || o.max_size < o.min_size) {
    return Status::InvalidArgument("job sizes must satisfy 1 <= min <= max");
  }
  if (o.utilization < 0 || o.utilization > 1 || o.departures < 0 || o.departures > 1) {
    return Status::InvalidArgument("utilization and departures are shares in [0, 1]");
  }
  Machine m(fabric);
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
      if (size > target - m.busy() + o.min_size || !m.Place(size, &job)) {
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
        m.Release(j);
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
    for (const auto& [l, h] : j.slots) job.hosts.push_back(m.host(l, h));
    out->jobs.push_back(std::move(job));
  }
  return Status::OK();
}

}  // namespace sar
