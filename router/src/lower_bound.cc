#include "sar/lower_bound.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <unordered_map>

namespace sar {
namespace {

// One indivisible item: the intra-job routes from the sources on switch `src` to endpoint
// destination on switch `dst_sw` (per destination; several destinations give several items).
struct Item {
  int dst_sw;
  int src;
  uint64_t weight;
};

int Find(std::vector<int>* parent, int x) {
  while ((*parent)[x] != x) x = (*parent)[x] = (*parent)[(*parent)[x]];
  return x;
}

std::vector<Item> Items(const Fabric& f, const std::vector<ResolvedJob>& jobs) {
  const int num_sw = f.num_switches();
  // Per destination port: (source switch, weight) parts, merged at the end.
  std::unordered_map<PortId, std::vector<std::pair<int, uint64_t>>> parts;
  std::vector<uint64_t> count(num_sw, 0);
  std::vector<int> touched;
  for (const ResolvedJob& job : jobs) {
    if (job.num_leaf_switches < 2) continue;
    touched.clear();
    std::unordered_map<NodeId, std::vector<int>> switches_of_node;
    for (const PortRef& e : job.endpoints) {
      const PortRef peer = f.peer(e);
      if (!peer.valid() || !f.is_switch(peer.node)) continue;
      const int s = f.switch_index(peer.node);
      if (count[s]++ == 0) touched.push_back(s);
      switches_of_node[e.node].push_back(s);
    }
    for (const PortRef& d : job.endpoints) {
      const PortRef peer = f.peer(d);
      if (!peer.valid() || !f.is_switch(peer.node)) continue;
      std::vector<std::pair<int, uint64_t>>& p = parts[f.port_id(d)];
      const std::vector<int>& own = switches_of_node[d.node];  // the metric skips d's node
      for (int s : touched) {
        const uint64_t mine = static_cast<uint64_t>(std::count(own.begin(), own.end(), s));
        if (count[s] > mine) p.emplace_back(s, count[s] - mine);
      }
    }
    for (int s : touched) count[s] = 0;
  }
  std::vector<Item> items;
  for (auto& [port, p] : parts) {
    const int dst_sw = f.switch_index(f.peer(f.port_ref(port)).node);
    std::sort(p.begin(), p.end());
    for (size_t i = 0; i < p.size();) {
      uint64_t w = 0;
      const int s = p[i].first;
      for (; i < p.size() && p[i].first == s; ++i) w += p[i].second;
      if (s != dst_sw) items.push_back({dst_sw, s, w});
    }
  }
  return items;
}

}  // namespace

uint64_t MakespanLowerBound(std::vector<uint64_t>* items, int channels) {
  if (channels < 1 || items->empty()) return 0;
  std::vector<uint64_t>& p = *items;
  std::sort(p.begin(), p.end(), std::greater<>());
  std::vector<uint64_t> prefix(p.size() + 1, 0);
  for (size_t i = 0; i < p.size(); ++i) prefix[i + 1] = prefix[i] + p[i];
  const uint64_t c = static_cast<uint64_t>(channels);
  uint64_t bound = (prefix.back() + c - 1) / c;
  // Of the k*c+1 largest items some channel carries k+1: at least the k+1 smallest of them.
  for (uint64_t k = 0; k * c + 1 <= p.size(); ++k) {
    bound = std::max(bound, prefix[k * c + 1] - prefix[k * c - k]);
  }
  return bound;
}

double BoundGap(uint64_t value, uint64_t bound) {
  if (bound == 0) return value == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return static_cast<double>(value) / static_cast<double>(bound) - 1.0;
}

EffectiveEfiBound EffectiveEfiLowerBound(const Fabric& f, const std::vector<ResolvedJob>& jobs) {
  EffectiveEfiBound out;
  const int num_sw = f.num_switches();
  if (num_sw == 0) return out;
  const std::vector<Item> items = Items(f, jobs);
  if (items.empty()) return out;

  // Cables between switches, once per direction (parallel cables separately).
  std::vector<std::pair<int, int>> arcs;
  std::vector<int> level(num_sw, -1);
  std::vector<int> queue;
  for (int s = 0; s < num_sw; ++s) {
    const NodeId sw = f.switches()[s];
    bool hosts = false;
    for (int p = 1; p <= f.num_ports(sw); ++p) {
      const PortId c = f.port_id(sw, p);
      if (f.is_inter_switch(c)) {
        arcs.emplace_back(s, f.switch_index(f.port_node(f.peer_id(c))));
      } else if (f.peer_id(c) != kNoPort) {
        hosts = true;
      }
    }
    if (hosts) {
      level[s] = 0;
      queue.push_back(s);
    }
  }
  std::vector<std::vector<int>> adj(num_sw);
  for (const auto& [a, b] : arcs) adj[a].push_back(b);
  for (size_t h = 0; h < queue.size(); ++h) {
    for (int t : adj[queue[h]]) {
      if (level[t] < 0) {
        level[t] = level[queue[h]] + 1;
        queue.push_back(t);
      }
    }
  }
  const int top = *std::max_element(level.begin(), level.end());

  // Cut L = 0: every switch alone; cut L >= 1: connected groups of the switches below level L.
  std::vector<int> parent(num_sw);
  std::vector<int> channels(num_sw);
  std::vector<std::vector<uint64_t>> out_items(num_sw), in_items(num_sw);
  for (int cut = 0; cut <= std::max(0, top); ++cut) {
    std::iota(parent.begin(), parent.end(), 0);
    if (cut > 0) {
      for (const auto& [a, b] : arcs) {
        if (level[a] >= 0 && level[a] < cut && level[b] >= 0 && level[b] < cut) {
          parent[Find(&parent, a)] = Find(&parent, b);
        }
      }
      int groups = 0;
      for (int s = 0; s < num_sw; ++s) groups += Find(&parent, s) == s;
      if (groups == num_sw) continue;  // the same cuts as the single switches
    }
    std::fill(channels.begin(), channels.end(), 0);
    for (const auto& [a, b] : arcs)
      channels[Find(&parent, a)] += Find(&parent, a) != Find(&parent, b);
    for (auto& v : out_items) v.clear();
    for (auto& v : in_items) v.clear();
    for (const Item& it : items) {
      const int from = Find(&parent, it.src), to = Find(&parent, it.dst_sw);
      if (from == to) continue;
      out_items[from].push_back(it.weight);
      in_items[to].push_back(it.weight);
    }
    for (int g = 0; g < num_sw; ++g) {
      for (int dir = 0; dir < 2; ++dir) {
        std::vector<uint64_t>& v = dir == 0 ? out_items[g] : in_items[g];
        if (v.empty()) continue;
        if (cut == 0) {
          const uint64_t sum = std::accumulate(v.begin(), v.end(), uint64_t{0});
          const uint64_t c = static_cast<uint64_t>(std::max(1, channels[g]));
          out.leaf_avg = std::max(out.leaf_avg, (sum + c - 1) / c);
        }
        const uint64_t b = MakespanLowerBound(&v, channels[g]);
        uint64_t& mine = cut == 0 ? out.leaf : out.level;
        mine = std::max(mine, b);
        if (b > out.value) {
          out.value = b;
          out.where = (cut == 0 ? "" : "level " + std::to_string(cut) + " group of ") +
                      f.name(f.switches()[g]) + (dir == 0 ? " up" : " down");
        }
      }
    }
  }
  return out;
}

}  // namespace sar
