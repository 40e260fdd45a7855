// The coordinator of the baseLID/highLID migration protocol (SAR paper Sec. 3.3, Fig. 6): a pure
// state machine. It does no I/O and reads no clock: the caller (the OpenSM plugin's own thread)
// feeds it events with the time, carries out the actions it queues, and reads its status.
//
// One epoch:
//   phase 1  a reroute request: Plan (the caller computes new base tables, pushes nothing);
//            Planned(ok, participants): with nobody to wait for, Release at once (what happens
//            without migration); else SendUnpath to the subscribers;
//   phase 2  the agents move to highLIDs and ack; with every expected ack in: Release;
//            at the ack deadline: abort, SendRepath with SAR_MIG_FLAG_STAY (the old base tables
//            stay; agents that did move go back to them);
//   phase 3  the caller installs the new tables and lets OpenSM push them; RoutingDone ends it;
//   phase 4  SendRepath; the agents move back and ack (those missing at the deadline are named
//            late, nothing else happens: the tables are in);
//   phase 5  idle. Requests that arrived during an epoch are merged into one next epoch.
// Topology changes in phases 1-2 abort the epoch (the caller routes around the fault at once,
// without a hold) and plan again; in phases 3-4 they change nothing here.
//
// Acks are keyed by the port GID OpenSM put in the trap's IssuerGID, never by the payload. An
// ack counts only if it is an ACK of the current epoch for the phase being waited for, from a
// port expected to ack; everything else (duplicate, replayed, wrong epoch or phase, unknown
// port) is ignored and counted. A port that misses `exclude_after` phase-2 deadlines in a row is
// excluded from later epochs until it acks an epoch again: it is still sent each UnPath (also
// when every participant is excluded: then UnPath and Release go out together), and its ack of an
// epoch it was not waited for, in any phase, re-admits it from the next epoch on.
// Acks received on another thread (the plugin's trap callback) wait in a MigAckInbox (below),
// which keeps only the participants' acks: a flood from other ports cannot push them out.
// Thread-safety: none; one thread owns a coordinator.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "sar/migration/migration_wire.h"
#include "sar/model/fabric.h"
#include "sar/model/lft.h"

namespace sar {

/// A port GID: subnet prefix and port GUID, host order.
struct PortGid {
  uint64_t prefix = 0;
  uint64_t guid = 0;
  friend auto operator<=>(const PortGid&, const PortGid&) = default;
};
/// "fe80:0000:0000:0000:0002:c900:0000:0101" style; short form "0x<guid>" is what logs use.
std::string GidString(const PortGid& gid);

struct MigrationConfig {
  /// Phase 2: how long the agents have to move to highLIDs and ack (sent in the UnPath notice).
  uint32_t ack_timeout_ms = 2000;
  /// Phase 4: how long to wait for RePath acks before the epoch ends anyway.
  uint32_t repath_timeout_ms = 2000;
  /// Phase 3: how long to wait for OpenSM's routing-done after Release before going on.
  uint32_t push_timeout_ms = 30000;
  /// Consecutive missed phase-2 deadlines after which a port is no longer waited for (>= 1).
  int exclude_after = 3;
  /// The first epoch's number (0 counts as 1). Agents ignore a notice whose epoch is below the
  /// last one they saw (a replay): a restarted coordinator should start above its predecessor
  /// (the plugin uses wall-clock seconds since 2023-11-14).
  uint32_t first_epoch = 1;
};

/// The paper's phase numbers; kIdle is phase 5.
enum class MigPhase : int { kPlan = 1, kDrain = 2, kPush = 3, kRepath = 4, kIdle = 5 };
const char* MigPhaseName(MigPhase phase);

struct MigAction {
  enum Kind {
    kPlan,        // compute the new base tables for `epoch` (no push); answer with Planned
    kSendUnpath,  // send trap 68 (UNPATH, phase 1, deadline_ms) for `epoch`
    kRelease,     // install the planned tables of `epoch` and let OpenSM push them
    kDiscard,     // drop the planned tables of `epoch` (aborted): the old ones stay
    kSendRepath,  // send trap 69 (REPATH, phase 4, flags) for `epoch`
    kLog,         // a line for the operator (text)
  };
  Kind kind = kLog;
  uint32_t epoch = 0;
  uint8_t flags = 0;  // kSendRepath: SAR_MIG_FLAG_STAY when aborted
  uint32_t deadline_ms = 0;
  bool error = false;  // kLog: worth an error-level line
  std::string text;
};

/// Why an ack did not count (AckResult::kCounted: it did).
enum class AckResult {
  kCounted,
  kDuplicate,   // this port already acked this phase
  kWrongEpoch,  // not the current epoch (replayed or stale)
  kWrongPhase,  // not the phase being waited for, or no epoch under way
  kUnexpected,  // a port not asked to ack
  kMalformed,   // not an ACK
};
const char* AckResultName(AckResult r);

/// Milliseconds spent in each phase of an epoch (0: not reached).
struct MigTimings {
  uint64_t plan_ms = 0, drain_ms = 0, push_ms = 0, repath_ms = 0, total_ms = 0;
};

/// What an operator or sar-filterd wants to see.
struct MigrationStatus {
  uint32_t epoch = 0;  // current (or last) epoch; first_epoch - 1 before the first
  MigPhase phase = MigPhase::kIdle;
  size_t expected = 0, acked = 0;  // in the phase being waited for
  std::vector<PortGid> waiting;    // expected, not yet acked
  std::vector<PortGid> excluded;
  bool pending = false;  // a request waits for the next epoch
  /// The last finished epoch: "released" (tables pushed, all acks in), "released-late-repath",
  /// "released-unconfirmed" (no routing-done in time), "no-change" (plan equals the tables),
  /// "aborted-timeout", "aborted-topology", "plan-failed"; "" before one finished.
  uint32_t last_epoch = 0;
  std::string last_outcome;
  MigTimings last_timings;
  uint64_t epochs_started = 0, acks_ignored = 0;
};

/// The endpoints that are the source or the destination of a base-LID route whose path differs
/// between two table sets of `fabric`: the ports that must move to highLIDs in the "changed" ack
/// scope. Cost: a walk per (source, destination whose entries changed somewhere).
std::vector<PortRef> ChangedRouteEndpoints(const Fabric& fabric, const LftSet& before,
                                           const LftSet& after);

/// The status as one JSON object on one line (docs/opensm-plugin.md describes the fields), for
/// the plugin's status file: sar-filterd and operators read it.
std::string MigrationStatusJson(const MigrationStatus& status, uint64_t now_ms);

class MigrationCoordinator {
 public:
  explicit MigrationCoordinator(const MigrationConfig& config)
      : config_(config), epoch_(config.first_epoch > 0 ? config.first_epoch - 1 : 0) {}

  /// A reroute request (SIGUSR2, console, sar-filterd). Starts an epoch when idle, else is
  /// merged into one pending next epoch.
  void Request(uint64_t now_ms);
  /// The plan of `epoch` is computed. ok false: planning failed (logged, old tables stay).
  /// `changed` false: the new tables equal the installed ones (nothing to migrate).
  /// `participants`: the ports to ask (the subscribers in the configured ack scope).
  void Planned(uint64_t now_ms, uint32_t epoch, bool ok, bool changed,
               const std::vector<PortGid>& participants, const std::string& why = "");
  /// An acknowledgement: `issuer` as OpenSM filled it, the rest decoded from the payload.
  AckResult Ack(uint64_t now_ms, const PortGid& issuer, uint8_t kind, uint8_t phase,
                uint32_t epoch);
  /// OpenSM finished pushing tables; `installed_epoch` is the epoch whose tables that routing
  /// pass installed (0: none of ours).
  void RoutingDone(uint64_t now_ms, uint32_t installed_epoch);
  /// The topology changed (a fault or a new cable): aborts phases 1-2 and re-plans.
  void TopologyChanged(uint64_t now_ms);
  /// Deadlines.
  void Tick(uint64_t now_ms);

  /// Milliseconds until the next deadline (UINT64_MAX: none).
  uint64_t MsToDeadline(uint64_t now_ms) const;
  /// True while a plan waits for release: the routing callback must keep the old tables.
  bool Holding() const { return phase_ == MigPhase::kPlan || phase_ == MigPhase::kDrain; }
  MigPhase phase() const { return phase_; }
  uint32_t epoch() const { return epoch_; }
  MigrationStatus Status() const;

  /// The queued actions, oldest first; the caller pops and carries them out.
  bool PopAction(MigAction* out);

  /// The ports whose acks can count or re-admit: the participants of the current (or last)
  /// epoch that went to UnPath, excluded ones included, sorted; for MigAckInbox::Sync. The
  /// generation changes whenever they do.
  const std::vector<PortGid>& AckPorts() const { return ack_ports_; }
  uint64_t ack_ports_generation() const { return ack_ports_generation_; }
  /// Acks dropped before they reached Ack (MigAckInbox strays): counted in acks_ignored.
  void CountIgnored(uint64_t n) { acks_ignored_ += n; }

 private:
  void Start(uint64_t now_ms);
  void EnterRepath(uint64_t now_ms, uint8_t flags);
  void Finish(uint64_t now_ms, const std::string& outcome);
  void Log(std::string text, bool error = false);
  std::string Waiting() const;

  MigrationConfig config_;
  MigPhase phase_ = MigPhase::kIdle;
  uint32_t epoch_ = 0;
  bool pending_ = false;
  std::string abort_outcome_;  // set when phase 4 follows an abort
  uint64_t deadline_ms_ = 0;   // of the current phase, 0 = none
  uint64_t epoch_start_ms_ = 0, phase_start_ms_ = 0;
  MigTimings timings_;
  std::set<PortGid> expected_, acked_;
  std::set<PortGid> drained_;  // acked phase 2: the RePath acks expected
  std::map<PortGid, int> missed_;
  std::set<PortGid> excluded_;
  std::set<PortGid> skipped_;  // participants of epoch_ not waited for (excluded): may come back
  std::deque<MigAction> actions_;
  std::vector<PortGid> ack_ports_;
  uint64_t ack_ports_generation_ = 0;
  uint32_t last_epoch_ = 0;
  std::string last_outcome_;
  MigTimings last_timings_;
  uint64_t epochs_started_ = 0, acks_ignored_ = 0;
};

/// One ack trap as the plugin's trap callback saw it: the issuer OpenSM filled in and the
/// notice's DataDetails (sar/migration/migration_wire.h).
struct InboxAck {
  PortGid issuer;
  uint8_t data[SAR_MIG_DATA_SIZE] = {};
};

/// Where the plugin's trap callback (OpenSM's thread) leaves acks for the coordinator's thread.
/// It keeps one slot per port whose ack the coordinator can use (the participants of the current
/// or last epoch, from Sync); an ack from any other port (a forger, a node not asked to ack) costs
/// a hash lookup and a counter: it is never queued, never wakes the coordinator and never
/// displaces anything. A port's newer ack replaces its older one not yet taken. However many
/// forged acks arrive, at most one ack per participant waits, and every participant's latest ack
/// is taken at the next Take.
/// Thread-safety: none; the plugin guards it with its mutex (Offer on OpenSM's thread, Sync and
/// Take on its own).
class MigAckInbox {
 public:
  /// Keeps `issuer`'s ack (`data`: SAR_MIG_DATA_SIZE bytes) if it is a participant: true (wake
  /// the coordinator's thread). Else counts it as a stray: false. Never allocates.
  bool Offer(const PortGid& issuer, const uint8_t* data);
  /// Takes the participants from `coordinator` (MigrationCoordinator::AckPorts), keeping the
  /// acks not yet taken of the ports that stay. Allocates; nothing to do when they are unchanged.
  void Sync(const MigrationCoordinator& coordinator);
  /// Moves at most `max` kept acks, oldest first, to `out`; returns how many.
  size_t Take(InboxAck* out, size_t max);
  /// Strays since the last call (and resets the count).
  uint64_t TakeStrays();
  size_t pending() const { return order_.size(); }

 private:
  struct GidHash {
    size_t operator()(const PortGid& g) const {
      return std::hash<uint64_t>()(g.guid * 0x9e3779b97f4a7c15ull ^ g.prefix);
    }
  };
  struct Slot {
    InboxAck ack;
    bool full = false;
  };
  std::unordered_map<PortGid, size_t, GidHash> index_;  // participant -> slot
  std::vector<Slot> slots_;
  std::vector<size_t> order_;  // the full slots, oldest first (capacity: slots_.size())
  uint64_t generation_ = 0;    // of the coordinator's participants last synced
  uint64_t strays_ = 0;
};

}  // namespace sar
