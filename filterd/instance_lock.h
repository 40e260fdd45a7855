// One sar-filterd per state dir (issue 19 defect 13): a second one with the same config took over
// the control socket and deleted it on exit, leaving the running service unreachable. The lock is
// flock() on a pid file in the state dir: the kernel drops it when the holder dies (also by
// SIGKILL), so a crash never leaves a stale lock, and the file names the holder for the error.
#pragma once

#include <string>

#include "sar/status.h"

namespace sar::filterd {

class InstanceLock {
 public:
  InstanceLock() = default;
  ~InstanceLock();
  InstanceLock(const InstanceLock&) = delete;
  InstanceLock& operator=(const InstanceLock&) = delete;

  /// Creates `state_dir` if missing (mode 0700, not its parents), locks `state_dir`/sar-filterd.pid
  /// and writes this process's pid into it. Fails if another process holds it, naming its pid.
  Status Acquire(const std::string& state_dir);
  bool held() const { return fd_ >= 0; }
  static std::string PidFile(const std::string& state_dir) {
    return state_dir + "/sar-filterd.pid";
  }

 private:
  int fd_ = -1;
};

}  // namespace sar::filterd
