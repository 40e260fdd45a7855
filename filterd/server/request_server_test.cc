#include "server/request_server.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

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

// Issue 34 defect 9: a client reading a long answer slowly (sar-notify mapping behind a busy
// pipe) got it cut at an arbitrary byte at the deadline, then a normal EOF: "h0000123 47" of
// "h0000123 4711" read as a whole line. Now the line under way is finished and an explicit
// error line ends what the client gets.
TEST(RequestServer, AnAnswerCutAtTheDeadlineEndsWithAnErrorLine) {
  TempDir dir;
  const int lfd = Listen(dir.Join("s"));
  const std::string notice = "error: reply cut\n";
  RequestServer server({.deadline_s = 0.3, .max_request = 64, .max_clients = 4},
                       [](std::string_view in) { return in.find('\n') != in.npos; });
  server.set_cut_notice(notice, 0.5);
  std::string answer;
  char line[32];
  for (int i = 0; i < 400000; ++i) {
    snprintf(line, sizeof(line), "h%07d 4711\n", i);
    answer += line;
  }
  std::atomic<bool> done{false};
  std::string got;
  std::thread client([&] {
    const int fd = Connect(dir.Join("s"));
    (void)!write(fd, "mapping\n", 8);
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) {
      got.append(buf, static_cast<size_t>(n));
      usleep(5000);  // ~800 KB/s: far too slow for 5 MB in 0.3 s
    }
    close(fd);
    done = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  while (!done && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10)) {
    std::vector<pollfd> fds;
    server.AddPollFds(lfd, &fds);
    poll(fds.data(), fds.size(), 10);
    server.Handle(lfd, fds, [&answer](std::string_view) { return answer; });
  }
  client.join();
  ASSERT_GT(got.size(), notice.size());
  ASSERT_LT(got.size(), answer.size()) << "not cut: the test reads too fast for this machine";
  ASSERT_EQ(got.substr(got.size() - notice.size()), notice)
      << "the cut answer ends without the error line: ..."
      << got.substr(got.size() > 40 ? got.size() - 40 : 0);
  const std::string body = got.substr(0, got.size() - notice.size());
  EXPECT_EQ(body.back(), '\n') << "the client got half a line";
  EXPECT_EQ(answer.compare(0, body.size(), body), 0) << "what came before the notice is the answer";
  EXPECT_EQ(server.open_connections(), 0u);
  EXPECT_EQ(server.dropped(), 1u);
  close(lfd);
}

}  // namespace
}  // namespace sar::filterd
