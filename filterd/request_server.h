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
#include <vector>

#include "bounded_io.h"

namespace sar::filterd {

struct RequestServerOptions {
  double deadline_s = 2;      // from accept to the last byte of the answer
  size_t max_request = 4096;  // a request still incomplete at this size is dropped
  size_t max_clients = 64;    // open at once; further clients wait in the listen backlog
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
  /// The earliest connection deadline (for the loop's poll timeout); max() if none is open.
  IoClock::time_point NextDeadline() const;
  size_t open_connections() const { return conns_.size(); }
  uint64_t dropped() const { return dropped_; }  // closed unanswered: deadline or byte cap

 private:
  struct Conn {
    int fd;
    IoClock::time_point deadline;
    std::string in;
    std::string out;
    bool answered = false;
  };
  void Close(size_t i);
  bool Progress(Conn* c, const Answer& answer, int* answered);

  RequestServerOptions options_;
  IoComplete complete_;
  std::vector<Conn> conns_;
  uint64_t dropped_ = 0;
};

}  // namespace sar::filterd
