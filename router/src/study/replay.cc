#include "sar/study/replay.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>

#include "sar/analysis/analysis.h"
#include "sar/analysis/flows.h"
#include "sar/engines/engine.h"
#include "sar/env.h"
#include "sar/fors/fors_job.h"
#include "sar/model/lids.h"
#include "sar/pass/routing_pass.h"
#include "sar/study/host_allocator.h"

namespace sar {
namespace {

// A start or an end of a placed job on the timeline.
struct Point {
  double t;
  bool start;
  int job;  // index into the placed jobs
};

struct Placed {
  ReplayJob job;
  bool multi = false;
};

int CountLeaves(const HostAllocator& m, const std::vector<int>& hosts) {
  std::set<int> leaves;
  for (int h : hosts) leaves.insert(m.leaf_of(h));
  return static_cast<int>(leaves.size());
}

// Step 1: every job that runs, with hosts, on the timeline of the history's first start.
Status Place(const Fabric& fabric, const JobHistory& history, const ReplayOptions& o,
             std::vector<Placed>* placed, ReplayResult* out) {
  HostAllocator m(fabric);
  out->fabric_hosts = m.total();
  out->history_jobs = static_cast<int>(history.jobs.size());
  if (history.jobs.empty()) return Status::OK();
  double t0 = history.jobs[0].start_s;
  bool sizes_only = false;
  for (const HistoryJob& j : history.jobs) {
    t0 = std::min(t0, j.start_s);
    sizes_only = sizes_only || j.hosts.empty();
  }
  if (sizes_only) {
    const int machine = o.machine_nodes > 0 ? o.machine_nodes : history.machine_nodes;
    if (o.scale && machine <= 0) {
      return Status::InvalidArgument(
          "the history gives job sizes only and no machine size: give the machine's node count "
          "(or do not scale)");
    }
    out->scale = o.scale ? static_cast<double>(m.total()) / machine : 1.0;
    // Allocation in time order, ends before starts at equal times (a job's end frees its hosts
    // for a job starting that second, as SLURM's scheduler would see it).
    std::vector<Point> points;
    for (size_t i = 0; i < history.jobs.size(); ++i) {
      // A job that ends when it starts holds no host at any time (and placing it after its
      // own end, by the ends-first order, would keep its hosts for ever).
      if (!(history.jobs[i].end_s > history.jobs[i].start_s)) {
        ++out->zero_length;
        continue;
      }
      points.push_back({history.jobs[i].start_s, true, static_cast<int>(i)});
      if (std::isfinite(history.jobs[i].end_s)) {
        points.push_back({history.jobs[i].end_s, false, static_cast<int>(i)});
      }
    }
    std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
      return a.t != b.t ? a.t < b.t : (!a.start && b.start);
    });
    std::vector<std::vector<int>> hosts(history.jobs.size());
    std::vector<bool> is_placed(history.jobs.size(), false);
    for (const Point& p : points) {
      const HistoryJob& h = history.jobs[p.job];
      if (!p.start) {
        if (is_placed[p.job]) m.Release(hosts[p.job]);
        continue;
      }
      const int size = std::max(
          1, std::min(m.total(), static_cast<int>(std::floor(h.size * out->scale + 1e-9))));
      if (!m.Place(size, &hosts[p.job])) {
        ++out->not_placed;
        continue;
      }
      is_placed[p.job] = true;
      ++out->placed;
      Placed pj;
      pj.job.id = h.id;
      pj.job.start_s = h.start_s - t0;
      pj.job.end_s = h.end_s - t0;
      for (int x : hosts[p.job]) pj.job.hosts.push_back(m.host(x));
      pj.job.leaves = CountLeaves(m, hosts[p.job]);
      pj.multi = pj.job.leaves >= 2;
      placed->push_back(std::move(pj));
    }
    return Status::OK();
  }
  // Host lists: the hosts as recorded.
  std::unordered_map<std::string, int> index;
  for (int h = 0; h < m.total(); ++h) index.emplace(m.host(h), h);
  for (const HistoryJob& h : history.jobs) {
    if (!(h.end_s > h.start_s)) {
      ++out->zero_length;
      continue;
    }
    std::vector<int> hosts;
    Placed pj;
    for (const std::string& name : h.hosts) {
      auto it = index.find(name);
      if (it == index.end()) {
        ++out->unknown_hosts;
        continue;
      }
      hosts.push_back(it->second);
      pj.job.hosts.push_back(name);
    }
    if (hosts.empty()) {
      ++out->not_placed;
      continue;
    }
    ++out->placed;
    pj.job.id = h.id;
    pj.job.pattern = h.pattern;
    pj.job.start_s = h.start_s - t0;
    pj.job.end_s = h.end_s - t0;
    pj.job.leaves = CountLeaves(m, hosts);
    pj.multi = pj.job.leaves >= 2;
    placed->push_back(std::move(pj));
  }
  return Status::OK();
}

// Step 2.
void MakeEvents(const std::vector<Placed>& placed, const ReplayOptions& o, ReplayResult* out) {
  std::vector<Point> points;
  std::vector<int> multi_index(placed.size(), -1);
  for (size_t i = 0; i < placed.size(); ++i) {
    if (placed[i].multi) {
      multi_index[i] = static_cast<int>(out->jobs.size());
      out->jobs.push_back(placed[i].job);
    }
    points.push_back({placed[i].job.start_s, true, static_cast<int>(i)});
    if (std::isfinite(placed[i].job.end_s)) {
      points.push_back({placed[i].job.end_s, false, static_cast<int>(i)});
    }
  }
  std::stable_sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
    return a.t != b.t ? a.t < b.t : (!a.start && b.start);
  });
  std::set<int> multi;
  int running = 0, busy = 0;
  bool started = false;
  std::vector<int> last;
  auto emit = [&](double t) {
    std::vector<int> now(multi.begin(), multi.end());
    if (started && now == last) return;
    started = true;
    ReplayEvent e;
    e.time_s = t;
    e.running = running;
    e.busy_hosts = busy;
    e.jobs = now;
    last = std::move(now);
    out->events.push_back(std::move(e));
  };
  for (size_t i = 0; i < points.size();) {
    const double t = points[i].t;
    if (t >= o.to_s) break;
    if (!started && t > o.from_s) emit(o.from_s);  // the state the window opens on
    for (; i < points.size() && points[i].t == t; ++i) {
      const Placed& p = placed[points[i].job];
      const int sign = points[i].start ? 1 : -1;
      running += sign;
      busy += sign * static_cast<int>(p.job.hosts.size());
      if (p.multi) {
        if (points[i].start) {
          multi.insert(multi_index[points[i].job]);
        } else {
          multi.erase(multi_index[points[i].job]);
        }
      }
    }
    if (t >= o.from_s) emit(t);
  }
  if (!started && o.from_s < o.to_s && std::isfinite(o.from_s)) emit(o.from_s);
}

JobMapping MappingAt(const ReplayResult& r, int event) {
  JobMapping m;
  for (int j : r.events[event].jobs) {
    Job job;
    job.id = r.jobs[j].id;
    job.hosts = r.jobs[j].hosts;
    job.pattern = r.jobs[j].pattern;
    m.jobs.push_back(std::move(job));
  }
  return m;
}

std::string EventName(const ReplayResult& r, int event) {
  return "event " + std::to_string(event) +
         " (t = " + std::to_string(static_cast<long long>(r.events[event].time_s)) + " s, " +
         std::to_string(r.events[event].jobs.size()) + " multi-leaf jobs)";
}

// One routing pass at `event` (result->analysis: the metrics of the validating sweep).
Status RouteAt(const Fabric& f, const ReplayResult& r, const ReplayOptions& o,
               const std::string& engine, int event, RoutingResult* result,
               const LftSet* previous = nullptr) {
  RoutingRequest request;
  request.fabric = &f;
  request.options = o.routing;
  request.options.engine = engine;
  request.mapping = MappingAt(r, event);
  if (previous != nullptr && o.delta) {
    request.previous = *previous;
    if (o.delta_stable && event > 0) request.previous_mapping = MappingAt(r, event - 1);
  }
  request.also.what = kAnalyseMetrics;  // of the pass's jobs
  const Status s = RunRoutingPass(request, result);
  if (s.code() == Status::Code::kFailed) {
    return Status::Failed(engine + " at " + EventName(r, event) + ": " + s.message());
  }
  return s;
}

// `offsets`: the LID each source sends to with `lfts` (RoutingOutput::source_lid_offset of the
// pass that made them; osrm2/osrm3 route per source group).
Status MeasureAt(const Fabric& f, const ReplayResult& r, const ReplayOptions& o, int event,
                 const LftSet& lfts, const std::vector<uint8_t>& offsets,
                 AnalysisResult* analysis) {
  const std::vector<ResolvedJob> jobs = ResolveJobs(f, MappingAt(r, event));
  AnalysisOptions ao;
  ao.what = kAnalyseMetrics;
  ao.jobs = &jobs;
  ao.threads = o.routing.threads;
  ao.source_lid_offset = &offsets;
  return AnalyseRouting(f, lfts, ao, analysis);
}

// The per-job throughput of `lfts` at one event: every job all-to-all, a job with a FORS plan
// of the pass that made the tables in its phases.
Status FlowsAt(const Fabric& f, const std::vector<ResolvedJob>& jobs, const LftSet& lfts,
               const std::vector<uint8_t>& offsets, const std::vector<ForsJobPlan>& fors,
               int threads, ReplaySample* s) {
  std::vector<FlowJob> flow_jobs = AllToAllFlowJobs(jobs);
  for (FlowJob& j : flow_jobs) {
    for (const ForsJobPlan& p : fors) {
      if (p.job_id == j.id) j = ForsFlowJob(p);
    }
  }
  FlowOptions fo;
  fo.source_lid_offset = &offsets;
  fo.threads = threads;
  fo.alone = false;
  FlowReport r;
  const Status computed = ComputeJobFlows(f, lfts, flow_jobs, fo, &r);
  if (computed.code() == Status::Code::kFailed) return Status::OK();  // over the limit
  SAR_RETURN_IF_ERROR(computed);
  s->job_time_median = r.summary.median_time;
  s->job_time_max = r.summary.max_time;
  s->slowest_median = r.summary.median_slowest;
  s->slowest_min = r.summary.min_slowest;
  s->job_flows.clear();
  for (JobFlows& j : r.jobs) {
    if (j.flows > 0) s->job_flows.push_back(std::move(j));
  }
  s->flow_jobs = static_cast<int>(s->job_flows.size());
  return Status::OK();
}

void Fill(const Metrics& m, ReplaySample* s) {
  s->effective_efi_max = m.effective_efi.max;
  s->dark_fiber = m.dark_fiber;
  s->efi_max = m.efi.max;
  s->worst_job_efi = 0;
  for (const JobMetrics& j : m.jobs) s->worst_job_efi = std::max(s->worst_job_efi, j.efi_max);
}

// Whether some route between two members of `job` (each source to the LID it sends to:
// `offsets` per endpoint, `index` maps a port slot to its endpoint) takes another path in
// `after` than in `before`: a path changes exactly where, walking it in `after`, a switch's
// entry differs.
bool JobRoutesChanged(const Fabric& f, const LftSet& before, const LftSet& after,
                      const std::vector<uint8_t>& offsets, const std::vector<int>& index,
                      const ResolvedJob& job) {
  for (size_t di = 0; di < job.endpoints.size(); ++di) {
    const PortRef& d = job.endpoints[di];
    for (size_t si = 0; si < job.endpoints.size(); ++si) {
      const PortRef& src = job.endpoints[si];
      if (!job.Sends(si, di)) continue;
      const Lid lid = SourceLid(f, d, offsets.empty() ? 0 : offsets[index[f.port_id(src)]]);
      if (lid == 0 || lid > after.max_lid()) continue;
      PortRef at = f.peer(src);
      for (int hops = 0; at.valid() && f.is_switch(at.node) && hops <= f.num_switches(); ++hops) {
        const int sw = f.switch_index(at.node);
        const uint8_t port = after.port(sw, lid);
        if (port != before.port(sw, lid)) return true;
        if (port == LftSet::kNoRoute || port == 0) break;
        const PortRef out{at.node, port};
        if (f.peer(out) == d) break;
        at = f.peer(out);
      }
    }
  }
  return false;
}

// Stability at event k (> 0): jobs of both events, and those whose own routes changed.
// `offsets`: RoutingOutput::source_lid_offset of the engine (the same for both tables).
void CountStability(const Fabric& f, const ReplayResult& r, int k, const LftSet& before,
                    const LftSet& after, const std::vector<uint8_t>& offsets, ReplaySample* s) {
  const std::vector<int>& now = r.events[k].jobs;
  const std::vector<int>& was = r.events[k - 1].jobs;
  JobMapping m;
  for (int j : now) {
    if (!std::binary_search(was.begin(), was.end(), j)) continue;
    Job job;
    job.id = r.jobs[j].id;
    job.hosts = r.jobs[j].hosts;
    m.jobs.push_back(std::move(job));
  }
  const std::vector<ResolvedJob> jobs = ResolveJobs(f, m);
  s->jobs_continuing = static_cast<int>(jobs.size());
  s->jobs_rerouted = 0;
  std::vector<int> index;  // port slot -> endpoint, for the sources' LID offsets
  if (!offsets.empty()) {
    index.assign(f.num_port_slots(), 0);
    const std::vector<PortRef> ends = f.Endpoints();
    for (size_t i = 0; i < ends.size(); ++i) index[f.port_id(ends[i])] = static_cast<int>(i);
  }
  for (const ResolvedJob& j : jobs) {
    s->jobs_rerouted += JobRoutesChanged(f, before, after, offsets, index, j);
  }
}

// Per event, every engine's jobs against the baseline engine's (ReplayOptions::flow_baseline).
void CompareWithBaseline(const ReplayOptions& o, ReplayResult* r) {
  const std::string want = o.flow_baseline.empty() ? "dfsssp" : o.flow_baseline;
  int base = -1;
  for (size_t e = 0; e < r->engines.size(); ++e) {
    if (base < 0 && r->engines[e] == want) base = static_cast<int>(e);
  }
  if (base < 0 && o.flow_baseline.empty() && !r->engines.empty()) base = 0;
  if (base < 0) return;
  r->flow_baseline = r->engines[base];
  for (size_t k = 0; k < r->events.size(); ++k) {
    FlowReport b;
    b.jobs = r->samples[base][k].job_flows;
    for (size_t e = 0; e < r->engines.size(); ++e) {
      ReplaySample& s = r->samples[e][k];
      FlowReport mine;
      mine.jobs = s.job_flows;
      const FlowComparison c = CompareJobFlows(mine, b);
      s.jobs_faster = c.faster;
      s.jobs_slower = c.slower;
      s.jobs_slower_2pct = c.slower_2pct;
      s.speedup_median = c.median_speedup;
    }
  }
}

}  // namespace

Status PlanReplay(const Fabric& fabric, const JobHistory& history, const ReplayOptions& options,
                  ReplayResult* out) {
  *out = ReplayResult();
  out->engines = options.engines;
  std::vector<Placed> placed;
  SAR_RETURN_IF_ERROR(Place(fabric, history, options, &placed, out));
  MakeEvents(placed, options, out);
  return Status::OK();
}

Status Replay(const Fabric& f, const JobHistory& history, const ReplayOptions& o,
              ReplayResult* out) {
  for (const std::string& e : o.engines) {
    if (!MakeRoutingEngine(e)) {
      return Status::InvalidArgument("unknown engine '" + e +
                                     "'; known engines: " + RoutingEngineList());
    }
  }
  if (!o.flow_baseline.empty() &&
      std::find(o.engines.begin(), o.engines.end(), o.flow_baseline) == o.engines.end()) {
    return Status::InvalidArgument("flow baseline '" + o.flow_baseline +
                                   "' is not one of the replayed engines");
  }
  SAR_RETURN_IF_ERROR(PlanReplay(f, history, o, out));
  const int events = static_cast<int>(out->events.size());
  // The shard's events [begin, end); before begin, only what rebuilds the tables at begin.
  const int begin = static_cast<int>(std::min<size_t>(o.event_begin, events));
  const int end = static_cast<int>(std::min<size_t>(std::max(o.event_end, o.event_begin), events));
  const size_t total = o.engines.size() * (end - begin);
  size_t done = 0;
  out->samples.assign(o.engines.size(), std::vector<ReplaySample>(events));
  for (size_t e = 0; e < o.engines.size(); ++e) {
    const std::string& name = o.engines[e];
    const bool per_event = MakeRoutingEngine(name)->uses_jobs();
    LftSet previous;
    std::vector<uint8_t> previous_offsets;  // the LID each source uses with `previous`
    std::string first_engine_used;          // engine_used at event 0
    // Without delta a reroute ignores the previous tables: the event before the shard is enough.
    const int warm = !per_event || begin == 0 ? 0 : o.delta ? 0 : begin - 1;
    for (int k = warm; k < end; ++k) {
      const bool record = k >= begin;
      ReplaySample& s = out->samples[e][k];
      if (!record && (per_event || k == 0)) {  // rebuild the tables the shard starts from
        RoutingResult result;
        SAR_RETURN_IF_ERROR(RouteAt(f, *out, o, name, k, &result, k == 0 ? nullptr : &previous));
        RoutingOutput& routed = result.output;
        if (k == 0) first_engine_used = result.inputs.engine;
        previous = std::move(routed.lfts);
        previous_offsets = std::move(routed.source_lid_offset);
        continue;
      }
      if (!record) continue;
      if (per_event || k == 0) {
        RoutingResult result;
        const Stopwatch t0;
        SAR_RETURN_IF_ERROR(RouteAt(f, *out, o, name, k, &result, k == 0 ? nullptr : &previous));
        const RoutingInputs& inputs = result.inputs;
        RoutingOutput& routed = result.output;
        const AnalysisResult& analysis = result.analysis;
        const std::vector<ForsJobPlan>& fors = result.fors;
        s.reroute_ms = t0.ElapsedMs();
        if (o.flows) {
          SAR_RETURN_IF_ERROR(FlowsAt(f, inputs.jobs, routed.lfts, routed.source_lid_offset, fors,
                                      o.routing.threads, &s));
        }
        s.rerouted = true;
        s.engine_used = inputs.engine;
        s.notes = result.Notes();
        if (k == 0) first_engine_used = inputs.engine;
        Fill(analysis.metrics, &s);
        if (k > 0) {
          const LftChanges c = CountLftChanges(previous, routed.lfts);
          s.lft_changed = c.entries;
          s.lft_blocks_changed = c.blocks;
          CountStability(f, *out, k, previous, routed.lfts, routed.source_lid_offset, &s);
        }
        // What the reroute bought: the previous tables carrying this event's jobs.
        s.stale_effective_efi_max = s.effective_efi_max;
        if (k > 0) {
          AnalysisResult stale;
          SAR_RETURN_IF_ERROR(MeasureAt(f, *out, o, k, previous, previous_offsets, &stale));
          s.stale_effective_efi_max = stale.metrics.effective_efi.max;
        }
        previous = std::move(routed.lfts);
        previous_offsets = std::move(routed.source_lid_offset);
      } else {
        AnalysisResult analysis;
        SAR_RETURN_IF_ERROR(MeasureAt(f, *out, o, k, previous, previous_offsets, &analysis));
        if (o.flows) {
          SAR_RETURN_IF_ERROR(FlowsAt(f, ResolveJobs(f, MappingAt(*out, k)), previous,
                                      previous_offsets, {}, o.routing.threads, &s));
        }
        CountStability(f, *out, k, previous, previous, previous_offsets, &s);
        Fill(analysis.metrics, &s);
        s.stale_effective_efi_max = s.effective_efi_max;
        s.engine_used = first_engine_used;
      }
      if (o.progress) o.progress(++done, total);
    }
  }
  if (o.flows) CompareWithBaseline(o, out);
  return Status::OK();
}

namespace {

double P95(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(v.size())));
  return v[std::max<size_t>(rank, 1) - 1];
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

}  // namespace

ReplaySummary SummarizeReplay(const ReplayResult& r, size_t engine) {
  ReplaySummary s;
  std::vector<double> eff, dark, worst, ms, changed, blocks, stale, moved;
  for (size_t k = 0; k < r.samples[engine].size(); ++k) {
    const ReplaySample& x = r.samples[engine][k];
    eff.push_back(static_cast<double>(x.effective_efi_max));
    stale.push_back(static_cast<double>(x.stale_effective_efi_max));
    dark.push_back(x.dark_fiber);
    worst.push_back(static_cast<double>(x.worst_job_efi));
    s.eff_efi_max = std::max(s.eff_efi_max, x.effective_efi_max);
    s.efi_max = std::max(s.efi_max, x.efi_max);
    if (x.rerouted) {
      ++s.reroutes;
      ms.push_back(x.reroute_ms);
      if (k > 0) changed.push_back(static_cast<double>(x.lft_changed));
      if (k > 0) blocks.push_back(static_cast<double>(x.lft_blocks_changed));
    }
    if (k > 0 && x.jobs_continuing > 0) {
      moved.push_back(static_cast<double>(x.jobs_rerouted) / x.jobs_continuing);
    }
  }
  s.eff_efi_mean = Mean(eff);
  s.eff_efi_p95 = P95(eff);
  s.stale_eff_efi_mean = Mean(stale);
  s.dark_mean = Mean(dark);
  s.dark_p95 = P95(dark);
  s.worst_job_efi_mean = Mean(worst);
  s.reroute_ms_mean = Mean(ms);
  s.reroute_ms_p95 = P95(ms);
  s.lft_changed_mean = Mean(changed);
  s.lft_changed_median = Median(changed);
  s.lft_blocks_changed_mean = Mean(blocks);
  s.lft_blocks_changed_median = Median(blocks);
  s.jobs_rerouted_share_mean = Mean(moved);
  s.jobs_rerouted_share_median = Median(moved);
  std::vector<double> tmed, speed;
  for (const ReplaySample& x : r.samples[engine]) {
    if (x.flow_jobs == 0) continue;
    tmed.push_back(x.job_time_median);
    s.job_time_max = std::max(s.job_time_max, x.job_time_max);
    s.jobs_slower += x.jobs_slower;
    s.jobs_slower_2pct += x.jobs_slower_2pct;
    s.jobs_faster += x.jobs_faster;
    s.events_with_slower += x.jobs_slower > 0;
    speed.push_back(x.speedup_median);
  }
  s.job_time_median_mean = Mean(tmed);
  s.speedup_median = Median(speed);
  return s;
}

Status ReplayLinkLoads(const Fabric& f, const ReplayResult& r, const ReplayOptions& o,
                       const std::string& engine, int event, std::vector<uint64_t>* before,
                       std::vector<uint64_t>* after) {
  if (event <= 0 || event >= static_cast<int>(r.events.size())) {
    return Status::InvalidArgument("event " + std::to_string(event) + " has no predecessor");
  }
  RoutingResult r_prev, r_now;
  SAR_RETURN_IF_ERROR(RouteAt(f, r, o, engine, event - 1, &r_prev));
  const RoutingOutput& prev = r_prev.output;
  // With options.delta the reroute starts from `prev` (a full recompute of event - 1), not from
  // the replay's delta chain: close to, but not always equal to, the replay's own tables.
  SAR_RETURN_IF_ERROR(RouteAt(f, r, o, engine, event, &r_now, &prev.lfts));
  AnalysisResult stale;
  SAR_RETURN_IF_ERROR(MeasureAt(f, r, o, event, prev.lfts, prev.source_lid_offset, &stale));
  *before = std::move(stale.metrics.effective_efi_per_channel);
  *after = std::move(r_now.analysis.metrics.effective_efi_per_channel);
  return Status::OK();
}

}  // namespace sar
