// The node agent's state machine: subscriptions, Reports, phases, acknowledgements.
//
// Single-threaded by contract: the caller serialises OnMad / OnPhaseDone / Tick (sar_agent.cc
// holds one mutex around them). It never waits: every input is handled at once and the outputs
// are sends on the MadTransport and orders to the ConsumerControl, both non-blocking. Time comes
// in as an argument, so the tests drive it with a fake clock.
//
// Phases as seen from a node (sar/migration/migration_wire.h): UNPATH(epoch E, phase 1) -> tell the
// consumers "move to high" -> when they all answered (or their deadline passed) ack phase 2,
// resent with a new seq every ack_resend until RePath(E) arrives -> tell them "move back" ->
// ack phase 4 (resent a few times, stopped by OpenSM's TrapRepress). Duplicates (same TID, same
// epoch) are answered but change nothing; older epochs are ignored, except after
// epoch_reset_after of silence (the coordinator may have restarted and counts from 1 again).
#ifndef SAR_AGENT_AGENT_H_
#define SAR_AGENT_AGENT_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <string>

#include "log.h"
#include "mad.h"
#include "transport.h"

namespace sarmig {

using Clock = std::chrono::steady_clock;
using Ms = std::chrono::milliseconds;

/// What the agent asks of the node's consumers (consumer_hub.h implements it over a socket).
struct PhaseOrder {
  uint32_t epoch = 0;
  uint8_t phase = 0;  // 2: move to highLIDs; 4: move back to baseLIDs
  bool stay = false;  // phase 4: the epoch was aborted, the old base tables stay
  Ms deadline{0};     // how long the consumers have
};

/// The consumers' answer to one PhaseOrder.
struct PhaseResult {
  uint32_t epoch = 0;
  uint8_t phase = 0;
  uint16_t consumers = 0;  // registered when the phase started
  uint16_t drained = 0;    // answered before the deadline
  bool late = false;       // the deadline passed with some unanswered
};

class ConsumerControl {
 public:
  virtual ~ConsumerControl() = default;
  /// Replaces any phase in progress. Must not block and must not call back into the Agent.
  virtual void StartPhase(const PhaseOrder& order) = 0;
};

struct AgentConfig {
  uint8_t port_num = 1;
  uint64_t port_guid = 0;
  bool test_mode = false;       // answer SMInfo / SMP requests (ibsim issm, test only)
  Ms resubscribe{10000};        // renew both InformInfo records this often
  Ms subscribe_retry{1000};     // after a refusal or no answer
  Ms portinfo_poll{1000};       // look for a new SM LID this often
  Ms ack_resend{200};           // phase-2 ack resend period
  int max_ack_resends = 300;    // bound on phase-2 resends per epoch
  int repath_ack_sends = 3;     // phase-4 acks sent at most (fewer after TrapRepress)
  Ms consumer_deadline{2000};   // consumers' time per phase (capped by the notice's deadline)
  Ms max_high{60000};           // no RePath this long after UnPath: move back on our own
  Ms epoch_reset_after{30000};  // silence after which a lower epoch is accepted
};

/// Counters and the current phase, for logs, the status file and the tests.
struct AgentStatus {
  uint16_t lid = 0;
  uint16_t sm_lid = 0;
  uint64_t sm_guid = 0;
  bool subscribed = false;  // both records acknowledged by the SA at the last attempt
  uint32_t epoch = 0;
  std::string state = "idle";
  uint64_t reports = 0;
  uint64_t duplicate_reports = 0;
  uint64_t ignored_notices = 0;
  uint64_t acks_sent = 0;
  uint64_t acks_repressed = 0;
  uint64_t subscriptions = 0;
  uint64_t sminfo_answers = 0;
  uint16_t last_consumers = 0;
  uint16_t last_drained = 0;
  bool last_late = false;
};

class Agent {
 public:
  Agent(const AgentConfig& cfg, MadTransport* mad, ConsumerControl* consumers, Logger* log);

  /// A MAD from the transport.
  void OnMad(const MadPacket& pkt, Clock::time_point now);
  /// The consumers finished (or timed out on) a phase.
  void OnPhaseDone(const PhaseResult& r, Clock::time_point now);
  /// Timers: PortInfo poll, (re)subscription, ack resends, the max_high safety net.
  void Tick(Clock::time_point now);

  const AgentStatus& status() const { return status_; }

 private:
  enum class State { kIdle, kMovingHigh, kHigh, kMovingBack, kBack };
  static const char* StateName(State s);

  void HandleReport(const MadPacket& pkt, Clock::time_point now);
  void HandleNotice(const sar_mig_msg_t& m, Clock::time_point now);
  void HandleSmpRequest(const MadPacket& pkt);
  void HandlePortInfo(const PortInfo& pi, Clock::time_point now);
  void StartMove(uint32_t epoch, uint8_t phase, bool stay, uint32_t notice_deadline_ms,
                 Clock::time_point now);
  void SendAck(Clock::time_point now);
  void Subscribe(Clock::time_point now);
  void SetState(State s);
  bool Send(const Mad& mad, const MadAddr& to, const char* what);
  // Logs a warning for hostile or malformed input, at most a burst per 10 s (a notice storm
  // must not become a log storm); the rest are counted and summarised.
  void Ignored(Clock::time_point now, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
  uint64_t NextTid() { return (static_cast<uint64_t>(tid_hi_) << 32) | ++tid_lo_; }

  AgentConfig cfg_;
  MadTransport* mad_;
  ConsumerControl* consumers_;
  Logger* log_;
  AgentStatus status_;

  // Port and SM, from the local PortInfo.
  bool port_known_ = false;
  PortInfo port_;
  uint32_t portinfo_tid_ = 0;
  uint64_t sm_guid_ = 0;  // from SMInfo; 0 until the SM answered
  uint32_t sminfo_tid_ = 0;
  Clock::time_point next_portinfo_{};

  // Subscriptions in flight: TID (low 32 bits) -> trap number.
  std::map<uint32_t, uint16_t> sub_pending_;
  int sub_ok_ = 0;
  bool ever_subscribed_ = false;
  Clock::time_point next_subscribe_{};

  // The epoch.
  State state_ = State::kIdle;
  uint32_t epoch_ = 0;
  bool stay_ = false;
  sar_mig_msg_t ack_{};
  uint32_t seq_ = 0;
  bool first_send_of_ack_ = false;
  uint32_t ack_tid_ = 0;
  int resends_left_ = 0;
  Clock::time_point next_resend_{};
  Clock::time_point high_since_{};
  Clock::time_point last_notice_{};
  Clock::time_point phase_started_{};

  // Recent Reports (hash of SLID, TID, notice): OpenSM resends a Report until ReportResp.
  std::deque<uint64_t> recent_tids_;

  // Ignored() rate limit.
  Clock::time_point warn_window_{};
  int warns_in_window_ = 0;
  uint64_t warns_suppressed_ = 0;

  uint32_t tid_hi_ = 0x5341u;
  uint32_t tid_lo_ = 0;
};

}  // namespace sarmig

#endif  // SAR_AGENT_AGENT_H_
