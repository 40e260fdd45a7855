#include "fors/list_edge_colouring.h"

#include <algorithm>
#include <cadical.hpp>
#include <random>

namespace sar::fors_internal {
namespace {

// The working state of the heuristic: which edge holds each (vertex, colour).
class Colourer {
 public:
  Colourer(const ColouringProblem& p, std::vector<int>* colours)
      : p_(p),
        colours_(*colours),
        holder_(static_cast<size_t>(p.num_vertices) * p.num_colours, -1) {
    colours_.assign(p.edges.size(), -1);
  }

  bool Free(int v, int c) const { return !p_.forbids(v, c) && Holder(v, c) == -1; }

  // Direct colour, else one alternating-path swap. True if edge e got a colour.
  bool TryColour(int e) {
    const auto [u, v] = p_.edges[e];
    for (int c = 0; c < p_.num_colours; ++c) {
      if (Free(u, c) && Free(v, c)) {
        Set(e, c);
        return true;
      }
    }
    // a: free at u, allowed (so taken) at v; b: free at v. Flipping the a/b path that starts at
    // v frees a at v; the path cannot reach u (it would enter u by an a-edge, and u has none).
    for (int a = 0; a < p_.num_colours; ++a) {
      if (!Free(u, a) || p_.forbids(v, a)) continue;
      for (int b = 0; b < p_.num_colours; ++b) {
        if (b == a || !Free(v, b)) continue;
        if (FlipPath(v, a, b)) {
          Set(e, a);
          return true;
        }
      }
    }
    return false;
  }

  // Gives e a colour allowed at both ends, evicting the edges that held it. Returns false if
  // every colour is forbidden at one end.
  bool ForceColour(int e, std::mt19937_64* rng, std::vector<int>* evicted) {
    const auto [u, v] = p_.edges[e];
    std::vector<int> allowed;
    for (int c = 0; c < p_.num_colours; ++c) {
      if (!p_.forbids(u, c) && !p_.forbids(v, c)) allowed.push_back(c);
    }
    if (allowed.empty()) return false;
    const int c = allowed[(*rng)() % allowed.size()];
    for (int x : {Holder(u, c), Holder(v, c)}) {
      if (x != -1 && colours_[x] != -1) {
        Unset(x);
        evicted->push_back(x);
      }
    }
    Set(e, c);
    return true;
  }

 private:
  int Holder(int v, int c) const { return holder_[static_cast<size_t>(v) * p_.num_colours + c]; }
  int& HolderRef(int v, int c) { return holder_[static_cast<size_t>(v) * p_.num_colours + c]; }
  void Set(int e, int c) {
    colours_[e] = c;
    HolderRef(p_.edges[e].first, c) = e;
    HolderRef(p_.edges[e].second, c) = e;
  }
  void Unset(int e) {
    const int c = colours_[e];
    HolderRef(p_.edges[e].first, c) = -1;
    HolderRef(p_.edges[e].second, c) = -1;
    colours_[e] = -1;
  }
  int Other(int e, int x) const {
    return p_.edges[e].first == x ? p_.edges[e].second : p_.edges[e].first;
  }

  // Swaps a and b along the path from `start` that begins with its a-edge, if the far end
  // allows the colour it receives (inner vertices hold both colours, so both are allowed).
  bool FlipPath(int start, int a, int b) {
    path_.clear();
    int x = start, cur = a, next = b;
    while (Holder(x, cur) != -1) {
      const int e = Holder(x, cur);
      path_.push_back(e);
      x = Other(e, x);
      std::swap(cur, next);
      if (path_.size() > p_.edges.size()) return false;  // cannot happen in a bipartite graph
    }
    // x misses colour `cur`; its last path edge has colour `next` and would become `cur`.
    if (p_.forbids(x, cur)) return false;
    for (int e : path_) Unset_keep(e);
    for (size_t i = 0; i < path_.size(); ++i) {
      Set(path_[i], i % 2 == 0 ? b : a);
    }
    return true;
  }
  // Clears the holder slots only (colours_ is rewritten right after).
  void Unset_keep(int e) {
    const int c = colours_[e];
    if (HolderRef(p_.edges[e].first, c) == e) HolderRef(p_.edges[e].first, c) = -1;
    if (HolderRef(p_.edges[e].second, c) == e) HolderRef(p_.edges[e].second, c) = -1;
  }

  const ColouringProblem& p_;
  std::vector<int>& colours_;
  std::vector<int> holder_;
  std::vector<int> path_;
};

}  // namespace

int ColourByAlternatingPaths(const ColouringProblem& problem, uint64_t seed,
                             std::vector<int>* colours) {
  Colourer c(problem, colours);
  std::vector<int> pending;
  for (int e = 0; e < static_cast<int>(problem.edges.size()); ++e) {
    if (c.TryColour(e)) continue;
    // An edge whose ends forbid every colour stays uncoloured; no walk can help it.
    bool any = false;
    for (int k = 0; k < problem.num_colours && !any; ++k) {
      any = !problem.forbids(problem.edges[e].first, k) &&
            !problem.forbids(problem.edges[e].second, k);
    }
    if (any) pending.push_back(e);
  }
  // Random eviction walk: a stuck edge takes a colour by force and the evicted edges retry.
  // Bounded, so an infeasible instance ends here and goes to the exact solver.
  std::mt19937_64 rng(seed);
  int64_t budget = 20 * static_cast<int64_t>(problem.edges.size()) + 100;
  std::vector<int> evicted;
  while (!pending.empty() && budget-- > 0) {
    const size_t pick = rng() % pending.size();
    const int e = pending[pick];
    pending[pick] = pending.back();
    pending.pop_back();
    if ((*colours)[e] != -1 || c.TryColour(e)) continue;
    evicted.clear();
    if (!c.ForceColour(e, &rng, &evicted)) {
      pending.push_back(e);
      continue;
    }
    for (int x : evicted) {
      if (!c.TryColour(x)) pending.push_back(x);
    }
  }
  return static_cast<int>(std::count(colours->begin(), colours->end(), -1));
}

SatOutcome ColourBySat(const ColouringProblem& p, int64_t conflict_limit,
                       std::vector<int>* colours) {
  const int num_edges = static_cast<int>(p.edges.size());
  const int k = p.num_colours;
  // var(e, c) = 1 + e*k + c when allowed; 0 when forbidden.
  std::vector<int> var(static_cast<size_t>(num_edges) * k, 0);
  int next_var = 1;
  for (int e = 0; e < num_edges; ++e) {
    for (int c = 0; c < k; ++c) {
      if (!p.forbids(p.edges[e].first, c) && !p.forbids(p.edges[e].second, c)) {
        var[static_cast<size_t>(e) * k + c] = next_var++;
      }
    }
  }
  CaDiCaL::Solver solver;
  solver.set("quiet", 1);
  for (int e = 0; e < num_edges; ++e) {
    bool any = false;
    for (int c = 0; c < k; ++c) {
      if (const int x = var[static_cast<size_t>(e) * k + c]) {
        solver.add(x);
        any = true;
      }
    }
    solver.add(0);
    if (!any) return SatOutcome::kInfeasible;
  }
  // Sequential at-most-one (Sinz) per (vertex, colour) over the incident edges' literals.
  std::vector<std::vector<int>> incident(p.num_vertices);
  for (int e = 0; e < num_edges; ++e) {
    incident[p.edges[e].first].push_back(e);
    incident[p.edges[e].second].push_back(e);
  }
  std::vector<int> lits;
  for (int v = 0; v < p.num_vertices; ++v) {
    for (int c = 0; c < k; ++c) {
      lits.clear();
      for (int e : incident[v]) {
        if (const int x = var[static_cast<size_t>(e) * k + c]) lits.push_back(x);
      }
      if (lits.size() < 2) continue;
      int prev = 0;  // aux: "some earlier literal is true"
      for (size_t i = 0; i < lits.size(); ++i) {
        const bool last = i + 1 == lits.size();
        if (prev != 0) {
          solver.add(-lits[i]);
          solver.add(-prev);
          solver.add(0);
        }
        if (last) break;
        const int s = next_var++;
        solver.add(-lits[i]);
        solver.add(s);
        solver.add(0);
        if (prev != 0) {
          solver.add(-prev);
          solver.add(s);
          solver.add(0);
        }
        prev = s;
      }
    }
  }
  if (colours->size() == p.edges.size()) {
    for (int e = 0; e < num_edges; ++e) {
      const int c = (*colours)[e];
      if (c >= 0 && c < k && var[static_cast<size_t>(e) * k + c] != 0) {
        solver.phase(var[static_cast<size_t>(e) * k + c]);
      }
    }
  }
  if (conflict_limit > 0) {
    solver.limit("conflicts", static_cast<int>(std::min<int64_t>(conflict_limit, 1 << 30)));
  }
  const int result = solver.solve();
  if (result == 20) return SatOutcome::kInfeasible;
  if (result != 10) return SatOutcome::kUnknown;
  colours->assign(num_edges, -1);
  for (int e = 0; e < num_edges; ++e) {
    for (int c = 0; c < k; ++c) {
      const int x = var[static_cast<size_t>(e) * k + c];
      if (x != 0 && solver.val(x) > 0) {
        (*colours)[e] = c;
        break;
      }
    }
  }
  return SatOutcome::kColoured;
}

bool IsProperColouring(const ColouringProblem& p, const std::vector<int>& colours) {
  if (colours.size() != p.edges.size()) return false;
  std::vector<uint8_t> seen(static_cast<size_t>(p.num_vertices) * p.num_colours, 0);
  for (size_t e = 0; e < colours.size(); ++e) {
    const int c = colours[e];
    if (c < 0 || c >= p.num_colours) return false;
    for (int v : {p.edges[e].first, p.edges[e].second}) {
      if (p.forbids(v, c)) return false;
      uint8_t& s = seen[static_cast<size_t>(v) * p.num_colours + c];
      if (s) return false;
      s = 1;
    }
  }
  return true;
}

}  // namespace sar::fors_internal
