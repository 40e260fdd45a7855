#include "sar/analysis/flows.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <queue>

#include "analysis/trace_parallel.h"
#include "sar/analysis/route_tracer.h"
#include "sar/model/lids.h"

namespace sar {
namespace {

constexpr uint32_t kNoBundle = std::numeric_limits<uint32_t>::max();

// Switch paths shared by all sources on one switch towards one destination LID, the last
// channel being the destination's leaf port to its HCA (CSR).
struct Bundles {
  std::vector<uint64_t> begin{0};
  std::vector<PortId> path;
  uint32_t size() const { return static_cast<uint32_t>(begin.size() - 1); }
};

// Flows of one job (all-to-all or one phase), sorted by bundle: each bundle's flows are one run.
struct FlowPart {
  uint32_t job = 0;
  std::vector<PortId> up;          // per flow: the source's HCA channel
  std::vector<uint32_t> bundle;    // per flow
  std::vector<uint32_t> src, dst;  // per flow: job endpoint indices (FlowOptions::record_rates)
};

// A job's endpoints and the bundle of every (source group, destination) pair. A source group is
// the sources on one switch with one LID offset: they share every route.
struct JobPaths {
  std::vector<int> ends;      // endpoint indices (Fabric::Endpoints order), deduplicated
  std::vector<PortRef> refs;  // the same as ports
  std::vector<int> group_of;  // per job endpoint: its group
  int groups = 0;
  std::vector<uint32_t> bundle;  // [dest * groups + group]: bundle or kNoBundle (not delivered)
  int leaves = 0;
};

// Max-min fair rates of the flows of several parts sharing channels (progressive filling).
// Channels and bundles are renumbered densely per solve, so one solver serves many small solves.
class Solver {
 public:
  Solver(const Bundles& bundles, const std::vector<double>& capacity)
      : bundles_(bundles),
        capacity_(capacity),
        chan_local_(capacity.size(), -1),
        bundle_local_(bundles.size(), -1) {}

  // rates[p][i]: the rate of flow i of parts[p].
  void Solve(const std::vector<const FlowPart*>& parts, std::vector<std::vector<double>>* rates) {
    Reset();
    // Dense ids: flows are numbered across parts; channels and bundles as first seen.
    for (size_t p = 0; p < parts.size(); ++p) {
      const FlowPart& part = *parts[p];
      for (size_t i = 0; i < part.up.size(); ++i) {
        const uint32_t flow = static_cast<uint32_t>(flow_up_.size());
        const int32_t u = Channel(part.up[i], /*up=*/true);
        flow_up_.push_back(u);
        ++count_[u];
        const uint32_t b = part.bundle[i];
        int32_t lb = bundle_local_[b];
        if (lb < 0) {
          lb = static_cast<int32_t>(bundle_global_.size());
          bundle_local_[b] = lb;
          bundle_global_.push_back(b);
          bundle_first_.push_back(flow);
          bundle_end_.push_back(flow);
          bundle_live_.push_back(0);
          for (uint64_t k = bundles_.begin[b]; k < bundles_.begin[b + 1]; ++k) {
            Channel(bundles_.path[k], /*up=*/false);
          }
        }
        // Parts are sorted by bundle and no two parts share a bundle (bundles are per job).
        bundle_end_[lb] = flow + 1;
        ++bundle_live_[lb];
        flow_bundle_.push_back(lb);
      }
    }
    const size_t channels = chan_global_.size(), nb = bundle_global_.size();
    // Per channel: flows (HCA channels) or bundles (switch channels) crossing it (CSR).
    std::vector<uint32_t> begin(channels + 1, 0);
    for (int32_t u : flow_up_) ++begin[u + 1];
    for (size_t b = 0; b < nb; ++b) {
      const uint32_t g = bundle_global_[b];
      for (uint64_t k = bundles_.begin[g]; k < bundles_.begin[g + 1]; ++k) {
        const int32_t c = chan_local_[bundles_.path[k]];
        ++begin[c + 1];
        count_[c] += bundle_live_[b];
      }
    }
    for (size_t c = 0; c < channels; ++c) begin[c + 1] += begin[c];
    std::vector<uint32_t> on(begin.back()), fill(begin.begin(), begin.end() - 1);
    for (uint32_t f = 0; f < flow_up_.size(); ++f) on[fill[flow_up_[f]]++] = f;
    for (uint32_t b = 0; b < nb; ++b) {
      const uint32_t g = bundle_global_[b];
      for (uint64_t k = bundles_.begin[g]; k < bundles_.begin[g + 1]; ++k) {
        on[fill[chan_local_[bundles_.path[k]]]++] = b;
      }
    }
    // Progressive filling: the channel with the least fair share (capacity left / live flows)
    // saturates first and its live flows freeze at that share. Freezing only raises the other
    // channels' shares, so a lazy heap (re-pushed when a popped entry is stale) suffices.
    using Entry = std::pair<double, int32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> heap;
    std::vector<double> used(channels, 0);
    auto share = [&](int32_t c) { return (cap_[c] - used[c]) / count_[c]; };
    for (size_t c = 0; c < channels; ++c) {
      if (count_[c] > 0) heap.push({share(static_cast<int32_t>(c)), static_cast<int32_t>(c)});
    }
    rate_.assign(flow_up_.size(), -1.0);  // < 0: live
    auto freeze_flow = [&](uint32_t f, double level) { rate_[f] = level; };
    auto live = [&](uint32_t f) { return rate_[f] < 0; };
    auto charge_bundle = [&](uint32_t b, uint32_t k, double level) {
      const uint32_t g = bundle_global_[b];
      for (uint64_t i = bundles_.begin[g]; i < bundles_.begin[g + 1]; ++i) {
        const int32_t c = chan_local_[bundles_.path[i]];
        count_[c] -= k;
        used[c] += level * k;
      }
      bundle_live_[b] -= k;
    };
    double level = 0;
    while (!heap.empty()) {
      const auto [k, c] = heap.top();
      heap.pop();
      if (count_[c] == 0) continue;
      const double s = share(c);
      if (s != k) {  // stale: the share rose since it was pushed
        heap.push({s, c});
        continue;
      }
      level = std::max(level, s);
      if (is_up_[c]) {
        for (uint32_t i = begin[c]; i < begin[c + 1]; ++i) {
          const uint32_t f = on[i];
          if (!live(f)) continue;
          freeze_flow(f, level);
          charge_bundle(flow_bundle_[f], 1, level);
        }
        used[c] += level * count_[c];
        count_[c] = 0;
      } else {
        for (uint32_t i = begin[c]; i < begin[c + 1]; ++i) {
          const uint32_t b = on[i];
          if (bundle_live_[b] == 0) continue;
          uint32_t frozen = 0;
          for (uint32_t f = bundle_first_[b]; f < bundle_end_[b]; ++f) {
            if (flow_bundle_[f] != static_cast<int32_t>(b) || !live(f)) continue;
            freeze_flow(f, level);
            const int32_t u = flow_up_[f];
            --count_[u];
            used[u] += level;
            ++frozen;
          }
          charge_bundle(b, frozen, level);
        }
      }
    }
    rates->resize(parts.size());
    size_t f = 0;
    for (size_t p = 0; p < parts.size(); ++p) {
      (*rates)[p].assign(rate_.begin() + f, rate_.begin() + f + parts[p]->up.size());
      f += parts[p]->up.size();
    }
  }

 private:
  int32_t Channel(PortId global, bool up) {
    int32_t& l = chan_local_[global];
    if (l < 0) {
      l = static_cast<int32_t>(chan_global_.size());
      chan_global_.push_back(global);
      cap_.push_back(capacity_[global]);
      count_.push_back(0);
      is_up_.push_back(up ? 1 : 0);
    }
    return l;
  }

  void Reset() {
    for (PortId g : chan_global_) chan_local_[g] = -1;
    for (uint32_t b : bundle_global_) bundle_local_[b] = -1;
    chan_global_.clear();
    cap_.clear();
    count_.clear();
    is_up_.clear();
    bundle_global_.clear();
    bundle_first_.clear();
    bundle_end_.clear();
    bundle_live_.clear();
    flow_up_.clear();
    flow_bundle_.clear();
  }

  const Bundles& bundles_;
  const std::vector<double>& capacity_;
  std::vector<int32_t> chan_local_;    // per port slot: local channel or -1
  std::vector<int32_t> bundle_local_;  // per bundle: local bundle or -1
  std::vector<PortId> chan_global_;
  std::vector<double> cap_;
  std::vector<uint32_t> count_;  // live flows per local channel
  std::vector<uint8_t> is_up_;
  std::vector<uint32_t> bundle_global_, bundle_first_, bundle_end_, bundle_live_;
  std::vector<int32_t> flow_up_, flow_bundle_;
  std::vector<double> rate_;  // per flow
};

// Per-job aggregates of one solve.
struct PartFigures {
  double slowest = std::numeric_limits<double>::infinity();
  double sum = 0;
  uint64_t flows = 0;
};

PartFigures Figures(const std::vector<double>& rates) {
  PartFigures f;
  for (double r : rates) {
    f.slowest = std::min(f.slowest, r);
    f.sum += r;
  }
  f.flows = rates.size();
  return f;
}

}  // namespace

std::vector<FlowJob> AllToAllFlowJobs(const std::vector<ResolvedJob>& jobs) {
  std::vector<FlowJob> out;
  out.reserve(jobs.size());
  for (const ResolvedJob& j : jobs) {
    out.push_back({j.id, j.endpoints, {}});
    // A host with several ports in the job: not every pair on distinct nodes talks (rails, and
    // never two HCAs of one host), so its pairs (ResolvedJob::Sends) are one phase, all at once.
    std::vector<int> ports_of_host;
    bool several = false;
    for (int h : j.host_of) {
      if (static_cast<size_t>(h) >= ports_of_host.size()) ports_of_host.resize(h + 1, 0);
      several |= ++ports_of_host[h] > 1;
    }
    if (!several) continue;
    std::vector<std::pair<int32_t, int32_t>> pairs;
    for (size_t a = 0; a < j.endpoints.size(); ++a) {
      for (size_t b = 0; b < j.endpoints.size(); ++b) {
        if (j.Sends(a, b)) pairs.emplace_back(static_cast<int32_t>(a), static_cast<int32_t>(b));
      }
    }
    out.back().phases.push_back(std::move(pairs));
  }
  return out;
}

namespace {

// The channels of one route from endpoint s to the LID `lid` of endpoint d; false if the route
// is not delivered to d's port.
bool Walk(const Fabric& f, const LftSet& lfts, const std::vector<PortRef>& ends, uint32_t s,
          uint32_t d, Lid lid, std::vector<int32_t>* path) {
  path->clear();
  PortId c = f.port_id(ends[s]);
  for (int hops = 0; hops <= f.num_switches() + 1; ++hops) {
    path->push_back(c);
    const PortId peer = f.peer_id(c);
    if (peer == kNoPort) return false;
    const NodeId node = f.port_node(peer);
    if (!f.is_switch(node)) return f.port_ref(peer) == ends[d];
    const uint8_t port = lfts.port(f.switch_index(node), lid);
    if (port == 0 || port == LftSet::kNoRoute || port > f.num_ports(node)) return false;
    c = f.port_id(node, port);
  }
  return false;
}

Lid LidFor(const Fabric& f, const std::vector<PortRef>& ends, const std::vector<uint8_t>& offset,
           uint32_t s, uint32_t d) {
  return SourceLid(f, ends[d], offset.empty() ? 0 : offset[s]);
}

}  // namespace

bool TraceFlow(const Fabric& f, const LftSet& lfts, const std::vector<PortRef>& ends,
               const std::vector<uint8_t>& offset, Flow flow, std::vector<int32_t>* path) {
  return Walk(f, lfts, ends, flow.src, flow.dst, LidFor(f, ends, offset, flow.src, flow.dst), path);
}

void TraceFlows(const Fabric& f, const LftSet& lfts, const std::vector<uint8_t>& offset,
                const std::vector<Flow>& flows, std::vector<std::vector<int32_t>>* paths,
                uint64_t* undelivered) {
  const std::vector<PortRef> ends = f.Endpoints();
  paths->clear();
  paths->reserve(flows.size());
  *undelivered = 0;
  std::vector<int32_t> path;
  for (const Flow& fl : flows) {
    if (TraceFlow(f, lfts, ends, offset, fl, &path)) {
      paths->push_back(path);
    } else {
      ++*undelivered;
    }
  }
}

double FlowQuantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(q * static_cast<double>(values.size()));
  const size_t i = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return values[std::min(i, values.size() - 1)];
}

Status ComputeJobFlows(const Fabric& fabric, const LftSet& lfts, const std::vector<FlowJob>& jobs,
                       const FlowOptions& options, FlowReport* out) {
  SAR_RETURN_IF_ERROR(lfts.CheckFits(fabric));
  const std::vector<PortRef> endpoints = fabric.Endpoints();
  const std::vector<uint8_t>* offsets = options.source_lid_offset;
  if (offsets != nullptr && !offsets->empty() && offsets->size() != endpoints.size()) {
    return Status::InvalidArgument("flows: source LID offsets for " +
                                   std::to_string(offsets->size()) + " endpoints, fabric has " +
                                   std::to_string(endpoints.size()));
  }
  uint64_t pairs = 0;
  for (const FlowJob& job : jobs) {
    if (job.phases.empty()) {
      pairs += static_cast<uint64_t>(job.endpoints.size()) * job.endpoints.size();
    }
    for (const auto& phase : job.phases) pairs += phase.size();
  }
  if (pairs > options.max_flows) {
    return Status::Failed("per-job throughput not computed: the jobs have " +
                          std::to_string(pairs) + " flows, over the limit of " +
                          std::to_string(options.max_flows));
  }
  auto offset_of = [&](int e) {
    return offsets == nullptr || offsets->empty() ? 0 : (*offsets)[e];
  };
  std::vector<int> endpoint_of(fabric.num_port_slots(), -1);
  for (size_t i = 0; i < endpoints.size(); ++i) {
    endpoint_of[fabric.port_id(endpoints[i])] = static_cast<int>(i);
  }
  // Capacities as fractions of the line rate.
  std::vector<double> capacity(fabric.num_port_slots(), 1.0);
  {
    const std::vector<uint32_t> cap = fabric.ChannelCapacities();
    const uint32_t nominal = fabric.nominal_rate().mbps();
    for (size_t i = 0; i < cap.size(); ++i) capacity[i] = nominal ? double(cap[i]) / nominal : 1.0;
  }

  // Endpoints and routes of every job.
  const RouteTracer tracer(fabric, lfts);
  Bundles bundles;
  std::vector<JobPaths> paths(jobs.size());
  DestinationTree tree;
  std::vector<uint32_t> seen(endpoints.size(), 0);  // job number + 1 that listed the endpoint
  for (size_t j = 0; j < jobs.size(); ++j) {
    const FlowJob& job = jobs[j];
    JobPaths& jp = paths[j];
    for (size_t i = 0; i < job.endpoints.size(); ++i) {
      const PortRef p = job.endpoints[i];
      const int e = p.valid() && p.node < fabric.num_nodes() && p.port >= 0 &&
                            p.port <= fabric.num_ports(p.node)
                        ? endpoint_of[fabric.port_id(p)]
                        : -1;
      if (e < 0) {
        return Status::InvalidArgument("flows: job " + job.id + " names a port that is not a " +
                                       "cabled HCA port");
      }
      if (seen[e] != j + 1) {
        seen[e] = static_cast<uint32_t>(j + 1);
        jp.ends.push_back(e);
        jp.refs.push_back(p);
      }
    }
    for (const auto& phase : job.phases) {
      for (const auto& [s, d] : phase) {
        if (s < 0 || d < 0 || static_cast<size_t>(s) >= job.endpoints.size() ||
            static_cast<size_t>(d) >= job.endpoints.size()) {
          return Status::InvalidArgument("flows: job " + job.id +
                                         ": a phase names an endpoint out of range");
        }
      }
    }
    // Source groups: (switch, offset).
    const size_t n = jp.ends.size();
    std::vector<std::pair<int, int>> group_key;  // (switch index, offset)
    jp.group_of.resize(n);
    std::vector<int> leaves;
    for (size_t i = 0; i < n; ++i) {
      const int leaf = fabric.switch_index(fabric.peer(jp.refs[i]).node);
      const std::pair<int, int> key{leaf, offset_of(jp.ends[i])};
      auto it = std::find(group_key.begin(), group_key.end(), key);
      jp.group_of[i] = static_cast<int>(it - group_key.begin());
      if (it == group_key.end()) group_key.push_back(key);
      if (std::find(leaves.begin(), leaves.end(), leaf) == leaves.end()) leaves.push_back(leaf);
    }
    jp.groups = static_cast<int>(group_key.size());
    jp.leaves = static_cast<int>(leaves.size());
    jp.bundle.assign(n * jp.groups, kNoBundle);
    // Per destination and LID offset in use: one tree, a bundle per source switch.
    std::vector<int> offsets_used;
    for (const auto& [sw, o] : group_key) offsets_used.push_back(o);
    std::sort(offsets_used.begin(), offsets_used.end());
    offsets_used.erase(std::unique(offsets_used.begin(), offsets_used.end()), offsets_used.end());
    std::vector<int> from;
    for (size_t d = 0; d < n; ++d) {
      for (int o : offsets_used) {
        from.clear();
        for (int g = 0; g < jp.groups; ++g) {
          if (group_key[g].second == o) from.push_back(group_key[g].first);
        }
        const Lid lid = SourceLid(fabric, jp.refs[d], o);
        if (lid == 0) continue;  // no LID: every such route is undelivered
        tracer.BuildFrom(lid, from, &tree);
        for (int g = 0; g < jp.groups; ++g) {
          if (group_key[g].second != o) continue;
          const int s = group_key[g].first;
          if (tree.fate[s] != RouteFate::kDelivered) continue;
          for (int t = s; t >= 0 && tree.out[t] != kNoPort;) {
            bundles.path.push_back(tree.out[t]);
            t = tracer.next_switch(tree.out[t]);
          }
          jp.bundle[d * jp.groups + g] = bundles.size();
          bundles.begin.push_back(bundles.path.size());
        }
      }
    }
  }

  // Flows: one part per job without phases (all-to-all), one per phase of the others.
  out->jobs.assign(jobs.size(), {});
  auto add_flow = [&](const JobPaths& jp, size_t s, size_t d, FlowPart* part, JobFlows* jf) {
    if (jp.refs[s].node == jp.refs[d].node) return;  // inside one node: not network traffic
    const uint32_t b = jp.bundle[d * jp.groups + jp.group_of[s]];
    if (b == kNoBundle) {
      ++jf->undelivered;
      return;
    }
    part->up.push_back(fabric.port_id(jp.refs[s]));
    part->bundle.push_back(b);
    if (options.record_rates) {
      part->src.push_back(static_cast<uint32_t>(s));
      part->dst.push_back(static_cast<uint32_t>(d));
    }
  };
  std::vector<int> local_of(endpoints.size(), -1);  // endpoint -> index in a phased job
  std::vector<FlowPart> alltoall;                   // jobs without phases
  std::vector<std::vector<FlowPart>> phased(jobs.size());
  std::vector<int> part_of(jobs.size(), -1);  // index into alltoall
  for (size_t j = 0; j < jobs.size(); ++j) {
    const JobPaths& jp = paths[j];
    JobFlows& jf = out->jobs[j];
    jf.id = jobs[j].id;
    jf.endpoints = static_cast<int>(jp.ends.size());
    jf.leaf_switches = jp.leaves;
    jf.phases = static_cast<int>(jobs[j].phases.size());
    const size_t n = jp.ends.size();
    if (jobs[j].phases.empty()) {
      FlowPart part;
      part.job = static_cast<uint32_t>(j);
      // Destination-major, sources by group: each bundle's flows are one run.
      std::vector<size_t> by_group(n);
      for (size_t i = 0; i < n; ++i) by_group[i] = i;
      std::stable_sort(by_group.begin(), by_group.end(),
                       [&](size_t a, size_t b) { return jp.group_of[a] < jp.group_of[b]; });
      for (size_t d = 0; d < n; ++d) {
        for (size_t s : by_group) {
          if (s != d) add_flow(jp, s, d, &part, &jf);
        }
      }
      part_of[j] = static_cast<int>(alltoall.size());
      alltoall.push_back(std::move(part));
    } else {
      // Phase pairs name the job's given endpoints; map them to the deduplicated ones.
      for (size_t i = 0; i < n; ++i) local_of[jp.ends[i]] = static_cast<int>(i);
      std::vector<int> dedup(jobs[j].endpoints.size());
      for (size_t i = 0; i < dedup.size(); ++i) {
        dedup[i] = local_of[endpoint_of[fabric.port_id(jobs[j].endpoints[i])]];
      }
      for (const auto& phase : jobs[j].phases) {
        FlowPart part;
        part.job = static_cast<uint32_t>(j);
        std::vector<std::pair<int, int>> pairs;
        for (const auto& [s, d] : phase) {
          if (dedup[s] != dedup[d]) pairs.push_back({dedup[s], dedup[d]});
        }
        std::sort(pairs.begin(), pairs.end(), [&](const auto& a, const auto& b) {
          const uint32_t ba = jp.bundle[a.second * jp.groups + jp.group_of[a.first]];
          const uint32_t bb = jp.bundle[b.second * jp.groups + jp.group_of[b.first]];
          return ba != bb ? ba < bb : a < b;
        });
        for (const auto& [s, d] : pairs) add_flow(jp, s, d, &part, &jf);
        phased[j].push_back(std::move(part));
      }
    }
  }

  // The shared run, round by round.
  int rounds = 1;
  for (const auto& p : phased) rounds = std::max(rounds, static_cast<int>(p.size()));
  out->rounds = rounds;
  out->rates.clear();
  out->bundles = bundles.size();
  out->flows = 0;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> slowest(jobs.size(), inf), sum(jobs.size(), 0), time(jobs.size(), 0);
  std::vector<uint64_t> count(jobs.size(), 0);
  {
    Solver solver(bundles, capacity);
    std::vector<std::vector<double>> rates;
    for (int r = 0; r < rounds; ++r) {
      std::vector<const FlowPart*> parts;
      for (const FlowPart& p : alltoall) parts.push_back(&p);
      for (const auto& p : phased) {
        if (static_cast<size_t>(r) < p.size()) parts.push_back(&p[r]);
      }
      solver.Solve(parts, &rates);
      for (size_t k = 0; k < parts.size(); ++k) {
        const PartFigures f = Figures(rates[k]);
        const uint32_t j = parts[k]->job;
        if (options.record_rates && r == 0) {
          for (size_t i = 0; i < rates[k].size(); ++i) {
            out->rates.push_back(
                {j, paths[j].ends[parts[k]->src[i]], paths[j].ends[parts[k]->dst[i]], rates[k][i]});
          }
        }
        out->flows += f.flows;
        if (f.flows == 0) continue;
        slowest[j] = std::min(slowest[j], f.slowest);
        sum[j] += f.sum;
        count[j] += f.flows;
        if (!phased[j].empty()) time[j] += 1.0 / f.slowest;
      }
    }
  }
  for (size_t j = 0; j < jobs.size(); ++j) {
    JobFlows& jf = out->jobs[j];
    jf.flows = 0;
    if (phased[j].empty()) {
      jf.flows = alltoall[part_of[j]].up.size();
    } else {
      for (const FlowPart& p : phased[j]) jf.flows += p.up.size();
    }
    if (count[j] == 0) continue;
    jf.shared.slowest = slowest[j];
    jf.shared.mean = sum[j] / count[j];
    jf.shared.time = phased[j].empty() ? 1.0 / slowest[j] : time[j];
  }

  // Each job alone.
  if (options.alone) {
    const int threads = internal::WorkerCount(options.threads, jobs.size(), 1);
    std::vector<std::unique_ptr<Solver>> solvers;
    for (int w = 0; w < threads; ++w)
      solvers.push_back(std::make_unique<Solver>(bundles, capacity));
    internal::ParallelFor(threads, jobs.size(), 1, [&](int w, size_t j) {
      std::vector<std::vector<double>> rates;
      JobFlowFigures fig;
      double low = inf, total = 0, t = 0;
      uint64_t flows = 0;
      auto run = [&](const FlowPart& part, bool phase) {
        solvers[w]->Solve({&part}, &rates);
        const PartFigures f = Figures(rates[0]);
        if (f.flows == 0) return;
        low = std::min(low, f.slowest);
        total += f.sum;
        flows += f.flows;
        if (phase) t += 1.0 / f.slowest;
      };
      if (phased[j].empty()) {
        run(alltoall[part_of[j]], false);
      } else {
        for (const FlowPart& p : phased[j]) run(p, true);
      }
      if (flows == 0) return;
      fig.slowest = low;
      fig.mean = total / flows;
      fig.time = phased[j].empty() ? 1.0 / low : t;
      out->jobs[j].alone = fig;
    });
  }

  // Summary over jobs with flows.
  FlowSummary& s = out->summary;
  s = {};
  std::vector<double> sl, tm, sd;
  for (const JobFlows& jf : out->jobs) {
    if (jf.flows == 0) continue;
    sl.push_back(jf.shared.slowest);
    tm.push_back(jf.shared.time);
    if (options.alone) sd.push_back(jf.slowdown());
  }
  s.jobs = static_cast<int>(sl.size());
  s.median_slowest = FlowQuantile(sl, 0.5);
  s.min_slowest = sl.empty() ? 0 : *std::min_element(sl.begin(), sl.end());
  s.median_time = FlowQuantile(tm, 0.5);
  s.p95_time = FlowQuantile(tm, 0.95);
  s.max_time = FlowQuantile(tm, 1.0);
  s.median_slowdown = FlowQuantile(sd, 0.5);
  s.p95_slowdown = FlowQuantile(sd, 0.95);
  s.max_slowdown = FlowQuantile(sd, 1.0);
  return Status::OK();
}

FlowComparison CompareJobFlows(const FlowReport& run, const FlowReport& baseline,
                               double tolerance) {
  FlowComparison c;
  c.speedup.assign(run.jobs.size(), 0);
  std::vector<double> compared;
  for (size_t i = 0; i < run.jobs.size(); ++i) {
    const JobFlows& a = run.jobs[i];
    const JobFlows* b = nullptr;
    if (i < baseline.jobs.size() && baseline.jobs[i].id == a.id) {
      b = &baseline.jobs[i];
    } else {
      for (const JobFlows& x : baseline.jobs) {
        if (x.id == a.id) b = &x;
      }
    }
    if (b == nullptr || a.flows == 0 || b->flows == 0 || a.shared.time <= 0) continue;
    const double speedup = b->shared.time / a.shared.time;
    c.speedup[i] = speedup;
    compared.push_back(speedup);
    ++c.jobs;
    if (std::fabs(speedup - 1) <= tolerance) {
      ++c.equal;
    } else if (speedup > 1) {
      ++c.faster;
    } else {
      ++c.slower;
    }
    if (a.shared.time > b->shared.time * 1.02) ++c.slower_2pct;
  }
  c.median_speedup = FlowQuantile(compared, 0.5);
  c.min_speedup = FlowQuantile(compared, 0.0);
  c.max_speedup = FlowQuantile(compared, 1.0);
  return c;
}

}  // namespace sar
