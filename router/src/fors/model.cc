// The fluid throughput model and the paper's Fig. 6 / Fig. 7 tables.
#include <algorithm>
#include <cstdio>
#include <string>

#include "sar/fors/fors_model.h"

namespace sar {
namespace {

const char* MethodName(RouteMethod m) {
  switch (m) {
    case RouteMethod::kNone:
      return "-";
    case RouteMethod::kAlgorithm2:
      return "alg2";
    case RouteMethod::kExact:
      return "exact";
  }
  return "?";
}

}  // namespace

std::vector<std::vector<Transfer>> LinearShiftSchedule(int m0, int m1) {
  const int n = m0 * m1;
  std::vector<std::vector<Transfer>> phases(n > 0 ? n - 1 : 0);
  for (int p = 1; p < n; ++p) {
    for (int s = 0; s < n; ++s) phases[p - 1].push_back({s, (s + p) % n, -1});
  }
  return phases;
}

Status RouteByDestination(int m0, int m1, const std::vector<FailedLink>& failed,
                          BaselineRouting routing, std::vector<std::vector<Transfer>>* phases) {
  const std::vector<uint8_t> broken = FailedMask(m0, m1, failed);
  const int n = m0 * m1;
  // spine_for[leaf * n + d]: the spine leaf `leaf` sends destination d through.
  std::vector<int> spine_for(static_cast<size_t>(m1) * n, -1);
  std::vector<int> common;
  for (int l = 0; l < m1; ++l) {
    std::vector<int> routes_per_spine(m0, 0);
    for (int d = 0; d < n; ++d) {
      const int dl = d / m0;
      if (dl == l) continue;
      common.clear();
      for (int k = 0; k < m0; ++k) {
        if (!broken[l * m0 + k] && !broken[dl * m0 + k]) common.push_back(k);
      }
      if (common.empty()) {
        return Status::Failed("leaves " + std::to_string(l) + " and " + std::to_string(dl) +
                              " share no working spine");
      }
      int pick = common[d % common.size()];
      if (routing != BaselineRouting::kFtree) {
        pick = common[0];
        for (int k : common) {
          if (routes_per_spine[k] < routes_per_spine[pick]) pick = k;
        }
      }
      ++routes_per_spine[pick];
      spine_for[static_cast<size_t>(l) * n + d] = pick;
    }
  }
  for (auto& phase : *phases) {
    for (Transfer& t : phase) {
      t.spine =
          t.src / m0 == t.dst / m0 ? -1 : spine_for[static_cast<size_t>(t.src / m0) * n + t.dst];
    }
  }
  return Status::OK();
}

int PhaseMaxLoad(int m0, int m1, const std::vector<Transfer>& phase) {
  const int n = m0 * m1;
  std::vector<int> up(static_cast<size_t>(m0) * m1, 0), down(static_cast<size_t>(m0) * m1, 0);
  std::vector<int> out(n, 0), in(n, 0);
  int worst = 0;
  for (const Transfer& t : phase) {
    worst = std::max({worst, ++out[t.src], ++in[t.dst]});
    if (t.spine >= 0) {
      worst =
          std::max({worst, ++up[(t.src / m0) * m0 + t.spine], ++down[(t.dst / m0) * m0 + t.spine]});
    }
  }
  return worst;
}

int64_t ModelTime(int m0, int m1, const std::vector<std::vector<Transfer>>& phases) {
  int64_t total = 0;
  for (const auto& ph : phases) total += PhaseMaxLoad(m0, m1, ph);
  return total;
}

Status PaperScenarios(int m0, int m1, std::vector<Scenario>* out) {
  if (m0 < 9 || m1 < 12) {
    return Status::InvalidArgument("the paper's scenarios need M0 >= 9 spines and M1 >= 12 leaves");
  }
  out->clear();
  out->push_back({"0F", {}});
  for (int x = 1; x <= 3; ++x) {
    Scenario s{std::to_string(x) + "F SW0", {}};
    for (int k = 0; k < x; ++k) s.failed.push_back({0, k});
    out->push_back(s);
  }
  for (int x = 1; x <= 3; ++x) {
    Scenario s{std::to_string(x) + "F SW0,5,11", {}};
    const int leaves[3] = {0, 5, 11};
    for (int i = 0; i < 3; ++i) {
      for (int k = 0; k < x; ++k) s.failed.push_back({leaves[i], i * x + k});
    }
    out->push_back(s);
  }
  for (const auto& [name, spines] : std::vector<std::pair<std::string, std::vector<int>>>{
           {"SW18,19", {0, 1}}, {"SW18,19,22,23", {0, 1, 4, 5}}}) {
    Scenario s{name, {}};
    for (int k : spines) {
      for (int l = 0; l < m1; ++l) s.failed.push_back({l, k});
    }
    out->push_back(s);
  }
  return Status::OK();
}

Status ComputeFig6(int m0, int m1, std::vector<Fig6Row>* rows) {
  std::vector<Scenario> scenarios;
  SAR_RETURN_IF_ERROR(PaperScenarios(m0, m1, &scenarios));
  const std::vector<std::vector<Transfer>> shift = LinearShiftSchedule(m0, m1);
  double reference = 0;  // fault-free linear shift on ftree
  rows->clear();
  for (const Scenario& sc : scenarios) {
    Fig6Row row;
    row.scenario = sc.name;
    double* cells[3] = {&row.ftree, &row.minhop, &row.updn};
    const BaselineRouting kinds[3] = {BaselineRouting::kFtree, BaselineRouting::kMinhop,
                                      BaselineRouting::kUpdn};
    for (int i = 0; i < 3; ++i) {
      std::vector<std::vector<Transfer>> routed = shift;
      SAR_RETURN_IF_ERROR(RouteByDestination(m0, m1, sc.failed, kinds[i], &routed));
      const double t = static_cast<double>(ModelTime(m0, m1, routed));
      if (reference == 0) reference = t;  // the first row is 0F, first column ftree
      *cells[i] = reference / t;
    }
    ForsOptions o;
    o.m0 = m0;
    o.m1 = m1;
    o.failed = sc.failed;
    ForsPlan plan;
    SAR_RETURN_IF_ERROR(PlanFors(o, &plan));
    row.fors = reference / static_cast<double>(ModelTime(m0, m1, plan.phases));
    row.f = plan.stats.f;
    row.failed_spines = plan.stats.failed_spines;
    row.fors_phases = plan.num_phases();
    row.fors_split_phases = plan.stats.split_phases;
    row.method = plan.stats.method;
    rows->push_back(row);
  }
  return Status::OK();
}

std::string FormatFig6(int m0, int m1, const std::vector<Fig6Row>& rows) {
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "Fig. 6 (model): per-server throughput relative to fault-free, FT(2;%d,%d), "
                "phase-synchronised all-to-all\n",
                m0, m1);
  out += buf;
  std::snprintf(buf, sizeof buf, "%-15s %3s %3s %7s %7s %7s %7s %7s %6s %5s\n", "scenario", "f",
                "m", "ftree", "minhop", "updn", "FORS", "phases", "split", "route");
  out += buf;
  for (const Fig6Row& r : rows) {
    std::snprintf(buf, sizeof buf, "%-15s %3d %3d %7.3f %7.3f %7.3f %7.3f %7lld %6lld %5s\n",
                  r.scenario.c_str(), r.f, r.failed_spines, r.ftree, r.minhop, r.updn, r.fors,
                  static_cast<long long>(r.fors_phases),
                  static_cast<long long>(r.fors_split_phases), MethodName(r.method));
    out += buf;
  }
  return out;
}

std::string FormatFig7() {
  const int topo[5][2] = {{8, 16}, {16, 16}, {20, 18}, {16, 32}, {32, 32}};
  std::string out =
      "Fig. 7: phase factor I = P_f / P_0, P_f = ceil(M0 (P - M0) / (M0 - f)); '*' marks f = "
      "M0/2 (half the bandwidth)\n";
  char buf[128];
  std::snprintf(buf, sizeof buf, "%3s", "f");
  out += buf;
  for (const auto& t : topo) {
    std::snprintf(buf, sizeof buf, "  FT(2;%2d,%2d)", t[0], t[1]);
    out += buf;
  }
  out += "\n";
  for (int f = 0; f < 32; ++f) {
    std::snprintf(buf, sizeof buf, "%3d", f);
    out += buf;
    for (const auto& t : topo) {
      if (f >= t[0]) {
        out += "             ";
        continue;
      }
      const double factor = static_cast<double>(InterLeafPhases(t[0], t[1], f)) /
                            static_cast<double>(InterLeafPhases(t[0], t[1], 0));
      std::snprintf(buf, sizeof buf, "  %10.3f%c", factor, 2 * f == t[0] ? '*' : ' ');
      out += buf;
    }
    out += "\n";
  }
  return out;
}

}  // namespace sar
