// A UNIX stream socket (mode 0600: only the daemon's user may talk to it; 0660 with a group,
// e.g. SLURM's SlurmUser group, whose PrologSlurmctld runs sar-notify) through which SLURM hooks
// say "a job started or ended, look now" instead of waiting for the next poll.
// Protocol: one line per connection. "poll" (or "job-start <id>" / "job-end <id>", same effect)
// -> "ok\n" and a poll on the next loop turn; "status" -> one line of counters; anything else ->
// "error: unknown command\n".
#pragma once

#include <string>

#include "sar/status.h"

namespace sar::filterd {

class ControlSocket {
 public:
  ControlSocket() = default;
  ~ControlSocket();
  ControlSocket(const ControlSocket&) = delete;
  ControlSocket& operator=(const ControlSocket&) = delete;

  /// Binds `path` (removing a stale socket there) and listens. With a `group`, the socket
  /// belongs to that group and is mode 0660; an unknown group is an error.
  Status Open(const std::string& path, const std::string& group = "");
  int fd() const { return fd_; }

  /// Serves one pending connection. *poll_now is set if the client asked for a poll. `status`
  /// is what "status" answers. Returns false if no connection was pending (the caller drains
  /// the queue by calling until then).
  bool ServeOne(const std::string& status, bool* poll_now);

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace sar::filterd
