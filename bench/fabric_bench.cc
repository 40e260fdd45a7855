// Reading, tracing and full EFI of generated fat-trees with ~10k and ~50k HCAs.
// Targets (issue 2): read + trace + EFI under 1 s (10k) and 5 s (50k; we measure 45k, the
// largest fat-tree one subnet's LID space holds) on 2 cores.
//
// Setup (not timed): generate the fabric, route it with libsar's MinHop engine,
// write topology and LFT dump to a temp dir. Timed: each stage separately and all together.
// Peak RSS is reported as a counter; run one size per process for a clean figure:
//   build/bench/fabric_bench --benchmark_filter=/10k
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "bench_util.h"
#include "sar/analysis/analysis.h"
#include "sar/analysis/metrics.h"
#include "sar/analysis/trace.h"
#include "sar/engines/engine.h"
#include "sar/io/lft_dump.h"
#include "sar/io/topology.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"

namespace {

using sar::bench::PeakRssMb;

// Setup only: the tables come from libsar's MinHop engine (OpenSM's minhop rule), which is what
// the reading, tracing and EFI stages then judge.
sar::Status RouteMinHop(const sar::Fabric& f, sar::LftSet* lfts) {
  sar::RoutingInput in;
  in.fabric = &f;
  sar::RoutingOutput out;
  SAR_RETURN_IF_ERROR(sar::MakeRoutingEngine("minhop")->Route(in, &out));
  *lfts = std::move(out.lfts);
  return sar::Status::OK();
}

struct Prepared {
  std::string topology_path;
  std::string lfts_path;  // empty when the dump would be too large to write (tables in memory)
  sar::LftSet lfts;
  int hcas = 0;
  int switches = 0;
};

// A full LFT dump has one text line per (switch, LID): 16M lines (1.2 GB) at 10k HCAs, ~190M
// lines (~14 GB) at 45k. Up to `kMaxDumpLines` the dump is written and read back; beyond it the
// "read" stage reads the topology only and the tables stay in memory.
constexpr double kMaxDumpLines = 50e6;

const Prepared& Prepare(const std::string& label, const sar::PgftSpec& spec) {
  static std::map<std::string, Prepared> cache;
  auto it = cache.find(label);
  if (it != cache.end()) return it->second;
  sar::Fabric f;
  sar::Status s = sar::GeneratePgft(spec, {}, &f);
  if (s.ok()) s = sar::AssignLids({}, &f);
  const std::string dir =
      std::filesystem::temp_directory_path().string() + "/sar-bench-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  Prepared p;
  p.topology_path = dir + "/" + label + ".topo";
  p.lfts_path = dir + "/" + label + ".lfts";
  p.hcas = static_cast<int>(f.hcas().size());
  p.switches = f.num_switches();
  sar::TopologyWriteOptions wo;
  wo.style = sar::TopologyStyle::kIbnetdiscover;  // carries the LIDs
  if (s.ok()) s = sar::WriteTopology(p.topology_path, f, wo);
  if (s.ok()) s = RouteMinHop(f, &p.lfts);
  if (static_cast<double>(f.num_switches()) * f.max_lid() > kMaxDumpLines) p.lfts_path.clear();
  if (s.ok() && !p.lfts_path.empty()) s = sar::WriteLftDump(p.lfts_path, f, p.lfts);
  if (!s.ok()) {
    std::fprintf(stderr, "bench setup failed: %s\n", s.ToString().c_str());
    std::exit(1);
  }
  return cache.emplace(label, p).first->second;
}

enum Stage { kRead, kTrace, kEfi, kAll };

void Run(benchmark::State& state, const std::string& label, const sar::PgftSpec& spec,
         Stage stage) {
  const Prepared& p = Prepare(label, spec);
  sar::Fabric f;
  sar::LftSet lfts;
  auto read = [&] {
    f = sar::Fabric();
    sar::Status s = sar::ReadTopology(p.topology_path, &f);
    if (s.ok() && !p.lfts_path.empty()) s = sar::ReadLftDump(p.lfts_path, f, &lfts);
    if (p.lfts_path.empty()) lfts = p.lfts;
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
  };
  if (stage != kRead && stage != kAll) read();
  for (auto _ : state) {
    if (stage == kRead || stage == kAll) read();
    if (stage == kTrace || stage == kAll) {
      sar::TraceReport r;
      sar::TraceOptions o;
      o.check_min_hop = true;
      sar::Status s = sar::TraceAll(f, lfts, o, &r);
      if (!s.ok() || !r.valid()) state.SkipWithError("trace failed or routing invalid");
      benchmark::DoNotOptimize(r.pairs);
    }
    if (stage == kEfi || stage == kAll) {
      sar::Metrics m;
      sar::Status s = sar::ComputeMetrics(f, lfts, {}, {}, &m);
      if (!s.ok()) state.SkipWithError(s.ToString().c_str());
      benchmark::DoNotOptimize(m.efi.max);
    }
  }
  state.counters["hcas"] = p.hcas;
  state.counters["switches"] = p.switches;
  state.counters["peak_rss_MB"] = PeakRssMb();
  state.counters["lft_dump_read"] = p.lfts_path.empty() ? 0 : 1;
}

// ~10k HCAs: PGFT(3; 20,20,25; 1,20,20; 1,1,1) = 10,000 hosts, 1,400 switches.
const sar::PgftSpec k10k{3, {20, 20, 25}, {1, 20, 20}, {1, 1, 1}};
// "50k": one subnet holds at most 49,151 unicast LIDs (HCAs and switches), so the largest
// routable fat-tree near 50k is PGFT(3; 30,30,50; 1,30,30; 1,1,1) = 45,000 hosts + 3,900
// switches = 48,900 LIDs at LMC 0.
const sar::PgftSpec k50k{3, {30, 30, 50}, {1, 30, 30}, {1, 1, 1}};

void Register() {
  for (const auto& [label, spec] : {std::pair{"10k", k10k}, std::pair{"45k", k50k}}) {
    for (const auto& [name, stage] : {std::pair{"read", kRead}, std::pair{"trace", kTrace},
                                      std::pair{"efi", kEfi}, std::pair{"read+trace+efi", kAll}}) {
      const std::string l = label;
      const sar::PgftSpec sp = spec;
      const Stage st = stage;
      benchmark::RegisterBenchmark((std::string(name) + "/" + l).c_str(),
                                   [l, sp, st](benchmark::State& s) { Run(s, l, sp, st); })
          ->Unit(benchmark::kMillisecond)
          ->Iterations(3)
          ->Repetitions(3)
          ->ReportAggregatesOnly(true);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Register();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::error_code ec;
  std::filesystem::remove_all(
      std::filesystem::temp_directory_path() / ("sar-bench-" + std::to_string(getpid())), ec);
  return 0;
}
