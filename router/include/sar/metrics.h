// Metrics that judge a routing (SAR paper Defs. 7-8, Sec. 4.2; Yuan et al. Sec. 5).
//
// Edge forwarding index (EFI) of a directed switch-to-switch channel: the number of routes
// between ordered pairs of distinct HCA endpoints (base LIDs) that cross it. Effective EFI:
// the same, counting only pairs inside one job (summed over jobs). Dark fiber: the fraction of
// switch-to-switch channels whose effective EFI is 0. Computed per destination over the in-tree
// the LFTs define (sources below each channel are counted, not walked), in parallel.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sar/fabric.h"
#include "sar/jobs.h"
#include "sar/lft.h"
#include "sar/status.h"

namespace sar {

struct EfiSummary {
  uint64_t max = 0;
  double mean = 0;  // over all switch-to-switch channels
};

struct JobMetrics {
  std::string id;
  int hosts = 0;
  int leaf_switches = 0;
  uint64_t efi_max = 0;  // max over channels of this job's own routes
  int channels = 0;      // switch-to-switch channels its routes use
};

struct Metrics {
  int channels = 0;  // directed switch-to-switch channels (|C*|)
  EfiSummary efi;
  EfiSummary effective_efi;
  double dark_fiber = 0;  // 0..1; 1 when no job spans two switches
  std::vector<JobMetrics> jobs;
  /// Per PortId (channel); zero for channels that are not switch-to-switch.
  std::vector<uint64_t> efi_per_channel;
  std::vector<uint64_t> effective_efi_per_channel;
};

struct MetricsOptions {
  int threads = 0;  // 0 = hardware concurrency
};

/// Routes that are not delivered (holes, loops) add nothing. Use TraceAll() for validity.
Status ComputeMetrics(const Fabric& fabric, const LftSet& lfts,
                      const std::vector<ResolvedJob>& jobs, const MetricsOptions& options,
                      Metrics* out);

enum class TrafficPattern {
  kAllToAll,           // every endpoint to every other
  kShift,              // endpoint i to i+shift (mod n), endpoints in Fabric::Endpoints() order
  kRandomPermutation,  // a random derangement from the seed
  kClustered,          // Yuan Sec. 5: random groups of cluster_size, all-to-all inside each
};

struct TrafficSpec {
  TrafficPattern pattern = TrafficPattern::kAllToAll;
  int shift = 1;
  int cluster_size = 8;
  uint64_t seed = 1;
};

struct LinkLoad {
  uint64_t flows = 0;     // source-destination pairs in the pattern
  uint64_t max_load = 0;  // most flows on one channel (any channel, HCA links included)
  PortId max_channel = kNoPort;
  double mean_load = 0;  // over switch-to-switch channels
};

/// Flows between endpoints on the same node are left out of every pattern (as in the EFI).
/// Threads: hardware concurrency.
Status ComputeLinkLoad(const Fabric& fabric, const LftSet& lfts, const TrafficSpec& spec,
                       LinkLoad* out);

/// The flows of a pattern as (source, destination) indices into fabric.Endpoints(), sorted; the
/// same flows ComputeLinkLoad() routes. Lists all n^2 pairs for all-to-all: for tests and small
/// fabrics. Fails on cluster_size < 1.
Status TrafficFlows(const Fabric& fabric, const TrafficSpec& spec,
                    std::vector<std::pair<int, int>>* flows);

}  // namespace sar
