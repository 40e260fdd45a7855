// One sar-filterd per state dir (issue 19 defect 13): a second one with the same config took over
// the control socket and deleted it on exit, leaving the running service unreachable. The lock is
// flock() on a pid file in the state dir: the kernel drops it when the holder dies (also by
// SIGKILL), so a crash never leaves a stale lock, and the file names the holder for the error.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

#include "sar/status.h"

namespace sar::filterd {

class InstanceLock {
 public:
  /// How the pid is written into the locked file: pwrite(2) unless a test injects a failure
  /// (a full state disk: ENOSPC).
  using PidWriter = std::function<ssize_t(int fd, const void* buf, size_t n, off_t offset)>;

  explicit InstanceLock(PidWriter write_pid = nullptr);
  ~InstanceLock();
  InstanceLock(const InstanceLock&) = delete;
  InstanceLock& operator=(const InstanceLock&) = delete;

  /// Creates `state_dir` if missing (mode 0700, not its parents), locks `state_dir`/sar-filterd.pid
  /// and writes this process's pid into it. Fails if another process holds it, naming its pid.
  /// Once the lock is taken it is kept: the pid is only a name for the error, so a failed write
  /// (a full disk) empties the file and is reported in warning(), never drops the lock (issue 34
  /// defect 8: a daemon that dropped it let a second one take the state dir and the socket).
  Status Acquire(const std::string& state_dir);
  bool held() const { return fd_ >= 0; }
  /// Why the held lock's file does not name this process (empty if it does).
  const std::string& warning() const { return warning_; }
  static std::string PidFile(const std::string& state_dir) {
    return state_dir + "/sar-filterd.pid";
  }

 private:
  PidWriter write_pid_;
  int fd_ = -1;
  std::string warning_;
};

}  // namespace sar::filterd
