// Reading the job mapping as the OpenSM plugin does, under the SM lock (issue 19 defect 20: one
// job on 100k lines took 25.5 s with a quadratic duplicate check; target: well under a second).
// And the LFT dump at 10k hosts (issue 16): OpenSM's text form against sar's compact form,
// format and parse, with the text's size as a counter.
//   build/bench/io_bench [--benchmark_filter=Lft]
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "sar/engines/engine.h"
#include "sar/io/file_util.h"
#include "sar/io/job_file.h"
#include "sar/io/lft_dump.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"

namespace {

// `lines` lines of one job; every host appears twice (duplicates are what the check is for).
std::string OneJob(int lines) {
  std::string text;
  for (int i = 0; i < lines; ++i) {
    text += "h" + std::to_string(i < lines / 2 ? i : lines - 1 - i) + " 4711\n";
  }
  return text;
}

void BM_ParseOneJob(benchmark::State& state) {
  const std::string text = OneJob(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    sar::JobMapping m;
    if (!sar::ParseJobMapping(text, "bench", &m).ok()) std::abort();
    benchmark::DoNotOptimize(m);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseOneJob)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

// The whole ReadJobMapping (open, checks, read, parse) of a 100k-line file.
void BM_ReadOneJobFile(benchmark::State& state) {
  char dir[] = "/tmp/sar_io_bench.XXXXXX";
  if (::mkdtemp(dir) == nullptr) std::abort();
  const std::string path = std::string(dir) + "/jobs.map";
  if (!sar::WriteFileAtomic(path, OneJob(static_cast<int>(state.range(0)))).ok()) std::abort();
  for (auto _ : state) {
    sar::JobMapping m;
    if (!sar::ReadJobMapping(path, &m).ok()) std::abort();
    benchmark::DoNotOptimize(m);
  }
  ::unlink(path.c_str());
  ::rmdir(dir);
}
BENCHMARK(BM_ReadOneJobFile)->Arg(100000)->Unit(benchmark::kMillisecond);

// The 10,240-host PGFT of issue 16 routed by dmodc, built once.
struct Tables {
  sar::Fabric fabric;
  sar::LftSet lfts;
};
const Tables& TenK() {
  static const Tables* t = [] {
    auto* x = new Tables;
    sar::PgftSpec spec;
    sar::RoutingOutput out;
    sar::RoutingInput in;
    in.fabric = &x->fabric;
    if (!sar::ParsePgftSpec("pgft:3;32,16,20;1,16,20;1,1,1", &spec).ok() ||
        !sar::GeneratePgft(spec, {}, &x->fabric).ok() || !sar::AssignLids({}, &x->fabric).ok() ||
        !sar::MakeRoutingEngine("dmodc")->Route(in, &out).ok()) {
      std::abort();
    }
    x->lfts = std::move(out.lfts);
    return x;
  }();
  return *t;
}

void BM_FormatLft(benchmark::State& state) {
  const Tables& t = TenK();
  size_t bytes = 0;
  for (auto _ : state) {
    const std::string text = state.range(0) ? sar::FormatCompactLftDump(t.fabric, t.lfts)
                                            : sar::FormatLftDump(t.fabric, t.lfts);
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["MB"] = bytes / 1e6;
}
BENCHMARK(BM_FormatLft)
    ->ArgName("compact")
    ->Arg(0)
    ->Arg(1)
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond);

void BM_ParseLft(benchmark::State& state) {
  const Tables& t = TenK();
  const std::string text = state.range(0) ? sar::FormatCompactLftDump(t.fabric, t.lfts)
                                          : sar::FormatLftDump(t.fabric, t.lfts);
  for (auto _ : state) {
    sar::LftSet back;
    if (!sar::ParseLftDump(text, "bench", t.fabric, &back).ok() || !(back == t.lfts)) std::abort();
  }
  state.counters["MB"] = text.size() / 1e6;
}
BENCHMARK(BM_ParseLft)
    ->ArgName("compact")
    ->Arg(0)
    ->Arg(1)
    ->Iterations(2)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
