// FORS for one job on a shared, possibly degraded 2-level fat-tree: a phase schedule over the
// job's own hosts and the destination-based table entries that make every phase conflict-free.
// docs/fors.md ("Per-job FORS in the routing pass") explains the construction and its proof.
//
// Ranks: the job's endpoints sorted by (leaf, leaf port), so each leaf holds a run of consecutive
// ranks. Schedule: a linear shift on a ring of N >= n positions (N a multiple of M' spines,
// M' >= the most ranks on one leaf, positions n..N-1 empty): phase p-1 sends rank i to rank
// (i + p) mod N. Routes: from every leaf, rank j's base LID goes up to spine
// (offset + j mod M') mod M0. On an intact tree that is conflict-free: a leaf's senders in a phase
// send to a run of consecutive ring positions (distinct mod M'), a leaf's receivers are a run of
// consecutive ranks. Where that spine's link failed at either end the entry is chosen per
// (source leaf, destination) to clash least; transfers that still clash are moved to extra
// phases at the end, so every phase is conflict-free and the reroute never fails for it. Last,
// phases whose transfers all fit into other phases' idle slots are dropped (compaction).
// Only base LIDs are used (LMC 0 suffices; the migration protocol keeps its extra LID).
// Thread-safety: plain values and pure functions.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "sar/analysis/flows.h"
#include "sar/model/fabric.h"
#include "sar/model/jobs.h"
#include "sar/model/lft.h"
#include "sar/status.h"

namespace sar {

/// A 2-level fat-tree as found in a fabric: leaves (switches with HCAs, cabled only to spines),
/// spines (switches cabled only to leaves). A missing leaf-spine cable is a failed link.
struct Ft2Topology {
  std::vector<NodeId> leaves;  // by switch index order
  std::vector<NodeId> spines;  // by switch index order
  /// by switch index: the leaf number, or -1 for a spine
  std::vector<int> leaf_of_switch;
  /// up_port[leaf * num_spines() + spine]: the leaf's lowest port to that spine, 0 = no cable
  std::vector<uint8_t> up_port;
  /// down_port[spine * num_leaves() + leaf]: the spine's lowest port to that leaf, 0 = none
  std::vector<uint8_t> down_port;
  int num_leaves() const { return static_cast<int>(leaves.size()); }
  int num_spines() const { return static_cast<int>(spines.size()); }
  bool works(int leaf, int spine) const {
    return up_port[static_cast<size_t>(leaf) * spines.size() + spine] != 0 &&
           down_port[static_cast<size_t>(spine) * leaves.size() + leaf] != 0;
  }
};

/// Fails (InvalidArgument, saying why) unless `fabric` is a 2-level fat-tree as above with at
/// least one spine and every leaf cabled to at least one spine.
Status DetectFatTree2(const Fabric& fabric, Ft2Topology* out);

struct ForsJobTransfer {
  int32_t src = 0;  // ranks
  int32_t dst = 0;
};

struct ForsJobStats {
  int64_t phases = 0;
  /// max(n - 1, max over leaves of ceil(c (n - c) / working uplinks)): no schedule can do better
  int64_t lower_bound = 0;
  int ring = 0;                  // N
  int spines_used = 0;           // M'
  int spine_offset = 0;          // the job's first spine
  bool spines_permuted = false;  // joint planning gave its classes a spine order, not an offset
  int64_t rerouted = 0;          // (leaf, destination) entries off their spine because of failures
  int64_t moved = 0;             // transfers moved out of their phase because of a clash
  int64_t split_phases = 0;      // extra phases they needed
  int64_t compacted = 0;         // phases dropped because their transfers fit into others
};

struct ForsJobPlan {
  std::string job_id;
  std::vector<PortRef> hosts;  // by rank
  std::vector<int> leaf_of_rank;
  std::vector<std::vector<ForsJobTransfer>> phases;
  /// spine[leaf * n + rank]: the spine the leaf sends the rank's base LID to; -1 where the leaf
  /// has none of the job's senders or is the rank's own leaf.
  std::vector<int16_t> spine;
  ForsJobStats stats;
};

/// An alltoall job the routing pass gave no FORS plan, and why: its schedule file is the "none"
/// form (docs/formats.md), and the plugin and sar-filterd log a WARN line with the reason.
struct ForsJobNone {
  std::string job_id;
  std::string reason;  // one line, from the routing pass
  size_t hosts = 0;    // the job's hosts in the fabric
};

/// Plans one job. `spine_offset` in [0, M0). Destination rank j's preferred spine is
/// order[(spine_offset + j mod M') mod |order|], `order` being `spine_order` (a permutation of
/// the spines 0..M0-1) or, when null, 0..M0-1. Fails (Failed) only where no schedule exists: a
/// pair of the job's leaves shares no working spine.
Status PlanForsJob(const Fabric& fabric, const Ft2Topology& topo, const ResolvedJob& job,
                   int spine_offset, ForsJobPlan* out,
                   const std::vector<int>* spine_order = nullptr);

/// The routes fixed plans put on the leaf-spine channels, counted as sar/analysis/metrics.h counts
/// them (one per ordered pair of the job's hosts whose route crosses the channel: the effective EFI
/// every guard and `eval` judge), summed over the plans charged.
struct ForsChannelLoads {
  std::vector<int64_t> up;    // [leaf * M0 + spine]: leaf -> spine
  std::vector<int64_t> down;  // [spine * num_leaves + leaf]: spine -> leaf
  int64_t Max() const;
};
/// Adds `plan`'s routes to *loads (sized for `topo` on first use).
void ChargeForsJobLoads(const Ft2Topology& topo, const ForsJobPlan& plan, ForsChannelLoads* loads);

/// Joint planning of several alltoall jobs (called in order, the same `loads` and
/// `spine_load` for all): the first job (nothing charged yet) is planned at ChooseSpineOffset's
/// offset; a later one assigns its M' destination classes (rank mod M') to spines greedily
/// against the routes already charged: heaviest class first, each to the unused spine with the
/// fewest of the class's entries on failed links, then the smallest resulting channel maximum,
/// then the least overlap with charged routes, then ChooseSpineOffset's spine count, then the
/// distance from its hash offset. That plan is kept if its channel maximum (charged routes
/// included) is below the offset plan's, else the offset plan. Charges the plan kept.
/// Deterministic.
Status PlanForsJobJointly(const Fabric& fabric, const Ft2Topology& topo, const ResolvedJob& job,
                          ForsChannelLoads* loads, std::vector<int>* spine_load, ForsJobPlan* out);

/// The plan's entries for the job's base LIDs in the leaf and spine tables: calls
/// entry(switch index, LID, port) for each (the LIDs that fit no table, 0, are left out).
void ForEachForsJobEntry(const Fabric& fabric, const Ft2Topology& topo, const ForsJobPlan& plan,
                         const std::function<void(int sw, Lid lid, uint8_t port)>& entry);
/// Writes those entries into the tables (LIDs above lfts->max_lid() are skipped).
void ApplyForsJobRoutes(const Fabric& fabric, const Ft2Topology& topo, const ForsJobPlan& plan,
                        LftSet* lfts);

/// Judges a schedule by the tables alone (RouteTracer, nothing of the planner): every ordered
/// pair of distinct ranks exactly once, every transfer delivered to its rank's base LID, and no
/// channel (directed link, HCA links included) used twice within a phase. First violation.
Status CheckForsJobOnTables(const Fabric& fabric, const LftSet& lfts,
                            const std::vector<PortRef>& hosts,
                            const std::vector<std::vector<ForsJobTransfer>>& phases);

/// Offsets for several alltoall jobs: each job (in order) starts at hash(id) mod M0 and moves to
/// the offset whose spines the earlier jobs use least, so a job keeps its offset while others
/// come and go unless they overlap it.
int ChooseSpineOffset(const std::string& job_id, int spines_used, int m0,
                      std::vector<int>* spine_load);

/// Whether a plan's phases serve its job: its exchange time (sar/analysis/flows.h, the model `eval`
/// judges with: every job sending at once, a phased job one phase after another, rounds) in its
/// phases on `with_fors` (the pass's tables with the FORS entries) against its time all at once
/// on `without` (the same pass routed with no FORS entry, every job all at once).
struct ForsVerdict {
  std::string job_id;
  bool judged = false;     // false: over the work bound or not computable; the plan stays
  double phased_time = 0;  // message / line rate
  double plain_time = 0;
  bool keep = true;  // !judged, or phased_time <= plain_time (relative 1e-9)
};
/// One verdict per plan, in order. `jobs` are the pass's jobs; `max_pairs` bounds the flow
/// model's work (rounds x pairs of the jobs without phases, plus the phase pairs): above it no
/// plan is judged. Plain data in, no state.
void JudgeForsPlans(const Fabric& fabric, const std::vector<ResolvedJob>& jobs,
                    const std::vector<ForsJobPlan>& plans, const LftSet& with_fors,
                    const LftSet& without, int threads, uint64_t max_pairs,
                    std::vector<ForsVerdict>* out);
inline constexpr uint64_t kDefaultForsJudgePairs = uint64_t{16} << 20;

// --- The schedule file (docs/formats.md, "FORS schedule") ------------------------------------

/// "<mapping path>.fors.<job id>"
std::string ForsSchedulePath(const std::string& mapping_path, const std::string& job_id);
/// True if `job_id` can name a file (letters, digits, '.', '_', '-'; not starting with '.').
bool ForsJobIdIsFileSafe(const std::string& job_id);

/// The rows "phase,src,dst,dlid" (host names, base LID of dst) and the header lines.
std::string FormatForsScheduleRows(const Fabric& fabric, const ForsJobPlan& plan);
/// FNV-1a 64 of the rows and the plan's spine entries: the same routes and schedule give the
/// same generation.
uint64_t ForsScheduleGenerationOf(const ForsJobPlan& plan, const std::string& rows);
std::string FormatForsScheduleFile(const ForsJobPlan& plan, const std::string& rows,
                                   uint64_t epoch);

/// The "none" form: the header with `generation none phases 0 lower_bound 0`, a line
/// "# none: <reason>" (line breaks in the reason become blanks), the column line, no rows.
std::string FormatForsNoneFile(const ForsJobNone& none, uint64_t epoch);

/// Writes the file atomically, mode kJobPlacementFileMode (0640) and group `group` (-1: the
/// writer's), unless it already holds exactly this schedule (then it is left alone, epoch
/// included). *written says which. The old file is only kept if it is a regular file (not a
/// symbolic link) of the writer's with that mode (and group); it is looked at
/// without blocking and read no further than the new file's length, so a FIFO, a device or a
/// huge file at `path` costs the caller (OpenSM's sweep, under its lock) no wait. A FIFO, socket
/// or directory at `path` is refused as WriteFileAtomic refuses it; a symbolic link is replaced.
Status WriteForsSchedule(const std::string& path, const ForsJobPlan& plan, const std::string& rows,
                         uint64_t epoch, bool* written, gid_t group = static_cast<gid_t>(-1));
/// The same for a job without FORS: writes its "none" file (FormatForsNoneFile), under the same
/// rules (left alone when it already says exactly this).
Status WriteForsNoneSchedule(const std::string& path, const ForsJobNone& none, uint64_t epoch,
                             bool* written, gid_t group = static_cast<gid_t>(-1));
/// Removes "<mapping path>.fors.*" files whose job is not in `keep`.
Status RemoveStaleForsSchedules(const std::string& mapping_path,
                                const std::vector<std::string>& keep);

/// Publishes a routing pass's FORS outcome beside the mapping, once its tables are in the
/// switches (the OpenSM plugin, sar-filterd's file mode): each plan's schedule (rows[i] =
/// FormatForsScheduleRows of plans[i]) and each job without FORS its "none" file, then removes
/// the files of other jobs. Job ids that cannot name a file (ForsJobIdIsFileSafe) get none. One
/// job's failure does not stop the others; *current = files now current; the first error is
/// returned. Nothing without a mapping path.
Status PublishForsSchedules(const std::string& mapping_path, const std::vector<ForsJobPlan>& plans,
                            const std::vector<std::string>& rows,
                            const std::vector<ForsJobNone>& none, uint64_t epoch, gid_t group,
                            int* current);

/// An id change only (sar-filterd: a job resubmitted on the same hosts, which causes no
/// reroute): the schedule published as "<mapping>.fors.<from_id>" (or its "none" form) is
/// published as "<mapping>.fors.<to_id>" too, the same text but the job id on line 2 (same
/// epoch, generation and rows: the routes did not change), atomically, mode 0640 with the
/// group of from's file (or `group` if that cannot be set). NotFound when from has no file
/// (not an alltoall job); the file is read as ReadForsSchedule reads (never blocking, bounded)
/// and must parse. Left alone when it already holds exactly that. The next publish replaces or
/// removes it as any job's file.
Status AliasForsSchedule(const std::string& mapping_path, const std::string& from_id,
                         const std::string& to_id, gid_t group, bool* written);

struct ForsScheduleRow {
  int64_t phase = 0;
  std::string src, dst;
  Lid dlid = 0;
};
struct ForsScheduleFile {
  std::string job_id;
  uint64_t epoch = 0;
  uint64_t generation = 0;
  int64_t phases = 0;
  int64_t lower_bound = 0;
  std::vector<ForsScheduleRow> rows;
  /// The "none" form: the job has no FORS schedule; `none_reason` says why (generation,
  /// phases, lower_bound 0, no rows).
  bool none = false;
  std::string none_reason;
};
/// Line 1 of a schedule file, and the column line.
inline constexpr char kForsScheduleMagic[] = "# sar-fors-schedule 1";
inline constexpr char kForsScheduleColumns[] = "phase,src,dst,dlid";
/// The reason line of the "none" form: "# none: <reason>".
inline constexpr char kForsScheduleNonePrefix[] = "# none: ";
/// Parses a schedule's text (what ReadForsSchedule reads); errors name "source:line". `phase`
/// and `dlid` are plain decimal digits, `dlid` 1..kMaxUnicastLid; `src` and `dst` non-empty.
/// The "none" form is accepted only whole: `generation none` with phases 0, lower_bound 0, one
/// "# none: <reason>" line with a reason, and no rows.
Status ParseForsSchedule(std::string_view text, const std::string& source, ForsScheduleFile* out);
/// The largest schedule file ReadForsSchedule reads (a 1152-host job with long host names is
/// about 200 MiB).
inline constexpr size_t kMaxForsScheduleBytes = size_t{1} << 30;
/// Parses a schedule file; errors name "path:line". The file must be a regular file (a FIFO or a
/// device is refused without blocking), not a symbolic link, at most kMaxForsScheduleBytes, and
/// not writable by every user.
Status ReadForsSchedule(const std::string& path, ForsScheduleFile* out);

// FORS plans and schedule files as jobs of the flow model (sar/analysis/flows.h), for
// JudgeForsPlans, replay and `sar-route flows` (judge.cc).
/// The FlowJob of a FORS plan (the routing pass's): its hosts by rank, its phases.
FlowJob ForsFlowJob(const ForsJobPlan& plan);
/// Gives `job` the phases of a published schedule file (rows name hosts; a host's first endpoint
/// in the job sends and receives). Fails, leaving `job` unchanged, when a row names a host that
/// is not among the job's endpoints.
Status AddForsPhases(const Fabric& fabric, const ForsScheduleFile& schedule, FlowJob* job);

}  // namespace sar
