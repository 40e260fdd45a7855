// sar-route fors: FORS schedule + spine routing for FT(2;M0,M1) with failed leaf-spine links,
// the LMC tables that carry it, and the throughput model tables (--model). See docs/fors.md.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "sar/fors/fors.h"
#include "sar/fors/fors_model.h"
#include "sar/fors/fors_tables.h"
#include "sar/io/file_util.h"
#include "sar/io/guid2lid.h"
#include "sar/io/lft_dump.h"
#include "sar/io/topology.h"

namespace sarcli {
namespace {

struct ForsArgs {
  int m0 = 0;
  int m1 = 0;
  std::string failed_links;
  std::string schedule_out;
  std::string lfts_out;
  std::string topology_out;
  std::string guid2lid_out;
  std::string lid_table_out;
  std::string verify_lfts;
  bool model = false;
};

const char* MethodText(sar::RouteMethod m) {
  switch (m) {
    case sar::RouteMethod::kNone:
      return "none (no inter-leaf traffic)";
    case sar::RouteMethod::kAlgorithm2:
      return "Algorithm 2 (failed spines <= f)";
    case sar::RouteMethod::kExact:
      return "exact (alternating paths + CaDiCaL)";
  }
  return "?";
}

int RunModel(const ForsArgs& a) {
  const int m0 = a.m0 > 0 ? a.m0 : 20, m1 = a.m1 > 0 ? a.m1 : 18;
  std::vector<sar::Fig6Row> rows;
  sar::Stopwatch sw;
  const sar::Status s = sar::ComputeFig6(m0, m1, &rows);
  if (!s.ok()) return Fail(s);
  std::fputs(sar::FormatFig6(m0, m1, rows).c_str(), stdout);
  std::printf(
      "(computed in %.0f ms; relative = fault-free time / scenario time, 1.0 = %d "
      "conflict-free phases)\n\n",
      sw.LapMs(), m0 * m1 - 1);
  std::fputs(sar::FormatFig7().c_str(), stdout);
  return kOk;
}

int RunFors(const ForsArgs& a) {
  if (a.model) return RunModel(a);
  if (a.m0 <= 0 || a.m1 <= 0) {
    return Fail(sar::Status::InvalidArgument("--spines and --leaves are required"));
  }
  sar::ForsOptions o;
  o.m0 = a.m0;
  o.m1 = a.m1;
  if (!a.failed_links.empty()) {
    const sar::Status s = sar::ReadFailedLinks(a.failed_links, a.m0, a.m1, &o.failed);
    if (!s.ok()) return Fail(s);
  }
  sar::Stopwatch sw;
  sar::ForsPlan plan;
  sar::Status s = sar::PlanFors(o, &plan);
  if (!s.ok()) return Fail(s);
  const double plan_ms = sw.LapMs();
  // Never hand out a conflicting plan: judge it independently first.
  s = sar::CheckPlan(a.m0, a.m1, o.failed, plan.phases);
  if (!s.ok()) return Fail(sar::Status::Failed("internal: plan check failed: " + s.message()));
  const sar::ForsStats& st = plan.stats;
  const bool low_f = st.f <= a.m0 / a.m1;
  std::printf("FT(2;%d,%d): %zu failed links, f = %d, failed spines m = %d\n", a.m0, a.m1,
              o.failed.size(), st.f, st.failed_spines);
  std::printf(
      "schedule: %s; P_f = %lld inter-leaf phases, +%lld intra-leaf, +%lld split = %lld "
      "phases (P - 1 = %d)\n",
      st.f == 0 ? "fault-free (all inter-leaf, then M0-1 intra-leaf phases)"
      : low_f   ? "FORS formula with f <= floor(M0/M1) (conflict-free)"
                : "FORS optimal (f > floor(M0/M1))",
      static_cast<long long>(st.inter_phases), static_cast<long long>(st.intra_extra_phases),
      static_cast<long long>(st.split_phases), static_cast<long long>(plan.num_phases()),
      a.m0 * a.m1 - 1);
  std::printf("routing: %s; %lld phases needed SAT, %lld had no conflict-free routing%s\n",
              MethodText(st.method), static_cast<long long>(st.sat_phases),
              static_cast<long long>(st.unsat_phases),
              st.split_phases > 0 ? " (their leftover transfers were moved to extra phases)" : "");
  std::printf("plan: %.1f ms, checked conflict-free\n", plan_ms);
  if (!a.schedule_out.empty()) {
    s = sar::WriteFileAtomic(a.schedule_out, sar::FormatScheduleCsv(plan));
    if (!s.ok()) return Fail(s);
  }
  const bool need_fabric = !a.lfts_out.empty() || !a.topology_out.empty() ||
                           !a.guid2lid_out.empty() || !a.lid_table_out.empty() ||
                           !a.verify_lfts.empty();
  if (!need_fabric) return kOk;
  sar::Fabric fabric;
  s = sar::BuildForsFabric(a.m0, a.m1, o.failed, &fabric);
  if (!s.ok()) return Fail(s);
  sar::LftSet lfts;
  s = sar::BuildForsLfts(fabric, a.m0, a.m1, o.failed, &lfts);
  if (!s.ok()) return Fail(s);
  s = sar::CheckPhasesOnTables(fabric, lfts, plan);
  if (!s.ok()) return Fail(sar::Status::Failed("internal: tables check failed: " + s.message()));
  std::printf("tables: LMC %d, every phase traced through the tables: no link used twice\n",
              sar::ForsLmc(a.m0));
  if (!a.topology_out.empty()) {
    s = sar::WriteTopology(a.topology_out, fabric, sar::TopologyWriteOptions{});
    if (!s.ok()) return Fail(s);
  }
  if (!a.guid2lid_out.empty()) {
    s = sar::WriteGuid2Lid(a.guid2lid_out, fabric);
    if (!s.ok()) return Fail(s);
  }
  if (!a.lfts_out.empty()) {
    s = sar::WriteLftDump(a.lfts_out, fabric, lfts);
    if (!s.ok()) return Fail(s);
  }
  if (!a.lid_table_out.empty()) {
    s = sar::WriteFileAtomic(a.lid_table_out, sar::FormatForsLidTable(fabric, plan));
    if (!s.ok()) return Fail(s);
  }
  if (!a.verify_lfts.empty()) {
    sar::LftSet live;
    s = sar::ReadLftDump(a.verify_lfts, fabric, &live);
    if (!s.ok()) return Fail(s);
    s = sar::CheckPhasesOnTables(fabric, live, plan);
    if (!s.ok()) {
      std::printf("verify %s: FAILED: %s\n", a.verify_lfts.c_str(), s.message().c_str());
      return kCheckFailed;
    }
    std::printf("verify %s: all %lld phases conflict-free through these tables\n",
                a.verify_lfts.c_str(), static_cast<long long>(plan.num_phases()));
  }
  return kOk;
}

}  // namespace

std::function<int()> SetupFors(CLI::App* c) {
  auto a = std::make_shared<ForsArgs>();
  ForsArgs& g = *a;
  c->add_option("--spines", g.m0, "M0: spines = servers per leaf")->check(CLI::Range(1, 64));
  c->add_option("--leaves", g.m1, "M1: leaves")->check(CLI::Range(1, 8192));
  c->add_option("--failed-links", g.failed_links, "file of failed '<leaf> <spine>' lines");
  c->add_option("--schedule-out", g.schedule_out, "write phase,src,dst,spine CSV");
  c->add_option("--lfts-out", g.lfts_out, "write the LMC tables (OpenSM file-engine dump)");
  c->add_option("--topology-out", g.topology_out,
                "write the fabric the tables are for (ibsim form, failed links absent)");
  c->add_option("--guid2lid-out", g.guid2lid_out, "write OpenSM's guid2lid for those LIDs");
  c->add_option("--lid-table-out", g.lid_table_out,
                "write the application's phase,src,dst,dlid CSV");
  c->add_option("--verify-lfts", g.verify_lfts,
                "trace every phase through this LFT dump (e.g. read back from the switches); "
                "exit 1 on a shared link");
  c->add_flag("--model", g.model,
              "print the throughput model tables (Fig. 6 for --spines/--leaves, default 20/18, "
              "and Fig. 7)");
  return [a] { return RunFors(*a); };
}

}  // namespace sarcli
