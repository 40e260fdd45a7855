#include "sar/lft.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <utility>

namespace sar {

LftSet::LftSet(int num_switches, Lid max_lid) : num_switches_(num_switches), max_lid_(max_lid) {
  const size_t size = static_cast<size_t>(num_switches) * (max_lid + 1);
  // The analyses read the tables by destination LID, one entry per switch row: with 4 KiB pages
  // every read of a large fabric's tables is a TLB miss (45k hosts: 3,840 rows of 49 KB). Ask
  // for transparent huge pages (a hint: kernels with THP in "madvise" mode give them only on
  // request) before the pages are first touched.
  ports_.reserve(size);
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (size >= 4 * kHuge) {
    const uintptr_t begin = (reinterpret_cast<uintptr_t>(ports_.data()) + kHuge - 1) & ~(kHuge - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(ports_.data()) + size) & ~(kHuge - 1);
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  }
  ports_.assign(size, kNoRoute);
}

Status LftSet::CheckFits(const Fabric& fabric) const {
  if (num_switches_ == fabric.num_switches()) return Status::OK();
  return Status::InvalidArgument("LFTs have " + std::to_string(num_switches_) +
                                 " switches, fabric has " + std::to_string(fabric.num_switches()));
}

LftChanges CountLftChanges(const LftSet& a, const LftSet& b) {
  LftChanges c;
  const uint64_t blocks_per_switch =
      (static_cast<uint64_t>(b.max_lid()) + kLftBlockLids) / kLftBlockLids;
  if (a.num_switches() != b.num_switches() || a.max_lid() != b.max_lid()) {
    c.entries = static_cast<uint64_t>(b.num_switches()) * (b.max_lid() + 1);
    c.blocks = static_cast<uint64_t>(b.num_switches()) * blocks_per_switch;
    return c;
  }
  for (int s = 0; s < a.num_switches(); ++s) {
    const uint8_t* x = a.row(s);
    const uint8_t* y = b.row(s);
    for (Lid block = 0; block <= a.max_lid(); block += kLftBlockLids) {
      uint64_t n = 0;
      const Lid end = std::min<Lid>(a.max_lid(), block + kLftBlockLids - 1);
      for (Lid l = block; l <= end; ++l) n += x[l] != y[l];
      c.entries += n;
      c.blocks += n > 0;
    }
  }
  return c;
}

void VirtualLayers::set(Lid src, Lid dst, int layer) {
  if (src >= rows_.size()) rows_.resize(src + 1);
  std::vector<uint8_t>& row = rows_[src];
  // Grow geometrically: engines set a row's destinations in increasing order.
  if (dst >= row.size()) row.resize(std::max<size_t>(dst + 1, row.size() * 2), kUnlisted);
  size_ += row[dst] == kUnlisted;
  row[dst] = static_cast<uint8_t>(layer);
}

void VirtualLayers::SetRow(Lid src, std::vector<uint8_t> row) {
  if (src >= rows_.size()) rows_.resize(src + 1);
  const auto listed = [](const std::vector<uint8_t>& r) {
    return static_cast<size_t>(r.size() - std::count(r.begin(), r.end(), kUnlisted));
  };
  size_ = size_ - listed(rows_[src]) + listed(row);
  rows_[src] = std::move(row);
}

// get() row by row; each row's segment is a cache (and TLB) miss: ask for a few rows ahead.
void VirtualLayers::CopyColumns(Lid dst_first, Lid count, Lid num_src, uint8_t* out) const {
  constexpr Lid kAhead = 16;
  for (Lid src = 0; src < num_src; ++src) {
    const Lid next = src + kAhead;
    if (next < rows_.size() && dst_first < rows_[next].size()) {
      const std::vector<uint8_t>& r = rows_[next];
      __builtin_prefetch(r.data() + dst_first);
      __builtin_prefetch(r.data() + std::min<size_t>(r.size() - 1, dst_first + count - 1));
    }
    uint8_t* row = out + static_cast<size_t>(src) * count;
    for (Lid k = 0; k < count; ++k) row[k] = static_cast<uint8_t>(get(src, dst_first + k));
  }
}

int VirtualLayers::num_layers() const {
  int highest = default_layer;
  for (const auto& row : rows_) {
    for (uint8_t v : row) {
      if (v != kUnlisted) highest = std::max<int>(highest, v);
    }
  }
  return highest + 1;
}

std::vector<VirtualLayers::Entry> VirtualLayers::Entries() const {
  std::vector<Entry> out;
  out.reserve(size_);
  for (Lid src = 0; src < rows_.size(); ++src) {
    for (Lid dst = 0; dst < rows_[src].size(); ++dst) {
      if (rows_[src][dst] != kUnlisted) out.push_back({src, dst, rows_[src][dst]});
    }
  }
  return out;
}

}  // namespace sar
