// Issue 19 defect 13: a second sar-filterd with the same config stole the control socket.
#include "instance_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
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
