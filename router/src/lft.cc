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

int VirtualLayers::num_layers() const {
  int highest = default_layer;
  for (const auto& [key, layer] : layer_) highest = std::max<int>(highest, layer);
  return highest + 1;
}

}  // namespace sar

namespace sar {

std::vector<VirtualLayers::Entry> VirtualLayers::Entries() const {
  std::vector<Entry> out;
  out.reserve(layer_.size());
  for (const auto& [key, layer] : layer_) out.push_back({key >> 16, key & 0xFFFF, layer});
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) {
    return a.src != b.src ? a.src < b.src : a.dst < b.dst;
  });
  return out;
}

}  // namespace sar
