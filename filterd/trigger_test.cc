#include "trigger.h"

#include <gtest/gtest.h>
#include <signal.h>
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

TEST(Trigger, ConsoleRefusedIsAnError) {
  // Port 1 on loopback has no listener here; the error must say which console failed.
  Status s = ConsoleReroute("127.0.0.1", 1, 1.0);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("127.0.0.1:1"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sar::filterd
