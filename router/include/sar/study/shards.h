// Deterministic shards of a list of independent work items (replay events, study points): shard
// k of n gets one contiguous range, the ranges cover the list in order and their sizes differ by
// at most one, so a split run's shards put back in shard order are the unsplit run's list.
#pragma once

#include <cstddef>

namespace sar {

struct ShardRange {
  size_t begin = 0, end = 0;  // [begin, end)
};

/// REQUIRES: 0 <= shard < shards.
inline ShardRange ShardOf(size_t items, int shard, int shards) {
  const size_t n = static_cast<size_t>(shards), k = static_cast<size_t>(shard);
  return {items / n * k + (k < items % n ? k : items % n),
          items / n * (k + 1) + (k + 1 < items % n ? k + 1 : items % n)};
}

}  // namespace sar
