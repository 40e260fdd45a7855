#include "instance_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace sar::filterd {

InstanceLock::InstanceLock(PidWriter write_pid) : write_pid_(std::move(write_pid)) {
  if (!write_pid_)
    write_pid_ = [](int fd, const void* buf, size_t n, off_t offset) {
      return pwrite(fd, buf, n, offset);
    };
}

InstanceLock::~InstanceLock() {
  // The file stays: unlinking it would let a third process lock a new inode while a second one
  // still waits on the old. Closing drops the locks.
  if (fd_ >= 0) close(fd_);
  if (dir_fd_ >= 0) close(dir_fd_);
}

namespace {

// The refusal, naming the holder by the pid its file holds (if any).
Status HeldByAnother(const std::string& path) {
  std::string holder;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd >= 0) {
    char buf[32] = {};
    const ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    close(fd);
    for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) holder += buf[i];
  }
  return Status::Failed("another sar-filterd (pid " + (holder.empty() ? "unknown" : holder) +
                        ") holds " + path + " for this state dir; not starting a second one");
}

}  // namespace

Status InstanceLock::Acquire(const std::string& state_dir) {
  if (mkdir(state_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::IOError(state_dir + ": mkdir: " + strerror(errno));
  }
  const std::string path = PidFile(state_dir);
  // The state dir itself is locked first: that lock needs no file made or written, so a state
  // disk too full to create the pid file still keeps a second daemon out (issue 34 defect 8).
  int dir_fd = open(state_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return Status::IOError(state_dir + ": open: " + strerror(errno));
  if (flock(dir_fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    close(dir_fd);
    dir_fd = -1;
    if (err == EWOULDBLOCK) return HeldByAnother(path);
    // A filesystem without flock on directories: the pid file's lock below still holds.
  }
  // O_NOFOLLOW: the state dir is ours, a symlink in it is not to be written through.
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    const int err = errno;
    if (dir_fd < 0) return Status::IOError(path + ": open: " + strerror(err));
    Keep(dir_fd, -1);
    warning_ = path + ": open: " + strerror(err) +
               " (the state dir's lock is held; a second sar-filterd is refused without this pid)";
    return Status::OK();
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    // Held by a sar-filterd that locks only the file (an older version), or our own fd_.
    const int err = errno;
    close(fd);
    if (dir_fd >= 0) close(dir_fd);
    if (err != EWOULDBLOCK) return Status::IOError(path + ": flock: " + strerror(err));
    return HeldByAnother(path);
  }
  // Locked: from here on it is ours whatever the write does. Closing the fd on a failed write
  // (a full disk: ENOSPC) would drop the lock and let the next daemon take it.
  Keep(dir_fd, fd);
  // The pid over what is there, then the rest cut off: overwriting needs no new block, and
  // truncating frees space. If the write fails anyway the file is emptied (a second daemon then
  // names the holder "unknown" rather than a stale pid).
  const std::string pid = std::to_string(getpid()) + "\n";
  if (const ssize_t n = write_pid_(fd, pid.data(), pid.size(), 0);
      n != static_cast<ssize_t>(pid.size())) {
    const int err = n < 0 ? errno : ENOSPC;  // a short write: out of space
    (void)!ftruncate(fd, 0);
    warning_ = path + ": writing the pid: " + strerror(err) +
               " (the lock is held; a second sar-filterd is refused without this pid)";
  } else if (ftruncate(fd, static_cast<off_t>(pid.size())) != 0) {
    warning_ = path + ": ftruncate: " + strerror(errno) + " (the lock is held)";
  }
  return Status::OK();
}

void InstanceLock::Keep(int dir_fd, int fd) {
  if (fd_ >= 0) close(fd_);
  if (dir_fd_ >= 0) close(dir_fd_);
  dir_fd_ = dir_fd;
  fd_ = fd;
  warning_.clear();
}

}  // namespace sar::filterd
