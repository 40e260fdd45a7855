#include "sar/lft.h"

#include <algorithm>

namespace sar {

LftSet::LftSet(int num_switches, Lid max_lid)
    : num_switches_(num_switches),
      max_lid_(max_lid),
      ports_(static_cast<size_t>(num_switches) * (max_lid + 1), kNoRoute) {}

Status LftSet::CheckFits(const Fabric& fabric) const {
  if (num_switches_ == fabric.num_switches()) return Status::OK();
  return Status::InvalidArgument("LFTs have " + std::to_string(num_switches_) +
                                 " switches, fabric has " + std::to_string(fabric.num_switches()));
}

void VirtualLayers::set(Lid src, Lid dst, int layer) {
  if (src >= rows_.size()) rows_.resize(src + 1);
  std::vector<uint8_t>& row = rows_[src];
  // Grow geometrically: engines set a row's destinations in increasing order.
  if (dst >= row.size()) row.resize(std::max<size_t>(dst + 1, row.size() * 2), kUnset);
  size_ += row[dst] == kUnset;
  row[dst] = static_cast<uint8_t>(layer);
}

int VirtualLayers::num_layers() const {
  int highest = default_layer;
  for (const auto& row : rows_) {
    for (uint8_t v : row) {
      if (v != kUnset) highest = std::max<int>(highest, v);
    }
  }
  return highest + 1;
}

std::vector<VirtualLayers::Entry> VirtualLayers::Entries() const {
  std::vector<Entry> out;
  out.reserve(size_);
  for (Lid src = 0; src < rows_.size(); ++src) {
    for (Lid dst = 0; dst < rows_[src].size(); ++dst) {
      if (rows_[src][dst] != kUnset) out.push_back({src, dst, rows_[src][dst]});
    }
  }
  return out;
}

}  // namespace sar
