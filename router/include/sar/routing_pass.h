// The routing pass: what every caller of an engine does around it, in one place.
//
//   LoadRoutingInputs  fabric + options -> the engine to run and its inputs (job mapping with
//                      patterns, node classes, roots), with the facts worth logging as notes;
//   ValidateRouting    the one definition of valid tables (see below);
//   RunRoutingPass     both around the engine.
//
// `sar-route route`, `sar-route compare`, sar-filterd's planner (file mode and dry run) and the
// OpenSM plugin (through sar/c.h) all use these, so "valid" means the same everywhere.
//
// The empty-mapping rule lives here: engine "sar" with no job (no mapping given, a missing
// optional mapping, or one that lists no jobs) routes as plain "dfsssp", noted. SAR without jobs
// is DFSSSP's balancing anyway; naming the engine used keeps logs and comparisons honest.
//
// The alltoall rule lives here too: with engine "sar" on a 2-level fat-tree (DetectFatTree2),
// each alltoall job gets a per-job FORS plan (fors_job.h) before the engine runs; the entries
// for the job's base LIDs go to the engine as fixed entries (RoutingInput::fixed), which SAR
// routes first and balances every other job around, so every stage of the engine (delta keep,
// stability, refinement and its all-pairs budget, layers) judges the final tables. The plans go
// to *fors (if given) and are noted (phases against the lower bound, checked on the tables).
// Jobs get different spine offsets (ChooseSpineOffset). Guaranteed: no link twice within one
// phase of one job. Not guaranteed: anything across jobs (they are not synchronised). Elsewhere
// alltoall jobs are SAR jobs, noted once. FORS never fails a pass: a job it cannot plan is routed
// by SAR, and if routing or validation fails with the FORS entries, the pass routes again
// without them (noted). In migration mode the entries are written over the engine's base tables
// after it ran (noted) and judged by the validation.
//
// The memory rule lives here too: a caller that routes one fabric again and again (the OpenSM
// plugin) may give the pass a RoutingMemory (RoutingInputs::memory). With engine "dmodc" outside
// migration mode the pass then routes through the memory's DmodcRouter (sar/dmodc.h), whose
// Reroute gives the engine's tables entry for entry, recomputing only what changed
// switch-to-switch cables reach; the notes say "incremental reroute: <what was recomputed>" or
// "full pass (<why>)". Validation is the same as always.
// Thread-safety: plain values and pure functions, except that a pass updates the RoutingMemory
// it is given (one pass at a time per memory).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sar/analysis.h"
#include "sar/deadlock.h"
#include "sar/dmodc.h"
#include "sar/engine.h"
#include "sar/fabric.h"
#include "sar/jobs.h"
#include "sar/lft.h"
#include "sar/node_classes.h"
#include "sar/status.h"
#include "sar/trace.h"

namespace sar {

struct ForsJobPlan;  // fors_job.h
struct ForsJobNone;  // fors_job.h

struct RoutingOptions {
  std::string engine = "sar";
  /// Job mapping file (docs/formats.md); "" = none.
  std::string mapping_path;
  /// A mapping_path that does not exist counts as "no jobs" instead of an error (the plugin:
  /// sar-filterd has not written one yet).
  bool mapping_optional = false;
  /// Which HCA ports of a job's hosts exchange traffic (sar/jobs.h, ResolvedJob::Sends):
  /// rail-aligned by default.
  JobHcaPairs job_hca_pairs = JobHcaPairs::kRails;
  /// Node class files (node_classes.h); "" = none.
  std::string cn_guids_path, io_guids_path;
  /// Up*/Down* root switches by name; empty = automatic.
  std::vector<std::string> root_names;
  /// Virtual lanes usable as virtual layers (1..15).
  int num_vls = 8;
  /// Layers the consumer of the tables can carry: 0 = num_vls. OpenSM's file engine loads no
  /// per-route SL, so sar-filterd's file mode sets 1. The engine is given min(num_vls,
  /// max_layers) lanes, so a layered engine fails when it would need more.
  int max_layers = 0;
  int threads = 0;  // 0 = all hardware threads
  bool allow_disconnected = false;
  /// SAR's refinement, its all-pairs budget and its work limit (RoutingInput::sar_refine,
  /// sar_all_pairs_budget, sar_refine_work).
  bool sar_refine = true;
  double sar_all_pairs_budget = 1.25;
  uint64_t sar_refine_work = kDefaultSarRefineWork;
  bool sar_no_regret = false;  // RoutingInput::sar_no_regret
  /// Alltoall jobs keep FORS only where its phases are not slower for the job than the pass's
  /// routes without FORS all at once (JudgeForsPlans, docs/fors.md "Only where it helps"); the
  /// others get SAR's routes and a "none" schedule. Off by default: the flow model judges every
  /// alltoall job that shares channels with other jobs slower in phases (sar-route
  /// --fors-only-where-faster, the plugin's fors_only_where_faster).
  bool fors_only_where_faster = false;
  /// Migration mode, for the baseLID/highLID update protocol (SAR paper Sec. 3.3): every
  /// endpoint port has LMC 1. Its base LID is routed by `engine` on layers 0..n-2, its highLID
  /// (base + 1) by Up*/Down* on layer n-1, n = min(num_vls, max_layers) >= 2. The highLID
  /// entries thus depend on the fabric, its LIDs and root_names only: no job mapping changes
  /// them, so traffic moved to highLIDs keeps its paths while the base tables are replaced.
  /// Switch LIDs are routed by `engine`. A route's layer follows its destination (an LFT
  /// forwards by destination only): to a highLID, layer n-1; to a base LID, the engine's layer
  /// of (source base LID, destination). Packets never mix base and high, but a mixed pair still
  /// gets a layer whose dependencies the check has seen.
  bool migration = false;
  /// Minimal-delta updates: with previous tables (RoutingInputs::previous), the sar and dfsssp
  /// engines keep every previous entry that costs no quality (engines/delta_keep.h). False: a
  /// full recompute even when previous tables are given.
  bool delta = true;
  /// Deadlock freedom as OpenSM's dfsssp promises it: switch port-0 LIDs (and so management
  /// and SHARP traffic to switches) are sources and destinations in the channel dependency
  /// check and in the layered engines' layers. An engine without layers whose one layer is then
  /// cyclic gets layers from its tables (noted) when more than one lane is usable. The one-lane
  /// rule: with one usable lane (max_layers 1, num_vls 1) the switch-LID routes cannot have a
  /// lane of their own, so the engines layer and ValidateRouting checks CA pairs only
  /// (ValidationReport::deadlock.switch_lids says which check ran). Migration mode keeps the check
  /// between CAs (its layer discipline has no place for switch-LID routes yet). False: routes
  /// between CAs only everywhere (the check before issue 33; `--hca-pairs-only`, for comparison).
  bool switch_lids = true;
};

/// What a routing pass keeps between calls (RoutingInputs::memory): the dmodc state of the last
/// pass that used it. Whatever fabric the next pass gets, its tables equal a pass without memory
/// (a fabric that differs in more than switch cables is a full pass). Used by engine "dmodc"
/// outside migration mode (there the highLIDs are routed by updn and the planner runs on another
/// thread than the routing callback); other engines leave it alone.
struct RoutingMemory {
  std::optional<DmodcRouter> dmodc;  // made by the first pass that uses it
};

/// What LoadRoutingInputs settled. Points into the Fabric it was given (keep that alive).
struct RoutingInputs {
  const Fabric* fabric = nullptr;
  std::string engine;  // the engine to run (options.engine, or "dfsssp" by the empty-mapping rule)
  JobMapping mapping;
  std::vector<ResolvedJob> jobs;
  NodeClasses classes;  // empty = every HCA is a compute node
  std::vector<NodeId> roots;
  RoutingOptions options;
  /// Unknown hosts and class GUIDs, the empty-mapping fallback.
  std::vector<std::string> notes;
  /// The tables the switches hold now (`sar-route route --previous`, the plugin's current LFTs,
  /// replay's previous event); empty (no switches) = none. Set by the caller after
  /// LoadRoutingInputs; used when options.delta.
  LftSet previous;
  /// The job set `previous` was computed for (`route --previous-jobs`, the plugin's last
  /// mapping, replay's previous event); unset = unknown (an empty set is a known one); used
  /// with `previous`.
  std::optional<std::vector<ResolvedJob>> previous_jobs;
  /// State kept between passes (the memory rule above); null = none, every pass from scratch.
  /// Set by the caller after LoadRoutingInputs; the pass updates it.
  RoutingMemory* memory = nullptr;

  /// The engine's input (num_vls: min(num_vls, max_layers)); valid while *this lives.
  RoutingInput EngineInput() const;
};

/// Reads options.mapping_path and the class files, resolves jobs and roots against `fabric`.
/// Errors: Corruption / IOError naming file:line, InvalidArgument (unknown root, unknown
/// engine, an HCA in both class files).
Status LoadRoutingInputs(const Fabric& fabric, const RoutingOptions& options, RoutingInputs* out);
/// The same with the job set already in memory (sar-filterd); options.mapping_path is ignored
/// except to name the mapping in notes.
Status LoadRoutingInputs(const Fabric& fabric, const RoutingOptions& options, JobMapping mapping,
                         RoutingInputs* out);

struct ValidationOptions {
  int num_vls = 8;     // usable virtual lanes
  int max_layers = 0;  // 0 = num_vls; else min(num_vls, max_layers)
  bool allow_disconnected = false;
  /// False for tables read back from a subnet manager whose per-route SLs are unknown (compare's
  /// OpenSM rows, eval without --layers): the channel dependency check is skipped and the report
  /// says so.
  bool layers_known = true;
  /// Also compare delivered routes with the shortest paths (eval's report; not a validity rule).
  bool check_min_hop = false;
  /// Migration mode (RoutingOptions::migration): also require LMC 1 on every endpoint, every
  /// route to a highLID in the last usable layer and no route to a base LID there.
  bool migration = false;
  /// Switch port-0 LIDs are sources and destinations of the dependency check (RoutingOptions::
  /// switch_lids); false: routes between HCAs only.
  bool switch_lids = true;
  int threads = 0;
};

struct ValidationReport {
  TraceReport trace;        // every pair traced (examples: the first problem routes)
  DeadlockReport deadlock;  // meaningful when deadlock_checked
  // false with layers_known = false, or when an earlier check failed
  bool deadlock_checked = false;
  int layers = 1;       // layers the routes use
  double check_ms = 0;  // the one sweep that traces and checks dependencies
};

/// The one definition of valid tables, checked in this order:
///  1. the tables fit the fabric (one per switch);
///  2. every endpoint reaches every other endpoint LID (unless allow_disconnected), no loops;
///  3. the routes use at most min(num_vls, max_layers) virtual layers;
///  4. migration mode only: the layer discipline of RoutingOptions::migration (LMC 1, highLID
///     routes alone in the last usable layer);
///  5. every virtual layer's channel dependency graph is acyclic (layers == nullptr: every
///     route is in layer 0), counting the routes from and to switch LIDs (options.switch_lids).
/// `num_layers` is the layer count the tables come with (RoutingOutput::num_layers, or
/// layers->num_layers()). Invalid tables give Status::Failed with one message format:
///   "invalid routing: <n> unreachable pairs, <m> loops; first: <src> -> lid 0x.. (<dst>): ..."
///   "invalid routing: the routes need <n> virtual layers, <m> usable"
///   "invalid routing: migration mode: <what>"
///   "invalid routing: virtual layer <L> has a cyclic channel dependency: <sw>/<port> -> ..."
/// *report is filled as far as the checks got. Tracing and the dependency check are one sweep
/// over the destinations (AnalyseRouting).
Status ValidateRouting(const Fabric& fabric, const LftSet& lfts, const VirtualLayers* layers,
                       int num_layers, const ValidationOptions& options, ValidationReport* report);
/// The same verdict, from a sweep that also computes what `also` asks for (its `what` bits,
/// jobs, traffic; its layers and threads are ValidateRouting's): eval gets its metrics and link
/// loads from the sweep that validates. *analysis receives the whole result.
Status ValidateRouting(const Fabric& fabric, const LftSet& lfts, const VirtualLayers* layers,
                       int num_layers, const ValidationOptions& options,
                       const AnalysisOptions& also, AnalysisResult* analysis,
                       ValidationReport* report);

/// The validation options implied by the routing options.
ValidationOptions ValidationFor(const RoutingOptions& options);

/// Runs inputs.engine on the inputs (in migration mode: on the base LIDs, with Up*/Down* on the
/// highLIDs, combined as RoutingOptions::migration says), then ValidateRouting. Engine notes are
/// appended to out->notes. On error *out is unspecified. With `analysis`, the validating sweep also
/// computes what `also` asks for (sar-filterd's planner judges its new tables by their metrics) and
/// *analysis receives it. The analyses follow out->source_lid_offset (osrm2/osrm3) when the
/// engine sets it.
/// `fors` (if given) receives the FORS plans of the alltoall jobs whose entries are in the tables,
/// `fors_none` (if given) every other alltoall job with the reason it has none (another engine,
/// not a 2-level fat-tree, fewer than 2 hosts, hosts shared with an earlier alltoall job, two
/// leaves without a common working spine, entries withdrawn): the "none" schedule file's reason.
/// With inputs.memory and the engine dmodc (not in migration mode) the tables come from the
/// memory's DmodcRouter::Reroute (the same input checks and tables as the engine) and a note says
/// whether the pass was incremental and what it recomputed, or why it was a full one; an
/// exception inside the reroute empties the memory (the next pass is a full one).
Status RunRoutingPass(const RoutingInputs& inputs, RoutingOutput* out, ValidationReport* report,
                      const AnalysisOptions& also = AnalysisOptions(),
                      AnalysisResult* analysis = nullptr, std::vector<ForsJobPlan>* fors = nullptr,
                      std::vector<ForsJobNone>* fors_none = nullptr);
/// The same with a given engine instead of inputs.engine (tests inject their own).
Status RunRoutingPass(const RoutingInputs& inputs, const RoutingEngine& engine, RoutingOutput* out,
                      ValidationReport* report, const AnalysisOptions& also = AnalysisOptions(),
                      AnalysisResult* analysis = nullptr, std::vector<ForsJobPlan>* fors = nullptr,
                      std::vector<ForsJobNone>* fors_none = nullptr);

}  // namespace sar
