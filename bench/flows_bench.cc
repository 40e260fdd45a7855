// Per-job max-min fair throughput (sar/analysis/flows.h) at scale: one event's whole computation
// (every job at once, and each job alone) on a generated PGFT with a SLURM-like job mix, routed by
// one of libsar's engines. Prints the event's size (hosts, jobs, flows, bundles) and the median
// wall time over --runs, beside the same run's routing time as the baseline it must stay below
// (docs/benchmarks.md). The figure is measured, not asserted.
//
//   build/bench/flows_bench [--spec pgft:3;16,8,8;1,16,8;1,1,1] [--min-size 2] [--max-size 1024]
//                           [--utilization 0.9] [--engine dfsssp] [--runs 5] [--threads 2]
//                           [--seed 1]
//   build/bench/flows_bench --spec 'pgft:3;32,16,20;1,16,20;1,1,1' --max-size 2048
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench_util.h"
#include "sar/analysis/flows.h"
#include "sar/engines/engine.h"
#include "sar/model/generate.h"
#include "sar/model/jobs.h"
#include "sar/model/lids.h"
#include "sar/study/job_mix.h"

int main(int argc, char** argv) {
  std::string spec_text = "pgft:3;16,8,8;1,16,8;1,1,1", engine_name = "dfsssp";
  int runs = 5, threads = 2, max_size = 1024, min_size = 2;
  double utilization = 0.9;
  uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--spec" && has) {
      spec_text = argv[++i];
    } else if (a == "--engine" && has) {
      engine_name = argv[++i];
    } else if (a == "--runs" && has) {
      runs = std::atoi(argv[++i]);
    } else if (a == "--threads" && has) {
      threads = std::atoi(argv[++i]);
    } else if (a == "--max-size" && has) {
      max_size = std::atoi(argv[++i]);
    } else if (a == "--min-size" && has) {
      min_size = std::atoi(argv[++i]);
    } else if (a == "--utilization" && has) {
      utilization = std::atof(argv[++i]);
    } else if (a == "--seed" && has) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr,
                   "usage: flows_bench [--spec S] [--min-size N] [--max-size N] [--utilization X] "
                   "[--engine E] [--runs N] [--threads N] [--seed N]\n");
      return 2;
    }
  }
  sar::PgftSpec spec;
  sar::Fabric f;
  if (!sar::ParsePgftSpec(spec_text, &spec).ok() || !sar::GeneratePgft(spec, {}, &f).ok() ||
      !sar::AssignLids({}, &f).ok()) {
    std::fprintf(stderr, "cannot generate %s\n", spec_text.c_str());
    return 1;
  }
  sar::JobMixOptions mix;
  mix.seed = seed;
  mix.max_size = max_size;
  mix.min_size = min_size;
  mix.utilization = utilization;
  sar::JobMapping mapping;
  if (!sar::GenerateJobMix(f, mix, &mapping).ok()) return 1;
  const std::vector<sar::ResolvedJob> jobs = sar::ResolveJobs(f, mapping);
  const auto engine = sar::MakeRoutingEngine(engine_name);
  if (engine == nullptr) {
    std::fprintf(stderr, "no engine %s\n", engine_name.c_str());
    return 2;
  }
  sar::RoutingInput in;
  in.fabric = &f;
  in.jobs = &jobs;
  in.threads = threads;
  sar::RoutingOutput routed;
  auto t0 = std::chrono::steady_clock::now();
  if (!engine->Route(in, &routed).ok()) return 1;
  const double route_ms = sar::bench::Ms(t0);
  const std::vector<sar::FlowJob> flow_jobs = sar::AllToAllFlowJobs(jobs);
  std::vector<double> shared_ms, full_ms;
  sar::FlowReport report;
  for (int r = 0; r < runs; ++r) {
    for (bool alone : {false, true}) {
      sar::FlowOptions o;
      o.threads = threads;
      o.alone = alone;
      o.source_lid_offset = &routed.source_lid_offset;
      t0 = std::chrono::steady_clock::now();
      if (!sar::ComputeJobFlows(f, routed.lfts, flow_jobs, o, &report).ok()) return 1;
      (alone ? full_ms : shared_ms).push_back(sar::bench::Ms(t0));
    }
  }
  int largest = 0;
  for (const sar::ResolvedJob& j : jobs) {
    largest = std::max(largest, static_cast<int>(j.endpoints.size()));
  }
  std::printf("fabric %s: %zu hosts; %zu jobs (largest %d hosts); %s tables in %.0f ms\n",
              spec_text.c_str(), f.Endpoints().size(), jobs.size(), largest, engine_name.c_str(),
              route_ms);
  std::printf("flows %llu, bundles %llu (%.1f flows per bundle)\n",
              static_cast<unsigned long long>(report.flows),
              static_cast<unsigned long long>(report.bundles),
              report.bundles ? static_cast<double>(report.flows) / report.bundles : 0.0);
  std::printf("per-job throughput, every job at once: median %.0f ms over %d runs\n",
              sar::bench::Median(shared_ms), runs);
  std::printf(
      "the same and each job alone (what eval/compare compute): median %.0f ms, %.2fx "
      "the routing time; peak RSS %.0f MB\n",
      sar::bench::Median(full_ms), sar::bench::Median(full_ms) / route_ms, sar::bench::PeakRssMb());
  std::printf("jobs' time median %.1f, max %.1f (message / line rate)\n",
              report.summary.median_time, report.summary.max_time);
  return 0;
}
