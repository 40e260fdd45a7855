#include "trigger.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "sar/io/file_util.h"

namespace sar::filterd {

Status SignalPidFile(const std::string& pid_file, int signum) {
  std::string text;
  SAR_RETURN_IF_ERROR(ReadFileToString(pid_file, &text));
  const size_t start = text.find_first_not_of(" \t\r\n");
  const size_t end = text.find_last_not_of(" \t\r\n");
  pid_t pid = 0;
  if (start == std::string::npos) return Status::Corruption(pid_file + ": empty pid file");
  auto [p, ec] = std::from_chars(text.data() + start, text.data() + end + 1, pid);
  if (ec != std::errc() || p != text.data() + end + 1 || pid <= 1) {
    return Status::Corruption(pid_file + ": not a pid: '" + text.substr(start, end - start + 1) +
                              "'");
  }
  if (kill(pid, signum) != 0) {
    return Status::IOError(pid_file + ": kill(" + std::to_string(pid) + "): " + strerror(errno));
  }
  return Status::OK();
}

Status ConsoleReroute(const std::string& host, int port, double timeout_s) {
  const std::string where = "console " + host + ":" + std::to_string(port);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return Status::InvalidArgument(where + ": not an IPv4 address");
  }
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Status::IOError(where + ": socket: " + strerror(errno));
  Status result = Status::OK();
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 && errno != EINPROGRESS) {
    result = Status::IOError(where + ": connect: " + strerror(errno));
  } else {
    pollfd pfd{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof(err);
    if (poll(&pfd, 1, static_cast<int>(timeout_s * 1000)) != 1 ||
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      result = Status::IOError(where + ": connect: " + (err ? strerror(err) : "timed out"));
    } else {
      static constexpr char kCommand[] = "reroute\nquit\n";
      if (send(fd, kCommand, sizeof(kCommand) - 1, MSG_NOSIGNAL) !=
          static_cast<ssize_t>(sizeof(kCommand) - 1)) {
        result = Status::IOError(where + ": send: " + strerror(errno));
      }
    }
  }
  close(fd);
  return result;
}

}  // namespace sar::filterd
