#include "trigger.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "test_util.h"

namespace sar::filterd {
namespace {

TEST(Trigger, SignalReachesThePidInTheFile) {
  TempDir dir;
  // The child inherits SIGUSR2 blocked, so the signal cannot arrive before it waits for it.
  sigset_t usr2, old;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  sigprocmask(SIG_BLOCK, &usr2, &old);
  const pid_t child = fork();
  if (child == 0) {
    timespec timeout{5, 0};
    _exit(sigtimedwait(&usr2, nullptr, &timeout) == SIGUSR2 ? 42 : 1);
  }
  sigprocmask(SIG_SETMASK, &old, nullptr);
  ASSERT_GT(child, 0);
  std::ofstream(dir.Join("opensm.pid")) << child << "\n";
  Status s = SignalPidFile(dir.Join("opensm.pid"), SIGUSR2);
  EXPECT_TRUE(s.ok()) << s.ToString();
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 42);
}

TEST(Trigger, MissingOrBadPidFileOrDeadProcess) {
  TempDir dir;
  EXPECT_FALSE(SignalPidFile(dir.Join("none.pid"), SIGUSR2).ok());
  std::ofstream(dir.Join("bad.pid")) << "opensm\n";
  Status s = SignalPidFile(dir.Join("bad.pid"), SIGUSR2);
  EXPECT_NE(s.message().find("bad.pid"), std::string::npos) << s.message();
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);  // reaped: the pid no longer exists
  std::ofstream(dir.Join("dead.pid")) << child;
  EXPECT_FALSE(SignalPidFile(dir.Join("dead.pid"), 0).ok());
}

TEST(Trigger, ConsoleGetsReroute) {
  // A listener standing in for OpenSM's console: what arrives must start with "reroute".
  const int srv = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(srv, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(srv, 1), 0);
  ASSERT_EQ(getsockname(srv, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  Status s = ConsoleReroute("127.0.0.1", ntohs(addr.sin_port), 2.0);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const int conn = accept(srv, nullptr, nullptr);
  ASSERT_GE(conn, 0);
  std::string got;
  char buf[64];
  for (ssize_t n; (n = read(conn, buf, sizeof(buf))) > 0;) got.append(buf, n);
  close(conn);
  close(srv);
  EXPECT_EQ(got.rfind("reroute\n", 0), 0u) << got;
}

TEST(Trigger, ConsoleRefusedIsAnError) {
  // Port 1 on loopback has no listener here; the error must say which console failed.
  Status s = ConsoleReroute("127.0.0.1", 1, 1.0);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("127.0.0.1:1"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sar::filterd
