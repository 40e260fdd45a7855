#include "engines/dmodc_core.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "analysis/trace_parallel.h"

namespace sar::internal {
namespace {

// Ranks above this would let an up-down cost (at most twice the top rank) reach the byte's
// "infinite"; no fat-tree comes near it.
constexpr int kMaxRank = 120;
constexpr uint64_t kDividerCap = kDmodcDividerCap;

// dst[l] = min(dst[l], src[l] + 1), "infinite" (0xFF) staying infinite: a saturating add. This
// loop is most of the preprocessing, so it is written with SSE2 (baseline on x86-64; GCC's -O2
// does not vectorise it).
void PullMin(uint8_t* __restrict dst, const uint8_t* __restrict src, int n) {
  int l = 0;
#if defined(__SSE2__)
  const __m128i one = _mm_set1_epi8(1);
  for (; l + 16 <= n; l += 16) {
    const __m128i s =
        _mm_adds_epu8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + l)), one);
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(dst + l));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + l), _mm_min_epu8(d, s));
  }
#endif
  for (; l < n; ++l) {
    const uint8_t v = src[l];
    const uint8_t inc = static_cast<uint8_t>(v + (v < kDmodcInf ? 1 : 0));
    dst[l] = dst[l] < inc ? dst[l] : inc;
  }
}

}  // namespace

void DmodcPullMin(uint8_t* dst, const uint8_t* src, int n) { PullMin(dst, src, n); }

void SwitchesByRank(const DmodcPlan& p, std::vector<int>* begin, std::vector<int>* order) {
  begin->assign(p.max_rank + 2, 0);
  for (int s = 0; s < p.num_switches; ++s) {
    if (p.rank[s] >= 0) ++(*begin)[p.rank[s] + 1];
  }
  for (int r = 0; r <= p.max_rank; ++r) (*begin)[r + 1] += (*begin)[r];
  order->resize((*begin)[p.max_rank + 1]);
  std::vector<int> fill(begin->begin(), begin->end() - 1);
  for (int s = 0; s < p.num_switches; ++s) {
    if (p.rank[s] >= 0) (*order)[fill[p.rank[s]]++] = s;
  }
}

Status BuildDmodcGroups(const SwitchGraph& g, DmodcPlan* p) {
  const int n = g.num_switches;
  p->num_switches = n;

  // Leaves by GUID (Sec. 3.1 sorts by GUID; the node index d counts leaves in this order).
  p->leaves.clear();
  for (int s = 0; s < n; ++s) {
    if (g.hcas_on_switch[s] > 0) p->leaves.push_back(s);
  }
  std::sort(p->leaves.begin(), p->leaves.end(), [&](int a, int b) {
    return g.switch_guid[a] != g.switch_guid[b] ? g.switch_guid[a] < g.switch_guid[b] : a < b;
  });
  const int L = static_cast<int>(p->leaves.size());
  p->num_leaves = L;
  p->leaf_index.assign(n, -1);
  for (int l = 0; l < L; ++l) p->leaf_index[p->leaves[l]] = l;

  // Ranks: breadth-first from all leaves at once.
  p->rank.assign(n, -1);
  std::vector<int> queue(p->leaves.begin(), p->leaves.end());
  for (int s : queue) p->rank[s] = 0;
  for (size_t head = 0; head < queue.size(); ++head) {
    const int s = queue[head];
    for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
      const int u = g.arc_to[a];
      if (p->rank[u] >= 0) continue;
      p->rank[u] = p->rank[s] + 1;
      queue.push_back(u);
    }
  }
  p->max_rank = 0;
  for (int s = 0; s < n; ++s) p->max_rank = std::max(p->max_rank, p->rank[s]);
  if (p->max_rank > kMaxRank) {
    return Status::Failed("dmodc: the fabric is " + std::to_string(p->max_rank) +
                          " switch levels deep; at most " + std::to_string(kMaxRank) +
                          " are supported (is it a fat-tree?)");
  }

  // Port groups, ordered by the neighbour's GUID, ports ascending inside.
  p->group_begin.assign(n + 1, 0);
  p->group_to.clear();
  p->group_dir.clear();
  p->group_port_begin.clear();
  p->group_ports.clear();
  p->num_up_groups.assign(n, 0);
  std::vector<int> arcs;
  for (int s = 0; s < n; ++s) {
    p->group_begin[s] = static_cast<int>(p->group_to.size());
    arcs.resize(g.degree(s));
    std::iota(arcs.begin(), arcs.end(), g.arc_begin[s]);
    std::sort(arcs.begin(), arcs.end(), [&](int a, int b) {
      const Guid ga = g.switch_guid[g.arc_to[a]], gb = g.switch_guid[g.arc_to[b]];
      if (ga != gb) return ga < gb;
      if (g.arc_to[a] != g.arc_to[b]) return g.arc_to[a] < g.arc_to[b];
      return g.arc_port[a] < g.arc_port[b];
    });
    for (size_t i = 0; i < arcs.size(); ++i) {
      const int u = g.arc_to[arcs[i]];
      if (i == 0 || u != g.arc_to[arcs[i - 1]]) {
        p->group_to.push_back(u);
        p->group_port_begin.push_back(static_cast<int>(p->group_ports.size()));
        int8_t dir = 0;
        if (p->rank[s] >= 0 && p->rank[u] > p->rank[s]) dir = 1;
        if (p->rank[s] >= 0 && p->rank[u] >= 0 && p->rank[u] < p->rank[s]) dir = -1;
        p->group_dir.push_back(dir);
        if (dir == 1) ++p->num_up_groups[s];
      }
      p->group_ports.push_back(g.arc_port[arcs[i]]);
    }
  }
  p->group_begin[n] = static_cast<int>(p->group_to.size());
  p->group_port_begin.push_back(static_cast<int>(p->group_ports.size()));
  return Status::OK();
}

Status BuildDmodcPlan(const SwitchGraph& g, int threads, DmodcPlan* p) {
  SAR_RETURN_IF_ERROR(BuildDmodcGroups(g, p));
  const int n = p->num_switches, L = p->num_leaves;
  std::vector<int> rank_begin, queue;
  SwitchesByRank(*p, &rank_begin, &queue);

  const size_t cells = static_cast<size_t>(n) * L;
  p->cost.assign(cells, kDmodcInf);
  p->divider.assign(n, 1);
  for (int l = 0; l < L; ++l) p->cost[static_cast<size_t>(p->leaves[l]) * L + l] = 0;

  // Ascending pass: a switch pulls from its down neighbours (all one rank lower, already
  // final) the down-only costs and the largest divider. One sweep per rank; a worker writes
  // only the rows of the switches it was given.
  for (int r = 1; r <= p->max_rank; ++r) {
    const int begin = rank_begin[r], count = rank_begin[r + 1] - begin;
    ParallelFor(WorkerCount(threads, count, 8), count, 8, [&](int, size_t i) {
      const int u = queue[begin + i];
      uint8_t* row = p->cost.data() + static_cast<size_t>(u) * L;
      uint64_t divider = 1;
      for (int gi = p->group_begin[u]; gi < p->group_begin[u + 1]; ++gi) {
        if (p->group_dir[gi] != -1) continue;
        const int s = p->group_to[gi];
        PullMin(row, p->cost.data() + static_cast<size_t>(s) * L, L);
        divider = std::max(divider, std::min(kDividerCap, p->divider[s] * p->num_up_groups[s]));
      }
      p->divider[u] = divider;
    });
  }
  p->down_cost = p->cost;

  // Descending pass: a switch pulls from its up neighbours (one rank higher, already final)
  // the costs of going up first.
  for (int r = p->max_rank - 1; r >= 0; --r) {
    const int begin = rank_begin[r], count = rank_begin[r + 1] - begin;
    ParallelFor(WorkerCount(threads, count, 8), count, 8, [&](int, size_t i) {
      const int u = queue[begin + i];
      uint8_t* row = p->cost.data() + static_cast<size_t>(u) * L;
      for (int gi = p->group_begin[u]; gi < p->group_begin[u + 1]; ++gi) {
        if (p->group_dir[gi] != 1) continue;
        PullMin(row, p->cost.data() + static_cast<size_t>(p->group_to[gi]) * L, L);
      }
    });
  }
  return Status::OK();
}

Status CheckDmodcValidity(const Fabric& fabric, const SwitchGraph& g, const DmodcPlan& plan,
                          bool allow_disconnected, std::vector<std::string>* notes) {
  // Pairs without any cable path RoutingEngine::Route has already failed or noted.
  std::vector<int> part;
  SwitchComponents(g, &part);
  return CheckEndpointReach(
      fabric, g,
      [&](int s, int t) {
        return part[s] != part[t] || plan.c(s, plan.leaf_index[t]) != kDmodcInf;
      },
      allow_disconnected, "no up-down path", notes);
}

std::vector<uint32_t> DmodcNodeIndex(const SwitchGraph& g, const DmodcPlan& plan) {
  std::vector<int> on_leaf;
  on_leaf.reserve(g.num_endpoint_dests);
  for (int i = 0; i < g.num_endpoint_dests; ++i) {
    if (g.dests[i].sw >= 0) on_leaf.push_back(i);
  }
  std::sort(on_leaf.begin(), on_leaf.end(), [&](int a, int b) {
    const int la = plan.leaf_index[g.dests[a].sw], lb = plan.leaf_index[g.dests[b].sw];
    return la != lb ? la < lb : g.dests[a].sw_port < g.dests[b].sw_port;
  });
  int most = 0;
  for (int s : plan.leaves) most = std::max(most, g.hcas_on_switch[s]);
  std::vector<uint32_t> index(g.num_endpoint_dests, 0);
  for (size_t i = 0; i < on_leaf.size();) {
    const int l = plan.leaf_index[g.dests[on_leaf[i]].sw];
    for (uint32_t pos = 0; i < on_leaf.size() && plan.leaf_index[g.dests[on_leaf[i]].sw] == l;
         ++i, ++pos) {
      index[on_leaf[i]] = static_cast<uint32_t>(l) * static_cast<uint32_t>(most) + pos;
    }
  }
  return index;
}

namespace {

// Eqs. 3-4 on a selector x = floor(d / Pi_s) (+ LID offset): the group C[x mod #C], the port
// of that group at floor(x / #C) mod #g.
uint8_t PickPort(const DmodcPlan& p, const int* cand, int num_cand, uint32_t x) {
  const uint32_t nc = static_cast<uint32_t>(num_cand);
  const int group = cand[x % nc];
  const int pb = p.group_port_begin[group];
  const uint32_t size = static_cast<uint32_t>(p.group_port_begin[group + 1] - pb);
  return p.group_ports[pb + (x / nc) % size];
}

// Per-worker buffers of the table fill.
struct FillScratch {
  std::vector<uint8_t> count, last;  // per leaf: closer groups, the last one (index in switch)
  std::vector<int> up, cand;         // all up groups; the closer groups of one leaf
  std::vector<uint8_t> up_table;     // ports by x mod (#up * #g)
  std::vector<uint8_t> small_table;  // the same for one leaf's closer groups
  std::vector<uint8_t> bits;         // [plane * L + l]: bit j % 8 of plane j / 8 = group j closer
  int one = 0;
};

// Exact floor(a / d) and a mod d for 32-bit a with two multiplications (Lemire, Kaser and
// Kurz, "Faster remainder by direct computation", 2019): one switch divides every destination
// index by the same Pi, which plain division makes the slowest part of the fill.
class FastDivMod {
 public:
  explicit FastDivMod(uint64_t d)
      : d_(d > 0xFFFFFFFFu ? 0 : static_cast<uint32_t>(d)), m_(d_ > 1 ? UINT64_MAX / d_ + 1 : 0) {}
  uint32_t Div(uint32_t a) const {
    if (d_ == 1) return a;
    if (d_ == 0) return 0;  // a divider beyond 32 bits: every index is below it
    return static_cast<uint32_t>((static_cast<unsigned __int128>(m_) * a) >> 64);
  }
  uint32_t Mod(uint32_t a) const {
    if (d_ <= 1) return d_ == 0 ? a : 0;
    const uint64_t low = m_ * a;
    return static_cast<uint32_t>((static_cast<unsigned __int128>(low) * d_) >> 64);
  }

 private:
  uint32_t d_;
  uint64_t m_;
};

// For one group j of a switch: count[l] += 1 and last[l] = j where it leads closer to leaf l.
// Up groups compare costs (ru = c_u, mine = c_s) and count only where the switch cannot go
// down (ds = dc_s infinite); down groups compare down costs (ru = dc_u, mine = dc_s).
void MarkCloser(const uint8_t* __restrict ru, const uint8_t* __restrict mine,
                const uint8_t* __restrict ds, bool up, uint8_t j, int n, uint8_t* __restrict count,
                uint8_t* __restrict last, uint8_t* __restrict bits) {
  int l = 0;
  const uint8_t bit = static_cast<uint8_t>(1u << (j % 8));
#if defined(__SSE2__)
  const __m128i bitv = _mm_set1_epi8(static_cast<char>(bit));
  const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80));
  const __m128i inf = _mm_set1_epi8(static_cast<char>(kDmodcInf));
  const __m128i jv = _mm_set1_epi8(static_cast<char>(j));
  for (; l + 16 <= n; l += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ru + l));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(mine + l));
    __m128i cond = _mm_cmplt_epi8(_mm_xor_si128(a, flip), _mm_xor_si128(b, flip));  // a < b
    if (up) {
      const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(ds + l));
      cond = _mm_and_si128(cond, _mm_cmpeq_epi8(d, inf));
    }
    __m128i* cp = reinterpret_cast<__m128i*>(count + l);
    __m128i* lp = reinterpret_cast<__m128i*>(last + l);
    _mm_storeu_si128(cp, _mm_sub_epi8(_mm_loadu_si128(cp), cond));
    _mm_storeu_si128(
        lp, _mm_or_si128(_mm_and_si128(cond, jv), _mm_andnot_si128(cond, _mm_loadu_si128(lp))));
    __m128i* bp = reinterpret_cast<__m128i*>(bits + l);
    _mm_storeu_si128(bp, _mm_or_si128(_mm_loadu_si128(bp), _mm_and_si128(cond, bitv)));
  }
#endif
  for (; l < n; ++l) {
    if (ru[l] < mine[l] && (!up || ds[l] == kDmodcInf)) {
      ++count[l];
      last[l] = j;
      bits[l] |= bit;
    }
  }
}

// The route of one non-leaf switch LID from the switches that Eq. 1 towards its chosen leaf
// would not bring to it: the switches above it (down to it) and a chain below it (up to it).
void OverrideSwitchLid(const SwitchGraph& g, const DmodcPlan& p, int t, std::vector<int>* dist,
                       std::vector<int>* touched, std::vector<int>* cand, std::vector<int>* written,
                       LftSet* lfts) {
  if (written != nullptr) written->clear();
  const Lid lid = g.dests[g.num_endpoint_dests + t].base_lid;
  // Chain down from t along the first down group, each switch pointing back up.
  for (int x = t; p.rank[x] > 0;) {
    int next = -1;
    for (int gi = p.group_begin[x]; gi < p.group_begin[x + 1] && next < 0; ++gi) {
      if (p.group_dir[gi] == -1) next = p.group_to[gi];
    }
    for (int gi = p.group_begin[next]; gi < p.group_begin[next + 1]; ++gi) {
      if (p.group_to[gi] == x) {
        lfts->set_port(next, lid, p.group_ports[p.group_port_begin[gi]]);
        if (written != nullptr) written->push_back(next);
        break;
      }
    }
    x = next;
  }
  // Above t: breadth-first up; each ancestor goes down to one a step closer (Eqs. 3-4 on the
  // switch index among those).
  touched->clear();
  (*dist)[t] = 0;
  touched->push_back(t);
  for (size_t head = 0; head < touched->size(); ++head) {
    const int s = (*touched)[head];
    if (s != t) {
      cand->clear();
      for (int gi = p.group_begin[s]; gi < p.group_begin[s + 1]; ++gi) {
        if (p.group_dir[gi] == -1 && (*dist)[p.group_to[gi]] == (*dist)[s] - 1) {
          cand->push_back(gi);
        }
      }
      const uint32_t x = p.divider[s] > 0xFFFFFFFFu ? 0 : static_cast<uint32_t>(t / p.divider[s]);
      lfts->set_port(s, lid, PickPort(p, cand->data(), static_cast<int>(cand->size()), x));
      if (written != nullptr) written->push_back(s);
    }
    for (int gi = p.group_begin[s]; gi < p.group_begin[s + 1]; ++gi) {
      const int u = p.group_to[gi];
      if (p.group_dir[gi] != 1 || (*dist)[u] >= 0) continue;
      (*dist)[u] = (*dist)[s] + 1;
      touched->push_back(u);
    }
  }
  for (int s : *touched) (*dist)[s] = -1;
}

}  // namespace

void PrepareDmodcFill(const SwitchGraph& g, const DmodcPlan& p, const std::vector<uint32_t>& index,
                      const std::vector<uint64_t>& divider, int threads, DmodcFill* f) {
  const int n = g.num_switches, L = p.num_leaves;
  f->chain_leaf.assign(n, -1);
  for (int t = 0; t < n; ++t) {
    if (p.rank[t] < 0) continue;
    int x = t;
    while (p.rank[x] > 0) {
      for (int gi = p.group_begin[x]; gi < p.group_begin[x + 1]; ++gi) {
        if (p.group_dir[gi] == -1) {
          x = p.group_to[gi];
          break;
        }
      }
    }
    f->chain_leaf[t] = p.leaf_index[x];
  }
  f->via_begin.assign(L + 1, 0);
  auto leaf_of_dest = [&](int di) {
    const Destination& d = g.dests[di];
    if (d.sw < 0 || d.base_lid == 0) return -1;
    return d.is_switch ? f->chain_leaf[d.sw] : p.leaf_index[d.sw];
  };
  const int num_dests = static_cast<int>(g.dests.size());
  for (int di = 0; di < num_dests; ++di) {
    const int l = leaf_of_dest(di);
    if (l >= 0) ++f->via_begin[l + 1];
  }
  for (int l = 0; l < L; ++l) f->via_begin[l + 1] += f->via_begin[l];
  const size_t num_via = f->via_begin[L];
  f->via_index.resize(num_via);
  f->via_lid.resize(num_via);
  f->via_lids.resize(num_via);
  {
    std::vector<int> fill(f->via_begin.begin(), f->via_begin.end() - 1);
    for (int di = 0; di < num_dests; ++di) {
      const int l = leaf_of_dest(di);
      if (l < 0) continue;
      const int k = fill[l]++;
      const Destination& d = g.dests[di];
      f->via_index[k] = d.is_switch ? static_cast<uint32_t>(d.sw) : index[di];
      f->via_lid[k] = d.base_lid;
      f->via_lids[k] = static_cast<uint16_t>(d.num_lids);
    }
  }
  f->single_lid =
      std::all_of(f->via_lids.begin(), f->via_lids.end(), [](uint16_t k) { return k == 1; });

  // Where every up group leads closer (most pairs), the port depends only on
  // floor(d / Pi) mod P, P = #up groups * cables per group: those residues are computed once per
  // distinct (Pi, P) of the fabric (a few: one per level in a PGFT) and read by every switch.
  f->period.assign(n, 0);
  std::vector<std::pair<uint64_t, uint32_t>> keys;  // distinct (Pi, P)
  f->residue_of.assign(n, -1);
  constexpr size_t kMaxResidueArrays = 32;
  for (int s = 0; s < n; ++s) {
    int num_up = 0, size = -1;
    for (int gi = p.group_begin[s]; gi < p.group_begin[s + 1]; ++gi) {
      if (p.group_dir[gi] != 1) continue;
      const int gs = p.group_port_begin[gi + 1] - p.group_port_begin[gi];
      size = size < 0 || size == gs ? gs : 0;
      ++num_up;
    }
    if (num_up == 0 || size <= 0) continue;
    f->period[s] = static_cast<uint32_t>(num_up * size);
    const std::pair<uint64_t, uint32_t> key{divider[s], f->period[s]};
    auto it = std::find(keys.begin(), keys.end(), key);
    if (it == keys.end() && keys.size() < kMaxResidueArrays) it = keys.insert(keys.end(), key);
    if (it != keys.end()) f->residue_of[s] = static_cast<int>(it - keys.begin());
  }
  f->residues.assign(keys.size(), {});
  ParallelFor(WorkerCount(threads, keys.size(), 1), keys.size(), 1, [&](int, size_t r) {
    const FastDivMod by_pi(keys[r].first), by_p(keys[r].second);
    f->residues[r].resize(num_via);
    for (size_t k = 0; k < num_via; ++k) {
      f->residues[r][k] = static_cast<uint16_t>(by_p.Mod(by_pi.Div(f->via_index[k])));
    }
  });

  // Holes: a row without an infinite cost (nearly all) is skipped by one memchr.
  f->hole_begin.assign(L + 1, 0);
  f->holes.clear();
  std::vector<std::pair<int, int>> cells;  // (leaf, switch)
  for (int s = 0; s < n; ++s) {
    if (p.rank[s] <= 0) continue;
    const uint8_t* row = p.cost.data() + static_cast<size_t>(s) * L;
    for (const uint8_t* at = row;
         (at = static_cast<const uint8_t*>(std::memchr(at, kDmodcInf, row + L - at))) != nullptr;
         ++at) {
      cells.push_back({static_cast<int>(at - row), s});
    }
  }
  std::sort(cells.begin(), cells.end());
  f->holes.resize(cells.size());
  for (size_t k = 0; k < cells.size(); ++k) {
    ++f->hole_begin[cells[k].first + 1];
    f->holes[k] = cells[k].second;
  }
  for (int l = 0; l < L; ++l) f->hole_begin[l + 1] += f->hole_begin[l];

  f->upper.clear();
  for (int t = 0; t < n; ++t) {
    if (p.rank[t] > 0 && g.dests[g.num_endpoint_dests + t].base_lid != 0) f->upper.push_back(t);
  }
}

namespace {

// Eq. 1's candidate groups of switch s towards leaf l, the literal way (cand holds 256).
int CellCandidates(const DmodcPlan& p, int s, int l, int* cand) {
  if (p.rank[s] < 0 || p.leaves[l] == s) return 0;
  const bool down = p.dc(s, l) != kDmodcInf;
  int nc = 0;
  for (int gi = p.group_begin[s]; gi < p.group_begin[s + 1]; ++gi) {
    const int u = p.group_to[gi];
    if (p.group_dir[gi] == 1 ? !down && p.c(u, l) < p.c(s, l)
                             : p.group_dir[gi] == -1 && p.dc(u, l) < p.dc(s, l)) {
      cand[nc++] = gi;
    }
  }
  return nc;
}

uint32_t Selector(const std::vector<uint64_t>& divider, int s, uint32_t d) {
  return divider[s] > 0xFFFFFFFFu ? 0 : d / static_cast<uint32_t>(divider[s]);
}

}  // namespace

uint8_t DmodcEntry(const DmodcPlan& p, const std::vector<uint64_t>& divider, int s, int l,
                   uint32_t d, int i) {
  int cand[256];
  const int nc = CellCandidates(p, s, l, cand);
  if (nc == 0) return LftSet::kNoRoute;
  return PickPort(p, cand, nc, Selector(divider, s, d) + static_cast<uint32_t>(i));
}

void FillDmodcCells(const DmodcPlan& p, const DmodcFill& fill, const std::vector<uint64_t>& divider,
                    int s, const std::vector<int>& leaves, LftSet* lfts) {
  uint8_t* row = lfts->mutable_row(s);
  int cand[256];
  for (int l : leaves) {
    const int nc = CellCandidates(p, s, l, cand);
    for (int k = fill.via_begin[l]; k < fill.via_begin[l + 1]; ++k) {
      const Lid lid = fill.via_lid[k];
      if (nc == 0) {
        std::memset(row + lid, LftSet::kNoRoute, fill.via_lids[k]);
        continue;
      }
      const uint32_t x = Selector(divider, s, fill.via_index[k]);
      for (int i = 0; i < fill.via_lids[k]; ++i) row[lid + i] = PickPort(p, cand, nc, x + i);
    }
  }
}

void FillDmodcRows(const DmodcPlan& p, const DmodcFill& fill, const std::vector<uint64_t>& divider,
                   const std::vector<int>& rows, bool clear, int threads, LftSet* lfts) {
  const int L = p.num_leaves;
  const int workers = WorkerCount(threads, rows.size(), 4);
  std::vector<FillScratch> scratch(workers);
  const size_t row_size = static_cast<size_t>(lfts->max_lid()) + 1;
  ParallelFor(workers, rows.size(), 4, [&](int w, size_t ri) {
    // Raw pointers: the table stores are bytes, which may alias anything, so vector members
    // would be reloaded after every store.
    const int* vb = fill.via_begin.data();
    const Lid* vlid = fill.via_lid.data();
    const uint16_t* vn = fill.via_lids.data();
    const uint32_t* vidx = fill.via_index.data();
    const bool single_lid = fill.single_lid;
    const int s = rows[ri];
    uint8_t* row = lfts->mutable_row(s);
    if (clear) std::memset(row, LftSet::kNoRoute, row_size);
    if (p.rank[s] < 0) return;
    FillScratch& f = scratch[w];
    const size_t base = static_cast<size_t>(s) * L;
    const uint8_t* cs = p.cost.data() + base;
    const uint8_t* ds = p.down_cost.data() + base;
    // Eq. 1, up-down variant, for all leaves at once: per leaf, how many groups lead closer and
    // the last of them. A switch that reaches the leaf going only down must go down (a packet
    // may have come down to it); otherwise it climbs to a closer up neighbour.
    f.count.assign(L, 0);
    f.last.assign(L, 0);
    f.up.clear();
    const int g0 = p.group_begin[s], num_groups = p.group_begin[s + 1] - g0;
    const int planes = (num_groups + 7) / 8;
    f.bits.assign(static_cast<size_t>(planes) * L, 0);
    for (int j = 0; j < num_groups; ++j) {
      const int gi = g0 + j;
      if (p.group_dir[gi] == 0) continue;
      const bool up = p.group_dir[gi] == 1;
      if (up) f.up.push_back(gi);
      const uint8_t* ru =
          (up ? p.cost.data() : p.down_cost.data()) + static_cast<size_t>(p.group_to[gi]) * L;
      MarkCloser(ru, up ? cs : ds, ds, up, static_cast<uint8_t>(j), L, f.count.data(),
                 f.last.data(), f.bits.data() + static_cast<size_t>(j / 8) * L);
    }
    const int num_up = static_cast<int>(f.up.size());
    // The common case, every up group closer: one table over x mod (#C * #g) when the up
    // groups have equal sizes (Eqs. 3-4 depend only on that residue).
    int up_size = -1;
    for (int gi : f.up) {
      const int size = p.group_port_begin[gi + 1] - p.group_port_begin[gi];
      up_size = up_size < 0 || up_size == size ? size : 0;
    }
    f.up_table.clear();
    if (up_size > 0) {
      for (int k = 0; k < num_up * up_size; ++k) {
        f.up_table.push_back(PickPort(p, f.up.data(), num_up, static_cast<uint32_t>(k)));
      }
    }
    const FastDivMod by_pi(divider[s]);
    const FastDivMod by_period(f.up_table.empty() ? 1 : f.up_table.size());
    for (int l = 0; l < L; ++l) {
      const int closer = f.count[l];
      if (closer == 0 || p.leaves[l] == s) continue;
      const bool down = ds[l] != kDmodcInf;
      const int* cand;
      int nc;
      if (closer == 1) {
        f.one = g0 + f.last[l];
        cand = &f.one;
        nc = 1;
      } else if (!down && closer == num_up) {
        cand = f.up.data();
        nc = num_up;
      } else {
        f.cand.clear();
        for (int plane = 0; plane < planes; ++plane) {
          for (unsigned b = f.bits[static_cast<size_t>(plane) * L + l]; b != 0; b &= b - 1) {
            f.cand.push_back(g0 + plane * 8 + __builtin_ctz(b));
          }
        }
        cand = f.cand.data();
        nc = static_cast<int>(f.cand.size());
      }
      // Most (switch, leaf) pairs need no division beyond d / Pi: one port (a single closer
      // group of one cable), a single group of parallel cables, or the table of all up groups.
      if (nc == 1) {
        const int pb = p.group_port_begin[cand[0]];
        const int size = p.group_port_begin[cand[0] + 1] - pb;
        if (size == 1) {
          const uint8_t port = p.group_ports[pb];
          for (int k = vb[l]; k < vb[l + 1]; ++k) {
            for (int i = 0; i < vn[k]; ++i) row[vlid[k] + i] = port;
          }
          continue;
        }
        const FastDivMod by_size(size);
        for (int k = vb[l]; k < vb[l + 1]; ++k) {
          const uint32_t x = by_pi.Div(vidx[k]);
          for (int i = 0; i < vn[k]; ++i) {
            row[vlid[k] + i] = p.group_ports[pb + by_size.Mod(x + i)];
          }
        }
        continue;
      }
      if (cand == f.up.data() && !f.up_table.empty()) {
        const uint8_t* table = f.up_table.data();
        if (fill.residue_of[s] >= 0) {
          const uint16_t* res = fill.residues[fill.residue_of[s]].data();
          const uint32_t period_s = fill.period[s];
          if (single_lid) {
            for (int k = vb[l]; k < vb[l + 1]; ++k) row[vlid[k]] = table[res[k]];
            continue;
          }
          for (int k = vb[l]; k < vb[l + 1]; ++k) {
            uint32_t r = res[k];
            for (int i = 0; i < vn[k]; ++i) {  // (x + i) mod P
              row[vlid[k] + i] = table[r];
              r = r + 1 == period_s ? 0 : r + 1;
            }
          }
          continue;
        }
        for (int k = vb[l]; k < vb[l + 1]; ++k) {
          const uint32_t x = by_pi.Div(vidx[k]);
          for (int i = 0; i < vn[k]; ++i) row[vlid[k] + i] = table[by_period.Mod(x + i)];
        }
        continue;
      }
      // A subset of the groups (degraded parts): a table over x mod (#C * #g) if the groups
      // have equal sizes, else Eqs. 3-4 literally.
      int size = -1;
      for (int i = 0; i < nc; ++i) {
        const int gs = p.group_port_begin[cand[i] + 1] - p.group_port_begin[cand[i]];
        size = size < 0 || size == gs ? gs : 0;
      }
      if (size > 0) {
        f.small_table.clear();
        for (int k = 0; k < nc * size; ++k) {
          f.small_table.push_back(PickPort(p, cand, nc, static_cast<uint32_t>(k)));
        }
        const FastDivMod by_t(static_cast<uint64_t>(nc) * size);
        for (int k = vb[l]; k < vb[l + 1]; ++k) {
          const uint32_t x = by_pi.Div(vidx[k]);
          for (int i = 0; i < vn[k]; ++i) {
            row[vlid[k] + i] = f.small_table[by_t.Mod(x + i)];
          }
        }
        continue;
      }
      for (int k = vb[l]; k < vb[l + 1]; ++k) {
        const uint32_t x = by_pi.Div(vidx[k]);
        for (int i = 0; i < vn[k]; ++i) {
          row[vlid[k] + i] = PickPort(p, cand, nc, x + i);
        }
      }
    }
  });
}

void FinishDmodcTables(const SwitchGraph& g, const DmodcPlan& p, const DmodcFill& fill, int threads,
                       std::vector<std::vector<int>>* override_rows, LftSet* lfts) {
  const int n = g.num_switches, L = p.num_leaves;
  if (override_rows != nullptr) override_rows->resize(n);
  // Destinations on the switch itself.
  for (int di = 0; di < static_cast<int>(g.dests.size()); ++di) {
    const Destination& d = g.dests[di];
    if (d.sw < 0 || d.base_lid == 0) continue;
    uint8_t* row = lfts->mutable_row(d.sw);
    for (int i = 0; i < d.num_lids; ++i) row[d.base_lid + i] = d.is_switch ? 0 : d.sw_port;
  }
  // Non-leaf switch LIDs: the switches above and the chain below (each t owns its LID's
  // column, so workers never write the same entry).
  const std::vector<int>& upper = fill.upper;
  const int override_workers = WorkerCount(threads, upper.size(), 16);
  std::vector<std::vector<int>> dist(override_workers, std::vector<int>(n, -1)),
      touched(override_workers), cand(override_workers);
  ParallelFor(override_workers, upper.size(), 16, [&](int w, size_t i) {
    OverrideSwitchLid(g, p, upper[i], &dist[w], &touched[w], &cand[w],
                      override_rows != nullptr ? &(*override_rows)[upper[i]] : nullptr, lfts);
  });
  // Switches without an up-down path to a leaf (a top switch that lost its only cable into a
  // pod): no HCA route passes there, but traffic they originate (management, traps to the SM)
  // should still arrive, as with updn. Per such leaf, breadth-first from the switches that have
  // a route: each of these switches steps to a neighbour with a route (the cheapest one) or one
  // resolved before it, so it cannot loop; the rest is the normal route, which never enters
  // them (their cost is infinite). HCA-attached switches are left alone: a pair of leaves
  // without an up-down path is disconnected (an error, or a hole with allow_disconnected).
  std::vector<int> part;
  SwitchComponents(g, &part);
  const std::vector<int>& hole_begin = fill.hole_begin;
  const std::vector<int>& holes = fill.holes;
  const std::vector<int>& via_begin = fill.via_begin;
  const std::vector<Lid>& via_lid = fill.via_lid;
  const std::vector<uint16_t>& via_lids = fill.via_lids;
  // Leaves without an up-down path to some leaf (only with allow_disconnected): usually none,
  // which spares a strided pass over every leaf's cost per hole leaf.
  std::vector<int> cut_leaves;
  for (int s : p.leaves) {
    if (std::memchr(p.cost.data() + static_cast<size_t>(s) * L, kDmodcInf, L) != nullptr) {
      cut_leaves.push_back(s);
    }
  }
  const int hole_workers = WorkerCount(threads, L, 16);
  std::vector<std::vector<uint8_t>> state(hole_workers, std::vector<uint8_t>(n, 0));
  ParallelFor(hole_workers, L, 16, [&](int w, size_t li) {
    const int l = static_cast<int>(li);
    if (hole_begin[l + 1] == hole_begin[l]) return;
    std::vector<uint8_t>& st = state[w];  // 1 = hole, 2 = resolved, 3 = leaf without a route
    const int leaf = p.leaves[l];
    for (int k = hole_begin[l]; k < hole_begin[l + 1]; ++k) {
      if (part[holes[k]] == part[leaf]) st[holes[k]] = 1;
    }
    for (int s : cut_leaves) {
      if (p.c(s, l) == kDmodcInf) st[s] = 3;
    }
    std::vector<std::pair<int, uint8_t>> resolved;  // (switch, port)
    for (int k = hole_begin[l]; k < hole_begin[l + 1]; ++k) {
      const int s = holes[k];
      if (st[s] != 1) continue;
      int best = -1;
      for (int gi = p.group_begin[s]; gi < p.group_begin[s + 1]; ++gi) {
        const int u = p.group_to[gi];
        if (st[u] == 0 && p.rank[u] >= 0 && (best < 0 || p.c(u, l) < p.c(p.group_to[best], l))) {
          best = gi;
        }
      }
      if (best < 0) continue;
      resolved.push_back({s, p.group_ports[p.group_port_begin[best]]});
      st[s] = 2;
    }
    for (size_t head = 0; head < resolved.size(); ++head) {
      const int s = resolved[head].first;
      for (int gi = p.group_begin[s]; gi < p.group_begin[s + 1]; ++gi) {
        const int v = p.group_to[gi];
        if (st[v] != 1) continue;
        for (int gv = p.group_begin[v]; gv < p.group_begin[v + 1]; ++gv) {
          if (p.group_to[gv] == s) {
            resolved.push_back({v, p.group_ports[p.group_port_begin[gv]]});
            break;
          }
        }
        st[v] = 2;
      }
    }
    for (const auto& [s, port] : resolved) {
      uint8_t* row = lfts->mutable_row(s);
      for (int k = via_begin[l]; k < via_begin[l + 1]; ++k) {
        for (int i = 0; i < via_lids[k]; ++i) row[via_lid[k] + i] = port;
      }
    }
    for (int k = hole_begin[l]; k < hole_begin[l + 1]; ++k) st[holes[k]] = 0;
    for (int s : cut_leaves) st[s] = 0;
  });
  // Switches in a part of the fabric without leaves: plain shortest paths among themselves.
  std::vector<int> hops;
  for (int t = 0; t < n; ++t) {
    const Lid lid = g.dests[g.num_endpoint_dests + t].base_lid;
    if (p.rank[t] >= 0 || lid == 0) continue;
    HopsTo(g, t, &hops);
    for (int s = 0; s < n; ++s) {
      if (hops[s] <= 0) continue;
      for (int a = g.arc_begin[s]; a < g.arc_begin[s + 1]; ++a) {
        if (hops[g.arc_to[a]] == hops[s] - 1) {
          lfts->set_port(s, lid, g.arc_port[a]);
          break;
        }
      }
    }
  }
}

void FillDmodcTables(const SwitchGraph& g, const DmodcPlan& p, const std::vector<uint32_t>& index,
                     const std::vector<uint64_t>& divider, int threads, LftSet* lfts) {
  DmodcFill fill;
  PrepareDmodcFill(g, p, index, divider, threads, &fill);
  std::vector<int> rows(g.num_switches);
  std::iota(rows.begin(), rows.end(), 0);
  FillDmodcRows(p, fill, divider, rows, false, threads, lfts);
  FinishDmodcTables(g, p, fill, threads, nullptr, lfts);
}

}  // namespace sar::internal
