// One sar-filterd per state dir (issue 19 defect 13): a second one with the same config took over
// the control socket and deleted it on exit, leaving the running service unreachable. The lock is
// flock() on the state dir and on a pid file in it: the kernel drops both when the holder dies
// (also by SIGKILL), so a crash never leaves a stale lock, and the file names the holder for the
// error. The directory's lock needs no file made or written: a full state disk cannot drop it
// (issue 34 defect 8); the file's keeps out a daemon of a version that locks only the file.
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

  /// Creates `state_dir` if missing (mode 0700, not its parents), locks it and
  /// `state_dir`/sar-filterd.pid and writes this process's pid into the file. Fails (kFailed) if
  /// another process holds either, naming its pid. Once a lock is taken it is kept: the pid is
  /// only a name for the error, so a pid file that cannot be made or written (a full disk) is
  /// reported in warning() and emptied where it exists, never a reason to drop the lock (issue 34
  /// defect 8: a daemon that dropped it let a second one take the state dir and the socket).
  Status Acquire(const std::string& state_dir);
  bool held() const { return fd_ >= 0 || dir_fd_ >= 0; }
  /// Why the held lock's file does not name this process (empty if it does).
  const std::string& warning() const { return warning_; }
  static std::string PidFile(const std::string& state_dir) {
    return state_dir + "/sar-filterd.pid";
  }

 private:
  /// Holds `dir_fd` and `fd` (either may be -1), dropping what was held before.
  void Keep(int dir_fd, int fd);

  PidWriter write_pid_;
  int dir_fd_ = -1;  // the state dir, flock()ed
  int fd_ = -1;      // the pid file, flock()ed
  std::string warning_;
};

}  // namespace sar::filterd
