// Reading the job mapping as the OpenSM plugin does, under the SM lock (issue 19 defect 20: one
// job on 100k lines took 25.5 s with a quadratic duplicate check; target: well under a second).
//   build/bench/io_bench
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "sar/io/file_util.h"
#include "sar/io/job_file.h"

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

}  // namespace

BENCHMARK_MAIN();
