// The filter of SAR Sec. 3.2.1: of all running jobs, keep those the router must know about —
// jobs whose hosts span at least two leaf switches (a job inside one leaf never crosses the
// fabric's inter-switch links, so its placement cannot change any route's load).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "leaf_map.h"
#include "sources/job_source.h"

namespace sar::filterd {

struct FilterOptions {
  int min_leaves = 2;  // a job's traffic must span at least this many leaf switches
  /// Which HCA ports of a job's hosts talk (sar/model/jobs.h): the span is TrafficLeafSpan's, the
  /// router's rule (a one-host job never spans; rail-aligned traffic spans where rails cross).
  JobHcaPairs hca_pairs = JobHcaPairs::kRails;
  int64_t min_time_limit_min = 0;  // skip jobs whose time limit is below this (0 = keep all)
  int min_nodes = 0;               // skip jobs with fewer hosts (0 = keep all)
  std::vector<std::string> ignore_partitions;
};

/// A job kept by the filter: its hosts sorted and without duplicates, and the leaves it spans.
struct MultiSwitchJob {
  std::string id;
  std::vector<std::string> hosts;
  int num_leaves = 0;
  JobPattern pattern = JobPattern::kDefault;
};

struct FilterResult {
  std::vector<MultiSwitchJob> jobs;        // sorted by JobSetOrder (job_set_diff.h)
  std::vector<std::string> unknown_hosts;  // hosts of running jobs the topology lacks, sorted
};

/// The order FilterJobs sorts by and DiffJobSets relies on: host set, then pattern, then id.
bool JobSetOrder(const MultiSwitchJob& a, const MultiSwitchJob& b);

/// Hosts the topology does not know are left out of their job's leaf count and reported.
FilterResult FilterJobs(const std::vector<SourceJob>& jobs, const LeafMap& leaves,
                        const FilterOptions& options);

}  // namespace sar::filterd
