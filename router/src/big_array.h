// Large working arrays of the routing passes (tens to hundreds of MB at 10k-45k hosts) in 2 MB
// pages where the kernel allows it (transparent huge pages in "madvise" mode, Debian's default).
//
// Why: a std::vector of that size is first touched one 4 KB page fault at a time, and on a
// virtual machine a fault costs ~10 us: at 10k hosts the virtual layers' route store alone took
// ~11,000 faults, most of the stage's time. In 2 MB pages the same memory takes a few dozen.
// The memory is uninitialised (callers write before they read, or fill it themselves).
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

namespace sar::internal {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
template <class T>
using BigArray = std::unique_ptr<T[], FreeDeleter>;

/// n uninitialised elements of a trivial type T, 2 MB aligned (and advised into huge pages) when
/// they take at least 2 MB. Throws std::bad_alloc.
template <class T>
BigArray<T> Big(size_t n) {
  constexpr size_t kHuge = size_t{2} << 20, kLine = 64;
  const size_t align = n * sizeof(T) >= kHuge ? kHuge : kLine;
  const size_t bytes = std::max((n * sizeof(T) + align - 1) / align * align, align);
  void* p = std::aligned_alloc(align, bytes);
  if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (align == kHuge) madvise(p, bytes, MADV_HUGEPAGE);  // advice only: 4 KB pages if refused
#endif
  return BigArray<T>(static_cast<T*>(p));
}

/// Like Big, every element set to `value`.
template <class T>
BigArray<T> BigFilled(size_t n, T value) {
  BigArray<T> a = Big<T>(n);
  std::fill_n(a.get(), n, value);
  return a;
}

/// Bump allocation of many runs of T of sizes known only as they are made (one worker's share
/// of a result, run after run), in Big chunks: no run is ever copied or freed on its own; all go
/// with the arena. Not thread-safe: one arena per worker.
template <class T>
class BigArena {
 public:
  explicit BigArena(size_t chunk_elements = (size_t{16} << 20) / sizeof(T))
      : chunk_(std::max<size_t>(chunk_elements, 1)) {}

  /// A copy of [first, first + n), valid as long as the arena.
  const T* Copy(const T* first, size_t n) {
    if (n > left_ || at_ == nullptr) {
      const size_t size = std::max(chunk_, n);
      chunks_.push_back(Big<T>(size));
      at_ = chunks_.back().get();
      left_ = size;
    }
    T* out = at_;
    std::copy_n(first, n, out);
    at_ += n;
    left_ -= n;
    return out;
  }

 private:
  size_t chunk_;
  std::vector<BigArray<T>> chunks_;
  T* at_ = nullptr;
  size_t left_ = 0;
};

}  // namespace sar::internal
