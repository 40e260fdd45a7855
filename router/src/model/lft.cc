#include "sar/model/lft.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
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

namespace {

// splitmix64's finalizer: a digest step that spreads every input bit.
uint64_t MixDigest(uint64_t h, uint64_t x) {
  x += h * 0x9e3779b97f4a7c15ULL;
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

template <class T>
uint64_t DigestOf(uint64_t h, const std::vector<T>& v) {
  h = MixDigest(h, v.size());
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(v.data());
  const size_t n = v.size() * sizeof(T);
  for (size_t i = 0; i < n; i += 8) {
    uint64_t word = 0;
    std::memcpy(&word, bytes + i, std::min<size_t>(8, n - i));
    h = MixDigest(h, word);
  }
  return h;
}

}  // namespace

uint64_t VirtualLayers::Digest() const {
  uint64_t h = MixDigest(static_cast<uint64_t>(default_layer), factored_);
  if (factored_) {
    h = MixDigest(h, f_.lids);
    h = DigestOf(h, f_.source_slot);
    h = DigestOf(h, f_.node);
    h = DigestOf(h, f_.layer_class);
    h = DigestOf(h, f_.spread);
    return DigestOf(h, f_.base);
  }
  h = MixDigest(h, rows_.size());
  for (const std::vector<uint8_t>& row : rows_) h = DigestOf(h, row);
  return h;
}

void VirtualLayers::set(Lid src, Lid dst, int layer) {
  Expand();
  if (src >= rows_.size()) rows_.resize(src + 1);
  std::vector<uint8_t>& row = rows_[src];
  // Grow geometrically: engines set a row's destinations in increasing order.
  if (dst >= row.size()) row.resize(std::max<size_t>(dst + 1, row.size() * 2), kUnlisted);
  size_ += row[dst] == kUnlisted;
  row[dst] = static_cast<uint8_t>(layer);
}

void VirtualLayers::SetRow(Lid src, std::vector<uint8_t> row) {
  Expand();
  if (src >= rows_.size()) rows_.resize(src + 1);
  const auto listed = [](const std::vector<uint8_t>& r) {
    return static_cast<size_t>(r.size() - std::count(r.begin(), r.end(), kUnlisted));
  };
  size_ = size_ - listed(rows_[src]) + listed(row);
  rows_[src] = std::move(row);
}

void VirtualLayers::Expand() {
  if (!factored_) return;
  std::vector<std::vector<uint8_t>> rows(f_.lids);
  for (Lid src = 0; src < f_.lids; ++src) {
    if (row_of_[src] == kNoRow) continue;
    const uint8_t* cls = f_.layer_class.data() + row_of_[src];
    auto listed = [&](Lid dst) { return cls[dst] != kUnlisted && f_.node[dst] != f_.node[src]; };
    Lid end = f_.lids;  // rows are sized by their highest listed destination, as set() does
    while (end > 0 && !listed(end - 1)) --end;
    if (end == 0) continue;
    std::vector<uint8_t>& row = rows[src];
    row.assign(end, kUnlisted);
    for (Lid dst = 0; dst < end; ++dst) {
      if (listed(dst)) row[dst] = static_cast<uint8_t>(Layer(cls[dst], src, dst));
    }
  }
  while (!rows.empty() && rows.back().empty()) rows.pop_back();
  rows_ = std::move(rows);
  factored_ = false;
  f_ = Factored();
  row_of_.clear();
  max_listed_ = -1;  // size_ stays: the same entries
}

Status VirtualLayers::SetFactored(Factored f) {
  const size_t lids = f.lids;
  const size_t classes = f.spread.size();
  if (f.source_slot.size() != lids || f.node.size() != lids || f.base.size() != classes ||
      classes > 16 || (lids == 0 ? !f.layer_class.empty() : f.layer_class.size() % lids != 0)) {
    return Status::InvalidArgument("factored virtual layers: parts of inconsistent sizes");
  }
  for (size_t c = 0; c < classes; ++c) {
    if (f.spread[c] < 1 || f.base[c] + f.spread[c] > 16) {
      return Status::InvalidArgument("factored virtual layers: class " + std::to_string(c) +
                                     " spreads beyond layer 15");
    }
  }
  const size_t slots = lids == 0 ? 0 : f.layer_class.size() / lids;
  for (const int32_t s : f.source_slot) {
    if (s >= static_cast<int64_t>(slots)) {
      return Status::InvalidArgument("factored virtual layers: source slot out of range");
    }
  }
  // Per slot: listed destinations, and per class and residue dst mod spread how many (the
  // highest listed layer is base + (src + dst) mod spread at its best residue).
  constexpr size_t kR = 16;
  std::vector<std::vector<uint8_t>> mod(classes);
  for (size_t c = 0; c < classes; ++c) {
    mod[c].resize(lids);
    for (size_t l = 0; l < lids; ++l) mod[c][l] = static_cast<uint8_t>(l % f.spread[c]);
  }
  std::vector<uint64_t> listed(slots, 0);
  std::vector<uint32_t> hist(slots * classes * kR, 0);
  for (size_t s = 0; s < slots; ++s) {
    const uint8_t* row = f.layer_class.data() + s * lids;
    uint32_t* h = hist.data() + s * classes * kR;
    for (size_t d = 0; d < lids; ++d) {
      const uint8_t c = row[d];
      if (c == kUnlisted) continue;
      if (c >= classes) {
        return Status::InvalidArgument("factored virtual layers: class " + std::to_string(c) +
                                       " has no spread");
      }
      ++listed[s];
      ++h[c * kR + mod[c][d]];
    }
  }
  // Each source lists its slot's destinations except its own node's LIDs.
  std::vector<std::pair<NodeId, Lid>> all_by_node;
  for (Lid l = 0; l < lids; ++l) all_by_node.push_back({f.node[l], l});
  std::sort(all_by_node.begin(), all_by_node.end());
  size_t size = 0;
  int highest = -1;
  std::vector<uint32_t> own(classes * kR);
  for (Lid src = 0; src < lids; ++src) {
    const int32_t s = f.source_slot[src];
    if (s < 0) continue;
    const uint8_t* row = f.layer_class.data() + static_cast<size_t>(s) * lids;
    std::fill(own.begin(), own.end(), 0);
    size_t own_listed = 0;
    auto it = std::lower_bound(all_by_node.begin(), all_by_node.end(),
                               std::pair<NodeId, Lid>{f.node[src], 0});
    for (; it != all_by_node.end() && it->first == f.node[src]; ++it) {
      const uint8_t c = row[it->second];
      if (c == kUnlisted) continue;
      ++own_listed;
      ++own[c * kR + mod[c][it->second]];
    }
    size += listed[s] - own_listed;
    const uint32_t* h = hist.data() + static_cast<size_t>(s) * classes * kR;
    for (size_t c = 0; c < classes; ++c) {
      const int k = f.spread[c];
      const int top = f.base[c] + k - 1;
      if (top <= highest) continue;
      const int sm = static_cast<int>(src % k);
      for (int r = 0; r < k; ++r) {
        if (h[c * kR + r] == own[c * kR + r]) continue;
        highest = std::max(highest, f.base[c] + (sm + r) % k);
      }
    }
  }
  rows_.clear();
  size_ = size;
  max_listed_ = highest;
  row_of_.assign(lids, kNoRow);
  for (Lid l = 0; l < lids; ++l) {
    if (f.source_slot[l] >= 0) row_of_[l] = static_cast<uint64_t>(f.source_slot[l]) * lids;
  }
  for (size_t c = 0; c < 16; ++c) {
    const uint32_t k = c < classes ? f.spread[c] : 1;
    class_[c].k = k;
    class_[c].m = k == 1 ? 0 : ~uint64_t{0} / k + 1;
    class_[c].base = c < classes ? f.base[c] : 0;
  }
  f_ = std::move(f);
  factored_ = true;
  return Status::OK();
}

// get() row by row (factored instances have no rows_: nothing to prefetch there); each row's
// segment is a cache (and TLB) miss: ask for a few rows ahead.
void VirtualLayers::CopyColumns(Lid dst_first, Lid count, Lid num_src, uint8_t* out) const {
  if (factored_) {
    CopyColumnsFactored(dst_first, count, num_src, out);
    return;
  }
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

// get() for a window of one source's row at a time: its class bytes for the window are
// contiguous in its slot row, so the window costs one run of reads instead of a lookup per pair.
// Destinations at or past f_.lids, sources without a row, unlisted classes and pairs of one node
// read default_layer, as in GetFactored. A near copy of GetFactored's rules, kept for speed: the
// same copy through get() made the 45k validation (plugin_pass_bench --engine sar --threads 1)
// 11.8 s instead of 8.2-8.6 s; the VirtualLayers property test holds the two to one answer.
void VirtualLayers::CopyColumnsFactored(Lid dst_first, Lid count, Lid num_src, uint8_t* out) const {
  const uint8_t fallback = static_cast<uint8_t>(default_layer);
  // Destinations [dst_first, dst_first + listed) lie below f_.lids; the rest are default.
  const Lid listed = dst_first >= f_.lids ? 0 : std::min<Lid>(count, f_.lids - dst_first);
  for (Lid src = 0; src < num_src; ++src) {
    uint8_t* row = out + static_cast<size_t>(src) * count;
    if (src >= f_.lids || row_of_[src] == kNoRow) {
      std::fill(row, row + count, fallback);
      continue;
    }
    const uint8_t* cls = f_.layer_class.data() + row_of_[src] + dst_first;
    const NodeId* node = f_.node.data() + dst_first;
    const NodeId own = f_.node[src];
    for (Lid k = 0; k < listed; ++k) {
      const uint8_t c = cls[k];
      row[k] = c == kUnlisted || node[k] == own
                   ? fallback
                   : static_cast<uint8_t>(Layer(c, src, dst_first + k));
    }
    std::fill(row + listed, row + count, fallback);
  }
}

int VirtualLayers::num_layers() const {
  int highest = std::max(default_layer, max_listed_);
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
  ForEachEntry([&](const Entry& e) { out.push_back(e); });
  return out;
}

}  // namespace sar
