#include "sar/migration/migration_coordinator.h"

#include <algorithm>
#include <cinttypes>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <limits>
#include <utility>

#include "sar/migration/migration_wire.h"

namespace sar {

std::string GidString(const PortGid& gid) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64 ":0x%016" PRIx64, gid.prefix, gid.guid);
  return buf;
}

namespace {
std::string ShortGid(const PortGid& gid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, gid.guid);
  return buf;
}
}  // namespace

namespace {
// Hop by hop from `src` towards `lid`: equal while both tables send the packet the same way.
bool SamePath(const Fabric& f, const LftSet& a, const LftSet& b, PortRef src, Lid lid) {
  PortRef at = f.peer(src);
  for (int hop = 0; hop <= f.num_switches() && at.valid() && f.is_switch(at.node); ++hop) {
    const int sw = f.switch_index(at.node);
    const uint8_t pa = a.port(sw, lid), pb = b.port(sw, lid);
    if (pa != pb) return false;
    if (pa == 0 || pa == LftSet::kNoRoute || pa > f.num_ports(at.node)) return true;
    at = f.peer({at.node, pa});
  }
  return true;
}
}  // namespace

std::vector<PortRef> ChangedRouteEndpoints(const Fabric& f, const LftSet& before,
                                           const LftSet& after) {
  const std::vector<PortRef> ends = f.Endpoints();
  std::vector<char> hit(ends.size(), 0);
  for (size_t d = 0; d < ends.size(); ++d) {
    const Lid lid = f.base_lid(ends[d]);
    if (lid == 0) continue;
    bool differs = false;
    for (int sw = 0; sw < f.num_switches() && !differs; ++sw) {
      differs = before.port(sw, lid) != after.port(sw, lid);
    }
    if (!differs) continue;
    for (size_t s = 0; s < ends.size(); ++s) {
      if (s == d || (hit[s] && hit[d])) continue;
      if (!SamePath(f, before, after, ends[s], lid)) hit[s] = hit[d] = 1;
    }
  }
  std::vector<PortRef> out;
  for (size_t i = 0; i < ends.size(); ++i) {
    if (hit[i]) out.push_back(ends[i]);
  }
  return out;
}

const char* MigPhaseName(MigPhase phase) {
  switch (phase) {
    case MigPhase::kPlan:
      return "plan";
    case MigPhase::kDrain:
      return "drain";
    case MigPhase::kPush:
      return "push";
    case MigPhase::kRepath:
      return "repath";
    case MigPhase::kIdle:
      return "idle";
  }
  return "?";
}

const char* AckResultName(AckResult r) {
  switch (r) {
    case AckResult::kCounted:
      return "counted";
    case AckResult::kDuplicate:
      return "duplicate";
    case AckResult::kWrongEpoch:
      return "wrong epoch";
    case AckResult::kWrongPhase:
      return "wrong phase";
    case AckResult::kUnexpected:
      return "unexpected port";
    case AckResult::kMalformed:
      return "not an ack";
  }
  return "?";
}

void MigrationCoordinator::Log(std::string text, bool error) {
  MigAction a;
  a.kind = MigAction::kLog;
  a.epoch = epoch_;
  a.error = error;
  a.text = "epoch " + std::to_string(epoch_) + " phase " +
           std::to_string(static_cast<int>(phase_)) + " (" + MigPhaseName(phase_) +
           "): " + std::move(text);
  actions_.push_back(std::move(a));
}

std::string MigrationCoordinator::Waiting() const {
  std::string s;
  int shown = 0;
  for (const PortGid& g : expected_) {
    if (acked_.count(g)) continue;
    if (++shown > 8) {
      s += " ...";
      break;
    }
    s += (s.empty() ? "" : " ") + ShortGid(g);
  }
  return s;
}

void MigrationCoordinator::Request(uint64_t now_ms) {
  if (phase_ != MigPhase::kIdle) {
    if (!pending_) Log("reroute request merged into the next epoch");
    pending_ = true;
    return;
  }
  Start(now_ms);
}

void MigrationCoordinator::Start(uint64_t now_ms) {
  pending_ = false;
  ++epoch_;
  if (epoch_ == 0) epoch_ = 1;  // 0 is never a valid epoch on the wire
  ++epochs_started_;
  phase_ = MigPhase::kPlan;
  epoch_start_ms_ = phase_start_ms_ = now_ms;
  deadline_ms_ = 0;
  timings_ = MigTimings();
  expected_.clear();
  acked_.clear();
  drained_.clear();
  skipped_.clear();
  abort_outcome_.clear();
  Log("planning new base tables (held until the subscribers moved to highLIDs)");
  actions_.push_back({MigAction::kPlan, epoch_, 0, 0, false, ""});
}

void MigrationCoordinator::Planned(uint64_t now_ms, uint32_t epoch, bool ok, bool changed,
                                   const std::vector<PortGid>& participants,
                                   const std::string& why) {
  if (phase_ != MigPhase::kPlan || epoch != epoch_) return;  // a plan of an aborted epoch
  timings_.plan_ms = now_ms - phase_start_ms_;
  if (!ok) {
    Log("planning failed: " + why + "; the old tables stay", true);
    actions_.push_back({MigAction::kDiscard, epoch_, 0, 0, false, ""});
    Finish(now_ms, "plan-failed");
    return;
  }
  if (!changed) {
    Log("the new base tables equal the installed ones: nothing to migrate");
    actions_.push_back({MigAction::kDiscard, epoch_, 0, 0, false, ""});
    Finish(now_ms, "no-change");
    return;
  }
  std::vector<PortGid> ports = participants;
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  if (ports != ack_ports_) {
    ack_ports_ = std::move(ports);
    ++ack_ports_generation_;
  }
  expected_.clear();
  skipped_.clear();
  for (const PortGid& g : participants) {
    if (excluded_.count(g)) {
      skipped_.insert(g);
    } else {
      expected_.insert(g);
    }
  }
  const size_t skipped = skipped_.size();
  const std::string excl =
      skipped ? ", " + std::to_string(skipped) + " excluded port(s) not waited for" : "";
  phase_start_ms_ = now_ms;
  if (expected_.empty()) {
    phase_ = MigPhase::kPush;
    deadline_ms_ = now_ms + config_.push_timeout_ms;
    Log("no subscriber to wait for" + excl + ": releasing the new tables at once");
    // Excluded ports still get the UnPath (not waited for): their ack of this epoch, whenever
    // it comes, re-admits them (Ack), or they could never come back once all were excluded.
    if (skipped) {
      actions_.push_back({MigAction::kSendUnpath, epoch_, 0, config_.ack_timeout_ms, false, ""});
    }
    actions_.push_back({MigAction::kRelease, epoch_, 0, 0, false, ""});
    return;
  }
  phase_ = MigPhase::kDrain;
  deadline_ms_ = now_ms + config_.ack_timeout_ms;
  Log("sending UnPath, waiting for " + std::to_string(expected_.size()) + " ack(s) within " +
      std::to_string(config_.ack_timeout_ms) + " ms" + excl);
  actions_.push_back({MigAction::kSendUnpath, epoch_, 0, config_.ack_timeout_ms, false, ""});
}

AckResult MigrationCoordinator::Ack(uint64_t now_ms, const PortGid& issuer, uint8_t kind,
                                    uint8_t phase, uint32_t epoch) {
  AckResult r = AckResult::kCounted;
  const bool waiting = phase_ == MigPhase::kDrain || phase_ == MigPhase::kRepath;
  const uint8_t want = phase_ == MigPhase::kDrain ? 2 : 4;
  if (kind != SAR_MIG_ACK) {
    r = AckResult::kMalformed;
  } else if (epoch != epoch_) {
    r = AckResult::kWrongEpoch;
  } else if (!waiting || phase != want) {
    r = AckResult::kWrongPhase;
  } else if (!expected_.count(issuer)) {
    r = AckResult::kUnexpected;
  } else if (!acked_.insert(issuer).second) {
    r = AckResult::kDuplicate;
  }
  // An excluded port that acks an epoch it was not waited for (phase 2 or 4, in whatever phase
  // it arrives: the epoch may have moved on or ended) is waited for from the next epoch on. Only
  // OpenSM fills the issuer, so no other port can re-admit it.
  if (kind == SAR_MIG_ACK && epoch == epoch_ && (phase == 2 || phase == 4) &&
      skipped_.count(issuer) && excluded_.erase(issuer)) {
    missed_.erase(issuer);
    Log("port " + ShortGid(issuer) + " acks again: no longer excluded");
  }
  if (r != AckResult::kCounted) {
    ++acks_ignored_;
    return r;
  }
  if (phase_ == MigPhase::kDrain) missed_.erase(issuer);
  if (acked_.size() < expected_.size()) return r;
  // Every expected ack is in.
  if (phase_ == MigPhase::kDrain) {
    timings_.drain_ms = now_ms - phase_start_ms_;
    drained_ = acked_;
    phase_ = MigPhase::kPush;
    phase_start_ms_ = now_ms;
    deadline_ms_ = now_ms + config_.push_timeout_ms;
    Log("acks " + std::to_string(acked_.size()) + "/" + std::to_string(expected_.size()) + " in " +
        std::to_string(timings_.drain_ms) + " ms: releasing the new tables");
    actions_.push_back({MigAction::kRelease, epoch_, 0, 0, false, ""});
  } else {
    timings_.repath_ms = now_ms - phase_start_ms_;
    Log("RePath acks " + std::to_string(acked_.size()) + "/" + std::to_string(expected_.size()) +
        " in " + std::to_string(timings_.repath_ms) + " ms");
    Finish(now_ms, abort_outcome_.empty() ? "released" : abort_outcome_);
  }
  return r;
}

void MigrationCoordinator::RoutingDone(uint64_t now_ms, uint32_t installed_epoch) {
  if (phase_ != MigPhase::kPush || installed_epoch != epoch_) return;
  timings_.push_ms = now_ms - phase_start_ms_;
  Log("new tables pushed in " + std::to_string(timings_.push_ms) + " ms");
  EnterRepath(now_ms, 0);
}

void MigrationCoordinator::EnterRepath(uint64_t now_ms, uint8_t flags) {
  phase_ = MigPhase::kRepath;
  phase_start_ms_ = now_ms;
  expected_ = drained_;
  acked_.clear();
  const std::string stay = flags & SAR_MIG_FLAG_STAY ? " (stay: old tables kept)" : "";
  if (expected_.empty()) {
    Log("sending RePath" + stay + ", no ack to wait for");
    actions_.push_back({MigAction::kSendRepath, epoch_, flags, 0, false, ""});
    Finish(now_ms, abort_outcome_.empty() ? "released" : abort_outcome_);
    return;
  }
  deadline_ms_ = now_ms + config_.repath_timeout_ms;
  Log("sending RePath" + stay + ", waiting for " + std::to_string(expected_.size()) + " ack(s)");
  actions_.push_back({MigAction::kSendRepath, epoch_, flags, 0, false, ""});
}

void MigrationCoordinator::TopologyChanged(uint64_t now_ms) {
  if (phase_ != MigPhase::kPlan && phase_ != MigPhase::kDrain) return;
  Log("topology changed: epoch aborted (the fault is routed around at once), re-planning", true);
  pending_ = true;
  abort_outcome_ = "aborted-topology";
  actions_.push_back({MigAction::kDiscard, epoch_, 0, 0, false, ""});
  if (phase_ == MigPhase::kPlan) {
    Finish(now_ms, abort_outcome_);
    return;
  }
  timings_.drain_ms = now_ms - phase_start_ms_;
  drained_ = expected_;  // anyone may have moved: everyone is told to move back
  EnterRepath(now_ms, SAR_MIG_FLAG_STAY);
}

void MigrationCoordinator::Tick(uint64_t now_ms) {
  if (deadline_ms_ == 0 || now_ms < deadline_ms_) return;
  switch (phase_) {
    case MigPhase::kDrain: {
      timings_.drain_ms = now_ms - phase_start_ms_;
      std::string newly;
      for (const PortGid& g : expected_) {
        if (acked_.count(g)) continue;
        if (++missed_[g] >= config_.exclude_after && excluded_.insert(g).second) {
          newly += (newly.empty() ? "" : " ") + ShortGid(g);
        }
      }
      Log("ack deadline passed with acks " + std::to_string(acked_.size()) + "/" +
              std::to_string(expected_.size()) + ", late: " + Waiting() +
              "; aborting, the old tables stay",
          true);
      if (!newly.empty()) {
        Log("excluded after " + std::to_string(config_.exclude_after) +
                " missed epochs in a row: " + newly,
            true);
      }
      abort_outcome_ = "aborted-timeout";
      drained_ = expected_;  // late agents may still have moved: tell everyone
      actions_.push_back({MigAction::kDiscard, epoch_, 0, 0, false, ""});
      EnterRepath(now_ms, SAR_MIG_FLAG_STAY);
      break;
    }
    case MigPhase::kPush:
      timings_.push_ms = now_ms - phase_start_ms_;
      Log("no routing-done within " + std::to_string(config_.push_timeout_ms) +
              " ms after release; sending RePath all the same",
          true);
      abort_outcome_ = "released-unconfirmed";
      EnterRepath(now_ms, 0);
      break;
    case MigPhase::kRepath:
      timings_.repath_ms = now_ms - phase_start_ms_;
      Log("RePath deadline passed with acks " + std::to_string(acked_.size()) + "/" +
          std::to_string(expected_.size()) + ", late: " + Waiting());
      Finish(now_ms, abort_outcome_.empty() ? "released-late-repath" : abort_outcome_);
      break;
    default:
      deadline_ms_ = 0;
  }
}

void MigrationCoordinator::Finish(uint64_t now_ms, const std::string& outcome) {
  timings_.total_ms = now_ms - epoch_start_ms_;
  last_epoch_ = epoch_;
  last_outcome_ = outcome;
  last_timings_ = timings_;
  phase_ = MigPhase::kIdle;
  deadline_ms_ = 0;
  expected_.clear();
  acked_.clear();
  drained_.clear();
  Log("epoch done: " + outcome + " (plan " + std::to_string(timings_.plan_ms) + " ms, drain " +
      std::to_string(timings_.drain_ms) + " ms, push " + std::to_string(timings_.push_ms) +
      " ms, repath " + std::to_string(timings_.repath_ms) + " ms, total " +
      std::to_string(timings_.total_ms) + " ms)");
  if (pending_) Start(now_ms);
}

uint64_t MigrationCoordinator::MsToDeadline(uint64_t now_ms) const {
  if (deadline_ms_ == 0) return std::numeric_limits<uint64_t>::max();
  return deadline_ms_ > now_ms ? deadline_ms_ - now_ms : 0;
}

MigrationStatus MigrationCoordinator::Status() const {
  MigrationStatus s;
  s.epoch = epoch_;
  s.phase = phase_;
  s.expected = expected_.size();
  s.acked = acked_.size();
  for (const PortGid& g : expected_) {
    if (!acked_.count(g)) s.waiting.push_back(g);
  }
  s.excluded.assign(excluded_.begin(), excluded_.end());
  s.pending = pending_;
  s.last_epoch = last_epoch_;
  s.last_outcome = last_outcome_;
  s.last_timings = last_timings_;
  s.epochs_started = epochs_started_;
  s.acks_ignored = acks_ignored_;
  return s;
}

namespace {
std::string GidList(const std::vector<PortGid>& gids) {
  std::string s = "[";
  for (size_t i = 0; i < gids.size(); ++i) s += (i ? ",\"" : "\"") + ShortGid(gids[i]) + "\"";
  return s + "]";
}
}  // namespace

std::string MigrationStatusJson(const MigrationStatus& s, uint64_t now_ms) {
  const MigTimings& t = s.last_timings;
  // Outcomes and phase names are fixed words: nothing here needs escaping.
  return "{\"epoch\":" + std::to_string(s.epoch) +
         ",\"phase\":" + std::to_string(static_cast<int>(s.phase)) + ",\"phase_name\":\"" +
         MigPhaseName(s.phase) + "\",\"expected\":" + std::to_string(s.expected) +
         ",\"acked\":" + std::to_string(s.acked) + ",\"waiting\":" + GidList(s.waiting) +
         ",\"excluded\":" + GidList(s.excluded) + ",\"pending\":" + (s.pending ? "true" : "false") +
         ",\"last_epoch\":" + std::to_string(s.last_epoch) + ",\"last_outcome\":\"" +
         s.last_outcome + "\",\"last_ms\":{\"plan\":" + std::to_string(t.plan_ms) +
         ",\"drain\":" + std::to_string(t.drain_ms) + ",\"push\":" + std::to_string(t.push_ms) +
         ",\"repath\":" + std::to_string(t.repath_ms) + ",\"total\":" + std::to_string(t.total_ms) +
         "},\"epochs_started\":" + std::to_string(s.epochs_started) +
         ",\"acks_ignored\":" + std::to_string(s.acks_ignored) +
         ",\"updated_ms\":" + std::to_string(now_ms) + "}";
}

bool MigrationCoordinator::PopAction(MigAction* out) {
  if (actions_.empty()) return false;
  *out = std::move(actions_.front());
  actions_.pop_front();
  return true;
}

bool MigAckInbox::Offer(const PortGid& issuer, const uint8_t* data) {
  const auto it = index_.find(issuer);
  if (it == index_.end() || data == nullptr) {
    ++strays_;
    return false;
  }
  Slot& slot = slots_[it->second];
  slot.ack.issuer = issuer;
  std::memcpy(slot.ack.data, data, SAR_MIG_DATA_SIZE);
  if (!slot.full) {
    slot.full = true;
    order_.push_back(it->second);  // within the capacity reserved by Sync
  }
  return true;
}

void MigAckInbox::Sync(const MigrationCoordinator& coordinator) {
  if (coordinator.ack_ports_generation() == generation_) return;
  const std::vector<PortGid>& ports = coordinator.AckPorts();
  std::unordered_map<PortGid, size_t, GidHash> index;
  std::vector<Slot> slots(ports.size());
  index.reserve(ports.size());
  for (size_t i = 0; i < ports.size(); ++i) index.emplace(ports[i], i);
  std::vector<size_t> order;
  order.reserve(slots.size());
  for (size_t old : order_) {  // acks not yet taken of the ports that stay
    const auto it = index.find(slots_[old].ack.issuer);
    if (it == index.end() || slots[it->second].full) continue;
    slots[it->second] = slots_[old];
    order.push_back(it->second);
  }
  index_ = std::move(index);
  slots_ = std::move(slots);
  order_ = std::move(order);
  generation_ = coordinator.ack_ports_generation();  // last: a bad_alloc above changes nothing
}

size_t MigAckInbox::Take(InboxAck* out, size_t max) {
  const size_t n = std::min(max, order_.size());
  for (size_t i = 0; i < n; ++i) {
    Slot& slot = slots_[order_[i]];
    out[i] = slot.ack;
    slot.full = false;
  }
  order_.erase(order_.begin(), order_.begin() + static_cast<std::ptrdiff_t>(n));
  return n;
}

uint64_t MigAckInbox::TakeStrays() { return std::exchange(strays_, 0); }

}  // namespace sar
