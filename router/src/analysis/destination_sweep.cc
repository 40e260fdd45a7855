#include "analysis/destination_sweep.h"

#include <algorithm>
#include <limits>

#include "analysis/trace_parallel.h"
#include "sar/model/lids.h"

namespace sar::internal {

namespace {

// Destinations per work item, at most. Items hold destinations of one leaf switch in LID order:
// neighbouring LIDs share the LFT cache lines Build() reads, and the trace's shortest-path
// distances (one BFS per destination switch) carry over from one destination to the next.
constexpr size_t kMaxItem = 64;

// A block of LFT columns (LftColumns) costs one cache line per switch row to load, about what
// tracing 2-3 destinations row by row costs (each reads the rows of the switches its routes
// reach, a third of them in a fat-tree): load one for a destination only if at least this many
// of the next destinations of its item fall into the same block.
constexpr int kMinBlockUse = 4;

struct Item {
  size_t begin, end;  // range of the destination list
  int job;            // >= 0: the whole of this job's destinations
};

bool ByLeafThenLid(const SweepDestination& a, const SweepDestination& b) {
  return a.leaf != b.leaf ? a.leaf < b.leaf : a.lid < b.lid;
}

// Cuts [begin, end) (sorted by leaf) into items of one leaf and at most kMaxItem destinations.
void Chop(const std::vector<SweepDestination>& dests, size_t begin, size_t end,
          std::vector<Item>* items) {
  for (size_t i = begin; i < end;) {
    size_t j = i + 1;
    while (j < end && j - i < kMaxItem && dests[j].leaf == dests[i].leaf) ++j;
    items->push_back({i, j, -1});
    i = j;
  }
}

}  // namespace

SweepContext::SweepContext(const Fabric& fabric, const LftSet& lfts,
                           const std::vector<ResolvedJob>* jobs,
                           const std::vector<uint8_t>* source_lid_offset)
    : fabric(fabric), lfts(lfts), tracer(fabric, lfts), endpoints(fabric.Endpoints()) {
  if (source_lid_offset != nullptr && source_lid_offset->size() == endpoints.size()) {
    offset = *source_lid_offset;
    for (uint8_t o : offset) offsets = std::max(offsets, o + 1);
  }
  leaf.resize(endpoints.size());
  of_node.assign(fabric.num_nodes(), {});
  on_switch.assign(fabric.num_switches(), {});
  for (size_t i = 0; i < endpoints.size(); ++i) {
    const int e = static_cast<int>(i);
    leaf[i] = tracer.next_switch(fabric.port_id(endpoints[i]));
    of_node[endpoints[i].node].push_back(e);
    if (leaf[i] < 0) continue;
    if (on_switch[leaf[i]].empty()) leaves.push_back(leaf[i]);
    on_switch[leaf[i]].push_back(e);
  }
  if (!offset.empty()) {
    on_switch_by_offset.assign(static_cast<size_t>(fabric.num_switches()) * offsets, 0);
    for (size_t i = 0; i < endpoints.size(); ++i) {
      if (leaf[i] >= 0) ++on_switch_by_offset[static_cast<size_t>(leaf[i]) * offsets + offset[i]];
    }
  }
  if (jobs == nullptr) return;
  job_members.resize(jobs->size());
  job_member_pos.resize(jobs->size());
  std::vector<int> member_of(endpoints.size(), 0);  // stamp: job index + 1
  for (size_t j = 0; j < jobs->size(); ++j) {
    const int stamp = static_cast<int>(j) + 1;
    const std::vector<PortRef>& ends = (*jobs)[j].endpoints;
    for (size_t pos = 0; pos < ends.size(); ++pos) {
      const PortRef& p = ends[pos];
      const PortId id = fabric.port_id(p);
      // Map the port back to its endpoint index (the job lists cabled HCA ports).
      for (int e : of_node[p.node]) {
        if (fabric.port_id(endpoints[e]) == id && member_of[e] != stamp) {
          member_of[e] = stamp;
          job_members[j].push_back(e);
          job_member_pos[j].push_back(static_cast<int>(pos));
        }
      }
    }
  }
}

bool SweepContext::OffsetSends(int o, const SweepDestination& d) const {
  return SourceLid(fabric, endpoints[d.endpoint], o) == d.lid;
}

// Without offsets every source sends to the base LIDs, which is what d.sent says (RunSweep
// sets it by the same rule), so the per-switch and per-source calls need no LID arithmetic.
bool SweepContext::Sends(int source, const SweepDestination& d) const {
  return offset.empty() ? d.sent : OffsetSends(offset[source], d);
}

uint64_t SweepContext::Senders(int s, const SweepDestination& d) const {
  if (offset.empty()) return d.sent ? on_switch[s].size() : 0;
  uint64_t n = 0;
  for (int o = 0; o < offsets; ++o) {
    if (OffsetSends(o, d)) n += on_switch_by_offset[static_cast<size_t>(s) * offsets + o];
  }
  return n;
}

void RunSweep(const SweepContext& ctx, const SweepOptions& options,
              const std::vector<SweepVisitor*>& visitors) {
  const Fabric& fabric = ctx.fabric;
  std::vector<SweepDestination> dests;
  std::vector<uint8_t> seen(static_cast<size_t>(fabric.max_lid()) + 1, 0);
  // The LIDs sources send to: each destination's base LID and base + every offset in use
  // (SourceLid: an offset beyond the destination's LIDs is its base LID).
  std::vector<uint8_t> in_use(ctx.offsets, 0);
  in_use[0] = 1;
  for (uint8_t o : ctx.offset) in_use[o] = 1;
  auto sent = [&](int e, Lid l) {
    const Lid k = l - fabric.base_lid(ctx.endpoints[e]);
    return k < in_use.size() && in_use[k];
  };
  auto lid_count = [&](int e) { return Lid{1} << fabric.lmc(ctx.endpoints[e]); };
  const std::vector<uint8_t>* only = options.only_lids;
  auto wanted = [only](Lid l) { return only == nullptr || (l < only->size() && (*only)[l]); };

  // Each job's destinations: the sent LIDs of its members that can be routed to.
  const size_t num_jobs = options.job_phases ? ctx.job_members.size() : 0;
  std::vector<std::pair<size_t, size_t>> job_range(num_jobs);
  for (size_t j = 0; j < num_jobs; ++j) {
    const size_t begin = dests.size();
    for (size_t k = 0; k < ctx.job_members[j].size(); ++k) {
      const int e = ctx.job_members[j][k];
      const Lid base = fabric.base_lid(ctx.endpoints[e]);
      if (base == 0 || ctx.leaf[e] < 0) continue;
      for (Lid l = base; l < base + lid_count(e); ++l) {
        if (!sent(e, l) || !wanted(l)) continue;
        dests.push_back({l, e, ctx.leaf[e], l == base, true, seen[l] == 0, static_cast<int>(j),
                         static_cast<int>(k)});
        seen[l] = 1;
      }
    }
    std::sort(dests.begin() + begin, dests.end(), ByLeafThenLid);
    job_range[j] = {begin, dests.size()};
  }
  // Every other LID once.
  const size_t rest = dests.size();
  for (size_t i = 0; i < ctx.endpoints.size(); ++i) {
    const int e = static_cast<int>(i);
    const Lid base = fabric.base_lid(ctx.endpoints[i]);
    if (base == 0) continue;
    for (Lid l = base; l < base + lid_count(e); ++l) {
      const bool is_sent = sent(e, l);
      if (!seen[l] && (is_sent || options.lmc_lids) && wanted(l)) {
        dests.push_back({l, e, ctx.leaf[i], l == base, is_sent, true, -1});
      }
    }
  }
  std::sort(dests.begin() + rest, dests.end(), ByLeafThenLid);

  const int workers = WorkerCount(options.threads, dests.size(), 16);
  // A job is one work item unless it would hold up the end of the sweep on its own: then its
  // destinations are spread over all workers in a step of their own.
  const size_t big = workers > 1 ? std::max(kMaxItem, dests.size() / (4 * workers))
                                 : std::numeric_limits<size_t>::max();
  std::vector<Item> items;
  std::vector<int> big_jobs, empty_jobs;
  for (size_t j = 0; j < num_jobs; ++j) {
    const auto [begin, end] = job_range[j];
    if (begin == end) {
      empty_jobs.push_back(static_cast<int>(j));
    } else if (end - begin > big) {
      big_jobs.push_back(static_cast<int>(j));
    } else {
      items.push_back({begin, end, static_cast<int>(j)});
    }
  }
  // Largest first, so the small items even out the workers' finishing times.
  std::stable_sort(items.begin(), items.end(),
                   [](const Item& a, const Item& b) { return a.end - a.begin > b.end - b.begin; });
  Chop(dests, rest, dests.size(), &items);

  for (SweepVisitor* v : visitors) v->Start(workers);
  std::vector<DestinationTree> trees(workers);
  std::vector<LftColumns> columns(workers);
  const bool use_columns = LftColumns::Fits(fabric.num_switches());
  // Whether dests[i] is worth a block of columns: enough of the next destinations of its item
  // (up to one block's worth) share its block.
  auto dense = [&](size_t i, size_t end) {
    const Lid block = LftColumns::BlockOf(dests[i].lid);
    int uses = 0;
    for (size_t j = i; j < end && j < i + LftColumns::kLids && uses < kMinBlockUse; ++j) {
      uses += LftColumns::BlockOf(dests[j].lid) == block;
    }
    return uses >= kMinBlockUse;
  };
  std::vector<int> all_switches;
  if (options.from_all_switches) {
    all_switches = ctx.leaves;  // leaves first, as BuildFrom would get them
    std::vector<uint8_t> listed(fabric.num_switches(), 0);
    for (int s : ctx.leaves) listed[s] = 1;
    for (int s = 0; s < fabric.num_switches(); ++s) {
      if (!listed[s]) all_switches.push_back(s);
    }
  }
  const std::vector<int>& from = options.from_all_switches ? all_switches : ctx.leaves;
  auto visit = [&](int worker, const Item& item) {
    DestinationTree& tree = trees[worker];
    LftColumns& cols = columns[worker];
    for (size_t i = item.begin; i < item.end; ++i) {
      // Only routes from switches with sources are analysed: trace from those alone. Both
      // ways of reading the tables give the same tree.
      const Lid lid = dests[i].lid;
      if (use_columns && !cols.Holds(lid) && dense(i, item.end)) {
        ctx.tracer.LoadColumns(LftColumns::BlockOf(lid), &cols);
      }
      if (cols.Holds(lid)) {
        ctx.tracer.BuildFrom(lid, from, cols, &tree);
      } else {
        ctx.tracer.BuildFrom(lid, from, &tree);
      }
      for (SweepVisitor* v : visitors) v->Visit(worker, dests[i], tree);
    }
  };
  ParallelFor(workers, items.size(), 1, [&](int worker, size_t i) {
    visit(worker, items[i]);
    if (items[i].job >= 0) {
      for (SweepVisitor* v : visitors) v->EndJob(items[i].job, worker);
    }
  });
  for (int j : big_jobs) {
    std::vector<Item> parts;
    Chop(dests, job_range[j].first, job_range[j].second, &parts);
    ParallelFor(workers, parts.size(), 1, [&](int worker, size_t i) { visit(worker, parts[i]); });
    for (SweepVisitor* v : visitors) v->EndJob(j, SweepVisitor::kAllWorkers);
  }
  // The calling thread is worker 0, and it is idle now.
  for (int j : empty_jobs) {
    for (SweepVisitor* v : visitors) v->EndJob(j, 0);
  }
  for (SweepVisitor* v : visitors) v->Finish();
}

}  // namespace sar::internal
