// Shared pieces of the unit tests: scratch directories and a small fabric.
#pragma once

#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "sar/model/fabric.h"

namespace sar::filterd {

/// A client socket connected to the UNIX socket at `path`, or -1.
inline int ConnectUnix(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/// `count` hostile clients of a server, from a thread of their own: each connects, then sends
/// one byte a second and never completes a request; one the server closes connects again at
/// once. `connect_nonblocking` returns a non-blocking socket with a connect under way (or
/// done), or -1.
class Dribblers {
 public:
  Dribblers(int count, std::function<int()> connect_nonblocking)
      : connect_(std::move(connect_nonblocking)), fds_(count, -1), next_send_(count) {
    thread_ = std::thread([this] { Run(); });
  }
  ~Dribblers() {
    stop_ = true;
    thread_.join();
    for (int fd : fds_) {
      if (fd >= 0) close(fd);
    }
  }
  int connects() const { return connects_; }  // attempts, the first ones included

 private:
  void Run() {
    using Clock = std::chrono::steady_clock;
    while (!stop_) {
      std::vector<pollfd> pfds;
      for (size_t i = 0; i < fds_.size(); ++i) {
        if (fds_[i] < 0) {
          fds_[i] = connect_();
          next_send_[i] = Clock::now();
          ++connects_;
        }
        if (fds_[i] >= 0) pfds.push_back({fds_[i], POLLIN, 0});
      }
      poll(pfds.data(), pfds.size(), 20);
      for (size_t i = 0; i < fds_.size(); ++i) {
        if (fds_[i] < 0) continue;
        char c;
        const ssize_t n = recv(fds_[i], &c, 1, MSG_DONTWAIT);
        bool closed = n == 0 || (n < 0 && errno != EAGAIN && errno != ENOTCONN);
        if (!closed && Clock::now() >= next_send_[i]) {
          if (send(fds_[i], "G", 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1) {
            next_send_[i] += std::chrono::seconds(1);
          } else {
            closed = errno != EAGAIN && errno != ENOTCONN;
          }
        }
        if (closed) {
          close(fds_[i]);
          fds_[i] = -1;
        }
      }
    }
  }

  std::function<int()> connect_;
  std::vector<int> fds_;
  std::vector<std::chrono::steady_clock::time_point> next_send_;
  std::atomic<bool> stop_{false};
  std::atomic<int> connects_{0};
  std::thread thread_;
};

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/sarfilterd_test_XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }
  std::string Join(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Two leaves (h0, h1 on leaf0; h2, h3 on leaf1) under one spine, LIDs 1..7; the truth the
// tests check against is the cabling built here.
inline Fabric TwoLeafFabric() {
  Fabric f;
  const NodeId leaf0 = f.AddNode(NodeKind::kSwitch, 4, 0x100, "leaf0", "leaf0");
  const NodeId leaf1 = f.AddNode(NodeKind::kSwitch, 4, 0x200, "leaf1", "leaf1");
  const NodeId spine = f.AddNode(NodeKind::kSwitch, 4, 0x300, "spine", "spine");
  EXPECT_TRUE(f.Connect({leaf0, 4}, {spine, 1}).ok());
  EXPECT_TRUE(f.Connect({leaf1, 4}, {spine, 2}).ok());
  Lid lid = 1;
  for (NodeId s : {leaf0, leaf1, spine}) EXPECT_TRUE(f.SetLid({s, 0}, lid++, 0).ok());
  for (int i = 0; i < 4; ++i) {
    const std::string host = "h" + std::to_string(i);
    const NodeId h = f.AddNode(NodeKind::kHca, 1, 0x1000 + 16 * i, host, host + " HCA-1");
    EXPECT_TRUE(f.Connect({h, 1}, {i < 2 ? leaf0 : leaf1, 1 + i % 2}).ok());
    EXPECT_TRUE(f.SetLid({h, 1}, lid++, 0).ok());
  }
  return f;
}

}  // namespace sar::filterd
