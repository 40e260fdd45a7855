#include "instance_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sar::filterd {

InstanceLock::~InstanceLock() {
  // The file stays: unlinking it would let a third process lock a new inode while a second one
  // still waits on the old. Closing drops the lock.
  if (fd_ >= 0) close(fd_);
}

Status InstanceLock::Acquire(const std::string& state_dir) {
  if (mkdir(state_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::IOError(state_dir + ": mkdir: " + strerror(errno));
  }
  const std::string path = PidFile(state_dir);
  // O_NOFOLLOW: the state dir is ours, a symlink in it is not to be written through.
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return Status::IOError(path + ": open: " + strerror(errno));
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char buf[32] = {};
    const ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    close(fd);
    std::string holder;
    for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) holder += buf[i];
    if (err != EWOULDBLOCK) return Status::IOError(path + ": flock: " + strerror(err));
    return Status::Failed("another sar-filterd (pid " + (holder.empty() ? "unknown" : holder) +
                          ") holds " + path + " for this state dir; not starting a second one");
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(fd, 0) != 0 ||
      pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int err = errno;
    close(fd);
    return Status::IOError(path + ": write: " + strerror(err));
  }
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
  return Status::OK();
}

}  // namespace sar::filterd
