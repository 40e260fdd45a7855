// Issue 19 defect 13: a second sar-filterd with the same config stole the control socket.
#include "instance_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <iterator>
#include <string>

#include "test_util.h"

namespace sar::filterd {
namespace {

TEST(InstanceLock, ASecondHolderIsRefusedWithTheFirstsPid) {
  TempDir dir;
  const std::string state = dir.Join("state");  // made by the lock
  InstanceLock first;
  ASSERT_TRUE(first.Acquire(state).ok());
  struct stat st {};
  ASSERT_EQ(stat(state.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  std::string pid;
  std::ifstream(InstanceLock::PidFile(state)) >> pid;
  EXPECT_EQ(pid, std::to_string(getpid()));

  // flock() is per open file: a second open in this process conflicts like another process.
  InstanceLock second;
  Status s = second.Acquire(state);
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(second.held());
  EXPECT_NE(s.message().find("pid " + std::to_string(getpid())), std::string::npos) << s.message();
  std::ifstream(InstanceLock::PidFile(state)) >> pid;
  EXPECT_EQ(pid, std::to_string(getpid())) << "the loser must not overwrite the holder's pid";
}

TEST(InstanceLock, AKilledHoldersLockIsFree) {
  TempDir dir;
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    InstanceLock lock;
    const char ok = lock.Acquire(dir.path()).ok() ? 'y' : 'n';
    (void)!write(ready[1], &ok, 1);
    pause();
    _exit(0);
  }
  char ok = 0;
  ASSERT_EQ(read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, 'y');
  InstanceLock mine;
  Status s = mine.Acquire(dir.path());
  EXPECT_NE(s.message().find("pid " + std::to_string(child)), std::string::npos) << s.message();
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  s = mine.Acquire(dir.path());
  EXPECT_TRUE(s.ok()) << "a SIGKILLed holder leaves no stale lock: " << s.ToString();
  close(ready[0]);
  close(ready[1]);
}

// Issue 34 defect 8: with the state disk full the pid write failed, the fd was closed, the
// lock went with it, and the daemon ran on "without it": a second one then took the state dir
// (and the control socket). The write is injected to fail as a full disk does.
TEST(InstanceLock, AFailedPidWriteNeverDropsTheLock) {
  TempDir dir;
  for (const bool short_write : {false, true}) {
    SCOPED_TRACE(short_write ? "short write" : "ENOSPC");
    const std::string state = dir.Join(short_write ? "state2" : "state1");
    InstanceLock first([short_write](int, const void*, size_t n, off_t) -> ssize_t {
      if (short_write) return static_cast<ssize_t>(n / 2);
      errno = ENOSPC;
      return -1;
    });
    const Status s = first.Acquire(state);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(first.held()) << "the lock was dropped on a failed write";
    EXPECT_NE(first.warning().find("No space left on device"), std::string::npos)
        << first.warning();

    InstanceLock second;
    const Status t = second.Acquire(state);
    EXPECT_EQ(t.code(), Status::Code::kFailed) << "a second daemon took the lock: " << t.ToString();
    EXPECT_FALSE(second.held());
    EXPECT_NE(t.message().find("pid unknown"), std::string::npos) << t.message();
  }
}

// A disk too full to create the pid file: the state dir's own lock still keeps a second daemon
// out (a directory where the file should be stands in for the failed create).
TEST(InstanceLock, APidFileThatCannotBeMadeStillLocksTheStateDir) {
  TempDir dir;
  ASSERT_EQ(mkdir(InstanceLock::PidFile(dir.path()).c_str(), 0700), 0);
  InstanceLock first;
  const Status s = first.Acquire(dir.path());
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(first.held());
  EXPECT_NE(first.warning().find("open"), std::string::npos) << first.warning();
  InstanceLock second;
  const Status t = second.Acquire(dir.path());
  EXPECT_EQ(t.code(), Status::Code::kFailed) << "both ran without a lock: " << t.ToString();
  EXPECT_FALSE(second.held());
}

// A write that works leaves exactly the pid, also over a longer one left by an earlier holder.
TEST(InstanceLock, ThePidReplacesALongerOne) {
  TempDir dir;
  std::ofstream(InstanceLock::PidFile(dir.path())) << "123456789012345\n";
  InstanceLock lock;
  ASSERT_TRUE(lock.Acquire(dir.path()).ok());
  EXPECT_TRUE(lock.warning().empty()) << lock.warning();
  std::ifstream in(InstanceLock::PidFile(dir.path()));
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(all, std::to_string(getpid()) + "\n");
}

TEST(InstanceLock, UnusableStateDir) {
  TempDir dir;
  std::ofstream(dir.Join("file")) << "x";
  InstanceLock lock;
  EXPECT_FALSE(lock.Acquire(dir.Join("file")).ok());
  EXPECT_FALSE(lock.Acquire(dir.Join("no/such/dir")).ok());
  struct stat st {};
  EXPECT_NE(stat(dir.Join("no").c_str(), &st), 0) << "parents are not made";
}

}  // namespace
}  // namespace sar::filterd
