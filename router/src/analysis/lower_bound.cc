#include "sar/analysis/lower_bound.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>

namespace sar {
namespace {

// `count` indivisible items of one weight, from the sources on switch `src` to destination ports
// on switch `dst_sw`. All-to-all traffic gives every port of a switch the same items, so they are
// kept once with a count, never one per port. A count of -1 takes back one item of a batch (see
// Items); once a cut's items are merged by weight no count is negative.
struct Item {
  int dst_sw;
  int src;
  uint64_t weight;
  int64_t count;
};

// Items of equal weight: MakespanLowerBound's input in run-length form, largest weight first.
struct Run {
  uint64_t weight;
  uint64_t count;  // > 0
};

int Find(std::vector<int>* parent, int x) {
  while ((*parent)[x] != x) x = (*parent)[x] = (*parent)[(*parent)[x]];
  return x;
}

// The run holding a 1-based position of the items sorted largest first, and the items and
// total weight of the runs before it. Only moves forward.
struct Cursor {
  size_t run = 0;
  uint64_t before = 0;
  uint64_t before_sum = 0;

  void Seek(const std::vector<Run>& runs, uint64_t pos) {
    while (before + runs[run].count < pos) {
      before += runs[run].count;
      before_sum += runs[run].count * runs[run].weight;
      ++run;
    }
  }
  uint64_t End(const std::vector<Run>& runs) const { return before + runs[run].count; }
  // The sum of the `pos` largest items (pos inside this run).
  uint64_t Prefix(const std::vector<Run>& runs, uint64_t pos) const {
    return before_sum + (pos - before) * runs[run].weight;
  }
};

// The one copy of the makespan rule (the header's MakespanLowerBound), on runs.
//   max(ceil(sum / c), max over k of prefix(k*c+1) - prefix(k*c-k))
// While positions k*c+1 and k*c-k stay in the same two runs, the difference is linear in k, so
// only the first and last k of each such stretch are evaluated: O(runs) steps, not O(items).
// Sums are mod 2^64 like a plain prefix-sum array; if the total wraps, linearity fails and
// every k is evaluated (no real item set comes near 2^64).
uint64_t RunsLowerBound(const std::vector<Run>& runs, int channels) {
  if (channels < 1 || runs.empty()) return 0;
  const uint64_t c = static_cast<uint64_t>(channels);
  uint64_t total = 0, sum = 0;
  bool exact = true;
  for (const Run& r : runs) {
    uint64_t part;
    exact &= !__builtin_mul_overflow(r.count, r.weight, &part);
    exact &= !__builtin_add_overflow(sum, part, &sum);
    total += r.count;
  }
  uint64_t bound = (sum + c - 1) / c;
  const uint64_t last_k = (total - 1) / c;  // the largest k with k*c+1 <= total
  Cursor a, b;                              // at k*c+1 and at k*c-k (when > 0)
  auto diff = [&](uint64_t k) {
    const uint64_t lo = k * (c - 1);
    return a.Prefix(runs, k * c + 1) - (lo == 0 ? 0 : b.Prefix(runs, lo));
  };
  for (uint64_t k = 0; k <= last_k;) {
    a.Seek(runs, k * c + 1);
    const uint64_t lo = k * (c - 1);
    if (lo > 0) b.Seek(runs, lo);
    uint64_t k_end = std::min(last_k, (a.End(runs) - 1) / c);
    if (c > 1) k_end = std::min(k_end, lo == 0 ? k : b.End(runs) / (c - 1));
    if (!exact) k_end = k;
    bound = std::max(bound, diff(k));
    if (k_end > k) bound = std::max(bound, diff(k_end));
    k = k_end + 1;
  }
  return bound;
}

// The items of `jobs` (argument in the header). A destination port used by one job only gets the
// job's per-switch source counts, less its own node's other ports (the metric skips d's node):
// the ports used once on one switch are one batch, and a node with ports on several switches
// takes back the batch item for each of its other switches (count -1) and adds the corrected
// one. A port used by several jobs (or twice by one) sums its routes over them into one item per
// source switch, so it is accumulated alone.
std::vector<Item> Items(const Fabric& f, const std::vector<ResolvedJob>& jobs) {
  const int num_sw = f.num_switches();
  auto switch_of = [&f](const PortRef& e) {
    const PortRef peer = f.peer(e);
    return peer.valid() && f.is_switch(peer.node) ? f.switch_index(peer.node) : -1;
  };
  std::vector<uint32_t> uses(f.num_port_slots(), 0);  // over all jobs that count
  for (const ResolvedJob& job : jobs) {
    if (job.num_leaf_switches < 2) continue;
    for (const PortRef& e : job.endpoints) {
      if (switch_of(e) >= 0) ++uses[f.port_id(e)];
    }
  }
  std::vector<Item> items;
  std::vector<uint64_t> count(num_sw, 0);  // the job's ports per switch
  std::vector<int64_t> batch(num_sw, 0);   // the job's ports used once, per switch
  std::vector<uint64_t> own(num_sw, 0);    // scratch: one node's uses per switch
  std::vector<int> touched;
  std::vector<int> node_job(f.num_nodes(), -1), node_uses(f.num_nodes(), 0);
  std::vector<size_t> node_first(f.num_nodes(), 0);
  std::vector<std::pair<NodeId, int>> spread;  // (node, switch) per use of nodes used twice+
  struct Shared {
    PortId port;
    int src;
    uint64_t weight;
  };
  std::vector<Shared> shared;
  for (size_t j = 0; j < jobs.size(); ++j) {
    const ResolvedJob& job = jobs[j];
    if (job.num_leaf_switches < 2) continue;
    touched.clear();
    spread.clear();
    for (const PortRef& e : job.endpoints) {
      const int s = switch_of(e);
      if (s < 0) continue;
      if (count[s]++ == 0) touched.push_back(s);
      if (uses[f.port_id(e)] == 1) ++batch[s];
      if (node_job[e.node] != static_cast<int>(j)) {
        node_job[e.node] = static_cast<int>(j);
        node_uses[e.node] = 0;
      }
      ++node_uses[e.node];
    }
    for (const PortRef& e : job.endpoints) {
      const int s = switch_of(e);
      if (s >= 0 && node_uses[e.node] > 1) spread.emplace_back(e.node, s);
    }
    std::sort(spread.begin(), spread.end());
    for (size_t i = 0; i < spread.size(); ++i) {
      if (i == 0 || spread[i].first != spread[i - 1].first) node_first[spread[i].first] = i;
    }
    // Sized ahead: the all-endpoints job alone lists leaves^2 items (~10^5 at 10k hosts), and
    // growing by doubling copies and first-touches them twice over.
    const size_t need = items.size() + touched.size() * touched.size();
    if (need > items.capacity()) items.reserve(std::max(need, 2 * items.capacity()));
    for (int t : touched) {
      if (batch[t] == 0) continue;
      for (int s : touched) {
        if (s != t) items.push_back({t, s, count[s], batch[t]});
      }
    }
    for (const PortRef& e : job.endpoints) {
      const int t = switch_of(e);
      if (t < 0) continue;
      const PortId port = f.port_id(e);
      const int n = node_uses[e.node];
      const size_t first = n > 1 ? node_first[e.node] : 0;
      if (uses[port] == 1) {
        if (n == 1) continue;
        for (size_t i = first; i < first + n;) {
          const int u = spread[i].second;
          uint64_t mine = 0;
          for (; i < first + n && spread[i].second == u; ++i) ++mine;
          if (u == t) continue;
          items.push_back({t, u, count[u], -1});
          if (count[u] > mine) items.push_back({t, u, count[u] - mine, 1});
        }
      } else {
        if (n == 1) {
          own[t] = 1;
        } else {
          for (size_t i = first; i < first + n; ++i) ++own[spread[i].second];
        }
        for (int s : touched) {
          if (count[s] > own[s]) shared.push_back({port, s, count[s] - own[s]});
        }
        own[t] = 0;
        for (size_t i = first; i < first + (n > 1 ? n : 0); ++i) own[spread[i].second] = 0;
      }
    }
    for (int s : touched) count[s] = 0, batch[s] = 0;
  }
  std::sort(shared.begin(), shared.end(), [](const Shared& a, const Shared& b) {
    return a.port != b.port ? a.port < b.port : a.src < b.src;
  });
  for (size_t i = 0; i < shared.size();) {
    const Shared& first = shared[i];
    const int dst_sw = switch_of(f.port_ref(first.port));
    uint64_t w = 0;
    for (; i < shared.size() && shared[i].port == first.port && shared[i].src == first.src; ++i) {
      w += shared[i].weight;
    }
    if (first.src != dst_sw) items.push_back({dst_sw, first.src, w, 1});
  }
  return items;
}

// Items count pairs on distinct nodes. A job with hosts of several HCA ports counts only some
// of those (ResolvedJob::Sends): it becomes one job per rail group, each pair in one group
// (JobTrafficGroups, each_pair_once), on distinct hosts within a group, so distinct nodes there
// means distinct hosts. The rail-aligned pairs are a subset of both JobHcaPairs modes' pairs, so
// the bound stays a bound for kAll (weaker than it could be).
std::vector<ResolvedJob> RailGroupJobs(const Fabric& f, const std::vector<ResolvedJob>& jobs) {
  std::vector<ResolvedJob> out;
  for (const ResolvedJob& job : jobs) {
    if (job.host_of.empty() || job.num_leaf_switches < 2) {
      out.push_back(job);
      continue;
    }
    ResolvedJob rails = job;
    rails.hca_pairs = JobHcaPairs::kRails;
    for (const std::vector<int>& group : JobTrafficGroups(f, rails, true)) {
      ResolvedJob sub;
      sub.id = job.id;
      for (int i : group) sub.endpoints.push_back(job.endpoints[i]);
      sub.num_leaf_switches = JobLeafSpan(f, sub);
      out.push_back(std::move(sub));
    }
  }
  return out;
}

}  // namespace

uint64_t MakespanLowerBound(std::vector<uint64_t>* items, int channels) {
  if (channels < 1 || items->empty()) return 0;
  std::vector<uint64_t>& p = *items;
  std::sort(p.begin(), p.end(), std::greater<>());
  std::vector<Run> runs;
  for (uint64_t w : p) {
    if (runs.empty() || runs.back().weight != w) runs.push_back({w, 0});
    ++runs.back().count;
  }
  return RunsLowerBound(runs, channels);
}

double BoundGap(uint64_t value, uint64_t bound) {
  if (bound == 0) return value == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return static_cast<double>(value) / static_cast<double>(bound) - 1.0;
}

EffectiveEfiBound EffectiveEfiLowerBound(const Fabric& f, const std::vector<ResolvedJob>& jobs) {
  EffectiveEfiBound out;
  const int num_sw = f.num_switches();
  if (num_sw == 0) return out;
  std::vector<Item> items = Items(f, RailGroupJobs(f, jobs));
  if (items.empty()) return out;
  // Largest weight first: bucketed in this order, every group's items come out sorted.
  std::sort(items.begin(), items.end(),
            [](const Item& a, const Item& b) { return a.weight > b.weight; });

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
  // A group is named by its union-find root, so the unions keep their order (`where`).
  std::vector<int> parent(num_sw), group(num_sw);
  std::vector<int> channels(num_sw);
  // Per direction, the items leaving (0) or entering (1) each group: weight and count, bucketed
  // by group (start[g] .. start[g + 1]) in the items' order.
  std::vector<size_t> start[2] = {std::vector<size_t>(num_sw + 1), std::vector<size_t>(num_sw + 1)};
  std::vector<std::pair<uint64_t, int64_t>> bucket[2];
  std::vector<Run> runs;
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
    for (int s = 0; s < num_sw; ++s) group[s] = Find(&parent, s);
    std::fill(channels.begin(), channels.end(), 0);
    for (const auto& [a, b] : arcs) channels[group[a]] += group[a] != group[b];
    for (int dir = 0; dir < 2; ++dir) std::fill(start[dir].begin(), start[dir].end(), 0);
    for (const Item& it : items) {
      const int from = group[it.src], to = group[it.dst_sw];
      if (from == to) continue;
      ++start[0][from + 1];
      ++start[1][to + 1];
    }
    for (int dir = 0; dir < 2; ++dir) {
      std::partial_sum(start[dir].begin(), start[dir].end(), start[dir].begin());
      bucket[dir].resize(start[dir][num_sw]);
    }
    std::vector<size_t> fill[2] = {start[0], start[1]};
    for (const Item& it : items) {
      const int from = group[it.src], to = group[it.dst_sw];
      if (from == to) continue;
      bucket[0][fill[0][from]++] = {it.weight, it.count};
      bucket[1][fill[1][to]++] = {it.weight, it.count};
    }
    for (int g = 0; g < num_sw; ++g) {
      for (int dir = 0; dir < 2; ++dir) {
        // Equal weights are adjacent: merge them, dropping those a batch took back entirely.
        // Counts add mod 2^64; the merged count of a weight is never negative.
        runs.clear();
        uint64_t sum = 0;
        for (size_t i = start[dir][g]; i < start[dir][g + 1]; ++i) {
          const auto& [w, n] = bucket[dir][i];
          if (runs.empty() || runs.back().weight != w) {
            if (!runs.empty() && runs.back().count == 0) runs.pop_back();
            runs.push_back({w, 0});
          }
          runs.back().count += static_cast<uint64_t>(n);
          sum += static_cast<uint64_t>(n) * w;
        }
        if (!runs.empty() && runs.back().count == 0) runs.pop_back();
        if (runs.empty()) continue;
        if (cut == 0) {
          const uint64_t c = static_cast<uint64_t>(std::max(1, channels[g]));
          out.leaf_avg = std::max(out.leaf_avg, (sum + c - 1) / c);
        }
        const uint64_t b = RunsLowerBound(runs, channels[g]);
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
