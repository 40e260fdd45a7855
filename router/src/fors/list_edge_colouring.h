// List edge colouring of a bipartite multigraph where each vertex forbids some colours.
//
// FORS reduces both of its assignment problems to this: spines to the inter-leaf flows of one
// phase (vertices = source leaves and destination leaves, colours = spines, a failed link forbids
// its spine at its leaf) and phases to the intra-leaf pairs (vertices = senders and receivers of
// one leaf, colours = phases, a phase forbids itself where the server is busy inter-leaf).
// An edge may take colour c only if neither end forbids c; a colouring is proper if no vertex
// has two edges of one colour.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace sar::fors_internal {

struct ColouringProblem {
  int num_vertices = 0;  // left and right side share one numbering; every edge joins the sides
  int num_colours = 0;
  std::vector<uint8_t> forbidden;          // [vertex * num_colours + colour], may be empty
  std::vector<std::pair<int, int>> edges;  // (left vertex, right vertex)
  bool forbids(int v, int c) const {
    return !forbidden.empty() && forbidden[static_cast<size_t>(v) * num_colours + c] != 0;
  }
};

/// Heuristic: greedy, then alternating-path (Kempe) swaps that respect the forbidden colours,
/// then a bounded random eviction walk. Fills *colours (colour per edge, -1 = uncoloured); the
/// coloured part is always proper. Returns the number of uncoloured edges. With nothing
/// forbidden and max degree <= num_colours it always colours everything (Koenig's theorem:
/// the alternating path never closes in a bipartite graph).
int ColourByAlternatingPaths(const ColouringProblem& problem, uint64_t seed,
                             std::vector<int>* colours);

enum class SatOutcome { kColoured, kInfeasible, kUnknown };

/// Exact: encodes the problem for CaDiCaL (one variable per allowed edge colour, at least one
/// colour per edge, a sequential at-most-one per vertex and colour). *colours, if sized to the
/// edges, seeds the solver's phases. kUnknown when the conflict budget runs out.
SatOutcome ColourBySat(const ColouringProblem& problem, int64_t conflict_limit,
                       std::vector<int>* colours);

/// True if `colours` is a complete proper colouring of `problem` (independent check).
bool IsProperColouring(const ColouringProblem& problem, const std::vector<int>& colours);

}  // namespace sar::fors_internal
