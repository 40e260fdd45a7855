// FORS: fault-adaptive all-to-all schedule and spine routing for FT(2;M0,M1) (Stein et al.).
//
// Numbering (the paper's, and GenerateFatTree2's): M1 leaves 0..M1-1, M0 spines 0..M0-1, M0
// servers per leaf, server s = leaf*M0 + index. A failed link is a (leaf, spine) cable.
//
// A plan is a list of phases; each phase is a list of transfers (source, destination, spine;
// spine -1 for an intra-leaf transfer). Every ordered pair of distinct servers appears exactly
// once; per phase no server sends or receives twice, no leaf uses a spine twice upward or twice
// downward, and no failed link is used. The inter-leaf part follows Sec. 4 of the paper with the
// errata of shared/papers/README.md (ceil in Theta~, floor in theta, cycle shift on the leaf).
// Thread-safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sar/status.h"

namespace sar {

struct FailedLink {
  int leaf = 0;
  int spine = 0;
  friend bool operator==(const FailedLink&, const FailedLink&) = default;
};

/// Parses a failed-links file: one "<leaf> <spine>" per line (0-based), '#' starts a comment,
/// blank lines ignored. Out-of-range ids and duplicates are errors ("source:line: ...").
Status ParseFailedLinks(std::string_view text, const std::string& source, int m0, int m1,
                        std::vector<FailedLink>* out);
Status ReadFailedLinks(const std::string& path, int m0, int m1, std::vector<FailedLink>* out);

/// failed[leaf * m0 + spine] != 0 iff that cable is down.
std::vector<uint8_t> FailedMask(int m0, int m1, const std::vector<FailedLink>& links);
/// Bandwidth reduction f: the most failed uplinks of any leaf.
int BandwidthReduction(int m0, int m1, const std::vector<FailedLink>& links);
/// P_f = ceil(M0 (P - M0) / (M0 - f)), the optimal number of inter-leaf phases. REQUIRES f < m0.
int64_t InterLeafPhases(int m0, int m1, int f);

struct Transfer {
  int32_t src = 0;
  int32_t dst = 0;
  int32_t spine = -1;  // -1: intra-leaf (never leaves the leaf switch)
};

/// The inter-leaf schedule of Sec. 4 alone: phases[p] lists (src, dst) with spine -1, P_f phases.
/// REQUIRES 0 <= f < m0, m0 >= 1, m1 >= 1.
std::vector<std::vector<Transfer>> InterLeafSchedule(int m0, int m1, int f);

enum class RouteMethod : uint8_t {
  kNone,        // nothing to route (no inter-leaf traffic)
  kAlgorithm2,  // failed spines m <= f: the paper's closed form over the intact spines
  kExact,       // list edge colouring: alternating paths, then CaDiCaL (SAT) where needed
};

/// Largest FT(2) PlanFors accepts (servers); the all-pairs plan has P(P-1) transfers.
inline constexpr int64_t kMaxForsServers = 8192;

struct ForsOptions {
  int m0 = 0;  // spines = servers per leaf
  int m1 = 0;  // leaves
  std::vector<FailedLink> failed;
  /// Conflict budget per SAT call; a phase the solver neither colours nor refutes within it is
  /// split like an infeasible one (never emitted with a conflict).
  int64_t sat_conflict_limit = 200000;
};

struct ForsStats {
  int f = 0;                       // bandwidth reduction
  int failed_spines = 0;           // m: spines with at least one failed link
  int64_t inter_phases = 0;        // P_f
  int64_t intra_extra_phases = 0;  // phases added because intra-leaf pairs did not fit
  int64_t split_phases = 0;        // phases added because a phase had no conflict-free routing
  int64_t sat_phases = 0;          // phases that needed the SAT solver
  int64_t unsat_phases = 0;        // of those, proved infeasible (or out of budget) and split
  RouteMethod method = RouteMethod::kNone;
};

struct ForsPlan {
  int m0 = 0;
  int m1 = 0;
  std::vector<std::vector<Transfer>> phases;
  ForsStats stats;
  int64_t num_phases() const { return static_cast<int64_t>(phases.size()); }
};

/// Schedule + intra-leaf fitting + spine routing. Fails (kFailed) if some pair of leaves shares
/// no working spine (no 2-hop route exists) or a leaf lost every uplink.
Status PlanFors(const ForsOptions& options, ForsPlan* out);

/// Independent check of a plan (simple counting, shares no code with PlanFors): every ordered
/// pair once, one send and one receive per server per phase, spines valid and not failed, each
/// leaf-spine link at most once per direction per phase. Returns the first violation.
Status CheckPlan(int m0, int m1, const std::vector<FailedLink>& failed,
                 const std::vector<std::vector<Transfer>>& phases);

/// Writes "phase,src,dst,spine" CSV (header + one row per transfer).
std::string FormatScheduleCsv(const ForsPlan& plan);

}  // namespace sar
