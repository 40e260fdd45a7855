#include "server/bounded_io.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "test_util.h"

namespace sar::filterd {
namespace {

double Since(IoClock::time_point t0) {
  return std::chrono::duration<double>(IoClock::now() - t0).count();
}

bool Line(std::string_view s) { return s.find('\n') != std::string_view::npos; }

TEST(BoundedIo, ReadsToEofOrToCompletion) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  ASSERT_EQ(write(p[1], "abc\ndef", 7), 7);
  std::string got;
  EXPECT_EQ(ReadBounded(p[0], DeadlineIn(1), 100, &got, Line), IoEnd::kComplete);
  EXPECT_EQ(got.substr(0, 4), "abc\n");
  close(p[1]);
  std::string all;
  EXPECT_EQ(ReadBounded(p[0], DeadlineIn(1), 100, &all), IoEnd::kComplete);  // to EOF
  close(p[0]);
}

TEST(BoundedIo, APeerThatStaysSilentOrTalksTooMuchIsCut) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  ASSERT_EQ(write(p[1], "partial", 7), 7);  // and then nothing, the write end kept open
  std::string got;
  const IoClock::time_point t0 = IoClock::now();
  EXPECT_EQ(ReadBounded(p[0], DeadlineIn(0.3), 100, &got, Line), IoEnd::kTimeout);
  EXPECT_GE(Since(t0), 0.29);
  EXPECT_LT(Since(t0), 1.0);
  EXPECT_EQ(got, "partial");

  // A never-ending writer: stopped at the cap, not at memory's end.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old);
  std::thread writer([fd = p[1]] {
    const std::string chunk(4096, 'y');
    while (write(fd, chunk.data(), chunk.size()) > 0) {
    }
  });
  std::string flood;
  EXPECT_EQ(ReadBounded(p[0], DeadlineIn(5), 1 << 20, &flood), IoEnd::kTooLarge);
  EXPECT_LE(flood.size(), (1u << 20) + 65536);
  close(p[0]);  // the writer's next write fails (SIGPIPE ignored here)
  writer.join();
  close(p[1]);
  sigaction(SIGPIPE, &old, nullptr);
}

// A signal during the wait (EINTR) is not an error: the read goes on to completion.
TEST(BoundedIo, InterruptedWaitsAreRetried) {
  struct sigaction sa {
  }, old{};
  sa.sa_handler = [](int) {};
  sa.sa_flags = 0;  // no SA_RESTART: poll() returns EINTR
  sigaction(SIGUSR1, &sa, &old);
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  const pthread_t reader = pthread_self();
  std::thread peer([&] {
    for (int i = 0; i < 5; ++i) {
      usleep(20000);
      pthread_kill(reader, SIGUSR1);
    }
    (void)!write(p[1], "done\n", 5);
  });
  std::string got;
  EXPECT_EQ(ReadBounded(p[0], DeadlineIn(5), 100, &got, Line), IoEnd::kComplete);
  EXPECT_EQ(got, "done\n");
  peer.join();
  close(p[0]);
  close(p[1]);
  sigaction(SIGUSR1, &old, nullptr);
}

TEST(BoundedIo, WritesGiveUpOnAPeerThatDoesNotRead) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  const std::string big(8 << 20, 'x');  // more than any socket buffer
  const IoClock::time_point t0 = IoClock::now();
  Status s = WriteBounded(sv[0], DeadlineIn(0.3), big);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("timed out"), std::string::npos) << s.message();
  EXPECT_LT(Since(t0), 1.0);
  close(sv[1]);
  EXPECT_FALSE(WriteBounded(sv[0], DeadlineIn(0.3), "x").ok()) << "peer gone: an error, no SIGPIPE";
  close(sv[0]);
}

}  // namespace
}  // namespace sar::filterd
