// A persistent pool of worker threads for many short jobs in a row: SAR's refinement's searches
// (a few hundred microseconds each, thousands per route). Starting threads
// per job (ParallelFor, trace_parallel.h) or handing a job over with a mutex and condition
// variables costs as much as such a job; here a job is one atomic store that spinning workers see
// within a fraction of a microsecond.
//
// A job is `items` independent calls fn(worker, item); the caller is worker 0 and takes items
// like every worker, from one atomic counter, so a worker that the OS has not scheduled (the
// machine may be shared) delays nothing: the caller then runs its items. Which worker runs which
// item varies from run to run: a job whose result must not depend on it keeps its results per
// item (and its scratch per worker). Between jobs the workers spin for `spin`, then sleep on a
// condition variable, so an idle pool costs no CPU.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace sar::internal {

class WorkPool {
 public:
  // Long enough to bridge the serial work between two jobs of a burst (a step's BFS and tree
  // pass between its levels, the refinement's move between two searches), short enough that
  // workers between bursts (or while the caller does something else entirely) stop burning a core.
  static constexpr std::chrono::microseconds kDefaultSpin{50};

  /// `workers` >= 1 counts the calling thread: starts workers - 1 threads, which live as long as
  /// the pool.
  explicit WorkPool(int workers, std::chrono::microseconds spin = kDefaultSpin);
  /// REQUIRES: no Run in progress.
  ~WorkPool();
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  int workers() const { return static_cast<int>(threads_.size()) + 1; }

  /// Calls fn(worker, item) once for every item in [0, items) (items < 2^32), worker in
  /// [0, workers()) the same index for the same thread on every job, 0 the caller, and returns
  /// when every call has returned. If a call throws, the items not started yet are skipped and
  /// Run rethrows the first exception once the calls in flight have returned (so none of them
  /// outlives the caller's frame); the pool stays usable. Not reentrant: fn must not call Run.
  template <class Fn>
  void Run(size_t items, Fn&& fn) {
    using F = std::remove_reference_t<Fn>;
    RunErased(
        items, [](void* f, int worker, size_t item) { (*static_cast<F*>(f))(worker, item); },
        const_cast<void*>(static_cast<const void*>(&fn)));
  }

 private:
  using Call = void (*)(void* fn, int worker, size_t item);
  void RunErased(size_t items, Call call, void* fn);
  void Loop(int worker);
  void Work(int worker);  // claims and runs items of the open job until none is left
  void RunItem(int worker, size_t item);
  bool Open() const;

  std::chrono::microseconds spin_;
  std::vector<std::thread> threads_;
  // The open job's unclaimed items, next << 32 | end; claimed by compare-and-swap, so a claim
  // always takes an unclaimed item of the job open at that moment, whichever it is (a worker
  // that looked at the previous job claims nothing of it once it is done).
  std::atomic<uint64_t> range_{0};
  std::atomic<size_t> left_{0};  // the job's items not finished yet; Run returns at 0
  // The job's function: written by Run before it publishes range_, read by a worker after a
  // successful claim (the job cannot finish, nor these change, before the claimed item has run).
  Call call_ = nullptr;
  void* fn_ = nullptr;
  std::atomic<bool> failed_{false};  // some call threw: skip the job's remaining items
  std::exception_ptr error_;         // the first exception, under mu_
  // Sleeping: workers wait on work_cv_ for an open job, the caller on done_cv_ for the last
  // item. Each side announces itself (sleepers_, caller_waits_) before its last look, and the
  // other side looks at the announcement after its store (all seq_cst), so either the sleeper
  // sees the change or the waker sees the sleeper and notifies under mu_.
  std::atomic<int> sleepers_{0};
  std::atomic<bool> caller_waits_{false};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
};

}  // namespace sar::internal
