#include "sar/study/study.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <numeric>
#include <random>

#include "sar/analysis/flows.h"
#include "sar/engines/engine.h"
#include "sar/env.h"
#include "sar/model/failures.h"
#include "sar/model/lids.h"
#include "sar/pass/routing_pass.h"

namespace sar {

std::vector<double> MaxMinFairRates(const std::vector<std::vector<int32_t>>& paths,
                                    int num_channels) {
  const size_t n = paths.size();
  std::vector<double> rate(n, 0);
  std::vector<char> frozen(n, 0);
  std::vector<int> cnt(num_channels, 0);
  std::vector<double> used(num_channels, 0);  // capacity taken by frozen flows
  // Flows per channel (CSR).
  std::vector<size_t> begin(num_channels + 1, 0);
  for (size_t f = 0; f < n; ++f) {
    if (paths[f].empty()) frozen[f] = 1;
    for (int32_t c : paths[f]) ++begin[c + 1];
  }
  std::partial_sum(begin.begin(), begin.end(), begin.begin());
  std::vector<uint32_t> on(begin.back());
  {
    std::vector<size_t> fill(begin.begin(), begin.end() - 1);
    for (size_t f = 0; f < n; ++f) {
      for (int32_t c : paths[f]) on[fill[c]++] = static_cast<uint32_t>(f);
    }
  }
  for (int c = 0; c < num_channels; ++c) cnt[c] = static_cast<int>(begin[c + 1] - begin[c]);
  std::vector<int> live;  // channels with unfrozen flows
  for (int c = 0; c < num_channels; ++c) {
    if (cnt[c] > 0) live.push_back(c);
  }
  // All unfrozen flows share one rate, `level`; channel c saturates when used + cnt * level = 1.
  // A channel's share (1 - used) / cnt does not move when flows at the current level freeze.
  std::vector<int> saturated;
  while (!live.empty()) {
    double level = std::numeric_limits<double>::infinity();
    for (int c : live) level = std::min(level, (1 - used[c]) / cnt[c]);
    saturated.clear();
    for (int c : live) {
      if ((1 - used[c]) / cnt[c] <= level * (1 + 1e-12) + 1e-15) saturated.push_back(c);
    }
    for (int c : saturated) {
      for (size_t k = begin[c]; k < begin[c + 1]; ++k) {
        const uint32_t f = on[k];
        if (frozen[f]) continue;
        frozen[f] = 1;
        rate[f] = level;
        for (int32_t c2 : paths[f]) {
          --cnt[c2];
          used[c2] += level;
        }
      }
    }
    live.erase(std::remove_if(live.begin(), live.end(), [&](int c) { return cnt[c] == 0; }),
               live.end());
  }
  return rate;
}

LinearFit FitLine(const std::vector<double>& x, const std::vector<double>& y) {
  LinearFit fit;
  fit.n = static_cast<int>(std::min(x.size(), y.size()));
  if (fit.n == 0) return fit;
  double mx = 0, my = 0;
  for (int i = 0; i < fit.n; ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= fit.n;
  my /= fit.n;
  double sxx = 0, sxy = 0, syy = 0;
  for (int i = 0; i < fit.n; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  fit.slope = sxx > 0 ? sxy / sxx : 0;
  fit.intercept = my - fit.slope * mx;
  // Share of the variance the line explains; a constant y is explained perfectly.
  fit.r2 = sxx <= 0 ? 0 : syy > 0 ? (sxy * sxy) / (sxx * syy) : 1;
  return fit;
}

std::vector<Flow> AllToAllFlows(size_t n) {
  std::vector<Flow> flows;
  flows.reserve(n * (n > 0 ? n - 1 : 0));
  for (uint32_t s = 0; s < n; ++s) {
    for (uint32_t d = 0; d < n; ++d) {
      if (s != d) flows.push_back({s, d});
    }
  }
  return flows;
}

std::vector<std::vector<uint32_t>> ClusterGroups(size_t n, int size, uint64_t seed) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::vector<uint32_t>> groups;
  const size_t k = static_cast<size_t>(std::max(size, 1));
  for (size_t b = 0; b < n; b += k) {
    groups.emplace_back(order.begin() + b, order.begin() + std::min(n, b + k));
  }
  return groups;
}

std::vector<Flow> ClusteredFlows(size_t n, int size, uint64_t seed) {
  std::vector<Flow> flows;
  for (const std::vector<uint32_t>& g : ClusterGroups(n, size, seed)) {
    for (uint32_t a : g) {
      for (uint32_t b : g) {
        if (a != b) flows.push_back({a, b});
      }
    }
  }
  return flows;
}

uint64_t DisconnectedPairs(const Fabric& f, const LftSet& lfts, const std::vector<uint8_t>& offset,
                           const std::vector<bool>& failed_ports) {
  const std::vector<PortRef> ends = f.Endpoints();
  uint64_t count = 0;
  std::vector<int32_t> path;
  for (uint32_t s = 0; s < ends.size(); ++s) {
    for (uint32_t d = 0; d < ends.size(); ++d) {
      if (s == d || !TraceFlow(f, lfts, ends, offset, {s, d}, &path)) continue;
      for (int32_t c : path) {
        if (failed_ports[c] || failed_ports[f.peer_id(c)]) {
          ++count;
          break;
        }
      }
    }
  }
  return count;
}

namespace {

// The max-min sum; *exchange (if given): flows / the busiest channel's flow count.
double Throughput(const Fabric& f, const RoutingOutput& out, const std::vector<Flow>& flows,
                  uint64_t* undelivered, double* exchange = nullptr) {
  std::vector<std::vector<int32_t>> paths;
  TraceFlows(f, out.lfts, out.source_lid_offset, flows, &paths, undelivered);
  if (exchange != nullptr) {
    std::vector<uint32_t> load(f.num_port_slots(), 0);
    uint32_t busiest = 0;
    for (const std::vector<int32_t>& p : paths) {
      for (int32_t c : p) busiest = std::max(busiest, ++load[c]);
    }
    *exchange = busiest ? static_cast<double>(paths.size()) / busiest : 0;
  }
  const std::vector<double> rates = MaxMinFairRates(paths, f.num_port_slots());
  return std::accumulate(rates.begin(), rates.end(), 0.0);
}

// Per PortId of `f`: the ends of the cut cables and every port of a removed switch.
std::vector<bool> FailedPorts(const Fabric& f, const FailureSet& fs) {
  std::vector<bool> failed(f.num_port_slots(), false);
  for (const auto& [name, port] : fs.links) {
    const NodeId n = f.FindByName(name);
    if (n == kNoNode) continue;
    failed[f.port_id(n, port)] = true;
    const PortId peer = f.peer_id(f.port_id(n, port));
    if (peer != kNoPort) failed[peer] = true;
  }
  for (const std::string& name : fs.switches) {
    const NodeId n = f.FindByName(name);
    if (n == kNoNode) continue;
    for (int p = 0; p <= f.num_ports(n); ++p) failed[f.port_id(n, p)] = true;
  }
  return failed;
}

// One routing pass of `engine` on `f`; false (with the reason) when it cannot route `f`.
bool RouteAndValidate(const std::string& engine, const Fabric& f, const StudyOptions& o,
                      RoutingResult* result, std::string* error) {
  RoutingRequest request;
  request.fabric = &f;
  request.options = o.routing;
  request.options.engine = engine;
  const Status s = RunRoutingPass(request, result);
  if (!s.ok()) *error = s.message();
  return s.ok();
}

}  // namespace

Status RunStudy(const Fabric& fabric, const StudyOptions& o, StudyResult* out) {
  if (o.links.size() != o.switches.size() || o.links.empty()) {
    return Status::InvalidArgument("study: give as many switch counts as link counts (" +
                                   std::to_string(o.links.size()) + " and " +
                                   std::to_string(o.switches.size()) + ")");
  }
  for (const std::string& name : o.engines) {
    if (!MakeRoutingEngine(name)) {
      return Status::InvalidArgument("study: no engine '" + name +
                                     "' (engines: " + RoutingEngineList() + ")");
    }
  }
  SAR_RETURN_IF_ERROR(fabric.CheckEndpointLids());
  StudyResult r;
  r.engines = o.engines;
  r.cluster_sizes = o.cluster_sizes;
  r.endpoints = fabric.Endpoints().size();
  r.pairs = r.endpoints * (r.endpoints > 0 ? r.endpoints - 1 : 0);
  const std::vector<Flow> alltoall = AllToAllFlows(r.endpoints);
  std::vector<std::vector<Flow>> clustered;
  std::vector<std::vector<std::vector<uint32_t>>> cluster_groups;  // the same clusters as jobs
  for (int size : o.cluster_sizes) {
    clustered.push_back(ClusteredFlows(r.endpoints, size, o.seed));
    cluster_groups.push_back(ClusterGroups(r.endpoints, size, o.seed));
  }
  // The intact fabric's tables: what is disconnected until the engine reroutes.
  const size_t ne = o.engines.size();
  std::vector<RoutingOutput> intact(ne);
  r.intact_error.assign(ne, "");
  r.intact_engine_used.assign(ne, "");
  r.intact_notes.assign(ne, {});
  for (size_t e = 0; e < ne; ++e) {
    std::string error;
    RoutingResult routed;
    if (!RouteAndValidate(o.engines[e], fabric, o, &routed, &error)) r.intact_error[e] = error;
    r.intact_engine_used[e] = routed.inputs.engine;
    r.intact_notes[e] = routed.Notes();
    intact[e] = std::move(routed.output);
  }
  const size_t all = StudyPointCount(o);
  const size_t begin = std::min(o.point_begin, all);
  const size_t end = std::min(std::max(o.point_end, o.point_begin), all);
  const int total = static_cast<int>(end - begin);
  int done = 0;
  size_t index = 0;  // of the point in the unsplit list
  for (size_t i = 0; i < o.links.size(); ++i) {
    const int draws = o.links[i] == 0 && o.switches[i] == 0 ? 1 : o.seeds;
    for (int k = 0; k < draws; ++k, ++index) {
      if (index < begin || index >= end) continue;
      StudyPoint pt;
      pt.links = o.links[i];
      pt.switches = o.switches[i];
      pt.seed = o.seed + k;
      pt.cells.resize(ne);
      RandomFailureOptions ro;
      ro.num_links = pt.links;
      ro.num_switches = pt.switches;
      ro.seed = pt.seed;
      FailureSet fs;
      Fabric degraded;
      Status s = PickRandomFailures(fabric, ro, &fs);
      if (s.ok()) s = ApplyFailures(fabric, fs, &degraded);
      if (s.ok() && degraded.Endpoints().size() != r.endpoints) {
        s = Status::Failed("the failures removed endpoints");
      }
      if (!s.ok()) {
        pt.drawn = false;
        pt.draw_error = s.message();
      } else {
        const std::vector<bool> failed = FailedPorts(fabric, fs);
        for (size_t e = 0; e < ne; ++e) {
          StudyCell& cell = pt.cells[e];
          if (r.intact_error[e].empty()) {
            cell.disconnected_before =
                DisconnectedPairs(fabric, intact[e].lfts, intact[e].source_lid_offset, failed);
          }
          RoutingResult result;
          const Stopwatch t0;
          cell.routed = RouteAndValidate(o.engines[e], degraded, o, &result, &cell.error);
          const RoutingOutput& routed = result.output;
          cell.route_ms = t0.ElapsedMs();
          if (!cell.routed) continue;
          uint64_t lost = 0;
          cell.alltoall = Throughput(degraded, routed, alltoall, &lost, &cell.exchange);
          for (const std::vector<Flow>& flows : clustered) {
            uint64_t l = 0;
            cell.clustered.push_back(Throughput(degraded, routed, flows, &l));
            lost += l;
          }
          const std::vector<PortRef> ends = degraded.Endpoints();
          for (const auto& groups : cluster_groups) {
            // Clusters as jobs: each one's slowest flow, all sending at once.
            std::vector<FlowJob> jobs;
            for (const std::vector<uint32_t>& g : groups) {
              jobs.push_back({"c" + std::to_string(jobs.size()), {}, {}});
              for (uint32_t i : g) jobs.back().endpoints.push_back(ends[i]);
            }
            FlowOptions fo;
            fo.source_lid_offset = &routed.source_lid_offset;
            fo.threads = o.routing.threads;
            fo.alone = false;
            FlowReport fr;
            const Status fs = ComputeJobFlows(degraded, routed.lfts, jobs, fo, &fr);
            cell.cluster_time_max.push_back(fs.ok() ? fr.summary.max_time : 0);
            cell.cluster_time_median.push_back(fs.ok() ? fr.summary.median_time : 0);
          }
          if (lost > 0) {  // validated tables deliver everything; keep the study honest anyway
            cell.routed = false;
            cell.error = std::to_string(lost) + " flows not delivered";
          }
        }
      }
      r.points.push_back(std::move(pt));
      if (o.progress) o.progress(++done, total);
    }
  }
  FitStudy(&r);
  *out = std::move(r);
  return Status::OK();
}

size_t StudyPointCount(const StudyOptions& o) {
  size_t n = 0;
  for (size_t i = 0; i < o.links.size() && i < o.switches.size(); ++i) {
    n += o.links[i] == 0 && o.switches[i] == 0 ? 1 : static_cast<size_t>(std::max(o.seeds, 0));
  }
  return n;
}

void FitStudy(StudyResult* r) {
  // Lines per engine over the draws it routed; x = failed cables + failed switches.
  const size_t ne = r->engines.size();
  r->fit_alltoall.resize(ne);
  r->fit_exchange.resize(ne);
  r->fit_clustered.assign(ne, std::vector<LinearFit>(r->cluster_sizes.size()));
  for (size_t e = 0; e < ne; ++e) {
    std::vector<double> x, y, yx;
    std::vector<std::vector<double>> yc(r->cluster_sizes.size());
    for (const StudyPoint& pt : r->points) {
      if (!pt.drawn || !pt.cells[e].routed) continue;
      x.push_back(pt.links + pt.switches);
      y.push_back(pt.cells[e].alltoall);
      yx.push_back(pt.cells[e].exchange);
      for (size_t c = 0; c < yc.size(); ++c) yc[c].push_back(pt.cells[e].clustered[c]);
    }
    r->fit_alltoall[e] = FitLine(x, y);
    r->fit_exchange[e] = FitLine(x, yx);
    for (size_t c = 0; c < yc.size(); ++c) r->fit_clustered[e][c] = FitLine(x, yc[c]);
  }
}

}  // namespace sar
