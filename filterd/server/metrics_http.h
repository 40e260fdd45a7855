// The Prometheus text endpoint: a minimal HTTP/1.0 server on a loopback address that answers
// GET /metrics with the daemon's counters. Loopback only: the figures are for a local scraper
// (or an SSH tunnel): the job counts and reroute times are the site's business, not the network's.
#pragma once

#include <netinet/in.h>
#include <poll.h>

#include <functional>
#include <string>
#include <vector>

#include "sar/status.h"
#include "server/request_server.h"

namespace sar::filterd {

/// Parses `metrics_listen`: "<IPv4 in 127.0.0.0/8>:<port 0..65535>", nothing before or after.
/// The config checks it at load (file:line) with this, and Open() binds what it returns.
Status ParseMetricsListen(const std::string& address, sockaddr_in* out);

class MetricsHttpServer {
 public:
  MetricsHttpServer();
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  /// `address` is "127.0.0.1:9733" (any 127.0.0.0/8 address; port 0 = pick one). Fails on a
  /// non-loopback address.
  Status Open(const std::string& address);
  int fd() const { return fd_; }
  int port() const { return port_; }

  void AddPollFds(std::vector<pollfd>* fds) const { conns_.AddPollFds(fd_, fds); }
  /// After poll(): accepts, reads and answers what is ready, never waiting on a client (2 s and
  /// 8 KiB per request head): `body()` for GET /metrics, 404 otherwise.
  void Handle(const std::vector<pollfd>& fds, const std::function<std::string()>& body);
  IoClock::time_point NextDeadline() const { return conns_.NextDeadline(); }
  const RequestServer& connections() const { return conns_; }

 private:
  RequestServer conns_;
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace sar::filterd
