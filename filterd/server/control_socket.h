// A UNIX stream socket (mode 0600: only the daemon's user may talk to it; 0660 with a group,
// e.g. SLURM's SlurmUser group, whose PrologSlurmctld runs sar-notify) through which SLURM hooks
// say "a job started or ended, look now" instead of waiting for the next poll.
// Protocol: one line per connection. "poll" (or "job-start <id>" / "job-end <id>", same effect)
// -> "ok\n" and a poll on the next loop turn; "status" -> one line of counters; "mapping" -> the
// job mapping the router was last told, in the mapping file's format (docs/formats.md), then the
// connection closes; anything else -> "error: unknown command\n".
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "sar/status.h"
#include "server/request_server.h"

namespace sar::filterd {

class ControlSocket {
 public:
  ControlSocket();
  ~ControlSocket();
  ControlSocket(const ControlSocket&) = delete;
  ControlSocket& operator=(const ControlSocket&) = delete;

  /// Binds `path` and listens. A socket already there is removed only if nobody listens on it
  /// (stale); one that accepts a connection belongs to another daemon and is left alone: Failed
  /// (code kFailed), naming the path. Anything else at `path` is an error, never removed. With
  /// a `group`, the socket belongs to that group and is mode 0660; an unknown group is an error.
  /// The destructor removes the socket only if the file at `path` is still the one bound here.
  Status Open(const std::string& path, const std::string& group = "");
  int fd() const { return fd_; }

  /// The listening socket and the open connections, for the event loop's poll().
  void AddPollFds(std::vector<pollfd>* fds) const { conns_.AddPollFds(fd_, fds); }
  /// What the read-only commands answer, each made only when asked (the loop wakes for every
  /// client byte, and a mapping can be megabytes).
  struct Queries {
    std::function<std::string()> status;   // one line, no newline
    std::function<std::string()> mapping;  // whole lines
  };
  /// After poll(): accepts, reads and answers what is ready; never waits on a client (each has
  /// 2 s and 1 KiB for its line). Returns the number of poll requests (poll, job-start,
  /// job-end) answered. With `requests`, each of those lines is appended to it as the log shows
  /// it: at most 64 printable characters ("job-start 4712"), anything else as '?'.
  int Handle(const std::vector<pollfd>& fds, const Queries& queries,
             std::vector<std::string>* requests = nullptr);
  IoClock::time_point NextDeadline() const { return conns_.NextDeadline(); }
  const RequestServer& connections() const { return conns_; }

 private:
  int fd_ = -1;
  std::string path_;  // empty unless bound here
  dev_t dev_ = 0;     // the bound socket file, for the destructor
  ino_t ino_ = 0;
  RequestServer conns_;
};

}  // namespace sar::filterd
