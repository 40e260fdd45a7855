#include "sar/study/host_allocator.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

namespace sar {

HostAllocator::HostAllocator(const Fabric& fabric) {
  std::map<NodeId, int> leaf_of_switch;
  std::set<std::string_view> seen;
  for (const PortRef& e : fabric.Endpoints()) {
    const std::string_view name = fabric.hostname(e.node);
    if (name.empty()) continue;               // no host (an Aggregation Node)
    if (!seen.insert(name).second) continue;  // a host with two ports counts once
    const NodeId sw = fabric.peer(e).node;
    auto [it, added] = leaf_of_switch.emplace(sw, num_leaves());
    if (added) {
      leaf_hosts_.emplace_back();
      free_count_.push_back(0);
    }
    const int h = total();
    leaf_hosts_[it->second].push_back(h);
    host_name_.emplace_back(name);
    host_leaf_.push_back(it->second);
    free_.push_back(true);
    ++free_count_[it->second];
  }
}

bool HostAllocator::Place(int size, std::vector<int>* hosts) {
  if (size < 1 || size > total() - busy_) return false;
  const int leaves = num_leaves();
  int best = -1;
  for (int l = 0; l < leaves; ++l) {
    const int f = FreeOn(l);
    if (f >= size && (best < 0 || f < FreeOn(best))) best = l;
  }
  std::vector<int> order;
  if (best >= 0) {
    order.push_back(best);
  } else {
    for (int l = 0; l < leaves; ++l) order.push_back(l);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return FreeOn(a) > FreeOn(b); });
  }
  int need = size;
  for (int l : order) {
    for (int h : leaf_hosts_[l]) {
      if (need == 0) break;
      if (!free_[h]) continue;
      free_[h] = false;
      --free_count_[l];
      hosts->push_back(h);
      --need;
    }
    if (need == 0) break;
  }
  busy_ += size;
  return true;
}

bool HostAllocator::PlaceRuns(int size, int run, std::mt19937_64* rng, std::vector<int>* hosts) {
  if (size < 1 || size > total() - busy_ || run < 1) return false;
  int need = size;
  while (need > 0) {
    std::vector<int> order;
    for (int l = 0; l < num_leaves(); ++l) {
      if (FreeOn(l) > 0) order.push_back(l);
    }
    // Fisher-Yates with our own draws, so the order depends on the seed only (std::shuffle's
    // algorithm is the library's choice).
    for (size_t i = order.size(); i > 1; --i) {
      std::swap(order[i - 1], order[(*rng)() % i]);
    }
    for (int l : order) {
      int take = std::min(run, need);
      for (int h : leaf_hosts_[l]) {
        if (take == 0) break;
        if (!free_[h]) continue;
        free_[h] = false;
        --free_count_[l];
        hosts->push_back(h);
        --need;
        --take;
      }
      if (need == 0) break;
    }
  }
  busy_ += size;
  return true;
}

void HostAllocator::Release(const std::vector<int>& hosts) {
  for (int h : hosts) {
    if (free_[h]) continue;  // not placed: nothing to free
    free_[h] = true;
    ++free_count_[host_leaf_[h]];
    --busy_;
  }
}

}  // namespace sar
