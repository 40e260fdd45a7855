#include "request_server.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>

#include "test_util.h"

namespace sar::filterd {
namespace {

int Listen(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(listen(fd, 16), 0);
  return fd;
}

int Connect(const std::string& path) {
  const int fd = ConnectUnix(path);
  EXPECT_GE(fd, 0) << "connect " << path;
  return fd;
}

// A client that asks and then never reads a large answer is closed at its deadline, and the
// server never blocked on it; a request over the byte cap is dropped unanswered.
TEST(RequestServer, DeadlinesAndCapsHoldAfterTheAnswerToo) {
  TempDir dir;
  const int lfd = Listen(dir.Join("s"));
  RequestServer server({.deadline_s = 0.3, .max_request = 64, .max_clients = 4},
                       [](std::string_view in) { return in.find('\n') != in.npos; });
  const std::string big(8 << 20, 'x');  // more than the socket buffers hold
  const int reader_never = Connect(dir.Join("s"));
  ASSERT_EQ(write(reader_never, "get\n", 4), 4);
  const int flooder = Connect(dir.Join("s"));
  const std::string flood(100, 'a');
  ASSERT_EQ(write(flooder, flood.data(), flood.size()), 100);
  const auto t0 = std::chrono::steady_clock::now();
  double longest = 0;
  int answered = 0;
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(600)) {
    std::vector<pollfd> fds;
    server.AddPollFds(lfd, &fds);
    poll(fds.data(), fds.size(), 10);
    const auto before = std::chrono::steady_clock::now();
    answered += server.Handle(lfd, fds, [&big](std::string_view) { return big; });
    longest = std::max(
        longest, std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count());
  }
  EXPECT_EQ(answered, 1);
  EXPECT_LT(longest, 0.25) << "Handle waited on a client";
  EXPECT_EQ(server.open_connections(), 0u) << "the unread answer outlived its deadline";
  EXPECT_EQ(server.dropped(), 2u);  // the flooder (cap) and the one that did not read (deadline)
  close(reader_never);
  close(flooder);
  close(lfd);
}

}  // namespace
}  // namespace sar::filterd
