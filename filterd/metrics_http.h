// The Prometheus text endpoint: a minimal HTTP/1.0 server on a loopback address that answers
// GET /metrics with the daemon's counters. Loopback only: the figures are for a local scraper
// (or an SSH tunnel), and the daemon runs as root.
#pragma once

#include <string>

#include "sar/status.h"

namespace sar::filterd {

class MetricsHttpServer {
 public:
  MetricsHttpServer() = default;
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  /// `address` is "127.0.0.1:9733" (any 127.0.0.0/8 address; port 0 = pick one). Fails on a
  /// non-loopback address.
  Status Open(const std::string& address);
  int fd() const { return fd_; }
  int port() const { return port_; }

  /// Answers one pending connection: `body` for GET /metrics, 404 otherwise.
  void ServeOne(const std::string& body);

 private:
  int fd_ = -1;
  int port_ = 0;
};

}  // namespace sar::filterd
