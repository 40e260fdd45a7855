#include "server/metrics_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

namespace sar::filterd {

// A scraper sends a few hundred bytes of request head at once.
MetricsHttpServer::MetricsHttpServer()
    : conns_({.deadline_s = 2, .max_request = 8192, .max_clients = 16}, [](std::string_view in) {
        return in.find("\r\n\r\n") != std::string_view::npos ||
               in.find("\n\n") != std::string_view::npos;
      }) {}

MetricsHttpServer::~MetricsHttpServer() {
  if (fd_ >= 0) close(fd_);
}

Status ParseMetricsListen(const std::string& address, sockaddr_in* out) {
  const size_t colon = address.rfind(':');
  int port = -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  const char* end = address.data() + address.size();
  // The port must end the string: "19192x" is a typo, not port 19192.
  if (colon == std::string::npos || colon + 1 == address.size() ||
      inet_pton(AF_INET, address.substr(0, colon).c_str(), &addr.sin_addr) != 1) {
    return Status::InvalidArgument("metrics_listen '" + address + "': expected <IPv4>:<port>");
  }
  const auto [p, ec] = std::from_chars(address.data() + colon + 1, end, port);
  if (ec != std::errc() || p != end || port < 0 || port > 65535) {
    return Status::InvalidArgument("metrics_listen '" + address +
                                   "': expected <IPv4>:<port>, port 0..65535");
  }
  if ((ntohl(addr.sin_addr.s_addr) >> 24) != 127) {
    return Status::InvalidArgument("metrics_listen '" + address + "': loopback addresses only");
  }
  addr.sin_port = htons(static_cast<uint16_t>(port));
  *out = addr;
  return Status::OK();
}

Status MetricsHttpServer::Open(const std::string& address) {
  sockaddr_in addr{};
  SAR_RETURN_IF_ERROR(ParseMetricsListen(address, &addr));
  fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) return Status::IOError("metrics_listen: socket: " + std::string(strerror(errno)));
  const int one = 1;
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  socklen_t len = sizeof(addr);
  if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(fd_, SOMAXCONN) != 0 ||
      getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    Status s = Status::IOError("metrics_listen '" + address + "': " + strerror(errno));
    close(fd_);
    fd_ = -1;
    return s;
  }
  port_ = ntohs(addr.sin_port);
  return Status::OK();
}

void MetricsHttpServer::Handle(const std::vector<pollfd>& fds,
                               const std::function<std::string()>& body) {
  conns_.Handle(fd_, fds, [&](std::string_view request) {
    const bool metrics =
        request.rfind("GET /metrics ", 0) == 0 || request.rfind("GET /metrics\r", 0) == 0;
    const std::string payload = metrics ? body() : "not found; try /metrics\n";
    return std::string(metrics ? "HTTP/1.0 200 OK" : "HTTP/1.0 404 Not Found") +
           "\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: " +
           std::to_string(payload.size()) + "\r\nConnection: close\r\n\r\n" + payload;
  });
}

}  // namespace sar::filterd
