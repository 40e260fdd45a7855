// DFSSSP and SAR routing plus virtual layers on FT(2;20,18) (360 HCAs) and a 3-level PGFT with
// 2048 HCAs. Targets (issue 3): DFSSSP routing + layering on FT(2;20,18) well under 12 ms;
// at ~2000 HCAs well under half of OpenSM dfsssp's time there. Counters: paths_ms and
// layers_ms as the engine reports them (means over the iterations).
//   build/bench/engines_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only
#include <benchmark/benchmark.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sar/engines/engine.h"
#include "sar/model/generate.h"
#include "sar/model/jobs.h"
#include "sar/model/lids.h"

namespace {

const char* const kSpecs[] = {"ft2:20,18", "pgft:3;16,16,8;1,16,16;1,1,1"};

sar::Fabric Make(int which) {
  sar::PgftSpec spec;
  sar::Fabric f;
  if (!sar::ParsePgftSpec(kSpecs[which], &spec).ok() ||
      !sar::GeneratePgft(spec, sar::GenerateOptions{}, &f).ok() ||
      !sar::AssignLids(sar::LidOptions{}, &f).ok()) {
    std::abort();
  }
  return f;
}

// A random job mix: 80% of the nodes in jobs of 2..64 hosts.
std::vector<sar::ResolvedJob> Jobs(const sar::Fabric& f) {
  std::mt19937_64 rng(7);
  std::vector<sar::PortRef> eps = f.Endpoints();
  std::shuffle(eps.begin(), eps.end(), rng);
  std::vector<sar::ResolvedJob> jobs;
  const size_t busy = eps.size() * 4 / 5;
  for (size_t at = 0; at + 2 <= busy;) {
    const size_t size = std::min<size_t>(busy - at, 2 + rng() % 63);
    sar::ResolvedJob job;
    job.id = std::to_string(jobs.size());
    std::set<sar::NodeId> leaves;
    for (size_t i = at; i < at + size; ++i) {
      job.endpoints.push_back(eps[i]);
      leaves.insert(f.peer(eps[i]).node);
    }
    job.num_leaf_switches = static_cast<int>(leaves.size());
    jobs.push_back(std::move(job));
    at += size;
  }
  return jobs;
}

void Run(benchmark::State& state, const char* engine_name, bool with_jobs) {
  const sar::Fabric f = Make(static_cast<int>(state.range(0)));
  const std::vector<sar::ResolvedJob> jobs = with_jobs ? Jobs(f) : std::vector<sar::ResolvedJob>{};
  const auto engine = sar::MakeRoutingEngine(engine_name);
  sar::RoutingInput in;
  in.fabric = &f;
  in.jobs = &jobs;
  double paths = 0, layers = 0;
  for (auto _ : state) {
    sar::RoutingOutput out;
    if (!engine->Route(in, &out).ok()) {
      state.SkipWithError("routing failed");
      return;
    }
    paths += out.paths_ms;
    layers += out.layers_ms;
    benchmark::DoNotOptimize(out);
  }
  state.SetLabel(kSpecs[state.range(0)]);
  state.counters["hcas"] = static_cast<double>(f.Endpoints().size());
  state.counters["paths_ms"] = paths / state.iterations();
  state.counters["layers_ms"] = layers / state.iterations();
}

void BM_Dfsssp(benchmark::State& state) { Run(state, "dfsssp", false); }
void BM_SarJobs(benchmark::State& state) { Run(state, "sar", true); }

BENCHMARK(BM_Dfsssp)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SarJobs)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
