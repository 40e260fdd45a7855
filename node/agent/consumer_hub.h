// The agent's side of libsarmig: a UNIX socket server for the node's consumers. It hands each
// phase to every registered consumer and reports when all of them answered, or when the phase's
// deadline passed (late). Consumers are untrusted: non-blocking I/O, a line cap, a deadline for
// HELLO and for any partial line, an output cap and a connection cap; whatever breaks a rule is
// disconnected. A disconnected consumer is no longer registered and no longer waited for.
//
// Threads: StartPhase may be called from any thread (it only records the order and wakes the
// poller); Poll runs on one thread and owns the connections.
#ifndef SAR_AGENT_CONSUMER_HUB_H_
#define SAR_AGENT_CONSUMER_HUB_H_

#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent.h"
#include "log.h"

namespace sarmig {

struct HubConfig {
  std::string path;           // socket path; created 0600, a stale one is replaced
  size_t max_consumers = 64;  // connections beyond this are closed at once
  Ms hello_timeout{2000};     // time from connect to a complete HELLO
  Ms line_timeout{2000};      // time a partial line may stay incomplete
  size_t max_output = 4096;   // queued bytes to one consumer before it is dropped
};

class ConsumerHub : public ConsumerControl {
 public:
  ConsumerHub(const HubConfig& cfg, Logger* log);
  ~ConsumerHub() override;
  ConsumerHub(const ConsumerHub&) = delete;
  ConsumerHub& operator=(const ConsumerHub&) = delete;

  /// Creates the socket. False with a message naming the path on failure.
  bool Listen(std::string* err);
  void StartPhase(const PhaseOrder& order) override;
  /// One round of I/O, waiting at most `timeout_ms`; returns the phases that finished.
  std::vector<PhaseResult> Poll(int timeout_ms);
  /// Wakes a Poll in progress (used at shutdown).
  void Wake();
  size_t registered() const { return registered_; }

 private:
  struct Conn {
    int fd = -1;
    uint64_t id = 0;
    bool registered = false;
    std::string name;
    std::string in;
    std::string out;
    Clock::time_point accepted{};
    Clock::time_point partial_since{};
  };
  struct Phase {
    PhaseOrder order;
    Clock::time_point deadline{};
    Clock::time_point started{};
    std::set<uint64_t> waiting;
    uint16_t consumers = 0;
    uint16_t drained = 0;
  };

  void Accept(Clock::time_point now);
  void ReadFrom(Conn& c, Clock::time_point now);
  void HandleLine(Conn& c, const std::string& line);
  void Queue(Conn& c, const std::string& line);
  void Flush(Conn& c);
  void Drop(Conn& c, const char* reason);
  void Begin(const PhaseOrder& o, Clock::time_point now);
  std::string PhaseLine() const;
  void Finish(Clock::time_point now, bool late, std::vector<PhaseResult>* out);

  HubConfig cfg_;
  Logger* log_;
  int listen_fd_ = -1;
  int wake_rd_ = -1, wake_wr_ = -1;
  std::vector<Conn> conns_;
  uint64_t next_id_ = 1;
  size_t registered_ = 0;
  std::optional<Phase> phase_;
  // The last order: a consumer that registers later is told the node's current mode.
  std::optional<PhaseOrder> mode_;

  std::mutex mu_;  // guards pending_
  std::optional<PhaseOrder> pending_;
};

}  // namespace sarmig

#endif  // SAR_AGENT_CONSUMER_HUB_H_
