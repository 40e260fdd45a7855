#include "server/control_socket.h"

#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sar::filterd {

// A hook writes one short line; 2 s from connect to answer is plenty, and no client can hold
// the loop for any of it (request_server.h).
ControlSocket::ControlSocket()
    : conns_({.deadline_s = 2, .max_request = 1024, .max_clients = 256},
             [](std::string_view in) { return in.find('\n') != std::string_view::npos; }) {
  // A `mapping` reply is many lines: a slow reader gets whole lines and an explicit end, never
  // half a line and a normal EOF (issue 34 defect 9).
  conns_.set_cut_notice("error: reply cut: not read within sar-filterd's 2 s deadline\n", 0.5);
}

ControlSocket::~ControlSocket() {
  if (fd_ >= 0) {
    close(fd_);
    // Only the socket this process bound: another daemon's, bound at the same path since (a
    // restart that took over a stale one), is not ours to remove (issue 34 defect 7).
    struct stat st {};
    if (!path_.empty() && lstat(path_.c_str(), &st) == 0 && S_ISSOCK(st.st_mode) &&
        st.st_dev == dev_ && st.st_ino == ino_) {
      unlink(path_.c_str());
    }
  }
}

namespace {

// What is at `path` before we bind: nothing (OK), a stale socket (removed, OK), or something we
// must not take: a socket that answers (another daemon serves it: kFailed), or anything else.
Status ClearStaleSocket(const std::string& path, const sockaddr_un& addr) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::OK();
    return Status::IOError(path + ": lstat: " + strerror(errno));
  }
  if (!S_ISSOCK(st.st_mode)) {
    return Status::InvalidArgument(path + ": exists and is not a socket; not removed");
  }
  // Non-blocking: a live server with a full backlog answers EAGAIN rather than holding us.
  const int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (probe < 0) return Status::IOError(path + ": socket: " + strerror(errno));
  const int rc = connect(probe, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr));
  const int err = errno;
  close(probe);
  if (rc == 0 || err == EAGAIN || err == EINPROGRESS) {
    return Status::Failed("control socket " + path +
                          " is served by another process (another sar-filterd, with another "
                          "state_dir?); not taking it over: set control_socket to another path "
                          "or stop that one");
  }
  if (err != ECONNREFUSED) {
    return Status::IOError(path + ": cannot tell whether a server listens there (connect: " +
                           strerror(err) + "); not removed");
  }
  // Nobody listens: left behind by a daemon that was killed.
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Status::IOError(path + ": removing the stale socket: " + strerror(errno));
  }
  return Status::OK();
}

}  // namespace

Status ControlSocket::Open(const std::string& path, const std::string& group) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    return Status::InvalidArgument(path + ": socket path too long");
  }
  gid_t gid = static_cast<gid_t>(-1);
  if (!group.empty()) {
    const struct group* g = getgrnam(group.c_str());
    if (g == nullptr) return Status::InvalidArgument(path + ": unknown group '" + group + "'");
    gid = g->gr_gid;
  }
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  SAR_RETURN_IF_ERROR(ClearStaleSocket(path, addr));
  fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) return Status::IOError(path + ": socket: " + strerror(errno));
  // A burst of job starts runs many hooks at once; a long backlog keeps them from being refused
  // (sar-notify also retries a full backlog until its deadline).
  // Bind under a umask that leaves the socket owner-only from its first moment, not after a
  // chmod race.
  // With a group it is 0660, still under the daemon's own group until the chown below.
  const mode_t old_mask = umask(group.empty() ? 0177 : 0117);
  int rc = bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  umask(old_mask);
  if (rc == 0 && !group.empty() && chown(path.c_str(), static_cast<uid_t>(-1), gid) != 0) {
    Status s = Status::IOError(path + ": chown to group '" + group + "': " + strerror(errno));
    close(fd_);
    fd_ = -1;
    unlink(path.c_str());
    return s;
  }
  if (rc != 0 || listen(fd_, SOMAXCONN) != 0) {
    // EADDRINUSE: another process bound the path since the check above; it is not ours.
    Status s = Status::IOError(path + ": bind/listen: " + strerror(errno));
    close(fd_);
    fd_ = -1;
    return s;
  }
  // Which file is ours, so that exit removes this one and no other (see the destructor).
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    dev_ = st.st_dev;
    ino_ = st.st_ino;
    path_ = path;
  }
  return Status::OK();
}

namespace {

// A client's line as the log may show it: bounded, printable, never a terminal escape.
std::string Printable(std::string_view line) {
  constexpr size_t kMax = 64;
  std::string out;
  for (size_t i = 0; i < line.size() && i < kMax; ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  if (line.size() > kMax) out += "...";
  return out;
}

}  // namespace

int ControlSocket::Handle(const std::vector<pollfd>& fds, const Queries& queries,
                          std::vector<std::string>* requests) {
  int polls = 0;
  conns_.Handle(fd_, fds, [&](std::string_view request) -> std::string {
    std::string_view line = request.substr(0, request.find('\n'));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string_view command = line.substr(0, line.find(' '));
    if (command == "poll" || command == "job-start" || command == "job-end") {
      ++polls;
      if (requests != nullptr) requests->push_back(Printable(line));
      return "ok\n";
    }
    if (command == "status") return queries.status() + "\n";
    if (command == "mapping") return queries.mapping();
    return "error: unknown command\n";
  });
  return polls;
}

}  // namespace sar::filterd
