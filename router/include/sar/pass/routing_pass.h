// The routing pass: what every caller of an engine does around it, in one place, as stages
// (router/src/pass/, one file each):
//
//   inputs        fabric + options -> the engine to run and its inputs (LoadRoutingInputs), with
//                 the empty-mapping rule: engine "sar" without jobs routes as "dfsssp", noted;
//   delta         previous tables and jobs for the engines' minimal-delta keep and stability;
//   FORS overlay  engine "sar" on a 2-level fat-tree: alltoall jobs get per-job FORS plans first,
//                 routed as fixed entries (withdrawn, noted, if the pass fails with them);
//   engine        the engine, or one of its wrappers: migration mode (base LIDs by the engine,
//                 highLIDs by updn) or the dmodc memory (RoutingMemory, incremental reroutes);
//   validation    the one definition of valid tables (ValidateRouting);
//   layer guard   an engine without layers cyclic only through switch-LID routes gets layers.
//
// RunRoutingPass(RoutingRequest) runs them all and returns one RoutingResult. `sar-route route`,
// `compare`, `study`, `replay`, `eval --source-lids`, sar-filterd's planner and the OpenSM plugin
// (through sar/c.h) all route through it, so each gets the same rules and "valid" means the
// same everywhere. Each stage's file says its rule in full.
// Thread-safety: plain values and pure functions, except that a pass updates the RoutingMemory
// it is given (one pass at a time per memory).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sar/analysis/analysis.h"
#include "sar/analysis/deadlock.h"
#include "sar/analysis/trace.h"
#include "sar/engines/dmodc.h"
#include "sar/engines/engine.h"
#include "sar/fors/fors_job.h"
#include "sar/model/fabric.h"
#include "sar/model/jobs.h"
#include "sar/model/lft.h"
#include "sar/model/node_classes.h"
#include "sar/status.h"

namespace sar {

struct RoutingOptions {
  std::string engine = "sar";
  /// Job mapping file (docs/formats.md); "" = none.
  std::string mapping_path;
  /// A mapping_path that does not exist counts as "no jobs" instead of an error (the plugin:
  /// sar-filterd has not written one yet).
  bool mapping_optional = false;
  /// Which HCA ports of a job's hosts exchange traffic (sar/model/jobs.h, ResolvedJob::Sends):
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
  /// RoutingInput::sar_no_regret, on by default in every caller of the pass (route, replay,
  /// study, the plugin, sar-filterd): no job slower than under dfsssp (issue 32). Its cost is
  /// bounded by kSarNoRegretMaxFlows (skipped, noted, above it).
  bool sar_no_regret = true;
  /// Alltoall jobs keep FORS only where its phases are not slower for the job than the pass's
  /// routes without FORS all at once (JudgeForsPlans, docs/fors.md "Only where it helps"); the
  /// others get SAR's routes and a "none" schedule. Off by default: the flow model judges every
  /// alltoall job that shares channels with other jobs slower in phases (sar-route
  /// --fors-only-where-faster, the plugin's fors_only_where_faster).
  bool fors_only_where_faster = false;
  /// Migration mode, for the baseLID/highLID update protocol (SAR paper Sec. 3.3): LMC 1, base
  /// LIDs by `engine`, highLIDs by Up*/Down* on the last usable layer (pass/migration.cc).
  bool migration = false;
  /// Minimal-delta updates: with previous tables (RoutingInputs::previous), the sar and dfsssp
  /// engines keep every previous entry that costs no quality (engines/delta_keep.h). False: a
  /// full recompute even when previous tables are given.
  bool delta = true;
  /// Switch port-0 LIDs are sources and destinations of the deadlock check and the engines'
  /// layers, as in OpenSM's dfsssp (the one-lane rule and the layer guard: pass/validation.cc,
  /// pass/layer_guard.cc). False: routes between CAs only (`--hca-pairs-only`).
  bool switch_lids = true;
};

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

/// What the last valid tables left for the delta validation (ValidateRouting with a baseline):
/// the fabric they were checked on, a digest of them and their layers, the options, and their
/// channel dependency graphs (after delta checks a superset: see ValidateRouting).
struct ValidationBaseline {
  bool valid = false;  // false: none yet, the next check is a full one
  // The fabric: per port slot its node, LID, LMC and peer.
  std::vector<NodeId> port_node;
  std::vector<Lid> base_lid;
  std::vector<uint8_t> lmc;
  std::vector<PortId> peer;
  int num_switches = 0;
  Lid max_lid = 0;
  uint64_t tables_digest = 0;
  uint64_t layers_digest = 0;  // VirtualLayers::Digest, 0 without layers
  bool has_layers = false;
  ValidationOptions options;
  bool all_lids = true;     // AnalysisOptions::trace.all_lids of the check
  DependencyGraphs graphs;  // with options.layers_known
};

/// What a routing pass keeps between calls (RoutingInputs::memory): the validation baseline of
/// its last valid tables, and the dmodc state of the last pass that used it. Whatever fabric the
/// next pass gets, its tables equal a pass without memory (a fabric that differs in more than
/// switch cables is a full pass). The dmodc state is used by engine "dmodc" outside migration
/// mode (there the highLIDs are routed by updn and the planner runs on another thread than the
/// routing callback); other engines leave it alone.
struct RoutingMemory {
  std::optional<DmodcRouter> dmodc;  // made by the first pass that uses it
  /// With options.delta and previous tables, the validation checks only what changed since.
  ValidationBaseline validation;
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
  /// LoadRoutingInputs (RoutingRequest::previous); used when options.delta (pass/delta.cc).
  LftSet previous;
  /// The job set `previous` was computed for (`route --previous-jobs`, the plugin's last
  /// mapping, replay's previous event); unset = unknown (an empty set is a known one); used
  /// with `previous`.
  std::optional<std::vector<ResolvedJob>> previous_jobs;
  /// State kept between passes (pass/dmodc_memory.cc); null = none, every pass from scratch.
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

struct ValidationReport {
  TraceReport trace;        // every pair traced (examples: the first problem routes)
  DeadlockReport deadlock;  // meaningful when deadlock_checked
  // false with layers_known = false, or when an earlier check failed
  bool deadlock_checked = false;
  int layers = 1;       // layers the routes use
  double check_ms = 0;  // the one sweep that traces and checks dependencies
  /// The delta validation: destination LIDs traced (trace counts only their pairs; deadlock's
  /// dependencies count the baseline's too); -1 = a full check, every destination.
  int64_t delta_lids = -1;
  /// Why the check was a full one where a baseline was given ("" = it was not, or none given).
  std::string full_because;
  /// The delta check found a cycle in the baseline's graphs with the changed routes' added, so
  /// the full check gave the verdict (the baseline may hold dependencies no route has now).
  bool delta_cycle_rechecked = false;
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

/// The same verdict as ValidateRouting, checking only what changed since the last valid tables
/// where it can. *baseline (in/out) is what they left: when it describes `previous` (the tables
/// the switches hold) on this fabric (its switch-to-switch cables may differ) with the same
/// layers and options, and `also` asks for no more than the validation, only the destination
/// LIDs whose routes may differ are traced: those whose LFT column differs from `previous`, and
/// those some switch forwards through a port whose cable changed. Their dependencies are added
/// to the baseline's graphs (which hold every unchanged route's); no cycle there proves the
/// tables deadlock-free, a cycle is judged by the full check. Anything else (an empty
/// `previous`, no baseline) is the full check. Valid tables become the baseline (the graphs
/// searched: a superset of theirs after a delta check); invalid ones leave it alone.
Status ValidateRouting(const Fabric& fabric, const LftSet& previous, const LftSet& lfts,
                       const VirtualLayers* layers, int num_layers,
                       const ValidationOptions& options, const AnalysisOptions& also,
                       AnalysisResult* analysis, ValidationBaseline* baseline,
                       ValidationReport* report);

/// The validation options implied by the routing options.
ValidationOptions ValidationFor(const RoutingOptions& options);

/// One routing pass's request: the options, and what the caller holds in memory instead of files.
struct RoutingRequest {
  const Fabric* fabric = nullptr;  // kept alive by the caller while the result is used
  RoutingOptions options;
  /// The job set in memory (sar-filterd, replay, study); unset = read options.mapping_path
  /// (which then only names the mapping in notes).
  std::optional<JobMapping> mapping;
  /// The tables the switches hold now (RoutingInputs::previous); empty = none.
  LftSet previous;
  /// The job set `previous` was computed for, resolved with options.job_hca_pairs
  /// (RoutingInputs::previous_jobs); unset = unknown.
  std::optional<JobMapping> previous_mapping;
  /// State kept between passes (RoutingInputs::memory); null = none.
  RoutingMemory* memory = nullptr;
  /// Runs this engine instead of the one the inputs settled (tests inject their own).
  const RoutingEngine* engine = nullptr;
  /// What the validating sweep also computes (its layers and threads are the pass's); jobs
  /// null = the pass's resolved jobs.
  AnalysisOptions also;
};

/// Everything one pass gives. On a validation failure (Status::Failed from the validation) the
/// tables, report and notes are those judged; on other errors only the notes so far are meaningful.
struct RoutingResult {
  /// What the inputs stage settled: inputs.engine is the engine used (the empty-mapping rule),
  /// inputs.jobs the resolved jobs, inputs.notes its notes.
  RoutingInputs inputs;
  /// Tables, layers, the notes of the engine and the later stages, the engine's timings.
  RoutingOutput output;
  ValidationReport report;  // report.check_ms: the validation's time
  AnalysisResult analysis;  // what RoutingRequest::also asked for, from the validating sweep
  /// The FORS plans whose entries are in the tables, and every other alltoall job with the reason
  /// it has none (another engine, not a 2-level fat-tree, fewer than 2 hosts, hosts shared with
  /// an earlier alltoall job, no common working spine, entries withdrawn).
  std::vector<ForsJobPlan> fors;
  std::vector<ForsJobNone> fors_none;
  /// The validation stage ran: a Status::Failed of the pass is then its verdict on the tables
  /// (output, report, analysis as judged), not a failure to route.
  bool validated = false;
  double inputs_ms = 0;  // reading and settling the inputs
  double route_ms = 0;   // output.paths_ms + output.layers_ms
  /// inputs.notes, then output.notes: everything the pass says, in order.
  std::vector<std::string> Notes() const;
};

/// The routing pass: the inputs stage, then the stages below. Errors: the inputs stage's
/// (Corruption / IOError naming file:line, InvalidArgument), the engine's, or Status::Failed
/// from the validation (ValidateRouting's messages).
Status RunRoutingPass(const RoutingRequest& request, RoutingResult* result);
/// The stages after the inputs, on inputs the caller settled (sar-filterd judges the current
/// tables with them first); `engine` null = inputs.engine. result->inputs is left alone (it may
/// be `inputs` itself). The analyses follow output.source_lid_offset (osrm2/osrm3) when the
/// engine sets it. With inputs.memory and the engine dmodc (not in migration mode) an exception
/// inside the reroute empties the memory (the next pass is a full one).
Status RunRoutingPass(const RoutingInputs& inputs, const RoutingEngine* engine,
                      const AnalysisOptions& also, RoutingResult* result);

/// The same pass with its result spread over separate outputs (kept for the unit tests written
/// against it; new code uses RoutingResult).
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
