// Shared pieces of the unit tests: scratch directories and a small fabric.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "sar/fabric.h"

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
