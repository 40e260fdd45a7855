// Throughput model for a phase-synchronised all-to-all on a degraded FT(2;M0,M1) (fluid model):
// every transfer carries one unit, a link carries its flows at a shared rate of one unit per
// time, so a phase lasts as long as its most loaded link and the next phase starts when all are
// done. Throughput = data / total time; reported relative to the fault-free linear shift.
//
// Baselines route by destination, as OpenSM does on an FT(2) (see docs/fors.md):
//  - ftree: d-mod-k over the spines that work at both ends, A(l, l_d)[d mod |A|];
//  - minhop: each leaf walks the destinations in LID order and takes, among the working spines
//    towards the destination leaf, the up port with the fewest destinations so far;
//  - updn: on a 2-level fat-tree with spines as roots, Up*/Down* is min-hop with the same
//    balancing, so it gives the minhop routes (shown separately to match the paper's table).
#pragma once

#include <string>
#include <vector>

#include "sar/fors/fors.h"
#include "sar/status.h"

namespace sar {

enum class BaselineRouting { kFtree, kMinhop, kUpdn };

/// Linear shift: phase p-1 for p = 1..P-1 sends s -> (s + p) mod P (spines unset).
std::vector<std::vector<Transfer>> LinearShiftSchedule(int m0, int m1);

/// Sets the spine of every inter-leaf transfer by the baseline's destination-based rule.
Status RouteByDestination(int m0, int m1, const std::vector<FailedLink>& failed,
                          BaselineRouting routing, std::vector<std::vector<Transfer>>* phases);

/// Most loaded link of one phase (HCA links included); 0 for an empty phase. Transfers with a
/// spine use leaf->spine->leaf, the others only their leaf.
int PhaseMaxLoad(int m0, int m1, const std::vector<Transfer>& phase);
/// Sum of the phases' max loads: the all-to-all's duration in the fluid model.
int64_t ModelTime(int m0, int m1, const std::vector<std::vector<Transfer>>& phases);

struct Scenario {
  std::string name;
  std::vector<FailedLink> failed;
};

/// The failure scenarios of Sec. 3.1 mapped to leaf/spine indices: 0F; xF SW0 (leaf 0 loses
/// spines 0..x-1); xF SW0,5,11 (leaves 0, 5, 11 lose spines [0,x), [x,2x), [2x,3x)); SW18,19
/// (spines 0, 1 down); SW18,19,22,23 (spines 0, 1, 4, 5 down). Needs M0 >= 9 and M1 >= 12.
Status PaperScenarios(int m0, int m1, std::vector<Scenario>* out);

struct Fig6Row {
  std::string scenario;
  int f = 0;
  int failed_spines = 0;
  double ftree = 0, minhop = 0, updn = 0, fors = 0;  // throughput relative to fault-free
  int64_t fors_phases = 0;
  int64_t fors_split_phases = 0;
  RouteMethod method = RouteMethod::kNone;
};

Status ComputeFig6(int m0, int m1, std::vector<Fig6Row>* rows);
std::string FormatFig6(int m0, int m1, const std::vector<Fig6Row>& rows);
/// P_f / P_0 for f = 0..M0-1 on FT(2;8,16), (16,16), (20,18), (16,32), (32,32).
std::string FormatFig7();

}  // namespace sar
