// The validation stage: the one definition of valid tables (ValidateRouting,
// sar/pass/routing_pass.h).
//
// The switch-LID rule (RoutingOptions::switch_lids):
// Deadlock freedom as OpenSM's dfsssp promises it: switch port-0 LIDs (and so management
// and SHARP traffic to switches) are sources and destinations in the channel dependency
// check and in the layered engines' layers. An engine without layers whose one layer is then
// cyclic gets layers from its tables (noted) when more than one lane is usable. The one-lane
// rule: with one usable lane (max_layers 1, num_vls 1) the switch-LID routes cannot have a
// lane of their own, so the engines layer and ValidateRouting checks CA pairs only
// (ValidationReport::deadlock.switch_lids says which check ran). Migration mode keeps the check
// between CAs (its layer discipline has no place for switch-LID routes yet). False: routes
// between CAs only everywhere (the check before issue 33; `--hca-pairs-only`, for comparison).
#include <algorithm>
#include <cstring>
#include <string>

#include "analysis/trace_parallel.h"
#include "pass/stages.h"
#include "sar/env.h"

namespace sar {
namespace {

std::string Channel(const Fabric& f, PortId c) {
  const PortRef p = f.port_ref(c);
  return f.name(p.node) + "/" + std::to_string(p.port);
}

// The validation with the delta validation's three extras (AnalysisOptions::only_lids,
// dependency_base, keep_dependencies).
Status Validate(const Fabric& fabric, const LftSet& lfts, const VirtualLayers* layers,
                int num_layers, const ValidationOptions& options, const AnalysisOptions& also,
                AnalysisResult* analysis, ValidationReport* report,
                const std::vector<uint8_t>* only_lids, const DependencyGraphs* base,
                DependencyGraphs* keep) {
  ValidationReport& r = *report;
  r = ValidationReport();
  r.layers = std::max(num_layers, 1);
  SAR_RETURN_IF_ERROR(lfts.CheckFits(fabric));

  // One sweep traces every route and builds the layers' dependency graphs. The dependency
  // check is then judged only if the routes are delivered and fit the lanes, as if it ran after.
  const Stopwatch t0;
  const int usable = pass::UsableLanes(options.num_vls, options.max_layers);
  AnalysisOptions ao = also;
  ao.what |= kAnalyseTrace | (options.layers_known ? kAnalyseDeadlock : 0u);
  ao.trace.check_min_hop = options.check_min_hop;
  ao.layers = layers;
  // The one-lane rule: a consumer that carries one lane (OpenSM's file engine, sar-filterd's
  // file mode) cannot give the routes from and to switch LIDs a lane of their own (on a
  // fat-tree, spine-to-spine routes go down and up), so there the routes between CAs must be
  // deadlock-free. Migration mode keeps the check between CAs too: its layer discipline
  // (highLIDs alone in the last layer) has no place for switch-LID routes yet.
  ao.deadlock_switch_lids = options.switch_lids && !options.migration && usable > 1;
  ao.threads = options.threads;
  ao.only_lids = only_lids;
  ao.dependency_base = options.layers_known ? base : nullptr;
  ao.keep_dependencies = options.layers_known ? keep : nullptr;
  SAR_RETURN_IF_ERROR(AnalyseRouting(fabric, lfts, ao, analysis));
  r.check_ms = t0.ElapsedMs();
  r.trace = analysis->trace;
  const TraceReport& trace = r.trace;
  if (trace.loops > 0 || (!options.allow_disconnected && trace.unreachable > 0)) {
    return Status::Failed("invalid routing: " + std::to_string(trace.unreachable) +
                          " unreachable pairs, " + std::to_string(trace.loops) + " loops; first: " +
                          (trace.examples.empty() ? "?" : trace.examples.front()));
  }

  if (r.layers > usable) {
    return Status::Failed("invalid routing: the routes need " + std::to_string(r.layers) +
                          " virtual layers, " + std::to_string(usable) + " usable");
  }
  if (!options.layers_known) return Status::OK();
  if (options.migration)
    SAR_RETURN_IF_ERROR(pass::CheckMigrationLayers(fabric, layers, usable - 1));

  r.deadlock = analysis->deadlock;
  r.deadlock_checked = true;
  const DeadlockReport& dl = r.deadlock;
  if (!dl.deadlock_free) {
    std::string cycle;
    for (PortId c : dl.cycle) cycle += (cycle.empty() ? "" : " -> ") + Channel(fabric, c);
    if (!dl.cycle.empty()) cycle += " -> " + Channel(fabric, dl.cycle.front());
    return Status::Failed("invalid routing: virtual layer " + std::to_string(dl.cyclic_layer) +
                          " has a cyclic channel dependency: " + cycle);
  }
  return Status::OK();
}

// The delta validation's table digest: a sum over the tables' 8-byte words of each word mixed
// with its position (splitmix64's finalizer), so that the digest of new tables follows from the
// previous tables' digest and the words that differ, in the one pass that compares them.
uint64_t MixWord(uint64_t word, size_t i) {
  uint64_t x = word + (i + 1) * 0x9e3779b97f4a7c15ULL;
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

size_t TableBytes(const LftSet& t) {
  return static_cast<size_t>(t.num_switches()) * (static_cast<size_t>(t.max_lid()) + 1);
}

uint64_t LoadWord(const uint8_t* bytes, size_t size, size_t word) {
  uint64_t w = 0;
  const size_t at = word * 8;
  std::memcpy(&w, bytes + at, std::min<size_t>(8, size - at));
  return w;
}

// Words per work item of the digest loops.
constexpr size_t kDigestChunk = size_t{1} << 16;

uint64_t TablesDigest(const LftSet& t, int threads) {
  const size_t size = TableBytes(t);
  const size_t words = (size + 7) / 8;
  const size_t items = (words + kDigestChunk - 1) / kDigestChunk;
  const int workers = internal::WorkerCount(threads, items, 1);
  std::vector<uint64_t> sums(std::max(workers, 1), 0);
  const uint8_t* bytes = size > 0 ? t.row(0) : nullptr;
  internal::ParallelFor(workers, items, 1, [&](int worker, size_t item) {
    uint64_t sum = 0;
    const size_t end = std::min(words, (item + 1) * kDigestChunk);
    for (size_t i = item * kDigestChunk; i < end; ++i) sum += MixWord(LoadWord(bytes, size, i), i);
    sums[worker] += sum;
  });
  uint64_t digest = MixWord(t.num_switches(), t.max_lid());
  for (uint64_t s : sums) digest += s;
  return digest;
}

// Compares tables of one shape: their digests (TablesDigest) and, per LID, whether its column
// differs (*changed, max_lid + 1 entries, set to 1 where it does).
void DiffTables(const LftSet& before, const LftSet& after, int threads, uint64_t* before_digest,
                uint64_t* after_digest, std::vector<uint8_t>* changed) {
  const size_t size = TableBytes(after);
  const size_t row = static_cast<size_t>(after.max_lid()) + 1;
  const size_t words = (size + 7) / 8;
  const size_t items = (words + kDigestChunk - 1) / kDigestChunk;
  const int workers = internal::WorkerCount(threads, items, 1);
  struct Part {
    uint64_t before = 0, after = 0;
    std::vector<Lid> lids;
  };
  std::vector<Part> parts(std::max(workers, 1));
  const uint8_t* a = size > 0 ? before.row(0) : nullptr;
  const uint8_t* b = size > 0 ? after.row(0) : nullptr;
  internal::ParallelFor(workers, items, 1, [&](int worker, size_t item) {
    Part& p = parts[worker];
    uint64_t sum = 0, delta = 0;
    const size_t end = std::min(words, (item + 1) * kDigestChunk);
    for (size_t i = item * kDigestChunk; i < end; ++i) {
      const uint64_t x = LoadWord(a, size, i), y = LoadWord(b, size, i);
      const uint64_t mixed = MixWord(x, i);
      sum += mixed;
      if (x == y) continue;
      delta += MixWord(y, i) - mixed;
      for (size_t k = i * 8; k < std::min(size, i * 8 + 8); ++k) {
        if (a[k] != b[k]) p.lids.push_back(static_cast<Lid>(k % row));
      }
    }
    p.before += sum;
    p.after += sum + delta;
  });
  const uint64_t shape = MixWord(after.num_switches(), after.max_lid());
  *before_digest = *after_digest = shape;
  changed->assign(row, 0);
  for (const Part& p : parts) {
    *before_digest += p.before;
    *after_digest += p.after;
    for (Lid l : p.lids) (*changed)[l] = 1;
  }
}

bool SameVerdictOptions(const ValidationOptions& a, const ValidationOptions& b) {
  return a.allow_disconnected == b.allow_disconnected && a.layers_known == b.layers_known &&
         a.check_min_hop == b.check_min_hop && a.migration == b.migration &&
         a.switch_lids == b.switch_lids &&
         pass::UsableLanes(a.num_vls, a.max_layers) == pass::UsableLanes(b.num_vls, b.max_layers);
}

// Whether `f` is the fabric `b` was checked on but for cables between switches; *changed gets
// the switch port slots whose cable differs. Else *why says what differs.
bool SameButSwitchCables(const Fabric& f, const ValidationBaseline& b, std::vector<PortId>* changed,
                         std::string* why) {
  const PortId n = f.num_port_slots();
  if (b.port_node.size() != static_cast<size_t>(n) || b.num_switches != f.num_switches()) {
    *why = "another fabric (ports)";
    return false;
  }
  for (PortId id = 0; id < n; ++id) {
    const PortRef p = f.port_ref(id);
    if (b.port_node[id] != p.node || b.base_lid[id] != f.base_lid(p) || b.lmc[id] != f.lmc(p)) {
      *why = "another fabric (ports or LIDs)";
      return false;
    }
    const PortId peer = f.peer_id(id), old = b.peer[id];
    if (peer == old) continue;
    if (!f.is_switch(p.node) || (peer != kNoPort && !f.is_switch(f.port_node(peer))) ||
        (old != kNoPort && !f.is_switch(f.port_node(old)))) {
      *why = "another fabric (an HCA's cable)";
      return false;
    }
    changed->push_back(id);
  }
  return true;
}

void SetBaselineFabric(const Fabric& f, ValidationBaseline* b) {
  const PortId n = f.num_port_slots();
  b->port_node.resize(n);
  b->base_lid.resize(n);
  b->lmc.resize(n);
  b->peer.resize(n);
  for (PortId id = 0; id < n; ++id) {
    const PortRef p = f.port_ref(id);
    b->port_node[id] = p.node;
    b->base_lid[id] = f.base_lid(p);
    b->lmc[id] = static_cast<uint8_t>(f.lmc(p));
    b->peer[id] = f.peer_id(id);
  }
  b->num_switches = f.num_switches();
}
}  // namespace

ValidationOptions ValidationFor(const RoutingOptions& options) {
  ValidationOptions v;
  v.num_vls = options.num_vls;
  v.max_layers = options.max_layers;
  v.allow_disconnected = options.allow_disconnected;
  v.migration = options.migration;
  v.switch_lids = options.switch_lids;
  v.threads = options.threads;
  return v;
}

Status ValidateRouting(const Fabric& fabric, const LftSet& lfts, const VirtualLayers* layers,
                       int num_layers, const ValidationOptions& options,
                       const AnalysisOptions& also, AnalysisResult* analysis,
                       ValidationReport* report) {
  return Validate(fabric, lfts, layers, num_layers, options, also, analysis, report, nullptr,
                  nullptr, nullptr);
}

Status ValidateRouting(const Fabric& fabric, const LftSet& previous, const LftSet& lfts,
                       const VirtualLayers* layers, int num_layers,
                       const ValidationOptions& options, const AnalysisOptions& also,
                       AnalysisResult* analysis, ValidationBaseline* baseline,
                       ValidationReport* report) {
  const Stopwatch t0;
  ValidationBaseline& b = *baseline;
  const uint64_t layers_digest = layers != nullptr ? layers->Digest() : 0;
  const bool only_validation =
      (also.what & ~(kAnalyseTrace | kAnalyseDeadlock)) == 0 && also.traffic.empty() &&
      (also.source_lid_offset == nullptr || also.source_lid_offset->empty());
  std::string why;  // why the check is a full one
  std::vector<uint8_t> only;
  std::vector<PortId> recabled;
  uint64_t previous_digest = 0, digest = 0;
  if (!b.valid) {
    why = "no baseline";
  } else if (previous.num_switches() == 0) {
    why = "no previous tables";
  } else if (!only_validation) {
    why = "more analyses asked for than the validation";
  } else if (!SameVerdictOptions(b.options, options) || b.all_lids != also.trace.all_lids) {
    why = "other validation options";
  } else if ((layers != nullptr) != b.has_layers || layers_digest != b.layers_digest) {
    why = "other virtual layers";
  } else if (previous.num_switches() != lfts.num_switches() ||
             previous.max_lid() != lfts.max_lid() || b.max_lid != lfts.max_lid()) {
    why = "tables of another size";
  } else if (SameButSwitchCables(fabric, b, &recabled, &why)) {
    DiffTables(previous, lfts, options.threads, &previous_digest, &digest, &only);
    if (previous_digest != b.tables_digest) why = "the previous tables are not the last valid ones";
  }
  bool cycle_rechecked = false;
  if (why.empty()) {
    // Routes through a port whose cable changed may change without their column.
    for (PortId id : recabled) {
      const PortRef p = fabric.port_ref(id);
      const uint8_t* row = lfts.row(fabric.switch_index(p.node));
      for (Lid l = 0; l <= lfts.max_lid(); ++l) only[l] |= row[l] == p.port;
    }
    int64_t count = 0;
    for (uint8_t c : only) count += c;
    DependencyGraphs graphs;
    const Status s = Validate(fabric, lfts, layers, num_layers, options, also, analysis, report,
                              &only, &b.graphs, &graphs);
    report->delta_lids = count;
    report->check_ms = t0.ElapsedMs();
    if (s.ok()) {
      for (PortId id : recabled) b.peer[id] = fabric.peer_id(id);
      b.tables_digest = digest;
      b.graphs = std::move(graphs);
      return s;
    }
    // A trace, lane or migration verdict is the full check's: the unchanged destinations were
    // valid. A cycle may run through dependencies of the baseline no route has now.
    if (!report->deadlock_checked || report->deadlock.deadlock_free) return s;
    cycle_rechecked = true;
  }
  DependencyGraphs graphs;
  const Status s = Validate(fabric, lfts, layers, num_layers, options, also, analysis, report,
                            nullptr, nullptr, &graphs);
  report->full_because = why;
  report->delta_cycle_rechecked = cycle_rechecked;
  report->check_ms = t0.ElapsedMs();
  if (!s.ok()) return s;
  SetBaselineFabric(fabric, &b);
  b.max_lid = lfts.max_lid();
  b.tables_digest = TablesDigest(lfts, options.threads);
  b.has_layers = layers != nullptr;
  b.layers_digest = layers_digest;
  b.options = options;
  b.all_lids = also.trace.all_lids;
  b.graphs = std::move(graphs);
  b.valid = true;
  return s;
}

Status ValidateRouting(const Fabric& fabric, const LftSet& lfts, const VirtualLayers* layers,
                       int num_layers, const ValidationOptions& options, ValidationReport* report) {
  AnalysisResult analysis;
  return ValidateRouting(fabric, lfts, layers, num_layers, options, AnalysisOptions(), &analysis,
                         report);
}

}  // namespace sar
