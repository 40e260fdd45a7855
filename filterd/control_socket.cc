#include "control_socket.h"

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
             [](std::string_view in) { return in.find('\n') != std::string_view::npos; }) {}

ControlSocket::~ControlSocket() {
  if (fd_ >= 0) {
    close(fd_);
    unlink(path_.c_str());
  }
}

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
  fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) return Status::IOError(path + ": socket: " + strerror(errno));
  unlink(path.c_str());
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
    Status s = Status::IOError(path + ": bind/listen: " + strerror(errno));
    close(fd_);
    fd_ = -1;
    return s;
  }
  path_ = path;
  return Status::OK();
}

int ControlSocket::Handle(const std::vector<pollfd>& fds, const Queries& queries) {
  int polls = 0;
  conns_.Handle(fd_, fds, [&](std::string_view request) -> std::string {
    const std::string_view line = request.substr(0, request.find('\n'));
    const std::string_view command = line.substr(0, line.find(' '));
    if (command == "poll" || command == "job-start" || command == "job-end") {
      ++polls;
      return "ok\n";
    }
    if (command == "status") return queries.status() + "\n";
    if (command == "mapping") return queries.mapping();
    return "error: unknown command\n";
  });
  return polls;
}

}  // namespace sar::filterd
