// Scale benchmark for dmodc (issue 16): full reroute of a large degraded PGFT, then a reroute
// after one more failed cable, from scratch and incrementally (DmodcRouter, sar/engines/dmodc.h),
// with median times over repetitions and the process's peak RSS. Not a test: it prints figures
// (docs/benchmarks.md).
//
//   build/bench/dmodc_bench [--spec pgft:3;32,32,44;1,32,32;1,1,1] [--fail-pct 1] [--reps 5]
//                           [--engine dmodc] [--threads 0] [--more-seed 2] [--validate]
// --more-seed picks the one more failed cable (seed 2: leaf166 port 50, a leaf's up cable).
//
// "route" is RoutingEngine::Route: the engine's input checks, Procedure 1, the validity pass
// (every leaf pair at finite cost) and the tables of every switch for every LID. --validate also
// times the project's ValidateRouting (every pair traced, the channel dependency graph), with
// switch LIDs counted (the default) and between HCA pairs only, each by the block check and by
// the per-destination sweep it replaced (same verdict, or exit 1), medians over --reps, and the
// delta validation (a baseline from the degraded fabric's tables; the tables after one more
// failure, and the same tables again), whose verdict must equal the full check's.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"
#include "sar/analysis/analysis.h"
#include "sar/engines/dmodc.h"
#include "sar/engines/engine.h"
#include "sar/model/failures.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"
#include "sar/pass/routing_pass.h"

namespace {

using sar::bench::CpuMs;
using sar::bench::Median;
using sar::bench::Ms;
using sar::bench::PeakRssMb;

void Die(const std::string& what, const sar::Status& s) {
  std::fprintf(stderr, "dmodc_bench: %s: %s\n", what.c_str(), s.ToString().c_str());
  std::exit(1);
}

// Median Route wall time over `reps` runs (and in *cpu_ms the median CPU time, all threads:
// the machine may be shared); the last output is kept in *out.
double TimeRoute(const sar::RoutingEngine& engine, const sar::RoutingInput& in, int reps,
                 sar::RoutingOutput* out, double* cpu_ms) {
  std::vector<double> ms, cpu;
  for (int i = 0; i < reps; ++i) {
    *out = sar::RoutingOutput();  // freeing the previous tables is not the engine's time
    const auto t = std::chrono::steady_clock::now();
    const double c = CpuMs();
    const sar::Status s = engine.Route(in, out);
    ms.push_back(Ms(t));
    cpu.push_back(CpuMs() - c);
    if (!s.ok()) Die("route", s);
  }
  *cpu_ms = Median(cpu);
  return Median(ms);
}

}  // namespace

int main(int argc, char** argv) {
  std::string spec_text = "pgft:3;32,32,44;1,32,32;1,1,1";
  std::string engine_name = "dmodc";
  double fail_pct = 1.0;
  int reps = 5, threads = 0;
  uint64_t more_seed = 2;
  bool validate = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "dmodc_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--spec")
      spec_text = next();
    else if (a == "--fail-pct")
      fail_pct = std::atof(next().c_str());
    else if (a == "--reps")
      reps = std::max(1, std::atoi(next().c_str()));
    else if (a == "--engine")
      engine_name = next();
    else if (a == "--threads")
      threads = std::atoi(next().c_str());
    else if (a == "--more-seed")
      more_seed = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--validate")
      validate = true;
    else {
      std::fprintf(stderr, "dmodc_bench: unknown argument '%s'\n", a.c_str());
      return 2;
    }
  }
  sar::PgftSpec spec;
  sar::Fabric intact, degraded, more;
  sar::Status s = sar::ParsePgftSpec(spec_text, &spec);
  if (!s.ok()) Die("spec", s);
  auto t = std::chrono::steady_clock::now();
  if (!(s = sar::GeneratePgft(spec, {}, &intact)).ok()) Die("generate", s);
  if (!(s = sar::AssignLids({}, &intact)).ok()) Die("lids", s);
  int switch_cables = 0;
  for (sar::PortId c = 0; c < intact.num_port_slots(); ++c)
    switch_cables += intact.is_inter_switch(c);
  switch_cables /= 2;
  sar::RandomFailureOptions fo;
  fo.num_links = static_cast<int>(switch_cables * fail_pct / 100.0 + 0.5);
  fo.seed = 1;
  sar::FailureSet fs;
  if (!(s = sar::PickRandomFailures(intact, fo, &fs)).ok()) Die("failures", s);
  if (!(s = sar::ApplyFailures(intact, fs, &degraded)).ok()) Die("failures", s);
  std::printf(
      "fabric %s: %zu hosts, %d switches, %d switch cables, %d failed (%.1f%%); built in %.0f ms\n",
      spec_text.c_str(), intact.Endpoints().size(), intact.num_switches(), switch_cables,
      fo.num_links, fail_pct, Ms(t));

  const auto engine = sar::MakeRoutingEngine(engine_name);
  if (engine == nullptr) {
    std::fprintf(stderr, "dmodc_bench: no engine '%s'\n", engine_name.c_str());
    return 2;
  }
  sar::RoutingInput in;
  in.fabric = &degraded;
  in.threads = threads;
  sar::RoutingOutput out;
  double cpu = 0;
  const double full = TimeRoute(*engine, in, reps, &out, &cpu);
  std::printf(
      "%s full reroute (degraded): median %.1f ms wall, %.1f ms CPU (all threads) over %d runs\n",
      engine_name.c_str(), full, cpu, reps);
  for (const std::string& n : out.notes) std::printf("  note: %s\n", n.c_str());

  // One more failed cable, rerouted from scratch.
  sar::RandomFailureOptions one;
  one.num_links = 1;
  one.seed = more_seed;
  sar::FailureSet fs1;
  if (!(s = sar::PickRandomFailures(degraded, one, &fs1)).ok()) Die("one more failure", s);
  if (!(s = sar::ApplyFailures(degraded, fs1, &more)).ok()) Die("one more failure", s);
  in.fabric = &more;
  sar::RoutingOutput out2;
  const double again = TimeRoute(*engine, in, reps, &out2, &cpu);
  size_t changed = 0;
  for (int sw = 0; sw < more.num_switches(); ++sw) {
    const uint8_t* a = out.lfts.row(sw);
    const uint8_t* b = out2.lfts.row(sw);
    for (sar::Lid l = 0; l <= more.max_lid(); ++l) changed += a[l] != b[l];
  }
  std::printf(
      "%s reroute after one more failure (%s port %d): median %.1f ms wall, %.1f ms CPU, "
      "%zu entries changed\n",
      engine_name.c_str(), fs1.links[0].first.c_str(), fs1.links[0].second, again, cpu, changed);

  // Incremental: DmodcRouter keeps the last pass. Each repetition cuts the cable (one more
  // failure, timed) and repairs it again (timed too: the same fabric as before the cut).
  if (engine_name == "dmodc") {
    sar::DmodcRouter router;
    in.fabric = &degraded;
    if (!(s = router.Route(in)).ok()) Die("DmodcRouter::Route", s);
    std::vector<double> cut_ms, cut_cpu, fix_ms, fix_cpu;
    sar::DmodcRouter::Stats cut_stats, fix_stats;
    bool same = true;
    for (int i = 0; i < reps; ++i) {
      in.fabric = &more;
      auto t0 = std::chrono::steady_clock::now();
      double c0 = CpuMs();
      if (!(s = router.Reroute(in)).ok()) Die("DmodcRouter::Reroute", s);
      cut_ms.push_back(Ms(t0));
      cut_cpu.push_back(CpuMs() - c0);
      cut_stats = router.last();
      if (i == 0) same = same && router.lfts() == out2.lfts;
      in.fabric = &degraded;
      t0 = std::chrono::steady_clock::now();
      c0 = CpuMs();
      if (!(s = router.Reroute(in)).ok()) Die("DmodcRouter::Reroute", s);
      fix_ms.push_back(Ms(t0));
      fix_cpu.push_back(CpuMs() - c0);
      fix_stats = router.last();
      if (i == 0) same = same && router.lfts() == out.lfts;
    }
    std::printf(
        "dmodc incremental, one more failure: median %.1f ms wall, %.1f ms CPU over %d runs "
        "(%s; %d switches recabled, %d cost rows recomputed, %d rows and %d (switch, leaf) "
        "cells refilled; last run's phases end at: switch graph %.1f ms, Procedure 1 %.1f ms, "
        "fill inputs %.1f ms, refill %.1f ms, all %.1f ms)\n",
        Median(cut_ms), Median(cut_cpu), reps, cut_stats.incremental ? "incremental" : "full",
        cut_stats.cables_changed, cut_stats.switches_recomputed, cut_stats.rows_refilled,
        cut_stats.cells_refilled, cut_stats.graph_ms, cut_stats.plan_ms, cut_stats.prepare_ms,
        cut_stats.refill_ms, cut_stats.ms);
    std::printf(
        "dmodc incremental, the cable repaired: median %.1f ms wall, %.1f ms CPU "
        "(%s; %d rows and %d cells refilled)\n",
        Median(fix_ms), Median(fix_cpu), fix_stats.incremental ? "incremental" : "full",
        fix_stats.rows_refilled, fix_stats.cells_refilled);
    std::printf("incremental tables %s the full pass's\n", same ? "equal" : "DIFFER FROM");
    if (!same) return 1;
  }

  if (validate) {
    // The full check (switch LIDs as sources and destinations, the default) against the
    // HCA-only one it replaced (issue 33), each by the block check (the default) and by the
    // per-destination sweep it replaced (AnalysisOptions::block_check = false, the code of
    // before), alternating, medians over --reps. The verdicts must be equal.
    for (const bool switch_lids : {true, false}) {
      std::vector<double> wall[2], cpu[2];
      std::string verdict[2];
      for (int r = 0; r < reps; ++r) {
        for (const int sweep : {0, 1}) {
          t = std::chrono::steady_clock::now();
          const double validate_cpu = CpuMs();
          sar::ValidationOptions vo;
          vo.num_vls = 8;  // more than one lane: the full check applies (the one-lane rule)
          vo.threads = threads;
          vo.switch_lids = switch_lids;
          sar::AnalysisOptions also;
          also.block_check = sweep == 0;
          sar::AnalysisResult analysis;
          sar::ValidationReport report;
          s = sar::ValidateRouting(more, out2.lfts, nullptr, 1, vo, also, &analysis, &report);
          wall[sweep].push_back(Ms(t));
          cpu[sweep].push_back(CpuMs() - validate_cpu);
          verdict[sweep] = s.ok() ? "valid" : s.ToString();
        }
      }
      std::printf(
          "ValidateRouting (%s): %s; median %.0f ms (%.0f ms CPU) over %d; the sweep of before: "
          "%.0f ms (%.0f ms CPU), %.2fx the CPU\n",
          switch_lids ? "switch LIDs too" : "HCA pairs only", verdict[0].c_str(), Median(wall[0]),
          Median(cpu[0]), reps, Median(wall[1]), Median(cpu[1]),
          Median(cpu[1]) / std::max(Median(cpu[0]), 1e-3));
      if (verdict[0] != verdict[1]) {
        std::printf("the sweep's verdict DIFFERS: %s\n", verdict[1].c_str());
        return 1;
      }
    }
    // The delta validation (a pass with memory and previous tables): the baseline left by the
    // degraded fabric's tables, then the tables after one more failure with those as previous
    // (what the plugin's next pass checks), and the same tables again (nothing changed). The
    // full check above is the reference: the verdicts must be equal.
    sar::ValidationOptions vo;
    vo.num_vls = 8;
    vo.threads = threads;
    sar::ValidationBaseline base;
    sar::ValidationReport report;
    sar::AnalysisResult analysis;
    t = std::chrono::steady_clock::now();
    double c0 = CpuMs();
    s = sar::ValidateRouting(degraded, sar::LftSet(), out.lfts, nullptr, 1, vo,
                             sar::AnalysisOptions(), &analysis, &base, &report);
    if (!s.ok()) {  // dmodc's one layer cyclic through switch LIDs: the pass would layer it
      std::printf("(cyclic with switch LIDs: the delta validation between HCA pairs only)\n");
      vo.switch_lids = false;
      s = sar::ValidateRouting(degraded, sar::LftSet(), out.lfts, nullptr, 1, vo,
                               sar::AnalysisOptions(), &analysis, &base, &report);
    }
    std::printf("ValidateRouting with a baseline, first (full) check: %s; %.0f ms (%.0f ms CPU)\n",
                s.ok() ? "valid" : s.ToString().c_str(), Ms(t), CpuMs() - c0);
    if (!s.ok()) return 1;
    sar::ValidationReport full_report;
    const sar::Status full_verdict =
        sar::ValidateRouting(more, out2.lfts, nullptr, 1, vo, &full_report);
    struct Case {
      const char* name;
      const sar::Fabric* fabric;
      const sar::LftSet* previous;
      const sar::LftSet* tables;
    };
    // Every 100th LID's column from the tables after one more failure (valid on the degraded
    // fabric too: they use none of its cables that are gone), the rest unchanged.
    sar::LftSet some = out.lfts;
    for (sar::Lid l = 1; l <= some.max_lid(); l += 100) {
      for (int sw = 0; sw < some.num_switches(); ++sw) some.set_port(sw, l, out2.lfts.port(sw, l));
    }
    for (const Case& c : {Case{"one more failure", &more, &out.lfts, &out2.lfts},
                          Case{"1% of the columns", &degraded, &out.lfts, &some},
                          Case{"no change", &degraded, &out.lfts, &out.lfts}}) {
      std::vector<double> wall, cpu;
      sar::Status verdict;
      for (int r = 0; r < reps; ++r) {
        sar::ValidationBaseline b = base;  // each repetition from the same baseline
        t = std::chrono::steady_clock::now();
        c0 = CpuMs();
        verdict = sar::ValidateRouting(*c.fabric, *c.previous, *c.tables, nullptr, 1, vo,
                                       sar::AnalysisOptions(), &analysis, &b, &report);
        wall.push_back(Ms(t));
        cpu.push_back(CpuMs() - c0);
      }
      std::printf(
          "delta validation (%s): %s; %lld destination LIDs traced%s%s; median %.0f ms (%.0f ms "
          "CPU) over %d\n",
          c.name, verdict.ok() ? "valid" : verdict.ToString().c_str(),
          static_cast<long long>(report.delta_lids),
          report.full_because.empty() ? "" : ", full check: ", report.full_because.c_str(),
          Median(wall), Median(cpu), reps);
      sar::ValidationReport reference;
      const sar::Status want =
          c.tables == &out2.lfts
              ? full_verdict
              : sar::ValidateRouting(*c.fabric, *c.tables, nullptr, 1, vo, &reference);
      if (verdict.ok() != want.ok()) {
        std::printf("the delta verdict DIFFERS from the full check's\n");
        return 1;
      }
    }
  }
  std::printf("peak RSS %.0f MB\n", PeakRssMb());
  return 0;
}
