// Per-job FORS (fors_job.h) as the routing pass runs it: one alltoall job of 256 hosts on
// FT(2;32,32) with failed links. Target (issue 15): plan + route well under 100 ms.
//   - BM_PlanAndRoute/<case>: DetectFatTree2 + PlanForsJob + ApplyForsJobRoutes, per iteration;
//     counters: phases, lower bound, entries rerouted around failures, transfers moved, extra
//     phases. CheckForsJobOnTables (the pass's own check) is timed separately (BM_Check).
//   Cases: 0 = 8 whole leaves, 1 failed link on each of 3 of them; 1 = 16 hosts on each of 16
//   leaves, 3 failed links; 2 = 256 random hosts, 3 failed links.
// Run: build/bench/fors_job_bench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "sar/fors/fors.h"
#include "sar/fors/fors_job.h"
#include "sar/fors/fors_tables.h"
#include "sar/model/fabric.h"
#include "sar/model/lft.h"

namespace {

constexpr int kM0 = 32, kM1 = 32;

struct Case {
  sar::Fabric fabric;
  sar::ResolvedJob job;
};

Case MakeCase(int which) {
  std::mt19937_64 rng(15 + which);
  std::vector<int> hosts;
  std::vector<sar::FailedLink> failed;
  if (which == 0) {
    for (int s = 0; s < 8 * kM0; ++s) hosts.push_back(s);
    failed = {{0, 3}, {2, 17}, {5, 30}};
  } else if (which == 1) {
    for (int l = 0; l < 16; ++l) {
      for (int k = 0; k < 16; ++k) hosts.push_back((2 * l) * kM0 + 2 * k);
    }
    failed = {{0, 0}, {4, 9}, {10, 21}};
  } else {
    std::vector<int> all(kM0 * kM1);
    for (int s = 0; s < kM0 * kM1; ++s) all[s] = s;
    std::shuffle(all.begin(), all.end(), rng);
    hosts.assign(all.begin(), all.begin() + 256);
    for (int i = 0; i < 3; ++i) {
      failed.push_back({hosts[i] / kM0, static_cast<int>(rng() % kM0)});
    }
  }
  Case c;
  if (!sar::BuildForsFabric(kM0, kM1, failed, &c.fabric).ok()) std::abort();
  c.job.id = "bench";
  c.job.pattern = sar::JobPattern::kAllToAll;
  for (int s : hosts) {
    char name[16];
    std::snprintf(name, sizeof name, "h%05d", s);
    c.job.endpoints.push_back({c.fabric.FindByName(name), 1});
  }
  return c;
}

void BM_PlanAndRoute(benchmark::State& state) {
  const Case c = MakeCase(static_cast<int>(state.range(0)));
  sar::LftSet lfts(c.fabric);
  sar::ForsJobPlan plan;
  for (auto _ : state) {
    sar::Ft2Topology topo;
    if (!sar::DetectFatTree2(c.fabric, &topo).ok()) state.SkipWithError("not an FT(2)");
    if (!sar::PlanForsJob(c.fabric, topo, c.job, 7, &plan).ok()) state.SkipWithError("plan");
    sar::ApplyForsJobRoutes(c.fabric, topo, plan, &lfts);
    benchmark::DoNotOptimize(lfts.row(0));
  }
  state.counters["hosts"] = static_cast<double>(plan.hosts.size());
  state.counters["phases"] = static_cast<double>(plan.stats.phases);
  state.counters["bound"] = static_cast<double>(plan.stats.lower_bound);
  state.counters["rerouted"] = static_cast<double>(plan.stats.rerouted);
  state.counters["moved"] = static_cast<double>(plan.stats.moved);
  state.counters["extra"] = static_cast<double>(plan.stats.split_phases);
}
BENCHMARK(BM_PlanAndRoute)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

void BM_Check(benchmark::State& state) {
  const Case c = MakeCase(static_cast<int>(state.range(0)));
  sar::Ft2Topology topo;
  sar::ForsJobPlan plan;
  sar::LftSet lfts(c.fabric);
  if (!sar::DetectFatTree2(c.fabric, &topo).ok() ||
      !sar::PlanForsJob(c.fabric, topo, c.job, 7, &plan).ok()) {
    state.SkipWithError("plan");
    return;
  }
  sar::ApplyForsJobRoutes(c.fabric, topo, plan, &lfts);
  for (auto _ : state) {
    const sar::Status s = sar::CheckForsJobOnTables(c.fabric, lfts, plan.hosts, plan.phases);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  }
}
BENCHMARK(BM_Check)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
