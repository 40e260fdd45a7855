// The SSSP engines (sar, dfsssp) at scale (issue 16 item 3): one engine run on a generated PGFT
// with a synthetic job mix (sar/study/job_mix.h, the same as `sar-route jobmix` with its defaults
// and
// --seed), timed as the engine reports it (paths_ms: shortest paths and SAR's refinement;
// layers_ms: virtual layers), without the validation and the table dump that `sar-route route`
// adds. Not a test: it prints figures (docs/benchmarks.md) and a hash of the tables and layers,
// so two builds can be checked for identical results on fabrics too large to dump.
//
//   build/bench/sssp_bench [--engine sar] [--spec pgft:3;32,16,20;1,16,20;1,1,1] [--seed 1]
//                          [--runs 3] [--threads 2] [--no-refine] [--refine-work N] [--run-length
//                          N]
//                          [--fail-links N] [--fail-switches N] [--hca-pairs-only] [--efi]
// --run-length N: the fragmented mix (JobMixOptions::run_length); --fail-links N: N random
// switch-to-switch cables cut (seed --seed, HCAs kept connected), a degraded fabric;
// --fail-switches N: N random switches removed too (never one with HCAs). --hca-pairs-only:
// layers for routes between HCAs only, as before issue 33 (default: switch LIDs too). --efi:
// after the timed runs (and the peak RSS reading), the max effective EFI and max EFI of the
// tables (sar/analysis/metrics.h, every job pair traced) and the effective EFI lower bound.
// --no-hash: no hash (FNV's start value printed; for timing runs: at 10k and more it costs more CPU
// than the engine).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"
#include "sar/analysis/analysis.h"
#include "sar/analysis/lower_bound.h"
#include "sar/analysis/metrics.h"
#include "sar/engines/engine.h"
#include "sar/model/failures.h"
#include "sar/model/generate.h"
#include "sar/model/jobs.h"
#include "sar/model/lids.h"
#include "sar/study/job_mix.h"

namespace {

uint64_t Fnv(uint64_t h, const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  std::string engine_name = "sar", spec_text = "pgft:3;32,16,20;1,16,20;1,1,1";
  int runs = 3, threads = 2, run_length = 0, fail_links = 0, fail_switches = 0;
  uint64_t seed = 1;
  bool refine = true;
  bool efi = false;
  bool hash_tables = true;  // --no-hash: skip the hash (timing runs; it costs more than the engine)
  bool switch_lids = true;  // --hca-pairs-only: layers for HCA pairs only (before issue 33)
  uint64_t refine_work = sar::kDefaultSarRefineWork;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--engine" && has) {
      engine_name = argv[++i];
    } else if (a == "--spec" && has) {
      spec_text = argv[++i];
    } else if (a == "--seed" && has) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--runs" && has) {
      runs = std::atoi(argv[++i]);
    } else if (a == "--threads" && has) {
      threads = std::atoi(argv[++i]);
    } else if (a == "--run-length" && has) {
      run_length = std::atoi(argv[++i]);
    } else if (a == "--fail-links" && has) {
      fail_links = std::atoi(argv[++i]);
    } else if (a == "--fail-switches" && has) {
      fail_switches = std::atoi(argv[++i]);
    } else if (a == "--no-refine") {
      refine = false;
    } else if (a == "--efi") {
      efi = true;
    } else if (a == "--no-hash") {
      hash_tables = false;
    } else if (a == "--hca-pairs-only") {
      switch_lids = false;
    } else if (a == "--refine-work" && has) {
      refine_work = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(
          stderr,
          "usage: sssp_bench [--engine E] [--spec S] [--seed N] [--runs N] "
          "[--threads N] [--no-refine] [--refine-work N] [--run-length N] [--fail-links N] "
          "[--fail-switches N] [--hca-pairs-only] [--efi] [--no-hash]\n");
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
  if (fail_links > 0 || fail_switches > 0) {
    sar::RandomFailureOptions fo;
    fo.num_links = fail_links;
    fo.num_switches = fail_switches;
    fo.seed = seed;
    sar::FailureSet failed;
    sar::Fabric degraded;
    if (!sar::PickRandomFailures(f, fo, &failed).ok() ||
        !sar::ApplyFailures(f, failed, &degraded).ok()) {
      std::fprintf(stderr, "cannot cut %d cables and remove %d switches\n", fail_links,
                   fail_switches);
      return 1;
    }
    f = std::move(degraded);
  }
  sar::JobMixOptions mix;
  mix.seed = seed;
  mix.run_length = run_length;
  sar::JobMapping mapping;
  if (!sar::GenerateJobMix(f, mix, &mapping).ok()) return 1;
  const std::vector<sar::ResolvedJob> jobs = sar::ResolveJobs(f, mapping);
  const auto engine = sar::MakeRoutingEngine(engine_name);
  if (engine == nullptr) return 2;
  sar::RoutingInput in;
  in.fabric = &f;
  in.jobs = &jobs;
  in.threads = threads;
  in.sar_refine = refine;
  in.switch_lids = switch_lids;
  in.sar_refine_work = refine_work;
  std::vector<double> paths, layers, cpu;
  uint64_t hash = 14695981039346656037ull;
  sar::LftSet first;  // the first run's tables, for --efi
  for (int r = 0; r < runs; ++r) {
    sar::RoutingOutput out;
    const double cpu_start = sar::bench::CpuMs();
    const sar::Status st = engine->Route(in, &out);
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.message().c_str());
      return 1;
    }
    cpu.push_back(sar::bench::CpuMs() - cpu_start);
    paths.push_back(out.paths_ms);
    layers.push_back(out.layers_ms);
    if (r == 0) {
      for (const std::string& note : out.notes) {
        if (note.rfind("refinement", 0) == 0) std::printf("%s\n", note.c_str());
      }
      for (int s = 0; hash_tables && s < out.lfts.num_switches(); ++s) {
        hash = Fnv(hash, out.lfts.row(s), out.lfts.max_lid() + 1u);
      }
      if (hash_tables) {
        out.layers.ForEachEntry([&](const sar::VirtualLayers::Entry& e) {
          const uint32_t v[3] = {e.src, e.dst, static_cast<uint32_t>(e.layer)};
          hash = Fnv(hash, reinterpret_cast<const uint8_t*>(v), sizeof(v));
        });
      }
      if (efi) first = std::move(out.lfts);
    }
  }
  std::printf(
      "%s %s: %d switches, %zu hosts, %zu jobs, threads %d: paths %.0f ms, layers %.0f ms "
      "(medians of %d), CPU %.0f ms, peak RSS %.0f MB, hash %016llx\n",
      engine_name.c_str(), spec_text.c_str(), f.num_switches(), f.Endpoints().size(), jobs.size(),
      threads, sar::bench::Median(paths), sar::bench::Median(layers), runs, sar::bench::Median(cpu),
      sar::bench::PeakRssMb(), static_cast<unsigned long long>(hash));
  if (efi) {
    sar::MetricsOptions mo;
    mo.threads = threads;
    sar::Metrics m;
    if (!sar::ComputeMetrics(f, first, jobs, mo, &m).ok()) return 1;
    const sar::EffectiveEfiBound bound = sar::EffectiveEfiLowerBound(f, jobs);
    std::printf("max effective EFI %llu, lower bound %llu (%+.1f%%), max EFI %llu\n",
                static_cast<unsigned long long>(m.effective_efi.max),
                static_cast<unsigned long long>(bound.value),
                100.0 * sar::BoundGap(m.effective_efi.max, bound.value),
                static_cast<unsigned long long>(m.efi.max));
  }
  return 0;
}
