// The connections of a one-request-per-connection server (the control socket, the metrics
// endpoint), served from the daemon's event loop without ever waiting on a client: each
// accepted connection is non-blocking, read as its bytes arrive (bounded_io.h), answered when its
// request is whole, and closed at its deadline or byte cap whatever it sent. A client sending
// one byte a second, or nothing, costs the loop one pollfd, never time (issue 19, defect 8).
#pragma once

#include <poll.h>

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/bounded_io.h"

namespace sar::filterd {

struct RequestServerOptions {
  double deadline_s = 2;      // from accept to the last byte of the answer
  size_t max_request = 4096;  // a request still incomplete at this size is dropped
  // Open at once. At the cap a new client takes the slot of the oldest one still sending its
  // request (accepted in an earlier turn): a client that has sent its request is answered in
  // the turn it is accepted, so slow or silent clients, however many, cannot keep a prompt one
  // waiting (issue 34 defect 10). Only when every open connection is being answered do further
  // clients wait in the listen backlog.
  size_t max_clients = 64;
};

class RequestServer {
 public:
  /// The answer to a whole request (sent, then the connection is closed).
  using Answer = std::function<std::string(std::string_view request)>;

  RequestServer(RequestServerOptions options, IoComplete complete);
  ~RequestServer();
  RequestServer(const RequestServer&) = delete;
  RequestServer& operator=(const RequestServer&) = delete;

  /// Appends the listening socket `listen_fd` (-1: none) and every open connection.
  void AddPollFds(int listen_fd, std::vector<pollfd>* fds) const;
  /// After poll(): accepts what is queued on `listen_fd`, reads and answers what is ready,
  /// closes what is done or past its deadline. Never waits. Returns the requests answered.
  int Handle(int listen_fd, const std::vector<pollfd>& fds, const Answer& answer);
  /// For line-oriented answers: one not taken whole by its deadline (a slow reader) is not cut
  /// at a random byte; the line under way is finished and `notice` ("error: ...\n") follows,
  /// within `grace_s` more, then the connection closes whatever was taken. Unset (empty): such
  /// a connection is closed at its deadline.
  void set_cut_notice(std::string notice, double grace_s) {
    cut_notice_ = std::move(notice);
    cut_grace_s_ = grace_s;
  }
  /// The earliest connection deadline (for the loop's poll timeout); max() if none is open.
  IoClock::time_point NextDeadline() const;
  size_t open_connections() const { return conns_.size(); }
  uint64_t dropped() const { return dropped_; }  // closed unanswered: deadline, cap or evicted
  uint64_t evicted() const { return evicted_; }  // of those, closed for a newer client at the cap

 private:
  struct Conn {
    int fd;
    IoClock::time_point deadline;
    std::string in;
    std::string out;
    bool answered = false;
    char last_sent = '\n';  // the last byte of the answer written: '\n' at a line's end
    bool cut = false;       // past the deadline: finishing the line and the cut notice
    bool this_turn = true;  // accepted in the current Handle(): not evicted for the next one
  };
  void Close(size_t i);
  bool Progress(Conn* c, const Answer& answer, int* answered);
  /// At the deadline with an answer still going out: true if a cut notice is now queued.
  bool StartCut(Conn* c);
  /// The oldest connection still reading its request and accepted before this turn; size() if
  /// none.
  size_t OldestReader() const;

  RequestServerOptions options_;
  IoComplete complete_;
  std::string cut_notice_;
  double cut_grace_s_ = 0;
  std::vector<Conn> conns_;
  uint64_t dropped_ = 0;
  uint64_t evicted_ = 0;
};

}  // namespace sar::filterd
