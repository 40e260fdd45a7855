// DmodcRouter (sar/engines/dmodc.h): dmodc's full pass, and a reroute that recomputes only what
// changed switch-to-switch cables can reach.
//
// Why the incremental pass gives the full pass's tables (docs/engines.md, "Incremental reroute"):
//  - Procedure 1 (costs, down costs, dividers) is recomputed row by row in the full pass's order
//    (ascending, then descending by rank), but only for switches whose inputs changed: a
//    switch whose cables changed, and the neighbours (up for the ascending pass, down for the
//    descending one) of a switch whose row or divider came out different. Ranks and leaves
//    must not change (else: full pass), so rank order and port directions are the old ones.
//  - Eqs. 1-4 give the entry of switch s for leaf l from s's port groups and divider and the
//    costs of s and its neighbours at l. A row is refilled whole when s's cables or divider
//    changed or when s or a neighbour got a different cost row; other rows keep their entries,
//    except three kinds of entries that do not come from Eq. 1 of their own row:
//      - hole cells (a switch without an up-down path to a leaf, before or after): reset;
//      - switch LIDs whose chain leaf changed: their column is recomputed in every row;
//      - switch-LID overrides that no longer apply: the row's Eq. 1 entry is restored.
//    Then the passes over the whole fabric (own destinations, switch-LID overrides, holes) run
//    again as in the full pass; they are cheap.
#include <algorithm>
#include <cstring>
#include <utility>

#include "engines/dmodc_core.h"
#include "engines/engine_checks.h"
#include "engines/engines.h"
#include "sar/engines/dmodc.h"
#include "sar/engines/engine.h"
#include "sar/env.h"

namespace sar {

namespace in = internal;

struct DmodcRouter::State {
  in::DmodcRun run;
  LftSet lfts;
  std::vector<std::string> notes;
  Stats stats;
  bool routed = false;
};

namespace {

// "" if `b` has the same switches, HCA ports and LIDs as `a` (only switch cables may differ).
std::string SameEndpoints(const in::SwitchGraph& a, const in::SwitchGraph& b) {
  if (a.num_switches != b.num_switches || a.switch_guid != b.switch_guid) {
    return "the switches changed";
  }
  if (a.num_endpoint_dests != b.num_endpoint_dests || a.dests.size() != b.dests.size() ||
      a.hcas_on_switch != b.hcas_on_switch) {
    return "the HCA ports changed";
  }
  for (size_t i = 0; i < a.dests.size(); ++i) {
    const in::Destination &x = a.dests[i], &y = b.dests[i];
    if (x.node != y.node || x.port != y.port || x.base_lid != y.base_lid ||
        x.num_lids != y.num_lids || x.sw != y.sw || x.sw_port != y.sw_port ||
        x.is_switch != y.is_switch) {
      return "HCA ports or LIDs changed";
    }
  }
  return "";
}

bool SameGroups(const in::DmodcPlan& a, const in::DmodcPlan& b, int s) {
  const int ga = a.group_begin[s], gb = b.group_begin[s];
  const int count = a.group_begin[s + 1] - ga;
  if (count != b.group_begin[s + 1] - gb) return false;
  for (int i = 0; i < count; ++i) {
    if (a.group_to[ga + i] != b.group_to[gb + i] || a.group_dir[ga + i] != b.group_dir[gb + i]) {
      return false;
    }
    const int pa = a.group_port_begin[ga + i], pb = b.group_port_begin[gb + i];
    const int size = a.group_port_begin[ga + i + 1] - pa;
    if (size != b.group_port_begin[gb + i + 1] - pb ||
        !std::equal(a.group_ports.begin() + pa, a.group_ports.begin() + pa + size,
                    b.group_ports.begin() + pb)) {
      return false;
    }
  }
  return true;
}

template <class F>
void ForGroups(const in::DmodcPlan& p, int s, int dir, F&& f) {
  for (int gi = p.group_begin[s]; gi < p.group_begin[s + 1]; ++gi) {
    if (p.group_dir[gi] == dir) f(p.group_to[gi]);
  }
}

}  // namespace

DmodcRouter::DmodcRouter() : state_(std::make_unique<State>()) {}
DmodcRouter::~DmodcRouter() = default;
DmodcRouter::DmodcRouter(DmodcRouter&&) noexcept = default;
DmodcRouter& DmodcRouter::operator=(DmodcRouter&&) noexcept = default;

const LftSet& DmodcRouter::lfts() const { return state_->lfts; }
const std::vector<std::string>& DmodcRouter::notes() const { return state_->notes; }
const DmodcRouter::Stats& DmodcRouter::last() const { return state_->stats; }

Status DmodcRouter::Route(const RoutingInput& input) {
  const Stopwatch start;
  std::vector<std::string> notes;
  SAR_RETURN_IF_ERROR(in::CheckRoutingInput(input, &notes));
  in::DmodcRun run;
  LftSet lfts;
  SAR_RETURN_IF_ERROR(in::DmodcFullPass(input, &run, &lfts, &notes));
  State& st = *state_;
  st.run = std::move(run);
  st.lfts = std::move(lfts);
  st.notes = std::move(notes);
  st.routed = true;
  st.stats = Stats();
  st.stats.switches_recomputed = st.lfts.num_switches();
  st.stats.rows_refilled = st.lfts.num_switches();
  st.stats.ms = start.ElapsedMs();
  return Status::OK();
}

Status DmodcRouter::Reroute(const RoutingInput& input) {
  const Stopwatch start;
  State& st = *state_;
  auto full = [&](const std::string& why) {
    SAR_RETURN_IF_ERROR(Route(input));
    st.stats.full_reason = why;
    st.stats.ms = start.ElapsedMs();
    return Status::OK();
  };
  if (!st.routed) return full("no earlier pass");
  // The input checks of every pass, on the new fabric (same messages); the connectivity check
  // is left to the fallbacks below (a leaf pair without an up-down path, a cut-off switch).
  SAR_RETURN_IF_ERROR(in::CheckRoutingArguments(input));
  in::SwitchGraph g = in::BuildSwitchGraph(*input.fabric);
  const double graph_ms = start.ElapsedMs();
  std::string why = SameEndpoints(st.run.g, g);
  if (why.empty() && input.fabric->max_lid() != st.lfts.max_lid()) why = "the LID range changed";
  in::DmodcPlan p;
  if (why.empty() && !in::BuildDmodcGroups(g, &p).ok()) why = "the ranks are too deep";
  const in::DmodcPlan& o = st.run.plan;
  if (why.empty() && (p.leaves != o.leaves || p.rank != o.rank)) why = "a switch changed rank";
  if (why.empty() && std::find(p.rank.begin(), p.rank.end(), -1) != p.rank.end()) {
    why = "some switch is cut off from every leaf";
  }
  if (!why.empty()) return full(why);

  const int n = p.num_switches, L = p.num_leaves;
  Stats stats;
  stats.incremental = true;
  std::vector<uint8_t> regroup(n, 0);
  for (int s = 0; s < n; ++s) {
    regroup[s] = !SameGroups(o, p, s);
    stats.cables_changed += regroup[s];
  }
  // Procedure 1 on the rows whose inputs changed, in the full pass's rank order. The old rows
  // are copied (the state stays whole until the new one is complete) and overwritten where the
  // recomputation differs.
  p.cost = o.cost;
  p.down_cost = o.down_cost;
  p.divider = o.divider;
  std::vector<int> rank_begin, order;
  in::SwitchesByRank(p, &rank_begin, &order);
  enum : uint8_t { kDown = 1, kCost = 2, kDivider = 4 };
  std::vector<uint8_t> dirty(n, 0), changed(n, 0);
  for (int s = 0; s < n; ++s) {
    if (!regroup[s]) continue;
    dirty[s] = 1;  // its down groups, or its upward arity that its up neighbours multiply
    ForGroups(p, s, 1, [&](int u) { dirty[u] = 1; });
  }
  std::vector<uint8_t> tmp(L);
  std::vector<std::vector<int>> cols(n);  // per switch: leaves where its costs changed
  auto note_columns = [&](int s, const uint8_t* was) {
    for (int l = 0; l < L; ++l) {
      if (tmp[l] != was[l]) cols[s].push_back(l);
    }
  };
  for (int r = 1; r <= p.max_rank; ++r) {
    for (int k = rank_begin[r]; k < rank_begin[r + 1]; ++k) {
      const int s = order[k];
      if (!dirty[s]) continue;
      ++stats.switches_recomputed;
      std::fill(tmp.begin(), tmp.end(), in::kDmodcInf);
      uint64_t divider = 1;
      ForGroups(p, s, -1, [&](int u) {
        in::DmodcPullMin(tmp.data(), p.down_cost.data() + static_cast<size_t>(u) * L, L);
        divider =
            std::max(divider, std::min(in::kDmodcDividerCap,
                                       p.divider[u] * static_cast<uint64_t>(p.num_up_groups[u])));
      });
      uint8_t* row = p.down_cost.data() + static_cast<size_t>(s) * L;
      if (std::memcmp(tmp.data(), row, L) != 0) {
        note_columns(s, row);
        std::memcpy(row, tmp.data(), L);
        changed[s] |= kDown;
      }
      if (divider != p.divider[s]) {
        p.divider[s] = divider;
        changed[s] |= kDivider;
      }
      if (changed[s] != 0) ForGroups(p, s, 1, [&](int u) { dirty[u] = 1; });
    }
  }
  for (int s = 0; s < n; ++s) dirty[s] = regroup[s] || (changed[s] & kDown);
  for (int r = p.max_rank; r >= 0; --r) {
    for (int k = rank_begin[r]; k < rank_begin[r + 1]; ++k) {
      const int s = order[k];
      if (!dirty[s]) continue;
      const uint8_t* down = p.down_cost.data() + static_cast<size_t>(s) * L;
      std::memcpy(tmp.data(), down, L);
      ForGroups(p, s, 1, [&](int u) {
        in::DmodcPullMin(tmp.data(), p.cost.data() + static_cast<size_t>(u) * L, L);
      });
      uint8_t* row = p.cost.data() + static_cast<size_t>(s) * L;
      if (std::memcmp(tmp.data(), row, L) != 0) {
        note_columns(s, row);
        std::memcpy(row, tmp.data(), L);
        changed[s] |= kCost;
        ForGroups(p, s, -1, [&](int u) { dirty[u] = 1; });
      }
    }
  }
  // The validity pass: a leaf pair without an up-down path goes through the full pass, which
  // names it (or notes the pairs with allow_disconnected).
  for (int s : p.leaves) {
    if (std::memchr(p.cost.data() + static_cast<size_t>(s) * L, in::kDmodcInf, L) != nullptr) {
      return full("a leaf pair has no up-down path");
    }
  }

  // Rows to refill whole: new cables or a new divider. Cells to refill: (s, l) where the costs
  // of s or of a neighbour at leaf l changed (Eq. 1 reads nothing else).
  std::vector<uint8_t> refill(n, 0);
  for (int s = 0; s < n; ++s) refill[s] = regroup[s] || (changed[s] & kDivider);
  std::vector<std::vector<int>> cells(n);
  for (int s = 0; s < n; ++s) {
    if (cols[s].empty()) continue;
    auto add = [&](int u) {
      if (!refill[u]) cells[u].insert(cells[u].end(), cols[s].begin(), cols[s].end());
    };
    add(s);
    for (int gi = p.group_begin[s]; gi < p.group_begin[s + 1]; ++gi) add(p.group_to[gi]);
  }
  std::vector<int> rows, partial;
  for (int s = 0; s < n; ++s) {
    if (refill[s]) {
      rows.push_back(s);
    } else if (!cells[s].empty()) {
      std::sort(cells[s].begin(), cells[s].end());
      cells[s].erase(std::unique(cells[s].begin(), cells[s].end()), cells[s].end());
      partial.push_back(s);
      stats.cells_refilled += static_cast<int>(cells[s].size());
    }
  }
  stats.rows_refilled = static_cast<int>(rows.size());
  const double plan_ms = start.ElapsedMs();

  in::DmodcFill fill;
  in::PrepareDmodcFill(g, p, st.run.index, p.divider, input.threads, &fill);
  const double prepare_ms = start.ElapsedMs();
  LftSet& lfts = st.lfts;
  // Hole cells in rows kept whose hole pass may come out different: reset to what Eq. 1 leaves
  // there (no route), and the hole pass rewrites them. That pass for leaf l reads the costs at
  // l and the cables of the holes: only a leaf whose column changed somewhere or where a switch
  // with changed cables is a hole (before or after) needs it. Cells that stop or start being
  // holes have new costs, so the cell refill below rewrites them (after this reset).
  const in::DmodcFill& old_fill = st.run.fill;
  std::vector<uint8_t> hole_dirty(L, 0);
  for (int s = 0; s < n; ++s) {
    for (int l : cols[s]) hole_dirty[l] = 1;
  }
  for (const in::DmodcFill* f : {&old_fill, static_cast<const in::DmodcFill*>(&fill)}) {
    for (int l = 0; l < L; ++l) {
      for (int k = f->hole_begin[l]; k < f->hole_begin[l + 1] && !hole_dirty[l]; ++k) {
        hole_dirty[l] = regroup[f->holes[k]];
      }
    }
  }
  for (const in::DmodcFill* f : {&old_fill, static_cast<const in::DmodcFill*>(&fill)}) {
    for (int l = 0; l < L; ++l) {
      if (!hole_dirty[l]) continue;
      for (int k = f->hole_begin[l]; k < f->hole_begin[l + 1]; ++k) {
        const int s = f->holes[k];
        if (refill[s]) continue;
        uint8_t* row = lfts.mutable_row(s);
        for (int v = fill.via_begin[l]; v < fill.via_begin[l + 1]; ++v) {
          std::memset(row + fill.via_lid[v], LftSet::kNoRoute, fill.via_lids[v]);
        }
      }
    }
  }
  in::FillDmodcRows(p, fill, p.divider, rows, true, input.threads, &lfts);
  for (int s : partial) in::FillDmodcCells(p, fill, p.divider, s, cells[s], &lfts);
  // Switch LIDs routed towards another leaf than before, in every row kept; and the rows
  // whose override for a switch LID no longer applies.
  auto restore = [&](int s, int t) {
    const in::Destination& d = g.dests[g.num_endpoint_dests + t];
    uint8_t* row = lfts.mutable_row(s);
    for (int i = 0; i < d.num_lids; ++i) {
      row[d.base_lid + i] =
          in::DmodcEntry(p, p.divider, s, fill.chain_leaf[t], static_cast<uint32_t>(t), i);
    }
  };
  for (int t = 0; t < n; ++t) {
    if (g.dests[g.num_endpoint_dests + t].base_lid == 0) continue;
    if (old_fill.chain_leaf[t] != fill.chain_leaf[t]) {
      for (int s = 0; s < n; ++s) {
        if (!refill[s]) restore(s, t);
      }
    }
    // The rows an override writes (t's chain down and t's ancestors) change only through a
    // changed cable, whose lower end is t or one of those rows: otherwise nothing to restore.
    if (t >= static_cast<int>(st.run.override_rows.size())) continue;
    const std::vector<int>& was = st.run.override_rows[t];
    if (!regroup[t] && std::none_of(was.begin(), was.end(), [&](int s) { return regroup[s]; })) {
      continue;
    }
    for (int s : was) {
      if (!refill[s]) restore(s, t);
    }
  }
  const double refill_ms = start.ElapsedMs();
  std::vector<std::vector<int>> override_rows;
  in::FinishDmodcTables(g, p, fill, input.threads, &override_rows, &lfts);

  st.run.g = std::move(g);
  st.run.plan = std::move(p);
  st.run.fill = std::move(fill);
  st.run.override_rows = std::move(override_rows);
  st.notes.clear();
  stats.ms = start.ElapsedMs();
  stats.plan_ms = plan_ms;
  stats.graph_ms = graph_ms;
  stats.prepare_ms = prepare_ms;
  stats.refill_ms = refill_ms;
  st.stats = stats;
  return Status::OK();
}

}  // namespace sar
