// FORS schedule + spine routing (PlanFors) on FT(2;20,18) and FT(2;32,32).
// Targets (issue 4): under 0.5 s per scenario on FT(2;20,18) (the paper's Gurobi ILP took ~30 s),
// under 5 s on FT(2;32,32), on these 2 cores.
//   - BM_PaperScenario/<M0>/<M1>/<i>: the paper's failure scenarios (fors_model.h), one each.
//   - BM_RandomSets/<M0>/<M1>/<count>: `count` seeded random failure sets, each with a random
//     number of leaves that each lose 1..M0/2 random uplinks (so f <= M0/2); reports the
//     median and the worst plan time over the sets, and how many needed SAT or split phases.
// Run: build/bench/fors_bench   (or --benchmark_filter=Random)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#include "sar/fors/fors.h"
#include "sar/fors/fors_model.h"

namespace {

void BM_PaperScenario(benchmark::State& state) {
  const int m0 = static_cast<int>(state.range(0)), m1 = static_cast<int>(state.range(1));
  std::vector<sar::Scenario> scenarios;
  if (!sar::PaperScenarios(m0, m1, &scenarios).ok()) {
    state.SkipWithError("no scenarios");
    return;
  }
  const sar::Scenario& sc = scenarios[state.range(2)];
  state.SetLabel(sc.name);
  sar::ForsOptions o;
  o.m0 = m0;
  o.m1 = m1;
  o.failed = sc.failed;
  sar::ForsPlan plan;
  for (auto _ : state) {
    if (!sar::PlanFors(o, &plan).ok()) state.SkipWithError("PlanFors failed");
    benchmark::DoNotOptimize(plan.phases.data());
  }
  state.counters["phases"] = static_cast<double>(plan.num_phases());
  state.counters["split"] = static_cast<double>(plan.stats.split_phases);
  state.counters["sat_phases"] = static_cast<double>(plan.stats.sat_phases);
}

std::vector<sar::FailedLink> RandomSet(int m0, int m1, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<sar::FailedLink> out;
  const int leaves = 1 + static_cast<int>(rng() % m1);
  std::vector<int> leaf_ids(m1), spines(m0);
  for (int i = 0; i < m1; ++i) leaf_ids[i] = i;
  std::shuffle(leaf_ids.begin(), leaf_ids.end(), rng);
  for (int i = 0; i < leaves; ++i) {
    const int k = 1 + static_cast<int>(rng() % (m0 / 2));
    for (int j = 0; j < m0; ++j) spines[j] = j;
    std::shuffle(spines.begin(), spines.end(), rng);
    for (int j = 0; j < k; ++j) out.push_back({leaf_ids[i], spines[j]});
  }
  return out;
}

void BM_RandomSets(benchmark::State& state) {
  const int m0 = static_cast<int>(state.range(0)), m1 = static_cast<int>(state.range(1));
  const int count = static_cast<int>(state.range(2));
  std::vector<double> seconds;
  int with_sat = 0, with_split = 0, infeasible = 0;
  for (auto _ : state) {
    seconds.clear();
    with_sat = with_split = infeasible = 0;
    for (int i = 0; i < count; ++i) {
      sar::ForsOptions o;
      o.m0 = m0;
      o.m1 = m1;
      o.failed = RandomSet(m0, m1, 1000 + i);
      sar::ForsPlan plan;
      const auto t0 = std::chrono::steady_clock::now();
      const sar::Status s = sar::PlanFors(o, &plan);
      seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      if (!s.ok()) {
        ++infeasible;  // some leaf pair shares no spine
        continue;
      }
      with_sat += plan.stats.sat_phases > 0;
      with_split += plan.stats.split_phases > 0;
    }
  }
  std::sort(seconds.begin(), seconds.end());
  state.counters["median_s"] = seconds[seconds.size() / 2];
  state.counters["worst_s"] = seconds.back();
  state.counters["sets_with_sat"] = with_sat;
  state.counters["sets_with_split"] = with_split;
  state.counters["infeasible"] = infeasible;
}

void PaperArgs(benchmark::internal::Benchmark* b) {
  for (int i = 0; i < 9; ++i) b->Args({20, 18, i});
  for (int i = 0; i < 9; ++i) b->Args({32, 32, i});
}

BENCHMARK(BM_PaperScenario)->Apply(PaperArgs)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RandomSets)
    ->Args({20, 18, 100})
    ->Args({32, 32, 20})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
