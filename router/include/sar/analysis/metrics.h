// Metrics that judge a routing (SAR paper Defs. 7-8, Sec. 4.2; Yuan et al. Sec. 5).
//
// Edge forwarding index (EFI) of a directed switch-to-switch channel: the number of routes
// between ordered pairs of distinct HCA endpoints that cross it, each source to the LID it sends
// to (base LIDs; AnalysisOptions::source_lid_offset for osrm2/osrm3's groups). Effective EFI:
// the same, counting only pairs inside one job (summed over jobs). Dark fiber: the fraction of
// switch-to-switch channels whose effective EFI is 0. Computed per destination over the in-tree
// the LFTs define (sources below each channel are counted, not walked), in parallel.
//
// Per unit of capacity: the same loads divided by each channel's capacity relative to the
// fabric's nominal rate (Fabric::ChannelCapacities), so a full-rate link counts as is and a
// 4xDDR cable in a 4xEDR fabric counts 6.25 times its routes. Equal to the raw EFI when no link
// is below the nominal rate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/model/jobs.h"
#include "sar/model/lft.h"
#include "sar/status.h"

namespace sar {

struct EfiSummary {
  uint64_t max = 0;
  double mean = 0;  // over all switch-to-switch channels
};

struct CapacityLoad {
  double max = 0;
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
  double dark_fiber = 0;                    // 0..1; 1 when no job spans two switches
  CapacityLoad efi_per_capacity;            // EFI x nominal / capacity
  CapacityLoad effective_efi_per_capacity;  // effective EFI x nominal / capacity
  int slow_channels = 0;                    // switch-to-switch channels below the nominal rate
  std::vector<JobMetrics> jobs;
  /// Per PortId (channel); zero for channels that are not switch-to-switch.
  std::vector<uint64_t> efi_per_channel;
  std::vector<uint64_t> effective_efi_per_channel;
};

struct MetricsOptions {
  int threads = 0;  // 0 = hardware concurrency
};

}  // namespace sar
