// Synthetic job mixes for judging routings: what a busy SLURM machine looks like.
//
// GenerateJobMix() runs a small placement simulation over the fabric's hosts grouped by leaf
// switch: jobs arrive with sizes drawn log-uniformly from [min_size, max_size] and are placed
// like SLURM's topology/tree plugin with select/linear does it (a job that fits on one leaf goes
// to the leaf with the fewest free hosts that still fits it, best fit; a larger job takes the
// leaves with the most free hosts first, so it spans as few leaves as possible), until the
// machine is `utilization` full; then a random share of the jobs ends and new ones arrive into
// the holes, for `rounds` rounds. What is running at the end is the mix. The simulation is
// deterministic for a seed.
#pragma once

#include <cstdint>

#include "sar/model/fabric.h"
#include "sar/model/jobs.h"
#include "sar/status.h"

namespace sar {

struct JobMixOptions {
  int min_size = 2;
  int max_size = 128;
  double utilization = 0.9;  // share of hosts busy after each round's arrivals
  double departures = 0.4;   // share of running jobs that end between rounds
  int rounds = 4;
  uint64_t seed = 1;
  /// 0: SLURM's topology-aware placement (HostAllocator::Place). N >= 1: fragmented placement,
  /// each job in runs of at most N hosts per leaf on randomly chosen leaves
  /// (HostAllocator::PlaceRuns), as on a machine whose scheduler ignores the topology.
  int run_length = 0;
};

/// Fills *out with the running jobs, ids "job<N>" in start order, hosts by Fabric::hostname().
/// InvalidArgument on sizes < 1, min > max, shares outside [0, 1], or run_length < 0.
Status GenerateJobMix(const Fabric& fabric, const JobMixOptions& options, JobMapping* out);

}  // namespace sar
