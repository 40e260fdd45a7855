// A tiny work-sharing loop for the per-destination analyses (trace, deadlock, metrics).
//
// Items are handed out in chunks from an atomic counter, so threads that finish early take more
// work; each worker gets a stable index for its own accumulator, which the caller merges at the
// end (sums and maxima, so the result does not depend on which worker did what).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace sar::internal {

/// Threads to use: `requested` (0 = hardware concurrency), at most one per `chunk` items.
inline int WorkerCount(int requested, size_t items, size_t chunk) {
  int n = requested > 0 ? requested : static_cast<int>(std::thread::hardware_concurrency());
  n = std::max(n, 1);
  const size_t useful = (items + chunk - 1) / std::max<size_t>(chunk, 1);
  return static_cast<int>(std::max<size_t>(1, std::min<size_t>(n, useful)));
}

/// Calls fn(worker, item) for every item in [0, items) on `workers` threads (the caller is
/// worker 0). REQUIRES: workers >= 1.
template <class Fn>
void ParallelFor(int workers, size_t items, size_t chunk, Fn&& fn) {
  std::atomic<size_t> next{0};
  auto run = [&](int worker) {
    for (;;) {
      const size_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
      if (begin >= items) return;
      const size_t end = std::min(items, begin + chunk);
      for (size_t i = begin; i < end; ++i) fn(worker, i);
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(workers - 1);
  for (int w = 1; w < workers; ++w) threads.emplace_back(run, w);
  run(0);
  for (std::thread& t : threads) t.join();
}

}  // namespace sar::internal
