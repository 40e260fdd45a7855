// Where a batch system puts jobs: the hosts of a fabric grouped by leaf switch, and the placement
// rule of SLURM's topology/tree plugin with select/linear (whole hosts, never two jobs on one
// host). Used by the synthetic job mixes (job_mix.h) and by the replay of size-only histories
// (replay.h), so both fragment the machine the same way.
//
// The rule (Place): a job that fits on one leaf goes to the leaf with the fewest free hosts that
// still holds it (best fit, which keeps large holes for large jobs); a larger job takes the leaves
// with the most free hosts first (ties: fabric order), so it spans as few leaves as possible.
// Within a leaf, the lowest free host slots. Fragmentation then comes from the history itself:
// jobs end in another order than they started, and the holes they leave are scattered.
// Thread-safety: a plain value.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "sar/model/fabric.h"

namespace sar {

class HostAllocator {
 public:
  /// Hosts are grouped by the switch their first cabled port hangs off, in fabric order; a host
  /// with two ports counts once.
  explicit HostAllocator(const Fabric& fabric);

  int total() const { return static_cast<int>(host_name_.size()); }
  int busy() const { return busy_; }
  int num_leaves() const { return static_cast<int>(leaf_hosts_.size()); }
  int FreeOn(int leaf) const { return free_count_[leaf]; }
  bool IsFree(int host) const { return free_[host]; }

  /// Places `size` hosts by the rule above and appends their indices to *hosts; false (nothing
  /// placed) if fewer than `size` hosts are free or size < 1.
  bool Place(int size, std::vector<int>* hosts);
  /// The fragmented placement of a machine whose scheduler ignores the topology (or whose holes
  /// are small): the leaves with free hosts in a random order (from `rng`), at most `run` hosts
  /// from each (its lowest free slots), round after round until `size` are placed. Same
  /// contract as Place otherwise. REQUIRES: run >= 1.
  bool PlaceRuns(int size, int run, std::mt19937_64* rng, std::vector<int>* hosts);
  /// Frees hosts a Place returned.
  void Release(const std::vector<int>& hosts);

  /// Host index -> host name (Fabric::hostname) and leaf.
  const std::string& host(int h) const { return host_name_[h]; }
  int leaf_of(int h) const { return host_leaf_[h]; }

 private:
  std::vector<std::vector<int>> leaf_hosts_;  // per leaf: host indices in fabric order
  std::vector<std::string> host_name_;
  std::vector<int> host_leaf_;
  std::vector<bool> free_;
  std::vector<int> free_count_;  // per leaf, kept with free_
  int busy_ = 0;
};

}  // namespace sar
