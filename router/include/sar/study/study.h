// Fail-in-place study (Domke et al., "Fail-in-place network design"): how a fabric and its
// routing degrade as cables and switches fail and stay failed.
//
// For each step (a growing number of failed switch-to-switch cables and switches, drawn from a
// seed with the failure injection of `sar-route gen --fail-*`, failures.h) and each engine:
//   - pairs disconnected before rerouting: ordered endpoint pairs whose route in the engine's
//     tables for the intact fabric crosses a failed cable or switch (the paper's Sec. III-B1);
//   - whether the engine still routes the degraded fabric (Route and ValidateRouting succeed);
//   - throughput of all-to-all and of clustered traffic (Yuan et al. Sec. 5: hosts in random
//     groups of a given size, all-to-all within each group) under a max-min fair fluid model:
//     every flow follows its single route, every channel (HCA links included) has capacity 1,
//     rates by progressive filling. Throughput = the sum of the rates, in link bandwidths; and
//     for all-to-all also as an exchange (flows over the busiest channel's flow count).
// Then per engine a least-squares line throughput = intercept + slope * failed cables over the
// steps it routed (the paper's Tables V-VII), with R^2.
// Routes are to the LID each source uses (RoutingOutput::source_lid_offset), so osrm2/osrm3 are
// measured as they would run.
// Thread-safety: plain functions; the progress callback runs on the calling thread.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "sar/analysis/flows.h"
#include "sar/model/fabric.h"
#include "sar/model/lft.h"
#include "sar/pass/routing_pass.h"
#include "sar/status.h"

namespace sar {

/// Per-flow max-min fair rates over single-path flows: flow f crosses channels paths[f]
/// (indices < num_channels, each of capacity 1). Progressive filling: all unfrozen flows grow
/// together until a channel saturates; its flows freeze at that rate. A flow with an empty path
/// is unconstrained and gets rate 0 (callers give every flow at least its HCA links).
std::vector<double> MaxMinFairRates(const std::vector<std::vector<int32_t>>& paths,
                                    int num_channels);

struct LinearFit {
  double intercept = 0, slope = 0, r2 = 0;
  int n = 0;  // points; with fewer than 2 distinct x the slope is 0 and r2 0
};
LinearFit FitLine(const std::vector<double>& x, const std::vector<double>& y);

/// All ordered pairs; and random clusters of `size` endpoints (the last one smaller if needed)
/// with all ordered pairs inside each, drawn from `seed`.
std::vector<Flow> AllToAllFlows(size_t endpoints);
/// The clusters ClusteredFlows draws: endpoint indices per cluster.
std::vector<std::vector<uint32_t>> ClusterGroups(size_t endpoints, int size, uint64_t seed);
std::vector<Flow> ClusteredFlows(size_t endpoints, int size, uint64_t seed);

/// Ordered endpoint pairs of `intact` whose route along `lfts` crosses a cable or switch that
/// `failed_ports` marks (per PortId of `intact`: the cut cables' two ends, every port of a
/// removed switch). Routes that were not delivered to begin with do not count.
uint64_t DisconnectedPairs(const Fabric& intact, const LftSet& lfts,
                           const std::vector<uint8_t>& source_lid_offset,
                           const std::vector<bool>& failed_ports);

struct StudyOptions {
  std::vector<std::string> engines = {"sar", "dfsssp", "minhop", "updn", "dmodc"};
  /// Failed switch-to-switch cables and switches per step (same length; a step may be 0/0).
  std::vector<int> links = {0, 1, 2, 4, 8};
  std::vector<int> switches = {0, 0, 0, 0, 0};
  int seeds = 3;  // failure draws per step (seed 1..seeds, offset by `seed`)
  uint64_t seed = 1;
  std::vector<int> cluster_sizes = {4, 16};
  /// What every pass gets (sar/pass/routing_pass.h: FORS, the empty-mapping rule and the guards as
  /// everywhere), its engine replaced by each of `engines`. Its mapping_path (default none) gives
  /// the jobs the engines route for; the measured traffic stays all-to-all and the clusters.
  RoutingOptions routing;
  /// Shard (sar/study/shards.h): only the points [point_begin, point_end) of the (step, draw) list
  /// (steps in order, draws of a step in seed order; a 0/0 step has one draw) are computed and
  /// kept in StudyResult::points; the fits are over those. Every shard routes the intact fabric
  /// once per engine (for the disconnection counts); the points equal the unsplit run's (but
  /// route_ms, a time).
  size_t point_begin = 0;
  size_t point_end = std::numeric_limits<size_t>::max();
  /// Called after each (step, draw) with the number done and the total.
  std::function<void(int done, int total)> progress;
};

struct StudyCell {  // one engine at one (step, draw)
  bool routed = false;
  std::string error;  // why not
  uint64_t disconnected_before = 0;
  double alltoall = 0;  // max-min fair: the sum of the rates
  /// All-to-all as an exchange of equal messages: flows / the largest number of flows on one
  /// channel, i.e. data over the pattern's completion-time bound (the fail-in-place paper's
  /// Eq. 7 throughput, in link bandwidths). The max-min sum rewards flows that stay within a
  /// leaf; this one is set by the busiest channel, as an exchange's runtime is.
  double exchange = 0;
  std::vector<double> clustered;  // per cluster size
  /// What jobs feel (sar/analysis/flows.h), clusters as jobs all sending at once: per cluster size
  /// the slowest and the median cluster's exchange time (message / line rate; its slowest flow).
  std::vector<double> cluster_time_max, cluster_time_median;
  double route_ms = 0;
};

struct StudyPoint {
  int links = 0, switches = 0;  // failed
  uint64_t seed = 0;
  bool drawn = true;  // false: the generator found no such failure set (cells empty)
  std::string draw_error;
  std::vector<StudyCell> cells;  // per engine
};

struct StudyResult {
  std::vector<std::string> engines;
  std::vector<int> cluster_sizes;
  size_t endpoints = 0;
  uint64_t pairs = 0;  // ordered endpoint pairs
  std::vector<StudyPoint> points;
  /// Per engine: the intact fabric routed? (else no disconnection counts for it)
  std::vector<std::string> intact_error;
  /// Per engine: the engine the intact fabric's pass ran (the empty-mapping rule: "sar" without
  /// jobs routes as "dfsssp") and everything that pass noted.
  std::vector<std::string> intact_engine_used;
  std::vector<std::vector<std::string>> intact_notes;
  std::vector<LinearFit> fit_alltoall;                // per engine, x = failed cables
  std::vector<LinearFit> fit_exchange;                // per engine
  std::vector<std::vector<LinearFit>> fit_clustered;  // [engine][cluster size]
};

/// `fabric` must have LIDs (with the LMC osrm2/osrm3 need if they are studied). Errors:
/// InvalidArgument (unknown engine, mismatched step lists); an engine that cannot route is a
/// result (routed = false), not an error.
Status RunStudy(const Fabric& fabric, const StudyOptions& options, StudyResult* out);
/// The number of (step, draw) points RunStudy computes without a shard range.
size_t StudyPointCount(const StudyOptions& options);
/// Sets the fits (fit_alltoall, fit_exchange, fit_clustered) from result->points: RunStudy's
/// last step, and what merging shards' points does.
void FitStudy(StudyResult* result);

}  // namespace sar
