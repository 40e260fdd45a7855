// PlanFors: the inter-leaf schedule, the intra-leaf pairs fitted into idle slots, and a spine
// for every inter-leaf transfer, phase by phase.
#include <algorithm>
#include <cstdio>
#include <deque>
#include <string>

#include "fors/list_edge_colouring.h"
#include "sar/fors/fors.h"

namespace sar {
namespace {

using fors_internal::ColouringProblem;

// Servers sit at the same index on every leaf and the schedule only shifts leaves, so one leaf's
// intra-leaf pairs fit exactly where any other leaf's do: colour leaf 0 (colours = phases, busy
// phases forbidden) and copy. If the idle slots cannot hold all M0-1 sends (or receives) of a
// server, k extra phases (colours free everywhere) are added, starting from the lower bound
// max(M0-1 - idle slots) and growing until the colouring succeeds; with M0-1 extra phases it
// always does (Koenig), which is also the fallback.
Status FitIntraLeaf(int m0, int m1, int64_t sat_conflict_limit,
                    std::vector<std::vector<Transfer>>* phases, ForsStats* stats) {
  if (m0 < 2) return Status::OK();
  const int num_inter = static_cast<int>(phases->size());
  std::vector<uint8_t> busy(static_cast<size_t>(2 * m0) * num_inter, 0);
  for (int p = 0; p < num_inter; ++p) {
    for (const Transfer& t : (*phases)[p]) {
      busy[static_cast<size_t>(t.src % m0) * num_inter + p] = 1;
      busy[static_cast<size_t>(m0 + t.dst % m0) * num_inter + p] = 1;
    }
  }
  int lower = 0;
  for (int v = 0; v < 2 * m0; ++v) {
    int idle = 0;
    for (int p = 0; p < num_inter; ++p) idle += !busy[static_cast<size_t>(v) * num_inter + p];
    lower = std::max(lower, m0 - 1 - idle);
  }
  ColouringProblem prob;
  prob.num_vertices = 2 * m0;
  for (int a = 0; a < m0; ++a) {
    for (int b = 0; b < m0; ++b) {
      if (a != b) prob.edges.emplace_back(a, m0 + b);
    }
  }
  std::vector<int> colour;
  int extra = lower;
  for (;; ++extra) {
    prob.num_colours = num_inter + extra;
    prob.forbidden.assign(static_cast<size_t>(2 * m0) * prob.num_colours, 0);
    for (int v = 0; v < 2 * m0; ++v) {
      std::copy_n(busy.begin() + static_cast<size_t>(v) * num_inter, num_inter,
                  prob.forbidden.begin() + static_cast<size_t>(v) * prob.num_colours);
    }
    if (fors_internal::ColourByAlternatingPaths(prob, 1 + extra, &colour) == 0) break;
    if (fors_internal::ColourBySat(prob, sat_conflict_limit, &colour) ==
        fors_internal::SatOutcome::kColoured) {
      break;
    }
    if (extra >= m0 - 1) {
      // Koenig fallback: all intra-leaf pairs in m0-1 phases of their own.
      prob.num_colours = m0 - 1;
      prob.forbidden.clear();
      if (fors_internal::ColourByAlternatingPaths(prob, 1, &colour) != 0) {
        return Status::Failed("internal: intra-leaf pairs could not be packed");
      }
      for (int& c : colour) c += num_inter;
      break;
    }
  }
  stats->intra_extra_phases = extra;
  phases->resize(num_inter + extra);
  for (size_t e = 0; e < prob.edges.size(); ++e) {
    const int a = prob.edges[e].first, b = prob.edges[e].second - m0;
    for (int leaf = 0; leaf < m1; ++leaf) {
      (*phases)[colour[e]].push_back({leaf * m0 + a, leaf * m0 + b, -1});
    }
  }
  return Status::OK();
}

class PhaseRouter {
 public:
  PhaseRouter(const ForsOptions& o, const std::vector<uint8_t>& failed, int f)
      : o_(o), failed_(failed) {
    for (int sp = 0; sp < o.m0; ++sp) {
      bool hit = false;
      for (int leaf = 0; leaf < o.m1; ++leaf) hit = hit || failed[leaf * o.m0 + sp];
      if (hit) {
        ++failed_spines_;
      } else {
        intact_.push_back(sp);
      }
    }
    use_algorithm2_ = failed_spines_ <= f;
  }
  int failed_spines() const { return failed_spines_; }
  bool use_algorithm2() const { return use_algorithm2_; }

  // Routes the inter-leaf transfers of one phase in place. Transfers that cannot share the
  // phase conflict-free are moved to *overflow (to become a phase of their own).
  void Route(std::vector<Transfer>* phase, uint64_t seed, std::vector<Transfer>* overflow,
             ForsStats* stats) {
    overflow->clear();
    std::vector<int> inter;
    for (int i = 0; i < static_cast<int>(phase->size()); ++i) {
      if ((*phase)[i].src / o_.m0 != (*phase)[i].dst / o_.m0) inter.push_back(i);
    }
    if (inter.empty()) return;
    if (use_algorithm2_ && Algorithm2(phase, inter)) return;
    all_algorithm2_ = false;
    ColouringProblem prob;
    prob.num_vertices = 2 * o_.m1;
    prob.num_colours = o_.m0;
    prob.forbidden.assign(static_cast<size_t>(2 * o_.m1) * o_.m0, 0);
    for (int leaf = 0; leaf < o_.m1; ++leaf) {
      for (int sp = 0; sp < o_.m0; ++sp) {
        const uint8_t bad = failed_[leaf * o_.m0 + sp];
        prob.forbidden[static_cast<size_t>(leaf) * o_.m0 + sp] = bad;
        prob.forbidden[static_cast<size_t>(o_.m1 + leaf) * o_.m0 + sp] = bad;
      }
    }
    for (int i : inter) {
      prob.edges.emplace_back((*phase)[i].src / o_.m0, o_.m1 + (*phase)[i].dst / o_.m0);
    }
    std::vector<int> colour;
    if (fors_internal::ColourByAlternatingPaths(prob, seed, &colour) != 0) {
      ++stats->sat_phases;
      std::vector<int> sat = colour;
      if (fors_internal::ColourBySat(prob, o_.sat_conflict_limit, &sat) ==
          fors_internal::SatOutcome::kColoured) {
        colour = sat;
      } else {
        ++stats->unsat_phases;  // keep the heuristic's proper part, move the rest out
      }
    }
    std::vector<Transfer> kept;
    for (size_t k = 0; k < inter.size(); ++k) (*phase)[inter[k]].spine = colour[k];
    for (const Transfer& t : *phase) {
      if (t.src / o_.m0 != t.dst / o_.m0 && t.spine < 0) {
        overflow->push_back(t);
      } else {
        kept.push_back(t);
      }
    }
    phase->swap(kept);
  }

  bool all_algorithm2() const { return all_algorithm2_; }

 private:
  // Algorithm 2 with the per-leaf rank: the k-th sender of a leaf (by server id) takes the k-th
  // intact spine. Upward distinct by construction; downward distinct because the senders into
  // one leaf have distinct indices alpha and the schedule's sender sets depend on alpha only.
  // Checked anyway; on any clash the phase goes to the exact method.
  bool Algorithm2(std::vector<Transfer>* phase, const std::vector<int>& inter) {
    std::vector<int> rank(o_.m1, 0);
    std::vector<uint8_t> down(static_cast<size_t>(o_.m1) * o_.m0, 0);
    std::vector<int> spine(inter.size());
    for (size_t k = 0; k < inter.size(); ++k) {
      const Transfer& t = (*phase)[inter[k]];
      const int r = rank[t.src / o_.m0]++;
      if (r >= static_cast<int>(intact_.size())) return false;
      spine[k] = intact_[r];
      uint8_t& d = down[static_cast<size_t>(t.dst / o_.m0) * o_.m0 + spine[k]];
      if (d) return false;
      d = 1;
    }
    for (size_t k = 0; k < inter.size(); ++k) (*phase)[inter[k]].spine = spine[k];
    return true;
  }

  const ForsOptions& o_;
  const std::vector<uint8_t>& failed_;
  std::vector<int> intact_;
  int failed_spines_ = 0;
  bool use_algorithm2_ = false;
  bool all_algorithm2_ = true;
};

// Transfers that no conflict-free routing could keep in their phase: first-fit into extra
// phases appended at the end (a server sends and receives once per phase, each leaf-spine link
// carries one flow per direction). An empty phase always takes a transfer because every pair of
// leaves shares a working spine (checked before planning).
void PackLeftovers(int m0, int m1, const std::vector<uint8_t>& failed,
                   const std::vector<Transfer>& leftovers,
                   std::vector<std::vector<Transfer>>* phases, ForsStats* stats) {
  struct Extra {
    std::vector<Transfer> transfers;
    std::vector<uint8_t> sending, receiving, up, down;
  };
  const size_t n = static_cast<size_t>(m0) * m1;
  std::vector<Extra> extra;
  for (Transfer t : leftovers) {
    const int ls = t.src / m0, ld = t.dst / m0;
    bool placed = false;
    for (size_t x = 0; x <= extra.size() && !placed; ++x) {
      if (x == extra.size()) {
        extra.push_back({{},
                         std::vector<uint8_t>(n, 0),
                         std::vector<uint8_t>(n, 0),
                         std::vector<uint8_t>(n, 0),
                         std::vector<uint8_t>(n, 0)});
      }
      Extra& e = extra[x];
      if (e.sending[t.src] || e.receiving[t.dst]) continue;
      for (int sp = 0; sp < m0; ++sp) {
        const size_t u = static_cast<size_t>(ls) * m0 + sp, d = static_cast<size_t>(ld) * m0 + sp;
        if (failed[u] || failed[d] || e.up[u] || e.down[d]) continue;
        t.spine = sp;
        e.up[u] = e.down[d] = e.sending[t.src] = e.receiving[t.dst] = 1;
        e.transfers.push_back(t);
        placed = true;
        break;
      }
    }
  }
  stats->split_phases = static_cast<int64_t>(extra.size());
  for (Extra& e : extra) phases->push_back(std::move(e.transfers));
}

}  // namespace

Status PlanFors(const ForsOptions& o, ForsPlan* out) {
  if (o.m0 < 1 || o.m1 < 1 || o.m0 > 64 || static_cast<int64_t>(o.m0) * o.m1 > kMaxForsServers) {
    return Status::InvalidArgument(
        "FT(2;M0,M1) needs 1 <= M0 <= 64, M1 >= 1 and M0*M1 <= " + std::to_string(kMaxForsServers) +
        ", got M0=" + std::to_string(o.m0) + " M1=" + std::to_string(o.m1));
  }
  for (const FailedLink& l : o.failed) {
    if (l.leaf < 0 || l.leaf >= o.m1 || l.spine < 0 || l.spine >= o.m0) {
      return Status::InvalidArgument("failed link " + std::to_string(l.leaf) + " " +
                                     std::to_string(l.spine) + " out of range");
    }
  }
  const std::vector<uint8_t> failed = FailedMask(o.m0, o.m1, o.failed);
  const int f = BandwidthReduction(o.m0, o.m1, o.failed);
  if (f >= o.m0) return Status::Failed("a leaf lost all its uplinks: no all-to-all possible");
  for (int a = 0; a < o.m1; ++a) {
    for (int b = a + 1; b < o.m1; ++b) {
      bool shared = false;
      for (int sp = 0; sp < o.m0 && !shared; ++sp) {
        shared = !failed[a * o.m0 + sp] && !failed[b * o.m0 + sp];
      }
      if (!shared) {
        return Status::Failed("leaves " + std::to_string(a) + " and " + std::to_string(b) +
                              " share no working spine: no 2-hop route between them");
      }
    }
  }
  ForsPlan plan;
  plan.m0 = o.m0;
  plan.m1 = o.m1;
  plan.stats.f = f;
  plan.stats.inter_phases = o.m1 > 1 ? InterLeafPhases(o.m0, o.m1, f) : 0;
  std::vector<std::vector<Transfer>> phases = InterLeafSchedule(o.m0, o.m1, f);
  if (o.m1 < 2) phases.clear();
  SAR_RETURN_IF_ERROR(FitIntraLeaf(o.m0, o.m1, o.sat_conflict_limit, &phases, &plan.stats));

  PhaseRouter router(o, failed, f);
  plan.stats.failed_spines = router.failed_spines();
  std::vector<Transfer> overflow, leftovers;
  uint64_t seed = 1;
  for (auto& phase : phases) {
    router.Route(&phase, seed++, &overflow, &plan.stats);
    leftovers.insert(leftovers.end(), overflow.begin(), overflow.end());
    plan.phases.push_back(std::move(phase));
  }
  PackLeftovers(o.m0, o.m1, failed, leftovers, &plan.phases, &plan.stats);
  const bool any_inter = plan.stats.inter_phases > 0;
  plan.stats.method = !any_inter                ? RouteMethod::kNone
                      : router.all_algorithm2() ? RouteMethod::kAlgorithm2
                                                : RouteMethod::kExact;
  *out = std::move(plan);
  return Status::OK();
}

std::string FormatScheduleCsv(const ForsPlan& plan) {
  std::string out = "phase,src,dst,spine\n";
  char buf[64];
  for (size_t p = 0; p < plan.phases.size(); ++p) {
    for (const Transfer& t : plan.phases[p]) {
      const int n = std::snprintf(buf, sizeof buf, "%zu,%d,%d,%d\n", p, t.src, t.dst, t.spine);
      out.append(buf, n);
    }
  }
  return out;
}

}  // namespace sar
