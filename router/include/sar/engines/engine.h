// Routing engines: one interface, one file per engine (router/src/engines/<name>.cc), as in
// OpenSM. An engine turns a fabric with LIDs into linear forwarding tables for every switch and,
// if it needs them for deadlock freedom, a virtual layer for every endpoint-to-endpoint route.
//
// Engines: "minhop", "updn" (Up*/Down*), "dfsssp", "sar" (scheduling-aware DFSSSP), "dmodk",
// "dmodc" (closed-form fat-tree routing, Gliksberg et al. 2020), "sar-dmodc" (dmodc with
// job-local node indices), "osrm2" and "osrm3" (Yuan et al.'s optimal oblivious single-path
// routings, one LID per source group).
// Every engine routes every LID of the fabric: each LID of each cabled HCA port (all 2^LMC of
// them) and each switch's port-0 LID, from every switch. Engines never print; they report
// through RoutingOutput and Status.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/model/jobs.h"
#include "sar/model/lft.h"
#include "sar/model/node_classes.h"
#include "sar/status.h"

namespace sar {

struct FlowJob;  // sar/analysis/flows.h

/// SAR's refinement work limit by default (RoutingInput::sar_refine_work): 2^28 search steps.
inline constexpr uint64_t kDefaultSarRefineWork = uint64_t{1} << 28;
/// The largest accepted (2^40 steps: hours of search).
inline constexpr uint64_t kMaxSarRefineWork = uint64_t{1} << 40;
/// The largest accepted all-pairs budget (RoutingInput::sar_all_pairs_budget; 0 = no cap). One
/// range for every configuration reader (osmsar.conf, sar-filterd's YAML).
inline constexpr double kMaxSarAllPairsBudget = 1000;

/// One table entry decided before the engine runs (RoutingInput::fixed): switch `sw` (index
/// into the fabric's switches) forwards `lid` (an HCA port's base LID) to `port`.
struct FixedEntry {
  int sw = 0;
  Lid lid = 0;
  uint8_t port = 0;
};

struct RoutingInput {
  /// The fabric with its LIDs set (AssignLids or a guid2lid file): every cabled HCA port needs
  /// one; a switch without a LID is simply not a destination. The LMC is the ports' own.
  const Fabric* fabric = nullptr;
  /// Virtual lanes usable as virtual layers (1..15); engines that need layers fail when they
  /// would need more.
  int num_vls = 8;
  /// Running jobs (SAR); null or empty = none. Every endpoint must be a cabled HCA port of
  /// `fabric` and num_leaf_switches must count their switches (as ResolveJobs sets it). Jobs on
  /// fewer than two leaf switches are ignored.
  const std::vector<ResolvedJob>* jobs = nullptr;
  /// Compute / storage / other; null = every HCA is a compute node. Sized for `fabric` if given.
  const NodeClasses* classes = nullptr;
  /// Up*/Down*: the root switches; empty = chosen automatically (see updn.cc). Other engines
  /// ignore them, but they must be switches of `fabric` all the same.
  std::vector<NodeId> roots;
  /// Worker threads (>= 0); 0 = all hardware threads.
  int threads = 0;
  /// When false (the default) routing fails if some endpoint cannot reach another, naming the
  /// pair; when true the engine routes what it can and leaves the rest kNoRoute (noted in output).
  bool allow_disconnected = false;
  /// Engines that layer (dfsssp, sar) make routes between all terminals deadlock-free: switch
  /// port-0 LIDs as sources and destinations too (LayerOptions::switch_lids), as validation
  /// checks them by default; false: routes between HCAs only.
  bool switch_lids = true;
  /// The tables the switches hold now (one per switch of `fabric`); null = none. The sar and
  /// dfsssp engines then keep every previous entry that costs no quality (engines/delta_keep.h),
  /// so a reroute changes few entries; other engines ignore it. Tables that do not fit the
  /// fabric are ignored (noted).
  const LftSet* previous = nullptr;
  /// The job set `previous` was computed for; null = unknown. With it the sar and dfsssp engines
  /// also keep running jobs' own routes (a job with the same endpoints before and after): they
  /// move only where the fabric changed under them or where keeping them would put the max
  /// effective EFI or max EFI more than 2% above the full recompute's (delta_keep.h); new jobs
  /// route around them. Ignored without `previous`.
  const std::vector<ResolvedJob>* previous_jobs = nullptr;
  /// SAR only: after the paths, a local search moves single job destinations' routes off the
  /// channels with the highest effective load (engines/sar_refine.h). False = the plain SSSP
  /// result (the engine as it was before the refinement).
  bool sar_refine = true;
  /// SAR only: the price the rest of the traffic pays. The refinement keeps every channel's
  /// all-pairs load (plain EFI) within this factor of the all-pairs lower bound (lower_bound.h,
  /// all endpoints as one job), or within what the paths already had if that is higher.
  /// 0 = no cap.
  double sar_all_pairs_budget = 1.25;
  /// SAR only: the refinement's deterministic work limit in search steps (RefineOptions::
  /// max_work; at least 1). It bounds the time on large fabrics (10k hosts reach it: ~0.4 s of
  /// search per 2^28 steps on 2 cores) and, being a count and not a clock, gives the same
  /// tables offline and in the plugin. Fewer steps: faster, a higher all-pairs max
  /// (docs/dfsssp-sar.md). Default kDefaultSarRefineWork.
  uint64_t sar_refine_work = kDefaultSarRefineWork;
  /// SAR only: no job regrets SAR. After the refinement, every multi-switch job's exchange
  /// time (its slowest flow with every such job sending all-to-all at once, max-min fair:
  /// sar/analysis/flows.h) is compared with the same job's under dfsssp's paths for the same
  /// fabric; a job that would be slower keeps dfsssp's routes (its members' base-LID entries),
  /// repeated until no job is slower (docs/dfsssp-sar.md, "No job regrets"). With `fixed`, the
  /// reference is dfsssp with the same entries and their jobs (`fixed_jobs`) send in both; they
  /// are never taken back, and the stage never makes one slower than both the reference and
  /// SAR's tables before it. Skipped, with a note,
  /// when the jobs have more than kSarNoRegretMaxFlows flows. Off in a bare RoutingInput (the
  /// routing pass turns it on by default: RoutingOptions::sar_no_regret): taking a job back can
  /// raise the max effective EFI above the refinement's and the all-pairs load above its budget
  /// (both stay the engine's promises when off), and a delta reroute starting from tables it made
  /// can give other tables than a full recompute. False: SAR's tables as the refinement leaves
  /// them.
  bool sar_no_regret = false;
  /// sar and dfsssp: entries decided before the engine runs (the routing pass's FORS plans for
  /// alltoall jobs, docs/fors.md). Those LIDs are routed first with these entries, and a job
  /// whose members' LIDs they are counts their routes like any job's, so the other jobs are
  /// balanced around them; no later stage moves them (delta keep, stability, refinement,
  /// no-regret), so every guard judges the final tables, and the layers are assigned with them.
  /// An entry that is not one hop nearer its LID's switch is ignored (noted). Null = none.
  const std::vector<FixedEntry>* fixed = nullptr;
  /// sar, with `fixed`: the jobs whose routes those entries are, as they send (the pass's FORS
  /// jobs in their phases: ForsFlowJob). The no-regret stage counts their traffic on SAR's
  /// tables and on the reference's and judges them too (docs/dfsssp-sar.md). Null: a job whose
  /// members' LIDs have fixed entries sends all-to-all at once.
  const std::vector<FlowJob>* fixed_jobs = nullptr;
};

/// The no-regret stage's budget (RoutingInput::sar_no_regret): flows of one solve.
inline constexpr uint64_t kSarNoRegretMaxFlows = uint64_t{4} << 20;

struct RoutingOutput {
  LftSet lfts;
  /// A layer per (source LID, destination LID) for endpoint-to-endpoint routes; empty (size 0)
  /// for engines without layers (every route then uses layer 0).
  VirtualLayers layers;
  int num_layers = 1;
  /// Wall time of the phases, milliseconds, as Route measures them: layers_ms is the engine's
  /// layer phase (0 without one), paths_ms everything else Route did (checks included).
  double paths_ms = 0;
  double layers_ms = 0;
  /// Facts worth telling the operator (chosen roots, unreachable pairs, layer counts).
  std::vector<std::string> notes;
  /// Per endpoint (Fabric::Endpoints() order): which of a destination's 2^LMC LIDs this source
  /// sends to, as an offset from the base LID. Empty = the base LID for every source (every
  /// engine but osrm2/osrm3, whose routes depend on the source's group: osrm_core.h).
  std::vector<uint8_t> source_lid_offset;
};

/// An engine: one subclass per file, implementing DoRoute. Route, not virtual, is the one place
/// where every engine's input is checked, the run is timed and the error contract is kept, so no
/// engine repeats (or forgets) a check.
class RoutingEngine {
 public:
  virtual ~RoutingEngine() = default;
  virtual std::string_view name() const = 0;
  /// Whether the tables depend on RoutingInput::jobs. An engine that says false routes the same
  /// tables for every job set, so a trace replay routes it once and only re-measures.
  virtual bool uses_jobs() const { return false; }

  /// Computes the tables. First checks the input, the same way for every engine, with
  /// messages that do not depend on the engine:
  ///  - InvalidArgument: no fabric or no output, a fabric without switches or with a cabled
  ///    HCA port without a LID, num_vls outside 1..15, threads < 0, a root that is not a switch,
  ///    a job endpoint that is not a cabled HCA port of the fabric (or a job whose
  ///    num_leaf_switches does not count its endpoints' switches), classes of another fabric;
  ///  - Failed: some endpoint cannot reach another over the cables (naming one pair), unless
  ///    allow_disconnected, which turns it into a note.
  /// Then runs the engine (Failed: e.g. too few virtual lanes, no legal route for a pair) and
  /// checks that its tables fit the fabric and its layers fit num_vls.
  /// On success *out is replaced (tables, layers, times, notes); on error *out is left as it
  /// was, so a caller never sees half a result.
  Status Route(const RoutingInput& in, RoutingOutput* out) const;

 protected:
  /// The engine's work on checked input: `in` passed every check Route documents (in
  /// particular, without allow_disconnected every endpoint reaches every other over the cables).
  /// `out` is a fresh RoutingOutput that Route drops on error. Set lfts, and layers, num_layers
  /// and layers_ms if the engine has a layer phase; add notes. Route sets paths_ms.
  virtual Status DoRoute(const RoutingInput& in, RoutingOutput* out) const = 0;
};

/// The engine called `name`, or nullptr if there is none.
std::unique_ptr<RoutingEngine> MakeRoutingEngine(std::string_view name);
/// The names MakeRoutingEngine knows, in a stable order.
std::vector<std::string> RoutingEngineNames();
/// The same names as one "minhop, updn, ..." list, for messages.
std::string RoutingEngineList();

}  // namespace sar
