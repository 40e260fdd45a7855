#include "sar/routing_pass.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <memory>
#include <utility>

#include "sar/fors_job.h"
#include "sar/io/job_file.h"
#include "sar/virtual_layers.h"

namespace sar {
namespace {

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

Status LoadClasses(const Fabric& f, const RoutingOptions& o, RoutingInputs* in) {
  if (o.cn_guids_path.empty() && o.io_guids_path.empty()) return Status::OK();
  std::vector<Guid> cn, io;
  if (!o.cn_guids_path.empty()) SAR_RETURN_IF_ERROR(ReadGuidFile(o.cn_guids_path, &cn));
  if (!o.io_guids_path.empty()) SAR_RETURN_IF_ERROR(ReadGuidFile(o.io_guids_path, &io));
  std::vector<std::string> unknown;
  SAR_RETURN_IF_ERROR(MakeNodeClasses(f, o.cn_guids_path.empty() ? nullptr : &cn,
                                      o.io_guids_path.empty() ? nullptr : &io, &in->classes,
                                      &unknown));
  for (const std::string& g : unknown) {
    in->notes.push_back("GUID " + g + " of the class files is not an HCA of the fabric");
  }
  return Status::OK();
}

// Everything after the mapping is known; `missing` says the optional mapping file is absent.
Status Settle(const Fabric& f, const RoutingOptions& o, JobMapping mapping, bool missing,
              RoutingInputs* out) {
  RoutingInputs in;
  in.fabric = &f;
  in.options = o;
  in.mapping = std::move(mapping);
  if (MakeRoutingEngine(o.engine) == nullptr) {
    return Status::InvalidArgument("unknown engine '" + o.engine +
                                   "'; known engines: " + RoutingEngineList());
  }
  for (const std::string& name : o.root_names) {
    const NodeId n = f.FindByName(name);
    if (n == kNoNode || !f.is_switch(n)) {
      return Status::InvalidArgument("root '" + name + "' is not a switch of the fabric");
    }
    in.roots.push_back(n);
  }
  const std::string mapping_name = o.mapping_path.empty() ? "(none given)" : o.mapping_path;
  std::vector<std::string> unknown_hosts;
  in.jobs = ResolveJobs(f, in.mapping, &unknown_hosts, o.job_hca_pairs);
  for (const std::string& h : unknown_hosts) {
    in.notes.push_back("host '" + h + "' of job mapping " + mapping_name + " is not in the fabric");
  }
  in.engine = o.engine;
  if (in.engine == "sar" && in.mapping.jobs.empty()) {
    in.engine = "dfsssp";
    in.notes.push_back("job mapping " + mapping_name +
                       (missing                  ? " does not exist"
                        : o.mapping_path.empty() ? ""
                                                 : " lists no jobs") +
                       ": routing with plain dfsssp");
  }
  SAR_RETURN_IF_ERROR(LoadClasses(f, o, &in));
  *out = std::move(in);
  return Status::OK();
}

int UsableLanes(int num_vls, int max_layers) {
  return max_layers > 0 ? std::min(num_vls, max_layers) : num_vls;
}

std::string LidHex(Lid lid) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", lid);
  return buf;
}

// Migration mode needs LMC 1 on every endpoint: its base LID and its highLID.
Status CheckMigrationLids(const Fabric& f) {
  for (const PortRef& e : f.Endpoints()) {
    if (f.base_lid(e) != 0 && f.lmc(e) != 1) {
      return Status::InvalidArgument("migration mode needs LMC 1 on every HCA port: '" +
                                     f.name(e.node) + "' port " + std::to_string(e.port) +
                                     " has LMC " + std::to_string(f.lmc(e)));
    }
  }
  return Status::OK();
}

// The migration layer discipline (ValidationOptions::migration): every route to a highLID in
// layer `last`, none to a base LID there. Mixed pairs are checked too: their layer decides which
// dependencies they add.
Status CheckMigrationLayers(const Fabric& f, const VirtualLayers* layers, int last) {
  SAR_RETURN_IF_ERROR(CheckMigrationLids(f));
  if (layers == nullptr) {
    return Status::Failed("invalid routing: migration mode: the routes come without layers");
  }
  const std::vector<PortRef> ends = f.Endpoints();
  for (const PortRef& s : ends) {
    const Lid sb = f.base_lid(s);
    if (sb == 0) continue;
    for (const PortRef& d : ends) {
      const Lid db = f.base_lid(d);
      if (db == 0 || d.node == s.node) continue;
      for (Lid sl : {sb, sb + 1}) {
        const int to_base = layers->get(sl, db), to_high = layers->get(sl, db + 1);
        if (to_high != last) {
          return Status::Failed("invalid routing: migration mode: route lid " + LidHex(sl) +
                                " -> highLID " + LidHex(db + 1) + " in layer " +
                                std::to_string(to_high) + ", not the highLID layer " +
                                std::to_string(last));
        }
        if (to_base >= last) {
          return Status::Failed("invalid routing: migration mode: route lid " + LidHex(sl) +
                                " -> base lid " + LidHex(db) + " in layer " +
                                std::to_string(to_base) + ", which only highLID routes may use");
        }
      }
    }
  }
  return Status::OK();
}

// The fabric with each HCA port's LIDs replaced: `high` false keeps the base LID alone (LMC 0),
// true gives the highLID (base + 1) alone. Switch LIDs stay. Node and switch order is kept, so
// tables of a view index like tables of `f`.
Status LidView(const Fabric& f, bool high, Fabric* out) {
  *out = f;
  out->ClearLids();
  for (NodeId n = 0; n < f.num_nodes(); ++n) {
    for (int p = 0; p <= f.num_ports(n); ++p) {
      const PortRef r{n, p};
      const Lid base = f.base_lid(r);
      if (base == 0) continue;
      if (f.is_switch(n)) {
        SAR_RETURN_IF_ERROR(out->SetLid(r, base, f.lmc(r)));
      } else {
        SAR_RETURN_IF_ERROR(out->SetLid(r, high && f.lmc(r) >= 1 ? base + 1 : base, 0));
      }
    }
  }
  return Status::OK();
}

// Migration mode: `engine` on the base LIDs (layers 0..n-2), Up*/Down* on the highLIDs (layer
// n-1), one table set. The highLID part sees no jobs, so it is the same for every mapping.
Status RouteMigration(const RoutingInputs& inputs, const RoutingEngine& engine,
                      RoutingOutput* out) {
  const Fabric& f = *inputs.fabric;
  const int lanes = UsableLanes(inputs.options.num_vls, inputs.options.max_layers);
  if (lanes < 2) {
    return Status::InvalidArgument(
        "migration mode needs at least 2 virtual lanes (base layers and the highLID layer), " +
        std::to_string(lanes) + " usable");
  }
  SAR_RETURN_IF_ERROR(CheckMigrationLids(f));
  const auto t0 = std::chrono::steady_clock::now();
  Fabric base_view, high_view;
  SAR_RETURN_IF_ERROR(LidView(f, false, &base_view));
  SAR_RETURN_IF_ERROR(LidView(f, true, &high_view));

  RoutingInput in = inputs.EngineInput();
  in.fabric = &base_view;
  in.num_vls = lanes - 1;
  RoutingOutput base;
  SAR_RETURN_IF_ERROR(engine.Route(in, &base));

  const std::unique_ptr<RoutingEngine> updn = MakeRoutingEngine("updn");
  RoutingInput hin;
  hin.fabric = &high_view;
  hin.num_vls = 1;
  hin.roots = inputs.roots;
  hin.threads = inputs.options.threads;
  hin.allow_disconnected = inputs.options.allow_disconnected;
  RoutingOutput high;
  const Status hs = updn->Route(hin, &high);
  if (!hs.ok()) {
    const std::string msg = "highLID routing (updn): " + hs.message();
    return hs.code() == Status::Code::kFailed ? Status::Failed(msg) : Status::InvalidArgument(msg);
  }

  RoutingOutput r;
  r.lfts = LftSet(f);
  const Lid base_top = std::min(base.lfts.max_lid(), f.max_lid());
  const std::vector<PortRef> ends = f.Endpoints();
  for (int sw = 0; sw < f.num_switches(); ++sw) {
    std::copy(base.lfts.row(sw), base.lfts.row(sw) + base_top + 1, r.lfts.mutable_row(sw));
    for (const PortRef& e : ends) {
      const Lid h = f.base_lid(e) + 1;
      if (f.base_lid(e) != 0) r.lfts.set_port(sw, h, high.lfts.port(sw, h));
    }
  }
  const int last = lanes - 1;
  for (const PortRef& s : ends) {
    const Lid sb = f.base_lid(s);
    if (sb == 0) continue;
    for (const PortRef& d : ends) {
      const Lid db = f.base_lid(d);
      if (db == 0 || d.node == s.node) continue;
      const int layer = base.layers.get(sb, db);
      r.layers.set(sb, db, layer);
      r.layers.set(sb + 1, db, layer);
      r.layers.set(sb, db + 1, last);
      r.layers.set(sb + 1, db + 1, last);
    }
  }
  r.num_layers = lanes;
  r.layers_ms = base.layers_ms;
  r.paths_ms = MsSince(t0) - base.layers_ms;
  r.notes = std::move(base.notes);
  r.notes.push_back("migration mode: base LIDs on layers 0.." + std::to_string(last - 1) +
                    ", highLIDs by updn on layer " + std::to_string(last));
  for (const std::string& n : high.notes) r.notes.push_back("highLIDs: " + n);
  *out = std::move(r);
  return Status::OK();
}

// Engine dmodc with memory: DmodcRouter::Reroute runs the engine's input checks and either its
// full pass or the incremental one proven equal to it, so the tables are the engine's. Its
// state is changed in place, so an exception half-way (out of memory) empties it: a later pass
// must never diff against half-updated tables.
Status RouteDmodcWithMemory(const RoutingInputs& inputs, RoutingMemory* memory,
                            RoutingOutput* out) {
  const auto t0 = std::chrono::steady_clock::now();
  if (!memory->dmodc) memory->dmodc.emplace();
  DmodcRouter& router = *memory->dmodc;
  try {
    SAR_RETURN_IF_ERROR(router.Reroute(inputs.EngineInput()));
  } catch (...) {
    memory->dmodc.reset();  // cannot throw, unlike making a fresh router here
    throw;
  }
  // The router keeps its own tables for the next pass, so the output gets a copy, made through
  // the sizing constructor: it asks for transparent huge pages, which the default copy would
  // not, and validation reads the tables by destination (a TLB miss per row with 4 KiB pages).
  const LftSet& kept = router.lfts();
  RoutingOutput r;
  r.lfts = LftSet(kept.num_switches(), kept.max_lid());
  for (int s = 0; s < kept.num_switches(); ++s) {
    std::copy(kept.row(s), kept.row(s) + kept.max_lid() + 1, r.lfts.mutable_row(s));
  }
  r.notes = router.notes();
  const DmodcRouter::Stats& st = router.last();
  char note[256];
  if (st.incremental) {
    std::snprintf(note, sizeof note,
                  "incremental reroute: %d switches recabled, %d cost rows recomputed, %d whole "
                  "rows and %d (switch, leaf) cells refilled, %.1f ms",
                  st.cables_changed, st.switches_recomputed, st.rows_refilled, st.cells_refilled,
                  st.ms);
  } else {
    std::snprintf(note, sizeof note, "full pass (%s), kept for incremental reroutes",
                  st.full_reason.c_str());
  }
  r.notes.push_back(note);
  r.paths_ms = MsSince(t0);
  *out = std::move(r);
  return Status::OK();
}

std::string Channel(const Fabric& f, PortId c) {
  const PortRef p = f.port_ref(c);
  return f.name(p.node) + "/" + std::to_string(p.port);
}

// Alltoall jobs first (engine "sar" on a 2-level fat-tree): each gets a per-job FORS plan
// (fors_job.h) before the engine runs, and the plan's entries for its hosts' base LIDs go to the
// engine as fixed entries (RoutingInput::fixed): SAR routes them first, balances every other job
// around their loads, and no later stage moves them, so the delta keep, the stability rule, the
// all-pairs budget and the layers all see the final tables. Jobs must not share hosts (entries
// are per destination), so a job overlapping an earlier one is routed by SAR.
struct AlltoallPlans {
  Ft2Topology topo;
  std::vector<ForsJobPlan> plans;
  std::vector<FixedEntry> entries;
};

void PlanAlltoallJobs(const RoutingInputs& in, AlltoallPlans* out, std::vector<std::string>* notes,
                      std::vector<ForsJobNone>* none) {
  std::vector<const ResolvedJob*> jobs;
  std::string names;
  for (const ResolvedJob& j : in.jobs) {
    if (j.pattern != JobPattern::kAllToAll) continue;
    jobs.push_back(&j);
    names += (names.empty() ? "" : " ") + j.id;
  }
  // Every alltoall job without a plan goes to *none with the reason (its "none" schedule file
  // says it; one rule for all callers).
  auto no_fors = [&](const ResolvedJob& job, std::string reason) {
    none->push_back({job.id, std::move(reason), job.endpoints.size()});
  };
  if (jobs.empty()) return;
  if (in.engine != "sar") {
    for (const ResolvedJob* job : jobs) {
      no_fors(*job, "routing engine " + in.engine + ", FORS needs engine sar");
    }
    return;
  }
  const Fabric& f = *in.fabric;
  if (const Status s = DetectFatTree2(f, &out->topo); !s.ok()) {
    notes->push_back(
        "alltoall jobs routed as ordinary SAR jobs, the fabric is not a 2-level "
        "fat-tree (" +
        s.message() + "): " + names);
    for (const ResolvedJob* job : jobs) {
      no_fors(*job, "the fabric is not a 2-level fat-tree (" + s.message() + ")");
    }
    return;
  }
  std::vector<uint8_t> taken(f.num_port_slots(), 0);
  std::vector<int> spine_load;
  ForsChannelLoads loads;  // the routes of the plans so far (joint planning)
  for (const ResolvedJob* job : jobs) {
    if (job->endpoints.size() < 2) {
      no_fors(*job, std::to_string(job->endpoints.size()) +
                        " of the job's hosts in the fabric: nothing to exchange");
      continue;
    }
    bool overlap = false;
    for (const PortRef& e : job->endpoints) overlap = overlap || taken[f.port_id(e)];
    if (overlap) {
      notes->push_back("alltoall job " + job->id +
                       " shares hosts with an earlier alltoall job: routed by SAR");
      no_fors(*job, "shares hosts with an earlier alltoall job: routed by SAR");
      continue;
    }
    ForsJobPlan plan;
    const Status s = PlanForsJobJointly(f, out->topo, *job, &loads, &spine_load, &plan);
    if (!s.ok()) {
      notes->push_back("alltoall job " + job->id + " routed by SAR: " + s.message());
      no_fors(*job, "routed by SAR: " + s.message());
      continue;
    }
    ForEachForsJobEntry(f, out->topo, plan, [out](int sw, Lid lid, uint8_t port) {
      out->entries.push_back({sw, lid, port});
    });
    for (const PortRef& e : job->endpoints) taken[f.port_id(e)] = 1;
    out->plans.push_back(std::move(plan));
  }
}

// After the engine: the plans' entries are in the tables (the engine routed with them; where it
// did not, as migration mode's base view or a test's engine, they are written over its tables,
// noted). Entries of different jobs are for different LIDs, so each plan is judged on the
// tables once all are in.
void CheckAlltoallJobs(const RoutingInputs& in, const AlltoallPlans& a, RoutingOutput* out) {
  if (a.plans.empty()) return;
  const Fabric& f = *in.fabric;
  uint64_t written = 0;
  for (const FixedEntry& x : a.entries) {
    if (x.lid > out->lfts.max_lid() || out->lfts.port(x.sw, x.lid) == x.port) continue;
    out->lfts.set_port(x.sw, x.lid, x.port);
    ++written;
  }
  if (written > 0) {
    out->notes.push_back("alltoall entries written over the engine's tables: " +
                         std::to_string(written) + " of " + std::to_string(a.entries.size()));
  }
  for (const ForsJobPlan& plan : a.plans) {
    const ForsJobStats& st = plan.stats;
    std::string note = "fors job " + plan.job_id + ": " + std::to_string(plan.hosts.size()) +
                       " hosts, " + std::to_string(st.phases) + " phases (lower bound " +
                       std::to_string(st.lower_bound) + "), spines " +
                       (st.spines_permuted ? "in a joint order from " : "") +
                       std::to_string(st.spine_offset) + "+" + std::to_string(st.spines_used) +
                       " of " + std::to_string(a.topo.num_spines());
    if (st.rerouted > 0) {
      note += ", " + std::to_string(st.rerouted) + " entries around failed links, " +
              std::to_string(st.moved) + " transfers moved to " + std::to_string(st.split_phases) +
              " extra phases";
    }
    if (st.compacted > 0) note += ", " + std::to_string(st.compacted) + " phases compacted away";
    const Status c = CheckForsJobOnTables(f, out->lfts, plan.hosts, plan.phases);
    note += c.ok() ? "; every phase conflict-free on the tables" : "; CHECK FAILED: " + c.message();
    out->notes.push_back(note);
  }
}

// The engine's tables for the pass: migration mode, dmodc with memory, or the engine itself,
// with `fixed` entries (alltoall plans) where the engine takes them.
Status RouteTables(const RoutingInputs& inputs, const RoutingEngine& engine,
                   const std::vector<FixedEntry>* fixed, RoutingOutput* out) {
  const bool dmodc_memory = inputs.memory != nullptr && engine.name() == "dmodc";
  if (inputs.options.migration) {
    SAR_RETURN_IF_ERROR(RouteMigration(inputs, engine, out));
    if (dmodc_memory) out->notes.push_back("full pass (migration mode: the memory is not used)");
    return Status::OK();
  }
  if (dmodc_memory) return RouteDmodcWithMemory(inputs, inputs.memory, out);
  RoutingInput in = inputs.EngineInput();
  in.fixed = fixed != nullptr && !fixed->empty() ? fixed : nullptr;
  return engine.Route(in, out);
}

// FORS only where it helps (docs/fors.md): the pass routed with every plan's entries (*out);
// each plan is judged against the same pass routed without FORS entries. Slower plans go to
// *none with the figures; the tables are then routed again with the plans kept (or are the
// plain ones when none is kept). Any failure keeps what *out holds.
void JudgeAlltoallJobs(const RoutingInputs& in, const RoutingEngine& engine, AlltoallPlans* a,
                       RoutingOutput* out, std::vector<std::string>* notes,
                       std::vector<ForsJobNone>* none) {
  if (a->plans.empty() || !in.options.fors_only_where_faster) return;
  const Fabric& f = *in.fabric;
  LftSet with = out->lfts;  // as CheckAlltoallJobs leaves them (migration mode writes over)
  for (const FixedEntry& x : a->entries) {
    if (x.lid <= with.max_lid()) with.set_port(x.sw, x.lid, x.port);
  }
  RoutingOutput plain;
  if (!RouteTables(in, engine, nullptr, &plain).ok()) return;
  std::vector<ForsVerdict> verdicts;
  JudgeForsPlans(f, in.jobs, a->plans, with, plain.lfts, in.options.threads, kDefaultForsJudgePairs,
                 &verdicts);
  std::vector<ForsJobPlan> kept;
  for (size_t i = 0; i < a->plans.size(); ++i) {
    const ForsVerdict& v = verdicts[i];
    if (!v.judged) {
      notes->push_back("fors job " + v.job_id +
                       ": kept unjudged (the flow model is over its bound or has no figure)");
    }
    if (v.keep) {
      kept.push_back(std::move(a->plans[i]));
      continue;
    }
    char why[200];
    std::snprintf(why, sizeof why,
                  "its FORS phases are slower than SAR's routes all at once (exchange %.1f "
                  "against %.1f, message / line rate): routed by SAR",
                  v.phased_time, v.plain_time);
    notes->push_back("alltoall job " + v.job_id + " " + why);
    none->push_back({v.job_id, why, a->plans[i].hosts.size()});
  }
  if (kept.size() == a->plans.size()) return;
  a->plans = std::move(kept);
  a->entries.clear();
  for (const ForsJobPlan& plan : a->plans) {
    ForEachForsJobEntry(f, a->topo, plan, [a](int sw, Lid lid, uint8_t port) {
      a->entries.push_back({sw, lid, port});
    });
  }
  if (a->plans.empty() || !RouteTables(in, engine, &a->entries, out).ok()) {
    *out = std::move(plain);
    for (const ForsJobPlan& plan : a->plans) {
      none->push_back(
          {plan.job_id, "FORS entries withdrawn, routing with them failed", plan.hosts.size()});
    }
    a->plans.clear();
    a->entries.clear();
  }
}

}  // namespace

RoutingInput RoutingInputs::EngineInput() const {
  RoutingInput in;
  in.fabric = fabric;
  // The engine gets the lanes the tables' consumer can carry: a layered engine then needs (and
  // fails when it needs more than) that many, instead of spreading routes over lanes the
  // consumer drops (OpenSM's file engine loads no SL at all).
  in.num_vls =
      options.max_layers > 0 ? std::min(options.num_vls, options.max_layers) : options.num_vls;
  in.jobs = jobs.empty() ? nullptr : &jobs;
  in.classes = classes.of_node.empty() ? nullptr : &classes;
  in.roots = roots;
  in.threads = options.threads;
  in.allow_disconnected = options.allow_disconnected;
  // One lane (OpenSM's file engine, sar-filterd's file mode): no lane of their own for the
  // switch-LID routes, so the engines layer HCA pairs only (the one-lane rule, RunRoutingPass).
  in.switch_lids = options.switch_lids && in.num_vls > 1 && !options.migration;
  in.previous = options.delta && previous.num_switches() > 0 ? &previous : nullptr;
  in.previous_jobs = in.previous != nullptr && previous_jobs ? &*previous_jobs : nullptr;
  in.sar_refine = options.sar_refine;
  in.sar_all_pairs_budget = options.sar_all_pairs_budget;
  in.sar_refine_work = options.sar_refine_work;
  in.sar_no_regret = options.sar_no_regret;
  return in;
}

Status LoadRoutingInputs(const Fabric& fabric, const RoutingOptions& options, RoutingInputs* out) {
  JobMapping mapping;
  bool missing = false;
  if (!options.mapping_path.empty()) {
    struct stat st;
    if (options.mapping_optional && ::stat(options.mapping_path.c_str(), &st) != 0 &&
        errno == ENOENT) {
      missing = true;
    } else {
      SAR_RETURN_IF_ERROR(ReadJobMapping(options.mapping_path, &mapping));
    }
  }
  return Settle(fabric, options, std::move(mapping), missing, out);
}

Status LoadRoutingInputs(const Fabric& fabric, const RoutingOptions& options, JobMapping mapping,
                         RoutingInputs* out) {
  return Settle(fabric, options, std::move(mapping), false, out);
}

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
  ValidationReport& r = *report;
  r = ValidationReport();
  r.layers = std::max(num_layers, 1);
  SAR_RETURN_IF_ERROR(lfts.CheckFits(fabric));

  // One sweep traces every route and builds the layers' dependency graphs. The dependency
  // check is then judged only if the routes are delivered and fit the lanes, as if it ran after.
  const auto t0 = std::chrono::steady_clock::now();
  const int usable = UsableLanes(options.num_vls, options.max_layers);
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
  SAR_RETURN_IF_ERROR(AnalyseRouting(fabric, lfts, ao, analysis));
  r.check_ms = MsSince(t0);
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
  if (options.migration) SAR_RETURN_IF_ERROR(CheckMigrationLayers(fabric, layers, usable - 1));

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

Status ValidateRouting(const Fabric& fabric, const LftSet& lfts, const VirtualLayers* layers,
                       int num_layers, const ValidationOptions& options, ValidationReport* report) {
  AnalysisResult analysis;
  return ValidateRouting(fabric, lfts, layers, num_layers, options, AnalysisOptions(), &analysis,
                         report);
}

Status RunRoutingPass(const RoutingInputs& inputs, const RoutingEngine& engine, RoutingOutput* out,
                      ValidationReport* report, const AnalysisOptions& also,
                      AnalysisResult* analysis, std::vector<ForsJobPlan>* fors,
                      std::vector<ForsJobNone>* fors_none) {
  *report = ValidationReport();
  AlltoallPlans alltoall;
  std::vector<std::string> plan_notes;
  std::vector<ForsJobNone> none;
  PlanAlltoallJobs(inputs, &alltoall, &plan_notes, &none);
  // FORS given up for every planned job (routing or validation failed with its entries).
  auto withdraw = [&](const std::string& why) {
    out->notes.push_back(why);
    for (const ForsJobPlan& plan : alltoall.plans) {
      none.push_back({plan.job_id, why, plan.hosts.size()});
    }
    alltoall.plans.clear();
  };
  if (const Status r = RouteTables(inputs, engine, &alltoall.entries, out); !r.ok()) {
    if (alltoall.plans.empty()) return r;
    // Never fail a reroute for FORS: route without the alltoall entries.
    SAR_RETURN_IF_ERROR(RouteTables(inputs, engine, nullptr, out));
    withdraw("FORS entries withdrawn, routing with them failed: " + r.message());
  }
  JudgeAlltoallJobs(inputs, engine, &alltoall, out, &plan_notes, &none);
  out->notes.insert(out->notes.end(), plan_notes.begin(), plan_notes.end());
  // The engine's tables before the check writes any entry over them (migration mode), kept
  // only while FORS entries may have to be taken back.
  LftSet engine_tables;
  if (!alltoall.plans.empty() && inputs.options.migration) engine_tables = out->lfts;
  CheckAlltoallJobs(inputs, alltoall, out);
  // The analyses follow the LID each source uses (osrm2/osrm3: its group's).
  AnalysisOptions with = also;
  if (!out->source_lid_offset.empty()) with.source_lid_offset = &out->source_lid_offset;
  AnalysisResult own;
  auto validate = [&] {
    return ValidateRouting(*inputs.fabric, out->lfts,
                           out->layers.size() > 0 ? &out->layers : nullptr, out->num_layers,
                           ValidationFor(inputs.options), with, analysis ? analysis : &own, report);
  };
  Status s = validate();
  if (!s.ok() && !alltoall.plans.empty()) {
    // Never fail a reroute for FORS: the engine's tables without the alltoall entries are what
    // the pass would have given.
    const std::string why = s.message();
    if (inputs.options.migration) {
      out->lfts = std::move(engine_tables);
    } else {
      SAR_RETURN_IF_ERROR(RouteTables(inputs, engine, nullptr, out));
    }
    withdraw("FORS entries withdrawn, the tables with them are invalid: " + why);
    with.source_lid_offset = out->source_lid_offset.empty() ? nullptr : &out->source_lid_offset;
    s = validate();
  }
  const int usable = UsableLanes(inputs.options.num_vls, inputs.options.max_layers);
  DeadlockReport between_cas;
  if (!s.ok() && report->deadlock_checked && !report->deadlock.deadlock_free &&
      report->deadlock.switch_lids && out->layers.size() == 0 && usable > 1 &&
      !inputs.options.migration &&
      CheckDeadlock(*inputs.fabric, out->lfts, nullptr, &between_cas, /*switch_lids=*/false).ok() &&
      between_cas.deadlock_free) {
    // An engine without layers of its own (minhop, updn, dmodc, ...) whose one layer is cyclic
    // only through the routes from and to switch LIDs (dmodc's may go down and then up): its
    // tables get virtual layers as dfsssp's do, if the consumer carries them. A cycle between
    // CAs stays the engine's failure.
    LayerOptions lo;
    lo.max_layers = usable;
    lo.threads = inputs.options.threads;
    lo.balance = false;  // only the layers deadlock freedom needs
    lo.switch_lids = inputs.options.switch_lids;
    VirtualLayers layers;
    LayerStats stats;
    const Status ls = AssignVirtualLayers(*inputs.fabric, out->lfts, lo, &layers, &stats);
    if (ls.ok()) {
      out->notes.push_back(
          "virtual layers: the engine's tables have a cyclic channel dependency (" + s.message() +
          "); " + std::to_string(stats.layers_needed) + " layers make them deadlock-free" +
          (stats.up_down_first ? " (up*/down* routes kept in layer 0)" : ""));
      out->layers = std::move(layers);
      out->num_layers = std::max(1, stats.layers_used);
      s = ValidateRouting(*inputs.fabric, out->lfts, &out->layers, out->num_layers,
                          ValidationFor(inputs.options), with, analysis ? analysis : &own, report);
    } else {
      s = Status::Failed(s.message() + "; virtual layers cannot fix it: " + ls.message());
    }
  }
  if (fors != nullptr) *fors = std::move(alltoall.plans);
  if (fors_none != nullptr) *fors_none = std::move(none);
  return s;
}

Status RunRoutingPass(const RoutingInputs& inputs, RoutingOutput* out, ValidationReport* report,
                      const AnalysisOptions& also, AnalysisResult* analysis,
                      std::vector<ForsJobPlan>* fors, std::vector<ForsJobNone>* fors_none) {
  const std::unique_ptr<RoutingEngine> engine = MakeRoutingEngine(inputs.engine);
  if (engine == nullptr) return Status::InvalidArgument("unknown engine '" + inputs.engine + "'");
  return RunRoutingPass(inputs, *engine, out, report, also, analysis, fors, fors_none);
}

}  // namespace sar
