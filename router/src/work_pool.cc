#include "work_pool.h"

#include <limits>
#include <stdexcept>

namespace sar::internal {
namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Spins until done() or `spin` has passed; true if done. The clock is read every few pauses
// only (a pause takes 10-150 cycles depending on the CPU, so the bound is set in time).
template <class Done>
bool SpinUntil(std::chrono::microseconds spin, Done done) {
  const auto deadline = std::chrono::steady_clock::now() + spin;
  for (unsigned k = 1;; ++k) {
    if (done()) return true;
    if (k % 16 == 0 && std::chrono::steady_clock::now() >= deadline) return done();
    CpuRelax();
  }
}

constexpr uint64_t Pack(uint32_t next, uint32_t end) { return uint64_t{next} << 32 | end; }

}  // namespace

WorkPool::WorkPool(int workers, std::chrono::microseconds spin) : spin_(spin) {
  threads_.reserve(workers > 1 ? workers - 1 : 0);
  for (int w = 1; w < workers; ++w) threads_.emplace_back(&WorkPool::Loop, this, w);
}

WorkPool::~WorkPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_.store(true);
  }
  work_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

bool WorkPool::Open() const {
  const uint64_t v = range_.load();
  return (v >> 32) < static_cast<uint32_t>(v);
}

void WorkPool::RunErased(size_t items, Call call, void* fn) {
  if (items == 0) return;
  if (items > std::numeric_limits<uint32_t>::max()) {
    throw std::length_error("WorkPool::Run: more than 2^32 - 1 items");
  }
  if (threads_.empty()) {  // nothing to hand over: no atomics, exceptions pass as they are
    for (size_t i = 0; i < items; ++i) call(fn, 0, i);
    return;
  }
  call_ = call;
  fn_ = fn;
  failed_.store(false, std::memory_order_relaxed);
  caller_waits_.store(false, std::memory_order_relaxed);
  left_.store(items, std::memory_order_relaxed);
  range_.store(Pack(0, static_cast<uint32_t>(items)));  // publishes the above (seq_cst)
  if (sleepers_.load() > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    work_cv_.notify_all();
  }
  Work(0);
  // Every item is claimed; wait for those other workers are still running.
  if (!SpinUntil(spin_, [this] { return left_.load(std::memory_order_acquire) == 0; })) {
    std::unique_lock<std::mutex> lock(mu_);
    caller_waits_.store(true);
    done_cv_.wait(lock, [this] { return left_.load() == 0; });
  }
  if (failed_.load(std::memory_order_relaxed)) {
    std::exception_ptr error;
    {
      std::lock_guard<std::mutex> lock(mu_);
      error.swap(error_);
    }
    std::rethrow_exception(error);
  }
}

void WorkPool::Work(int worker) {
  uint64_t v = range_.load(std::memory_order_acquire);
  for (;;) {
    const uint32_t next = static_cast<uint32_t>(v >> 32), end = static_cast<uint32_t>(v);
    if (next >= end) return;
    if (range_.compare_exchange_weak(v, Pack(next + 1, end), std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
      RunItem(worker, next);
      v = range_.load(std::memory_order_acquire);
    }
  }
}

void WorkPool::RunItem(int worker, size_t item) {
  if (!failed_.load(std::memory_order_relaxed)) {
    try {
      call_(fn_, worker, item);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
      failed_.store(true, std::memory_order_relaxed);
    }
  }
  // The last item wakes the caller if it sleeps; nothing of the job is touched after this.
  if (left_.fetch_sub(1) == 1 && caller_waits_.load()) {
    std::lock_guard<std::mutex> lock(mu_);
    done_cv_.notify_one();
  }
}

void WorkPool::Loop(int worker) {
  for (;;) {
    if (!SpinUntil(spin_, [this] { return Open() || stop_.load(std::memory_order_relaxed); })) {
      std::unique_lock<std::mutex> lock(mu_);
      sleepers_.fetch_add(1);
      work_cv_.wait(lock, [this] { return Open() || stop_.load(); });
      sleepers_.fetch_sub(1);
    }
    if (stop_.load()) return;
    Work(worker);
  }
}

}  // namespace sar::internal
