// sar-filterd's cycle without the scheduler call: poll a replay source, filter, diff, on a
// 20,000-host fabric (1,000 leaves of 20) with 1,000 and 10,000 running jobs that fill it.
// Run: build/bench/filterd_bench (figures in docs/filterd.md).
#include <benchmark/benchmark.h>

#include <random>

#include "filter.h"
#include "job_set_diff.h"
#include "sources/replay_source.h"

namespace sar::filterd {
namespace {

constexpr int kHosts = 20000;
constexpr int kPerLeaf = 20;

LeafMap BigLeafMap() {
  LeafMap m;
  for (int h = 0; h < kHosts; ++h) {
    m.Add("n" + std::to_string(h), "leaf" + std::to_string(h / kPerLeaf));
  }
  return m;
}

// `num_jobs` jobs over contiguous host ranges of random sizes that together use every host, as
// a scheduler with topology/tree places them: many stay inside a leaf, the larger ones span.
std::vector<TraceJob> FullMachine(int num_jobs) {
  std::mt19937 rng(42);
  std::vector<int> cuts(num_jobs - 1);
  for (int& c : cuts) c = 1 + static_cast<int>(rng() % (kHosts - 1));
  cuts.push_back(0);
  cuts.push_back(kHosts);
  std::sort(cuts.begin(), cuts.end());
  std::vector<TraceJob> trace;
  for (int j = 0; j < num_jobs; ++j) {
    TraceJob t;
    t.start_s = 0;
    t.end_s = 1e18;
    t.job.id = std::to_string(1000000 + j);
    t.job.partition = "batch";
    for (int h = cuts[j]; h < std::max(cuts[j + 1], cuts[j] + 1) && h < kHosts; ++h) {
      t.job.hosts.push_back("n" + std::to_string(h));
    }
    trace.push_back(std::move(t));
  }
  return trace;
}

void BM_FilterDiff(benchmark::State& state) {
  const LeafMap leaves = BigLeafMap();
  std::vector<SourceJob> jobs;
  for (TraceJob& t : FullMachine(static_cast<int>(state.range(0)))) jobs.push_back(t.job);
  const FilterOptions options;
  const std::vector<MultiSwitchJob> previous = FilterJobs(jobs, leaves, options).jobs;
  size_t multi = 0;
  for (auto _ : state) {
    FilterResult r = FilterJobs(jobs, leaves, options);
    JobSetDiff d = DiffJobSets(previous, r.jobs);
    multi = r.jobs.size();
    benchmark::DoNotOptimize(d);
  }
  state.counters["multi_switch_jobs"] = static_cast<double>(multi);
}

void BM_ReplayCycle(benchmark::State& state) {
  const LeafMap leaves = BigLeafMap();
  ReplaySource source(FullMachine(static_cast<int>(state.range(0))), [] { return 1.0; });
  std::vector<SourceJob> jobs;
  source.Poll(&jobs);
  const std::vector<MultiSwitchJob> previous = FilterJobs(jobs, leaves, {}).jobs;
  for (auto _ : state) {
    Status s = source.Poll(&jobs);
    FilterResult r = FilterJobs(jobs, leaves, {});
    JobSetDiff d = DiffJobSets(previous, r.jobs);
    benchmark::DoNotOptimize(d);
    benchmark::DoNotOptimize(s);
  }
}

BENCHMARK(BM_FilterDiff)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ReplayCycle)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace sar::filterd

BENCHMARK_MAIN();
