// Trigger "console": "reroute" on OpenSM's console (console loopback mode), for a site that
// runs OpenSM's own engines on the mapping through a routing-engine chain it controls.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "actions/action.h"
#include "server/bounded_io.h"

namespace sar::filterd {

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
  const IoClock::time_point deadline = DeadlineIn(timeout_s);
  Status result = Status::OK();
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 && errno != EINPROGRESS) {
    result = Status::IOError(where + ": connect: " + strerror(errno));
  } else {
    // The connect completes when the socket turns writable; SO_ERROR tells how.
    pollfd pfd{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof(err);
    if (poll(&pfd, 1, static_cast<int>(timeout_s * 1000)) != 1 ||
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      result = Status::IOError(where + ": connect: " + (err ? strerror(err) : "timed out"));
    } else if (Status s = WriteBounded(fd, deadline, "reroute\nquit\n"); !s.ok()) {
      result = Status::IOError(where + ": " + s.message());
    }
  }
  close(fd);
  return result;
}

namespace {

class ConsoleAction : public Action {
 public:
  ConsoleAction(std::string mapping_file, std::string host, int port, double timeout_s)
      : Action(std::move(mapping_file), false),
        host_(std::move(host)),
        port_(port),
        timeout_s_(timeout_s) {}
  const char* name() const override { return "console"; }

 protected:
  Status DoApply(const ActionRequest&) override { return ConsoleReroute(host_, port_, timeout_s_); }

 private:
  std::string host_;
  int port_;
  double timeout_s_;
};

}  // namespace

std::unique_ptr<Action> MakeConsoleAction(std::string mapping_file, std::string host, int port,
                                          double timeout_s) {
  return std::make_unique<ConsoleAction>(std::move(mapping_file), std::move(host), port, timeout_s);
}

}  // namespace sar::filterd
