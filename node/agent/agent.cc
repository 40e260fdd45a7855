#include "agent.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <ctime>

namespace sarmig {
namespace {

constexpr size_t kRecentTids = 64;
constexpr int kWarnBurst = 10;
constexpr auto kWarnWindow = std::chrono::seconds(10);

uint64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

long long ToMs(Clock::duration d) { return std::chrono::duration_cast<Ms>(d).count(); }

}  // namespace

Agent::Agent(const AgentConfig& cfg, MadTransport* mad, ConsumerControl* consumers, Logger* log)
    : cfg_(cfg), mad_(mad), consumers_(consumers), log_(log) {
  // A restarted agent should not reuse the TIDs of its predecessor (OpenSM and the SA match
  // responses by TID).
  tid_lo_ = static_cast<uint32_t>(MonotonicNs() >> 10) & 0x7FFFFFFFu;
}

const char* Agent::StateName(State s) {
  switch (s) {
    case State::kIdle:
      return "idle";
    case State::kMovingHigh:
      return "moving-high";
    case State::kHigh:
      return "high";
    case State::kMovingBack:
      return "moving-back";
    case State::kBack:
      return "back";
  }
  return "?";
}

void Agent::SetState(State s) {
  state_ = s;
  status_.state = StateName(s);
  status_.epoch = epoch_;
}

bool Agent::Send(const Mad& mad, const MadAddr& to, const char* what) {
  if (mad_->Send(mad, to)) return true;
  SARMIG_LOG(log_, kWarn, "could not send %s to LID %u QP %u", what, to.lid, to.qpn);
  return false;
}

void Agent::Ignored(Clock::time_point now, const char* fmt, ...) {
  status_.ignored_notices++;
  if (now - warn_window_ > kWarnWindow) {
    if (warns_suppressed_ > 0)
      SARMIG_LOG(log_, kWarn, "%llu more ignored messages in the last window not logged",
                 static_cast<unsigned long long>(warns_suppressed_));
    warn_window_ = now;
    warns_in_window_ = 0;
    warns_suppressed_ = 0;
  }
  if (++warns_in_window_ > kWarnBurst) {
    warns_suppressed_++;
    return;
  }
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  SARMIG_LOG(log_, kWarn, "ignored: %s", msg);
}

void Agent::OnMad(const MadPacket& pkt, Clock::time_point now) {
  if (pkt.status != 0) {
    // A send of ours that the transport gave up on (no response within its timeout).
    SARMIG_LOG(log_, kDebug, "MAD with transport status %d", pkt.status);
    return;
  }
  MadHeader h = ParseHeader(pkt.mad);
  if (h.base_version != 1) {
    Ignored(now, "MAD with base version %u", h.base_version);
    return;
  }
  if (h.mgmt_class == kClassSa) {
    if (h.method == kMethodReport) {
      HandleReport(pkt, now);
    } else if (h.method == kMethodGetResp && h.attr_id == kAttrInformInfo) {
      auto it = sub_pending_.find(TidLow(h.tid));
      if (it == sub_pending_.end()) return;  // a late answer to an earlier round
      uint16_t trap = it->second;
      sub_pending_.erase(it);
      if (h.status != 0) {
        SARMIG_LOG(log_, kError, "SA refused the subscription to trap %u: MAD status 0x%04x", trap,
                   h.status);
        next_subscribe_ = now + cfg_.subscribe_retry;
        status_.subscribed = false;
        return;
      }
      status_.subscriptions++;
      if (++sub_ok_ == 2) {
        if (!status_.subscribed || !ever_subscribed_)
          SARMIG_LOG(log_, kInfo, "subscribed to traps %d and %d at SM LID %u (port LID %u)",
                     SAR_MIG_TRAP_UNPATH, SAR_MIG_TRAP_REPATH, port_.sm_lid, port_.lid);
        ever_subscribed_ = true;
        status_.subscribed = true;
        next_subscribe_ = now + cfg_.resubscribe;
      }
    }
    return;
  }
  if (h.mgmt_class == kClassSmpLid || h.mgmt_class == kClassSmpDr) {
    if (h.method == kMethodGetResp && h.attr_id == kAttrPortInfo &&
        TidLow(h.tid) == portinfo_tid_) {
      PortInfo pi;
      if (ParsePortInfoResp(pkt.mad, &pi)) HandlePortInfo(pi, now);
      return;
    }
    if (h.method == kMethodGetResp && h.attr_id == kAttrSmInfo && TidLow(h.tid) == sminfo_tid_) {
      uint64_t guid = 0;
      if (ParseSmInfoResp(pkt.mad, &guid) && guid != sm_guid_) {
        SARMIG_LOG(log_, kInfo, "SM at LID %u is port GUID 0x%016llx", port_.sm_lid,
                   static_cast<unsigned long long>(guid));
        sm_guid_ = guid;
        status_.sm_guid = guid;
      }
      return;
    }
    if (h.method == kMethodTrapRepress) {
      if (TidLow(h.tid) == ack_tid_ && ack_tid_ != 0) {
        status_.acks_repressed++;
        SARMIG_LOG(log_, kDebug, "SM took ack epoch %u phase %u seq %u (TrapRepress)", ack_.epoch,
                   ack_.phase, ack_.seq);
        if (state_ == State::kBack) resends_left_ = 0;  // phase 4: nothing waits on it
      }
      return;
    }
    if ((h.method & 0x80) == 0 && h.method != kMethodTrap && cfg_.test_mode) {
      HandleSmpRequest(pkt);
    }
    return;
  }
  // Nothing else is ours; say so once in a while.
  if ((h.method & 0x80) == 0)
    Ignored(now, "MAD class 0x%02x method 0x%02x from LID %u", h.mgmt_class, h.method,
            pkt.from.lid);
}

void Agent::HandleSmpRequest(const MadPacket& pkt) {
  MadHeader h = ParseHeader(pkt.mad);
  Mad resp;
  if (h.attr_id == kAttrSmInfo && (h.method == kMethodGet || h.method == kMethodSet)) {
    resp = BuildSmInfoResp(pkt.mad, cfg_.port_guid);
    status_.sminfo_answers++;
    if (status_.sminfo_answers == 1)
      SARMIG_LOG(log_, kInfo, "test mode: answered SMInfo (NOT-ACTIVE, priority 0) to LID %u",
                 pkt.from.lid);
  } else {
    resp = BuildSmpUnsupportedResp(pkt.mad);
    SARMIG_LOG(log_, kDebug, "test mode: SMP attribute 0x%04x unsupported", h.attr_id);
  }
  Send(resp, pkt.from, "SMP response");
}

void Agent::HandlePortInfo(const PortInfo& pi, Clock::time_point now) {
  bool first = !port_known_;
  if (first || pi.sm_lid != port_.sm_lid || pi.lid != port_.lid) {
    SARMIG_LOG(log_, kInfo, "port LID %u, SM LID %u, state %u%s", pi.lid, pi.sm_lid, pi.port_state,
               first ? "" : ": re-subscribing");
    sub_ok_ = 0;
    sub_pending_.clear();
    status_.subscribed = false;
    next_subscribe_ = now;  // the new SM (or the restarted one) knows nothing of us
    if (pi.sm_lid != port_.sm_lid) {
      sm_guid_ = 0;
      status_.sm_guid = 0;
    }
  }
  port_known_ = true;
  port_ = pi;
  status_.lid = pi.lid;
  status_.sm_lid = pi.sm_lid;
  if (sm_guid_ == 0 && pi.sm_lid != 0) {
    uint64_t tid = NextTid();
    sminfo_tid_ = TidLow(tid);
    Send(BuildSmInfoGet(tid), MadAddr{pi.sm_lid, 0, 0}, "SMInfo Get");
  }
}

void Agent::Subscribe(Clock::time_point now) {
  if (!sub_pending_.empty()) {
    SARMIG_LOG(log_, kWarn, "no answer from the SA at LID %u to the subscription; retrying",
               port_.sm_lid);
  }
  sub_pending_.clear();
  sub_ok_ = 0;
  MadAddr sa{port_.sm_lid, 1, kSaQkey};
  for (uint16_t trap : {uint16_t{SAR_MIG_TRAP_UNPATH}, uint16_t{SAR_MIG_TRAP_REPATH}}) {
    uint64_t tid = NextTid();
    sub_pending_[TidLow(tid)] = trap;
    Send(BuildInformInfoSet(tid, Subscription{trap, true}), sa, "InformInfo Set");
  }
  // Renewed periodically: OpenSM forgets subscriptions when it restarts.
  next_subscribe_ = now + cfg_.subscribe_retry;
}

void Agent::HandleReport(const MadPacket& pkt, Clock::time_point now) {
  // Answer first, whatever the Report holds: OpenSM resends until it gets a ReportResp.
  Send(BuildReportResp(pkt.mad), MadAddr{pkt.from.lid, pkt.from.qpn, kSaQkey}, "ReportResp");
  status_.reports++;
  // A retry of OpenSM's is the same MAD again: key on source, TID and the notice's bytes. The
  // TID alone is not enough: a restarted OpenSM counts its TIDs from the same start.
  MadHeader h = ParseHeader(pkt.mad);
  uint64_t key = 1469598103934665603ull;  // FNV-1a
  auto mix = [&key](uint64_t v) {
    key ^= v;
    key *= 1099511628211ull;
  };
  mix(pkt.from.lid);
  mix(TidLow(h.tid));
  for (size_t i = kSaDataOffset; i < kSaDataOffset + 80; i++) mix(pkt.mad[i]);
  if (std::find(recent_tids_.begin(), recent_tids_.end(), key) != recent_tids_.end()) {
    status_.duplicate_reports++;
    return;
  }
  recent_tids_.push_back(key);
  if (recent_tids_.size() > kRecentTids) recent_tids_.pop_front();

  Notice n;
  std::string why;
  if (!ParseReport(pkt.mad, &n, &why)) {
    Ignored(now, "Report from LID %u: %s", pkt.from.lid, why.c_str());
    return;
  }
  if (!n.is_generic ||
      (n.trap_or_device != SAR_MIG_TRAP_UNPATH && n.trap_or_device != SAR_MIG_TRAP_REPATH)) {
    Ignored(now, "notice %s %u from LID %u is not ours", n.is_generic ? "trap" : "vendor device",
            n.trap_or_device, pkt.from.lid);
    return;
  }
  sar_mig_msg_t m{};
  if (sar_mig_decode(n.details.data(), &m) != 0) {
    Ignored(now,
            "trap %u from LID %u: malformed DataDetails (magic, version, kind, phase or "
            "epoch)",
            n.trap_or_device, pkt.from.lid);
    return;
  }
  bool unpath = n.trap_or_device == SAR_MIG_TRAP_UNPATH;
  if ((unpath && (m.kind != SAR_MIG_UNPATH || m.phase != 1)) ||
      (!unpath && (m.kind != SAR_MIG_REPATH || m.phase != 4))) {
    Ignored(now, "trap %u from LID %u carries kind %u phase %u", n.trap_or_device, pkt.from.lid,
            m.kind, m.phase);
    return;
  }
  if (port_known_ && port_.sm_lid != 0 && pkt.from.lid != port_.sm_lid) {
    Ignored(now, "trap %u epoch %u from LID %u, not the SM (LID %u)", n.trap_or_device, m.epoch,
            pkt.from.lid, port_.sm_lid);
    return;
  }
  // Any node can make OpenSM forward a trap 68/69 to us, but OpenSM then writes that node's
  // GUID into IssuerGID: only the SM's own notices are the coordinator's.
  if (sm_guid_ == 0 || n.issuer_guid != sm_guid_) {
    Ignored(now, "trap %u epoch %u issued by GUID 0x%016llx, not the SM (0x%016llx)",
            n.trap_or_device, m.epoch, static_cast<unsigned long long>(n.issuer_guid),
            static_cast<unsigned long long>(sm_guid_));
    return;
  }
  HandleNotice(m, now);
}

void Agent::HandleNotice(const sar_mig_msg_t& m, Clock::time_point now) {
  bool unpath = m.kind == SAR_MIG_UNPATH;
  bool quiet_long = epoch_ != 0 && now - last_notice_ > cfg_.epoch_reset_after;
  if (epoch_ != 0 && m.epoch < epoch_) {
    bool restart_ok = quiet_long && (state_ == State::kIdle || state_ == State::kBack);
    if (!restart_ok) {
      Ignored(now, "%s epoch %u older than the current epoch %u (replay?)",
              unpath ? "UnPath" : "RePath", m.epoch, epoch_);
      return;
    }
    SARMIG_LOG(log_, kWarn,
               "epoch went back from %u to %u after %lld s of silence: "
               "the coordinator restarted",
               epoch_, m.epoch, ToMs(now - last_notice_) / 1000);
  }
  last_notice_ = now;
  if (m.epoch == epoch_ && epoch_ != 0) {
    // The same epoch again: the coordinator resent the notice, maybe because it missed our ack.
    bool same_phase = unpath ? (state_ == State::kMovingHigh || state_ == State::kHigh)
                             : (state_ == State::kMovingBack || state_ == State::kBack);
    if (same_phase) {
      if ((state_ == State::kHigh || state_ == State::kBack) && ack_tid_ != 0) SendAck(now);
      return;
    }
    if (unpath) {
      Ignored(now, "UnPath for epoch %u after its RePath", m.epoch);
      return;
    }
    // RePath for the epoch we are in: move back (even if the consumers are still moving high).
    StartMove(m.epoch, 4, (m.flags & SAR_MIG_FLAG_STAY) != 0, 0, now);
    return;
  }
  // A newer epoch (or our first one).
  if (state_ == State::kMovingHigh || state_ == State::kHigh) {
    SARMIG_LOG(log_, kWarn, "epoch %u ended without RePath; now epoch %u", epoch_, m.epoch);
  }
  epoch_ = m.epoch;
  if (unpath) {
    StartMove(m.epoch, 2, false, m.deadline_ms, now);
  } else {
    // RePath of an epoch whose UnPath we never saw (e.g. we restarted): moving back is harmless.
    StartMove(m.epoch, 4, (m.flags & SAR_MIG_FLAG_STAY) != 0, 0, now);
  }
}

void Agent::StartMove(uint32_t epoch, uint8_t phase, bool stay, uint32_t notice_deadline_ms,
                      Clock::time_point now) {
  PhaseOrder o;
  o.epoch = epoch;
  o.phase = phase;
  o.stay = stay;
  o.deadline = cfg_.consumer_deadline;
  if (notice_deadline_ms > 0) {
    // Leave a quarter of the coordinator's deadline for the ack to travel and be resent.
    o.deadline = std::min(o.deadline, Ms(std::max<uint32_t>(1, notice_deadline_ms * 3 / 4)));
  }
  stay_ = stay;
  epoch_ = epoch;
  resends_left_ = 0;
  phase_started_ = now;
  if (phase == 2) high_since_ = now;
  SetState(phase == 2 ? State::kMovingHigh : State::kMovingBack);
  SARMIG_LOG(log_, kInfo, "epoch %u phase %u: %s%s, consumers have %lld ms", epoch,
             phase == 2 ? 1 : 4,
             phase == 2 ? "UnPath: moving to highLIDs" : "RePath: moving back to baseLIDs",
             stay ? " (aborted: old tables stay)" : "", static_cast<long long>(o.deadline.count()));
  consumers_->StartPhase(o);
}

void Agent::OnPhaseDone(const PhaseResult& r, Clock::time_point now) {
  State want = r.phase == 2 ? State::kMovingHigh : State::kMovingBack;
  if (r.epoch != epoch_ || state_ != want) {
    SARMIG_LOG(log_, kDebug, "stale consumer result epoch %u phase %u (now epoch %u, %s)", r.epoch,
               r.phase, epoch_, StateName(state_));
    return;
  }
  status_.last_consumers = r.consumers;
  status_.last_drained = r.drained;
  status_.last_late = r.late;
  log_->Log(r.late ? LogLevel::kWarn : LogLevel::kInfo,
            "epoch %u phase %u: consumers drained %u/%u in %lld ms%s; acking", r.epoch, r.phase,
            r.drained, r.consumers, ToMs(now - phase_started_),
            r.late ? " (deadline passed: LATE_CONSUMER)" : "");
  ack_ = sar_mig_msg_t{};
  ack_.kind = SAR_MIG_ACK;
  ack_.phase = r.phase;
  ack_.flags = r.late ? SAR_MIG_FLAG_LATE_CONSUMER : 0;
  ack_.epoch = r.epoch;
  ack_.consumers = r.consumers;
  ack_.drained = r.drained;
  if (r.phase == 2) {
    SetState(State::kHigh);
    resends_left_ = cfg_.max_ack_resends;
  } else {
    SetState(State::kBack);
    resends_left_ = std::max(0, cfg_.repath_ack_sends - 1);
  }
  SendAck(now);
}

void Agent::SendAck(Clock::time_point now) {
  if (!port_known_ || port_.sm_lid == 0) {
    SARMIG_LOG(log_, kWarn, "epoch %u: no SM LID known yet, ack phase %u waits", ack_.epoch,
               ack_.phase);
    next_resend_ = now + cfg_.ack_resend;
    return;
  }
  first_send_of_ack_ = ack_.seq == 0;
  ack_.seq = ++seq_;
  ack_.sent_ns = MonotonicNs();
  std::array<uint8_t, 16> gid{};
  sar_mig_put(gid.data(), port_.gid_prefix, 8);
  sar_mig_put(gid.data() + 8, cfg_.port_guid, 8);
  uint64_t tid = NextTid();
  ack_tid_ = TidLow(tid);
  if (Send(BuildAckTrap(tid, port_.lid, gid, ack_), MadAddr{port_.sm_lid, 0, 0}, "ack trap")) {
    status_.acks_sent++;
    // The first send of each ack at info; resends at debug (up to 5 a second).
    log_->Log(first_send_of_ack_ ? LogLevel::kInfo : LogLevel::kDebug,
              "ack sent: epoch %u phase %u seq %u consumers %u drained %u flags 0x%x", ack_.epoch,
              ack_.phase, ack_.seq, ack_.consumers, ack_.drained, ack_.flags);
  }
  next_resend_ = now + cfg_.ack_resend;
}

void Agent::Tick(Clock::time_point now) {
  if (now >= next_portinfo_) {
    uint64_t tid = NextTid();
    portinfo_tid_ = TidLow(tid);
    Send(BuildLocalPortInfoGet(tid, cfg_.port_num), MadAddr{0xFFFF, 0, 0}, "PortInfo Get");
    next_portinfo_ = now + cfg_.portinfo_poll;
  }
  if (port_known_ && port_.sm_lid != 0 && port_.lid != 0 && now >= next_subscribe_) {
    Subscribe(now);
  }
  if ((state_ == State::kHigh || state_ == State::kBack) && resends_left_ > 0 &&
      now >= next_resend_) {
    resends_left_--;
    SendAck(now);
  }
  if ((state_ == State::kMovingHigh || state_ == State::kHigh) &&
      now - high_since_ > cfg_.max_high) {
    SARMIG_LOG(log_, kWarn, "epoch %u: no RePath %lld ms after UnPath: moving back on our own",
               epoch_, ToMs(now - high_since_));
    StartMove(epoch_, 4, true, 0, now);
  }
}

}  // namespace sarmig
