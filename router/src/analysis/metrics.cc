#include "sar/analysis/metrics.h"

#include <algorithm>
#include <memory>
#include <set>
#include <string_view>

#include "analysis/sweep_visitors.h"
#include "analysis/tree_load.h"

namespace sar {

namespace {

EfiSummary Summarize(const Fabric& fabric, const std::vector<uint64_t>& load, int channels) {
  EfiSummary s;
  uint64_t sum = 0;
  for (PortId id = 0; id < fabric.num_port_slots(); ++id) {
    if (!fabric.is_inter_switch(id)) continue;
    s.max = std::max(s.max, load[id]);
    sum += load[id];
  }
  s.mean = channels ? static_cast<double>(sum) / channels : 0;
  return s;
}

CapacityLoad SummarizePerCapacity(const Fabric& fabric, const std::vector<uint64_t>& load,
                                  const std::vector<uint32_t>& capacity, uint32_t nominal,
                                  int channels) {
  CapacityLoad s;
  double sum = 0;
  for (PortId id = 0; id < fabric.num_port_slots(); ++id) {
    if (!fabric.is_inter_switch(id)) continue;
    const double v = static_cast<double>(load[id]) * nominal / capacity[id];
    s.max = std::max(s.max, v);
    sum += v;
  }
  s.mean = channels ? sum / channels : 0;
  return s;
}

// Plain EFI from every destination's first visit; each job's own routes from the visits the
// sweep makes as that job's, judged in EndJob.
class MetricsVisitor : public internal::SweepVisitor {
 public:
  MetricsVisitor(const internal::SweepContext& ctx, const std::vector<ResolvedJob>& jobs,
                 Metrics* out)
      : ctx_(ctx), fabric_(ctx.fabric), jobs_(jobs), out_(out) {}

  void Start(int workers) override;
  void Visit(int worker, const internal::SweepDestination& d, const DestinationTree& tree) override;
  void EndJob(int job, int worker) override;
  void Finish() override;

 private:
  struct Worker {
    explicit Worker(int switches) : sources(switches) {}
    internal::TreeLoad sources;
    std::vector<uint64_t> efi;        // per port slot: all pairs
    std::vector<uint64_t> job;        // per port slot: the current job's pairs
    std::vector<uint64_t> effective;  // per port slot: the jobs this worker judged
  };

  const internal::SweepContext& ctx_;
  const Fabric& fabric_;
  const std::vector<ResolvedJob>& jobs_;
  Metrics* out_;
  std::vector<Worker> workers_;
  std::vector<JobMetrics> job_metrics_;  // per job
};

void MetricsVisitor::Start(int workers) {
  const size_t slots = fabric_.num_port_slots();
  workers_.assign(workers, Worker(fabric_.num_switches()));
  for (Worker& w : workers_) {
    w.efi.assign(slots, 0);
    if (!jobs_.empty()) {
      w.job.assign(slots, 0);
      w.effective.assign(slots, 0);
    }
  }
  job_metrics_.assign(jobs_.size(), {});
  for (size_t j = 0; j < jobs_.size(); ++j) {
    std::set<std::string_view> hosts;
    for (int e : ctx_.job_members[j]) hosts.insert(fabric_.hostname(ctx_.endpoints[e].node));
    job_metrics_[j].id = jobs_[j].id;
    job_metrics_[j].hosts = static_cast<int>(hosts.size());
    job_metrics_[j].leaf_switches = jobs_[j].num_leaf_switches;
  }
}

void MetricsVisitor::Visit(int worker, const internal::SweepDestination& d,
                           const DestinationTree& tree) {
  if (!d.sent || d.leaf < 0) return;
  Worker& w = workers_[worker];
  if (d.first) {  // plain EFI: every endpoint to every endpoint on another node
    w.sources.AddAllBut(ctx_, d);
    w.sources.Push(ctx_.tracer, tree, w.efi.data());
  }
  if (d.job >= 0) {  // effective EFI: each job on its own, its pairs by ResolvedJob::Sends
    const ResolvedJob& job = jobs_[d.job];
    const std::vector<int>& members = ctx_.job_members[d.job];
    const std::vector<int>& pos = ctx_.job_member_pos[d.job];
    const size_t to = static_cast<size_t>(pos[d.member]);
    for (size_t k = 0; k < members.size(); ++k) {
      const int e = members[k];
      if (job.Sends(static_cast<size_t>(pos[k]), to) && ctx_.leaf[e] >= 0 && ctx_.Sends(e, d)) {
        w.sources.Add(ctx_.leaf[e], 1);
      }
    }
    w.sources.Push(ctx_.tracer, tree, w.job.data());
  }
}

void MetricsVisitor::EndJob(int job, int worker) {
  Worker& w = workers_[worker == kAllWorkers ? 0 : worker];
  std::vector<uint64_t>& load = w.job;
  if (worker == kAllWorkers) {
    for (size_t other = 1; other < workers_.size(); ++other) {
      std::vector<uint64_t>& part = workers_[other].job;
      for (size_t i = 0; i < load.size(); ++i) load[i] += part[i];
      std::fill(part.begin(), part.end(), 0);
    }
  }
  JobMetrics& jm = job_metrics_[job];
  for (PortId id = 0; id < fabric_.num_port_slots(); ++id) {
    if (load[id] != 0 && fabric_.is_inter_switch(id)) {
      jm.efi_max = std::max(jm.efi_max, load[id]);
      ++jm.channels;
      w.effective[id] += load[id];
    }
  }
  std::fill(load.begin(), load.end(), 0);
}

void MetricsVisitor::Finish() {
  Metrics m;
  for (PortId id = 0; id < fabric_.num_port_slots(); ++id)
    m.channels += fabric_.is_inter_switch(id);
  m.efi_per_channel = std::move(workers_[0].efi);
  m.effective_efi_per_channel.assign(fabric_.num_port_slots(), 0);
  for (size_t w = 0; w < workers_.size(); ++w) {
    if (w > 0) {
      for (size_t i = 0; i < m.efi_per_channel.size(); ++i) {
        m.efi_per_channel[i] += workers_[w].efi[i];
      }
    }
    for (size_t i = 0; i < workers_[w].effective.size(); ++i) {
      m.effective_efi_per_channel[i] += workers_[w].effective[i];
    }
  }
  m.jobs = std::move(job_metrics_);

  // Only switch-to-switch channels carry an EFI; the pushes also counted HCA downlinks.
  for (PortId id = 0; id < fabric_.num_port_slots(); ++id) {
    if (!fabric_.is_inter_switch(id)) m.efi_per_channel[id] = 0;
  }
  m.efi = Summarize(fabric_, m.efi_per_channel, m.channels);
  m.effective_efi = Summarize(fabric_, m.effective_efi_per_channel, m.channels);
  int dark = 0;
  for (PortId id = 0; id < fabric_.num_port_slots(); ++id) {
    dark += fabric_.is_inter_switch(id) && m.effective_efi_per_channel[id] == 0;
  }
  m.dark_fiber = m.channels ? static_cast<double>(dark) / m.channels : 0;
  const std::vector<uint32_t> capacity = fabric_.ChannelCapacities();
  const uint32_t nominal =
      capacity.empty() ? 1 : *std::max_element(capacity.begin(), capacity.end());
  m.efi_per_capacity =
      SummarizePerCapacity(fabric_, m.efi_per_channel, capacity, nominal, m.channels);
  m.effective_efi_per_capacity =
      SummarizePerCapacity(fabric_, m.effective_efi_per_channel, capacity, nominal, m.channels);
  for (PortId id = 0; id < fabric_.num_port_slots(); ++id) {
    m.slow_channels += fabric_.is_inter_switch(id) && capacity[id] < nominal;
  }
  *out_ = std::move(m);
}

}  // namespace

namespace internal {

std::unique_ptr<SweepVisitor> NewMetricsVisitor(const SweepContext& ctx,
                                                const std::vector<ResolvedJob>& jobs,
                                                Metrics* out) {
  return std::make_unique<MetricsVisitor>(ctx, jobs, out);
}

}  // namespace internal

}  // namespace sar
