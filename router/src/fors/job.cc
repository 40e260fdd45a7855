// Per-job FORS: the 2-level fat-tree as the fabric has it, the job's ring schedule, its
// destination entries, and the check of a schedule against tables.
#include <algorithm>
#include <array>
#include <string>

#include "sar/analysis/route_tracer.h"
#include "sar/fors/fors_job.h"

namespace sar {
namespace {

uint64_t Fnv1a(const void* data, size_t size, uint64_t h = 1469598103934665603ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// The conflict state of a job's spine choice: which (leaf, rank) entries use which spine, and how
// many clashes a spine would cause for one entry in the phases that use it.
class JobRouting {
 public:
  JobRouting(const Ft2Topology& topo, const std::vector<int>& leaf_of_rank,
             const std::vector<int>& first, const std::vector<int>& count, int ring)
      : topo_(topo),
        leaf_(leaf_of_rank),
        first_(first),
        count_(count),
        n_(static_cast<int>(leaf_of_rank.size())),
        ring_(ring),
        spine_(static_cast<size_t>(topo.num_leaves()) * leaf_of_rank.size(), -1),
        counted_(spine_.size(), 0),
        rechosen_up_(topo.up_port.size(), 0),
        rechosen_down_(topo.up_port.size(), 0) {}

  int16_t& spine(int leaf, int rank) { return spine_[static_cast<size_t>(leaf) * n_ + rank]; }
  std::vector<int16_t>& spines() { return spine_; }

  // Clashes entry (leaf, j) would have on spine c, over the phases in which it is used.
  int64_t Clashes(int leaf, int j, int c) {
    int64_t clashes = 0;
    const int d = leaf_[j];
    for (int i = first_[leaf]; i < first_[leaf] + count_[leaf]; ++i) {
      const int p = ((j - i) % ring_ + ring_) % ring_;
      for (int i2 = first_[leaf]; i2 < first_[leaf] + count_[leaf]; ++i2) {  // up at leaf
        const int j2 = (i2 + p) % ring_;
        if (i2 != i && j2 < n_ && leaf_[j2] != leaf && spine(leaf, j2) == c) ++clashes;
      }
      for (int j2 = first_[d]; j2 < first_[d] + count_[d]; ++j2) {  // down at d
        const int i2 = ((j2 - p) % ring_ + ring_) % ring_;
        if (j2 != j && i2 < n_ && leaf_[i2] != d && spine(leaf_[i2], j2) == c) ++clashes;
      }
    }
    return clashes;
  }

  // The spine with the fewest clashes among those working at both ends; ties go to the spine
  // fewest re-chosen entries of this source leaf and into this destination leaf use (so the
  // transfers that must move to extra phases spread over links and can share those phases),
  // then to the first from `preferred` on; -1 if none works.
  int Best(int leaf, int j, int preferred) {
    const int m0 = topo_.num_spines();
    int best = -1;
    int64_t best_score = 0;
    const int16_t old = spine(leaf, j);
    spine(leaf, j) = -1;
    for (int t = 0; t < m0; ++t) {
      const int c = (preferred + t) % m0;
      if (!topo_.works(leaf, c) || !topo_.works(leaf_[j], c)) continue;
      const int64_t score = Clashes(leaf, j, c) * (4 * static_cast<int64_t>(n_) + 4) +
                            rechosen_up_[static_cast<size_t>(leaf) * m0 + c] +
                            rechosen_down_[static_cast<size_t>(leaf_[j]) * m0 + c];
      if (best < 0 || score < best_score) {
        best = c;
        best_score = score;
        if (score == 0) break;
      }
    }
    spine(leaf, j) = old;
    return best;
  }

  // Sets a re-chosen entry, keeping the per-link counts Best breaks ties with.
  void Rechoose(int leaf, int j, int c) {
    const size_t m0 = topo_.spines.size();
    const int16_t old = spine(leaf, j);
    if (old >= 0 && counted_[static_cast<size_t>(leaf) * n_ + j]) {
      --rechosen_up_[leaf * m0 + old];
      --rechosen_down_[leaf_[j] * m0 + old];
    }
    spine(leaf, j) = static_cast<int16_t>(c);
    ++rechosen_up_[leaf * m0 + c];
    ++rechosen_down_[leaf_[j] * m0 + c];
    counted_[static_cast<size_t>(leaf) * n_ + j] = 1;
  }

 private:
  const Ft2Topology& topo_;
  const std::vector<int>& leaf_;
  const std::vector<int>& first_;
  const std::vector<int>& count_;
  int n_;
  int ring_;
  std::vector<int16_t> spine_;
  std::vector<uint8_t> counted_;  // entries whose spine was re-chosen (counted below)
  std::vector<int> rechosen_up_, rechosen_down_;  // [leaf * M0 + spine]
};

// Drops phases whose every transfer fits into another phase (its sender and receiver idle there,
// its two leaf-spine links unused in that direction). Sparsest phases first; a phase that cannot
// be emptied completely is left as it was. The ring's empty positions and the extra phases leave
// such room. Returns the number of phases dropped.
int64_t CompactPhases(int n, int num_leaves, int m0, const std::vector<int>& leaf_of_rank,
                      const std::vector<int16_t>& spine,
                      std::vector<std::vector<ForsJobTransfer>>* phases) {
  const size_t np = phases->size(), slots = static_cast<size_t>(num_leaves) * m0;
  const size_t width = 2 * static_cast<size_t>(n) + 2 * slots;
  std::vector<uint8_t> busy(np * width, 0);  // per phase: send[n], recv[n], up[slots], down[slots]
  // The cells a transfer occupies; intra-leaf transfers use no leaf-spine link.
  auto cells = [&](const ForsJobTransfer& t, size_t out[4]) {
    out[0] = t.src;
    out[1] = n + t.dst;
    const int ls = leaf_of_rank[t.src], ld = leaf_of_rank[t.dst];
    if (ls == ld) return 2;
    const int s = spine[static_cast<size_t>(ls) * n + t.dst];
    out[2] = 2 * static_cast<size_t>(n) + static_cast<size_t>(ls) * m0 + s;
    out[3] = 2 * static_cast<size_t>(n) + slots + static_cast<size_t>(ld) * m0 + s;
    return 4;
  };
  for (size_t p = 0; p < np; ++p) {
    for (const ForsJobTransfer& t : (*phases)[p]) {
      size_t c[4];
      const int k = cells(t, c);
      for (int i = 0; i < k; ++i) busy[p * width + c[i]] = 1;
    }
  }
  std::vector<size_t> order(np);
  for (size_t p = 0; p < np; ++p) order[p] = p;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return (*phases)[a].size() < (*phases)[b].size(); });
  std::vector<uint8_t> dropped(np, 0);
  int64_t count = 0;
  for (size_t q : order) {
    std::vector<std::pair<size_t, ForsJobTransfer>> placed;
    bool all = true;
    for (const ForsJobTransfer& t : (*phases)[q]) {
      size_t c[4];
      const int k = cells(t, c);
      size_t r = 0;
      for (; r < np; ++r) {
        if (r == q || dropped[r]) continue;
        bool free = true;
        for (int i = 0; i < k && free; ++i) free = !busy[r * width + c[i]];
        if (free) break;
      }
      if (r == np) {
        all = false;
        break;
      }
      for (int i = 0; i < k; ++i) busy[r * width + c[i]] = 1;
      placed.emplace_back(r, t);
    }
    if (!all) {
      for (const auto& [r, t] : placed) {
        size_t c[4];
        const int k = cells(t, c);
        for (int i = 0; i < k; ++i) busy[r * width + c[i]] = 0;
      }
      continue;
    }
    for (const auto& [r, t] : placed) (*phases)[r].push_back(t);
    dropped[q] = 1;
    ++count;
  }
  if (count > 0) {
    std::vector<std::vector<ForsJobTransfer>> kept;
    for (size_t p = 0; p < np; ++p) {
      if (!dropped[p]) kept.push_back(std::move((*phases)[p]));
    }
    phases->swap(kept);
  }
  return count;
}

}  // namespace

Status DetectFatTree2(const Fabric& fabric, Ft2Topology* out) {
  Ft2Topology t;
  const int ns = fabric.num_switches();
  t.leaf_of_switch.assign(ns, -1);
  std::vector<int> spine_of(ns, -1);
  for (int x = 0; x < ns; ++x) {
    const NodeId node = fabric.switches()[x];
    bool has_hca = false;
    for (int p = 1; p <= fabric.num_ports(node) && !has_hca; ++p) {
      const PortRef peer = fabric.peer({node, p});
      has_hca = peer.valid() && !fabric.is_switch(peer.node);
    }
    if (has_hca) {
      t.leaf_of_switch[x] = t.num_leaves();
      t.leaves.push_back(node);
    } else {
      spine_of[x] = t.num_spines();
      t.spines.push_back(node);
    }
  }
  if (t.spines.empty()) return Status::InvalidArgument("no switch without hosts (no spine)");
  if (t.spines.size() > 0x7fff) return Status::InvalidArgument("too many spines");
  const size_t nl = t.leaves.size(), nsp = t.spines.size();
  t.up_port.assign(nl * nsp, 0);
  t.down_port.assign(nl * nsp, 0);
  for (int x = 0; x < ns; ++x) {
    const NodeId node = fabric.switches()[x];
    for (int p = 1; p <= fabric.num_ports(node); ++p) {
      const PortRef peer = fabric.peer({node, p});
      if (!peer.valid() || !fabric.is_switch(peer.node)) continue;
      const int y = fabric.switch_index(peer.node);
      const int lx = t.leaf_of_switch[x], ly = t.leaf_of_switch[y];
      if ((lx >= 0) == (ly >= 0)) {
        return Status::InvalidArgument(std::string(lx >= 0 ? "leaf" : "spine") + " switches " +
                                       fabric.name(node) + " and " + fabric.name(peer.node) +
                                       " are cabled to each other");
      }
      uint8_t& slot = lx >= 0 ? t.up_port[static_cast<size_t>(lx) * nsp + spine_of[y]]
                              : t.down_port[static_cast<size_t>(spine_of[x]) * nl + ly];
      if (slot == 0) slot = static_cast<uint8_t>(p);
    }
  }
  for (size_t l = 0; l < nl; ++l) {
    if (std::all_of(t.up_port.begin() + l * nsp, t.up_port.begin() + (l + 1) * nsp,
                    [](uint8_t p) { return p == 0; })) {
      return Status::InvalidArgument("leaf " + fabric.name(t.leaves[l]) + " has no spine cable");
    }
  }
  *out = std::move(t);
  return Status::OK();
}

namespace {

// The plan with preferred spines usable[(offset + j mod M') mod |usable|] (all spines, or those
// working at every leaf of the job).
Status PlanOnSpines(const Fabric& fabric, const Ft2Topology& topo, const ResolvedJob& job,
                    int spine_offset, const std::vector<int>& usable, ForsJobPlan* out) {
  const int m0 = topo.num_spines();
  const int mu = static_cast<int>(usable.size());
  struct Host {
    int leaf, port;
    PortRef ref;
  };
  std::vector<Host> hosts;
  for (const PortRef& ep : job.endpoints) {
    const PortRef sw = fabric.peer(ep);
    const int leaf = sw.valid() && fabric.is_switch(sw.node)
                         ? topo.leaf_of_switch[fabric.switch_index(sw.node)]
                         : -1;
    if (leaf < 0) {
      return Status::InvalidArgument("job " + job.id + ": host " + fabric.name(ep.node) +
                                     " is not cabled to a leaf switch");
    }
    hosts.push_back({leaf, sw.port, ep});
  }
  std::sort(hosts.begin(), hosts.end(), [](const Host& a, const Host& b) {
    return a.leaf != b.leaf ? a.leaf < b.leaf : a.port < b.port;
  });
  const int n = static_cast<int>(hosts.size());
  ForsJobPlan plan;
  plan.job_id = job.id;
  std::vector<int> first(topo.num_leaves(), 0), count(topo.num_leaves(), 0), job_leaves;
  for (int r = 0; r < n; ++r) {
    plan.hosts.push_back(hosts[r].ref);
    plan.leaf_of_rank.push_back(hosts[r].leaf);
    if (count[hosts[r].leaf]++ == 0) {
      first[hosts[r].leaf] = r;
      job_leaves.push_back(hosts[r].leaf);
    }
  }
  int cmax = 0;
  for (int l : job_leaves) cmax = std::max(cmax, count[l]);

  // Lower bound: every rank sends n-1 times, one transfer per phase; a leaf's c(n-c) outgoing
  // (and as many incoming) transfers share its working uplinks, one each per phase.
  ForsJobStats& st = plan.stats;
  st.lower_bound = std::max(n - 1, 0);
  if (job_leaves.size() > 1) {
    for (int l : job_leaves) {
      int64_t up = 0;
      for (int s = 0; s < m0; ++s) up += topo.works(l, s);
      if (up == 0) return Status::Failed("job " + job.id + ": a leaf of the job has no uplink");
      const int64_t traffic = static_cast<int64_t>(count[l]) * (n - count[l]);
      st.lower_bound = std::max(st.lower_bound, (traffic + up - 1) / up);
    }
  }

  // Ring: N = M' ceil(n / M'), smallest over M' in [cmax, M0] (M' = n when n <= M0: no empty
  // position at all); ties go to the larger M' (more spines, same phases).
  int mp = std::min(std::max(cmax, 1), mu), ring = n;
  if (job_leaves.size() > 1) {
    ring = -1;
    for (int m = std::min(std::max(cmax, 1), mu); m <= mu; ++m) {
      const int r = m * ((n + m - 1) / m);
      if (ring < 0 || r <= ring) {
        ring = r;
        mp = m;
      }
    }
  }
  st.ring = std::max(ring, 1);
  st.spines_used = job_leaves.size() > 1 ? mp : 0;
  st.spine_offset = ((spine_offset % m0) + m0) % m0;

  JobRouting routing(topo, plan.leaf_of_rank, first, count, st.ring);
  std::vector<std::pair<int, int>> off_spine;  // (leaf, rank) entries whose spine failed
  if (job_leaves.size() > 1) {
    for (int l : job_leaves) {
      for (int j = 0; j < n; ++j) {
        if (plan.leaf_of_rank[j] == l) continue;
        const int pref = usable[(st.spine_offset + j % mp) % mu];
        if (topo.works(l, pref) && topo.works(plan.leaf_of_rank[j], pref)) {
          routing.spine(l, j) = static_cast<int16_t>(pref);
        } else {
          off_spine.emplace_back(l, j);
        }
      }
    }
  }
  // Greedy, then two rounds of re-choosing with everything else known.
  for (int round = 0; round < 3; ++round) {
    for (const auto& [l, j] : off_spine) {
      const int c = routing.Best(l, j, usable[(st.spine_offset + j % mp) % mu]);
      if (c < 0) {
        return Status::Failed("job " + job.id + ": leaves " + fabric.name(topo.leaves[l]) +
                              " and " + fabric.name(topo.leaves[plan.leaf_of_rank[j]]) +
                              " share no working spine");
      }
      routing.Rechoose(l, j, c);
    }
  }
  st.rerouted = static_cast<int64_t>(off_spine.size());

  // Phases, in shift order; a transfer whose link is taken in its phase is moved out.
  const size_t slots = static_cast<size_t>(topo.num_leaves()) * m0;
  std::vector<int> up(slots, -1), down(slots, -1);
  std::vector<ForsJobTransfer> moved;
  for (int p = 1; p < st.ring; ++p) {
    std::vector<ForsJobTransfer> phase;
    for (int i = 0; i < n; ++i) {
      const int j = (i + p) % st.ring;
      if (j >= n) continue;
      const int ls = plan.leaf_of_rank[i], ld = plan.leaf_of_rank[j];
      if (ls != ld) {
        const int s = routing.spine(ls, j);
        int& u = up[static_cast<size_t>(ls) * m0 + s];
        int& d = down[static_cast<size_t>(ld) * m0 + s];
        if (u == p || d == p) {
          moved.push_back({i, j});
          continue;
        }
        u = d = p;
      }
      phase.push_back({i, j});
    }
    if (!phase.empty()) plan.phases.push_back(std::move(phase));
  }
  // First fit into extra phases: one send and one receive per rank, one flow per link and
  // direction; an empty phase takes any transfer.
  struct Extra {
    std::vector<ForsJobTransfer> transfers;
    std::vector<uint8_t> sending, receiving, up, down;
  };
  std::vector<Extra> extra;
  for (const ForsJobTransfer& t : moved) {
    const int ls = plan.leaf_of_rank[t.src], ld = plan.leaf_of_rank[t.dst];
    const size_t u = static_cast<size_t>(ls) * m0 + routing.spine(ls, t.dst);
    const size_t d = static_cast<size_t>(ld) * m0 + routing.spine(ls, t.dst);
    size_t x = 0;
    while (x < extra.size() && (extra[x].sending[t.src] || extra[x].receiving[t.dst] ||
                                extra[x].up[u] || extra[x].down[d])) {
      ++x;
    }
    if (x == extra.size()) {
      extra.push_back({{},
                       std::vector<uint8_t>(n, 0),
                       std::vector<uint8_t>(n, 0),
                       std::vector<uint8_t>(slots, 0),
                       std::vector<uint8_t>(slots, 0)});
    }
    Extra& e = extra[x];
    e.sending[t.src] = e.receiving[t.dst] = e.up[u] = e.down[d] = 1;
    e.transfers.push_back(t);
  }
  st.moved = static_cast<int64_t>(moved.size());
  st.split_phases = static_cast<int64_t>(extra.size());
  for (Extra& e : extra) plan.phases.push_back(std::move(e.transfers));
  plan.spine = std::move(routing.spines());
  st.compacted =
      CompactPhases(n, topo.num_leaves(), m0, plan.leaf_of_rank, plan.spine, &plan.phases);
  st.phases = static_cast<int64_t>(plan.phases.size());
  *out = std::move(plan);
  return Status::OK();
}

}  // namespace

Status PlanForsJob(const Fabric& fabric, const Ft2Topology& topo, const ResolvedJob& job,
                   int spine_offset, ForsJobPlan* out, const std::vector<int>* spine_order) {
  const int m0 = topo.num_spines();
  std::vector<int> all(m0);
  for (int s = 0; s < m0; ++s) all[s] = s;
  if (spine_order != nullptr) {
    std::vector<int> sorted = *spine_order;
    std::sort(sorted.begin(), sorted.end());
    if (sorted != all) {
      return Status::InvalidArgument("job " + job.id + ": the spine order is not a permutation");
    }
    all = *spine_order;
  }
  ForsJobPlan plan;
  SAR_RETURN_IF_ERROR(PlanOnSpines(fabric, topo, job, spine_offset, all, &plan));
  // The spines that work at every leaf of the job: if they are at least as many as the most
  // ranks on one leaf, the intact-tree argument holds on them alone (no entry re-chosen, no
  // transfer moved). Taken when that needs no more phases than the plan over all spines.
  std::vector<uint8_t> job_leaf(topo.num_leaves(), 0);
  for (int l : plan.leaf_of_rank) job_leaf[l] = 1;
  std::vector<int> good;
  for (int s : all) {  // in the order's order
    bool ok = true;
    for (int l = 0; l < topo.num_leaves() && ok; ++l) ok = !job_leaf[l] || topo.works(l, s);
    if (ok) good.push_back(s);
  }
  int cmax = 0;
  for (int l = 0; l < topo.num_leaves(); ++l) {
    cmax = std::max(
        cmax, static_cast<int>(std::count(plan.leaf_of_rank.begin(), plan.leaf_of_rank.end(), l)));
  }
  if (plan.stats.rerouted > 0 && !good.empty() && static_cast<int>(good.size()) >= cmax) {
    ForsJobPlan on_good;
    SAR_RETURN_IF_ERROR(PlanOnSpines(fabric, topo, job, spine_offset, good, &on_good));
    if (on_good.stats.phases <= plan.stats.phases) plan = std::move(on_good);
  }
  *out = std::move(plan);
  return Status::OK();
}

void ForEachForsJobEntry(const Fabric& fabric, const Ft2Topology& topo, const ForsJobPlan& plan,
                         const std::function<void(int sw, Lid lid, uint8_t port)>& entry) {
  const int n = static_cast<int>(plan.hosts.size());
  const int nl = topo.num_leaves(), m0 = topo.num_spines();
  for (int j = 0; j < n; ++j) {
    const Lid lid = fabric.base_lid(plan.hosts[j]);
    if (lid == 0) continue;
    const int d = plan.leaf_of_rank[j];
    entry(fabric.switch_index(topo.leaves[d]), lid,
          static_cast<uint8_t>(fabric.peer(plan.hosts[j]).port));
    for (int l = 0; l < nl; ++l) {
      const int s = plan.spine[static_cast<size_t>(l) * n + j];
      if (s >= 0) {
        entry(fabric.switch_index(topo.leaves[l]), lid,
              topo.up_port[static_cast<size_t>(l) * m0 + s]);
      }
    }
    for (int s = 0; s < m0; ++s) {
      const uint8_t port = topo.down_port[static_cast<size_t>(s) * nl + d];
      if (port != 0) entry(fabric.switch_index(topo.spines[s]), lid, port);
    }
  }
}

void ApplyForsJobRoutes(const Fabric& fabric, const Ft2Topology& topo, const ForsJobPlan& plan,
                        LftSet* lfts) {
  ForEachForsJobEntry(fabric, topo, plan, [lfts](int sw, Lid lid, uint8_t port) {
    if (lid <= lfts->max_lid()) lfts->set_port(sw, lid, port);
  });
}

Status CheckForsJobOnTables(const Fabric& fabric, const LftSet& lfts,
                            const std::vector<PortRef>& hosts,
                            const std::vector<std::vector<ForsJobTransfer>>& phases) {
  SAR_RETURN_IF_ERROR(lfts.CheckFits(fabric));
  const RouteTracer tracer(fabric, lfts);
  const size_t n = hosts.size();
  std::vector<uint8_t> done(n * n, 0);
  std::vector<int64_t> used(fabric.num_port_slots(), -1);
  for (size_t p = 0; p < phases.size(); ++p) {
    for (const ForsJobTransfer& t : phases[p]) {
      const std::string what = "phase " + std::to_string(p) + ": rank " + std::to_string(t.src) +
                               " -> rank " + std::to_string(t.dst);
      if (t.src < 0 || t.dst < 0 || static_cast<size_t>(t.src) >= n ||
          static_cast<size_t>(t.dst) >= n || t.src == t.dst) {
        return Status::Failed(what + " is not a pair of distinct ranks");
      }
      uint8_t& seen = done[static_cast<size_t>(t.src) * n + t.dst];
      if (seen) return Status::Failed(what + " is scheduled a second time");
      seen = 1;
      const PortRef dst = hosts[t.dst];
      const Lid lid = fabric.base_lid(dst);
      RouteFate fate;
      const std::vector<PortId> path = tracer.Path(hosts[t.src], lid, &fate);
      if (fate != RouteFate::kDelivered || path.empty() ||
          fabric.peer_id(path.back()) != fabric.port_id(dst)) {
        return Status::Failed(what + " (lid " + std::to_string(lid) +
                              ") is not delivered to its host by the tables");
      }
      for (PortId c : path) {
        if (used[c] == static_cast<int64_t>(p)) {
          const PortRef r = fabric.port_ref(c);
          return Status::Failed(what + " shares the link leaving " + fabric.name(r.node) + "/" +
                                std::to_string(r.port) + " with another transfer of the phase");
        }
        used[c] = static_cast<int64_t>(p);
      }
    }
  }
  for (size_t s = 0; s < n; ++s) {
    for (size_t d = 0; d < n; ++d) {
      if (s != d && !done[s * n + d]) {
        return Status::Failed("rank " + std::to_string(s) + " -> rank " + std::to_string(d) +
                              " is never scheduled");
      }
    }
  }
  return Status::OK();
}

int ChooseSpineOffset(const std::string& job_id, int spines_used, int m0,
                      std::vector<int>* spine_load) {
  if (m0 <= 0) return 0;
  spine_load->resize(m0, 0);
  const int start = static_cast<int>(Fnv1a(job_id.data(), job_id.size()) % m0);
  int best = start;
  int64_t best_load = -1;
  for (int t = 0; t < m0; ++t) {
    const int off = (start + t) % m0;
    int64_t load = 0;
    for (int k = 0; k < spines_used; ++k) load += (*spine_load)[(off + k) % m0];
    if (best_load < 0 || load < best_load) {
      best = off;
      best_load = load;
    }
  }
  for (int k = 0; k < spines_used; ++k) ++(*spine_load)[(best + k) % m0];
  return best;
}

int64_t ForsChannelLoads::Max() const {
  int64_t m = 0;
  for (int64_t x : up) m = std::max(m, x);
  for (int64_t x : down) m = std::max(m, x);
  return m;
}

void ChargeForsJobLoads(const Ft2Topology& topo, const ForsJobPlan& plan, ForsChannelLoads* loads) {
  const size_t nl = topo.leaves.size(), m0 = topo.spines.size();
  loads->up.resize(nl * m0, 0);
  loads->down.resize(nl * m0, 0);
  const int n = static_cast<int>(plan.hosts.size());
  std::vector<int64_t> on_leaf(nl, 0);
  for (int l : plan.leaf_of_rank) ++on_leaf[l];
  // Entry (l, j): the job's on_leaf[l] sources on leaf l reach rank j through that spine.
  for (size_t l = 0; l < nl; ++l) {
    for (int j = 0; j < n; ++j) {
      const int s = plan.spine[l * n + j];
      if (s < 0) continue;
      loads->up[l * m0 + s] += on_leaf[l];
      loads->down[static_cast<size_t>(s) * nl + plan.leaf_of_rank[j]] += on_leaf[l];
    }
  }
}

namespace {

// The largest channel load of `charged` plus `plan`'s routes.
int64_t MaxWith(const Ft2Topology& topo, const ForsChannelLoads& charged, const ForsJobPlan& plan) {
  ForsChannelLoads sum = charged;
  ChargeForsJobLoads(topo, plan, &sum);
  return sum.Max();
}

// The greedy spine order of PlanForsJobJointly for a job whose offset-0 plan is `plan0`.
std::vector<int> JointSpineOrder(const Ft2Topology& topo, const ForsJobPlan& plan0, int start,
                                 const ForsChannelLoads& loads,
                                 const std::vector<int>& spine_load) {
  const int m0 = topo.num_spines(), nl = topo.num_leaves();
  const int n = static_cast<int>(plan0.hosts.size());
  const int mp = std::max(plan0.stats.spines_used, 1);
  std::vector<int64_t> on_leaf(nl, 0);
  for (int l : plan0.leaf_of_rank) ++on_leaf[l];
  // A class's routes per leaf: up_w[r * nl + l] through leaf l's uplink, down_w[r * nl + d]
  // into leaf d, whichever spine the class gets; broken[r * m0 + s]: its entries that spine s
  // cannot carry (a failed cable at either end).
  std::vector<int64_t> up_w(static_cast<size_t>(mp) * nl, 0), down_w(up_w.size(), 0);
  std::vector<int64_t> broken(static_cast<size_t>(mp) * m0, 0), weight(mp, 0);
  for (int j = 0; j < n; ++j) {
    const int r = j % mp, d = plan0.leaf_of_rank[j];
    for (int l = 0; l < nl; ++l) {
      if (l == d || on_leaf[l] == 0) continue;
      up_w[static_cast<size_t>(r) * nl + l] += on_leaf[l];
      down_w[static_cast<size_t>(r) * nl + d] += on_leaf[l];
      weight[r] += on_leaf[l];
      for (int s = 0; s < m0; ++s) {
        broken[static_cast<size_t>(r) * m0 + s] += !topo.works(l, s) || !topo.works(d, s);
      }
    }
  }
  std::vector<int> classes(mp);
  for (int r = 0; r < mp; ++r) classes[r] = r;
  std::stable_sort(classes.begin(), classes.end(),
                   [&](int a, int b) { return weight[a] > weight[b]; });
  ForsChannelLoads now = loads;  // charged plus the classes placed so far
  std::vector<int> spine_of(mp, -1);
  std::vector<uint8_t> taken(m0, 0);
  for (int r : classes) {
    int best = -1;
    std::array<int64_t, 5> best_key{};
    for (int s = 0; s < m0; ++s) {
      if (taken[s]) continue;
      int64_t peak = 0, overlap = 0;
      for (int l = 0; l < nl; ++l) {
        const int64_t u = up_w[static_cast<size_t>(r) * nl + l];
        const int64_t w = down_w[static_cast<size_t>(r) * nl + l];
        const size_t ui = static_cast<size_t>(l) * m0 + s, di = static_cast<size_t>(s) * nl + l;
        if (u > 0) {
          peak = std::max(peak, now.up[ui] + u);
          overlap += now.up[ui] * u;
        }
        if (w > 0) {
          peak = std::max(peak, now.down[di] + w);
          overlap += now.down[di] * w;
        }
      }
      const std::array<int64_t, 5> key{broken[static_cast<size_t>(r) * m0 + s], peak, overlap,
                                       s < static_cast<int>(spine_load.size()) ? spine_load[s] : 0,
                                       ((s - start - r) % m0 + 2 * m0) % m0};
      if (best < 0 || key < best_key) {
        best = s;
        best_key = key;
      }
    }
    spine_of[r] = best;
    taken[best] = 1;
    for (int l = 0; l < nl; ++l) {
      now.up[static_cast<size_t>(l) * m0 + best] += up_w[static_cast<size_t>(r) * nl + l];
      now.down[static_cast<size_t>(best) * nl + l] += down_w[static_cast<size_t>(r) * nl + l];
    }
  }
  std::vector<int> order = spine_of;
  for (int t = 0; t < m0; ++t) {
    const int s = (start + t) % m0;
    if (!taken[s]) order.push_back(s);
  }
  return order;
}

}  // namespace

Status PlanForsJobJointly(const Fabric& fabric, const Ft2Topology& topo, const ResolvedJob& job,
                          ForsChannelLoads* loads, std::vector<int>* spine_load, ForsJobPlan* out) {
  const int m0 = topo.num_spines();
  loads->up.resize(topo.up_port.size(), 0);
  loads->down.resize(topo.up_port.size(), 0);
  ForsJobPlan plan0;
  SAR_RETURN_IF_ERROR(PlanForsJob(fabric, topo, job, 0, &plan0));
  const std::vector<int> load_before = *spine_load;
  const int offset = ChooseSpineOffset(job.id, plan0.stats.spines_used, m0, spine_load);
  ForsJobPlan by_offset;
  if (offset == 0) {
    by_offset = std::move(plan0);
  } else {
    SAR_RETURN_IF_ERROR(PlanForsJob(fabric, topo, job, offset, &by_offset));
  }
  const bool first = loads->Max() == 0;
  if (!first && by_offset.stats.spines_used > 0) {
    const int start = static_cast<int>(Fnv1a(job.id.data(), job.id.size()) % m0);
    const std::vector<int> order = JointSpineOrder(topo, by_offset, start, *loads, load_before);
    ForsJobPlan joint;
    SAR_RETURN_IF_ERROR(PlanForsJob(fabric, topo, job, 0, &joint, &order));
    if (MaxWith(topo, *loads, joint) < MaxWith(topo, *loads, by_offset)) {
      joint.stats.spine_offset = order[0];
      joint.stats.spines_permuted = true;
      *spine_load = load_before;
      spine_load->resize(m0, 0);
      for (int k = 0; k < joint.stats.spines_used; ++k) ++(*spine_load)[order[k]];
      by_offset = std::move(joint);
    }
  }
  ChargeForsJobLoads(topo, by_offset, loads);
  *out = std::move(by_offset);
  return Status::OK();
}

uint64_t ForsScheduleGenerationOf(const ForsJobPlan& plan, const std::string& rows) {
  const uint64_t h = Fnv1a(rows.data(), rows.size());
  return Fnv1a(plan.spine.data(), plan.spine.size() * sizeof(int16_t), h);
}

}  // namespace sar
