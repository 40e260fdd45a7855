// Issue 19 defect 21: sar-filterd signalled whatever its pid file named (a stale `sleep` died of
// SIGUSR2), and an OpenSM without the plugin dies of SIGUSR2's default action.
#include "actions/sm_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "actions/action.h"
#include "job_set_diff.h"
#include "test_util.h"

namespace sar::filterd {
namespace {

// A /proc/<pid> of our own making: comm, status (SigCgt) and maps.
void FakeProc(const TempDir& root, pid_t pid, const std::string& comm, const std::string& sigcgt,
              const std::string& maps) {
  const std::string dir = root.Join(std::to_string(pid));
  mkdir(dir.c_str(), 0700);
  std::ofstream(dir + "/comm") << comm << "\n";
  std::ofstream(dir + "/status") << "Name:\t" << comm << "\nSigBlk:\t0000000000000000\n"
                                 << "SigCgt:\t" << sigcgt << "\n";
  std::ofstream(dir + "/maps") << maps;
}

// SIGUSR2 (12) is bit 11, SIGHUP (1) bit 0: OpenSM catches both with the plugin loaded.
constexpr const char* kCatchesHupAndUsr2 = "0000000180004a03";
constexpr const char* kCatchesHupOnly = "0000000180004203";
const std::string kPluginMaps =
    "55d0c000-55d0d000 r-xp 00000000 08:01 1234 /usr/sbin/opensm\n"
    "7f00a000-7f00b000 r-xp 00000000 08:01 99 /usr/lib/x86_64-linux-gnu/libosmsar.so\n";
const std::string kNoPluginMaps =
    "55d0c000-55d0d000 r-xp 00000000 08:01 1234 /usr/sbin/opensm\n"
    "7f00a000-7f00b000 r-xp 00000000 08:01 98 /usr/lib/libosmsar.so.bak\n"
    "7f00c000-7f00d000 rw-p 00000000 00:00 0 \n";

TEST(SmProcess, OpenSmWithThePluginPasses) {
  TempDir proc;
  FakeProc(proc, 100, "opensm", kCatchesHupAndUsr2, kPluginMaps);
  Status s = CheckSmProcess(100, SIGUSR2, true, proc.path());
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(CheckSmProcess(100, SIGHUP, false, proc.path()).ok());
  // A plugin rebuilt under a running OpenSM is still the one loaded.
  FakeProc(proc, 101, "opensm", kCatchesHupAndUsr2,
           "7f00a000-7f00b000 r-xp 00000000 08:01 99 /build/libosmsar.so (deleted)\n");
  EXPECT_TRUE(CheckSmProcess(101, SIGUSR2, true, proc.path()).ok());
}

TEST(SmProcess, RefusesWhatIsNotOpenSmWithThePlugin) {
  TempDir proc;
  FakeProc(proc, 200, "sleep", kCatchesHupAndUsr2, kPluginMaps);
  Status s = CheckSmProcess(200, SIGUSR2, true, proc.path());
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'sleep', not opensm"), std::string::npos) << s.message();

  // OpenSM without the plugin (osmsar.conf typo): SIGUSR2 would end it.
  FakeProc(proc, 201, "opensm", kCatchesHupOnly, kNoPluginMaps);
  s = CheckSmProcess(201, SIGUSR2, true, proc.path());
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("without libosmsar.so"), std::string::npos) << s.message();
  // ... but file mode's SIGHUP is OpenSM's own.
  EXPECT_TRUE(CheckSmProcess(201, SIGHUP, false, proc.path()).ok());

  // Mapped but SIGUSR2 not caught (the plugin failed before installing its handler).
  FakeProc(proc, 202, "opensm", kCatchesHupOnly, kPluginMaps);
  s = CheckSmProcess(202, SIGUSR2, true, proc.path());
  EXPECT_NE(s.message().find("does not catch signal 12"), std::string::npos) << s.message();

  // Gone; and a comm of hostile bytes is quoted short and printable.
  EXPECT_EQ(CheckSmProcess(203, SIGUSR2, true, proc.path()).code(), Status::Code::kNotFound);
  FakeProc(proc, 204, std::string(100, '\x1b'), kCatchesHupAndUsr2, kPluginMaps);
  s = CheckSmProcess(204, SIGUSR2, true, proc.path());
  EXPECT_EQ(s.message().find('\x1b'), std::string::npos);
  EXPECT_LT(s.message().size(), 200u);
}

// The real check against a real process: a stale pid file naming `sleep` must not kill it.
// A sar-filterd running as its system user (CAP_KILL, no ptrace rights) cannot read root's
// /proc/<pid>/maps: the plugin's ready file "<mapping_file>.ready" must then name the pid.
TEST(SmProcess, UnreadableMapsFallBackToThePluginsReadyFile) {
  TempDir proc, lib;
  FakeProc(proc, 300, "opensm", kCatchesHupAndUsr2, kPluginMaps);
  unlink(proc.Join("300/maps").c_str());  // as open() fails with EACCES
  const std::string ready = PluginReadyFile(lib.Join("jobs.map"));
  EXPECT_EQ(ready, lib.Join("jobs.map.ready"));

  Status s = CheckSmProcess(300, SIGUSR2, true, proc.path(), ready);  // no ready file yet
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("ready file " + ready + " is missing"), std::string::npos)
      << s.message();
  s = CheckSmProcess(300, SIGUSR2, true, proc.path(), "");  // no ready file configured
  EXPECT_NE(s.message().find("no ready file"), std::string::npos) << s.message();

  std::ofstream(ready) << "osmsar 300\n";
  s = CheckSmProcess(300, SIGUSR2, true, proc.path(), ready);
  EXPECT_TRUE(s.ok()) << s.ToString();

  // Another OpenSM's (or a previous one's) file does not vouch for this pid.
  std::ofstream(ready) << "osmsar 299\n";
  s = CheckSmProcess(300, SIGUSR2, true, proc.path(), ready);
  EXPECT_NE(s.message().find("names 'osmsar' pid 299"), std::string::npos) << s.message();

  // Readable maps decide: no plugin mapped fails even with a matching ready file.
  FakeProc(proc, 301, "opensm", kCatchesHupAndUsr2, kNoPluginMaps);
  std::ofstream(ready) << "osmsar 301\n";
  s = CheckSmProcess(301, SIGUSR2, true, proc.path(), ready);
  EXPECT_NE(s.message().find("without libosmsar.so"), std::string::npos) << s.message();

  // The ready file says nothing about the signal: SigCgt is still checked (status is
  // world-readable).
  FakeProc(proc, 302, "opensm", kCatchesHupOnly, kPluginMaps);
  unlink(proc.Join("302/maps").c_str());
  std::ofstream(ready) << "osmsar 302\n";
  s = CheckSmProcess(302, SIGUSR2, true, proc.path(), ready);
  EXPECT_NE(s.message().find("does not catch signal 12"), std::string::npos) << s.message();
}

// The ready file sits in a directory its reader does not alone control: a FIFO or a symbolic
// link planted there is refused at once (the daemon's loop must not block on it).
TEST(SmProcess, AFifoOrSymlinkAsTheReadyFileIsRefusedWithoutBlocking) {
  TempDir proc, lib;
  FakeProc(proc, 300, "opensm", kCatchesHupAndUsr2, kPluginMaps);
  unlink(proc.Join("300/maps").c_str());
  const std::string ready = PluginReadyFile(lib.Join("jobs.map"));
  ASSERT_EQ(mkfifo(ready.c_str(), 0600), 0);
  Status s = CheckSmProcess(300, SIGUSR2, true, proc.path(), ready);
  EXPECT_NE(s.message().find("is missing or unreadable"), std::string::npos) << s.message();
  unlink(ready.c_str());
  std::ofstream(lib.Join("elsewhere")) << "osmsar 300\n";
  ASSERT_EQ(symlink(lib.Join("elsewhere").c_str(), ready.c_str()), 0);
  s = CheckSmProcess(300, SIGUSR2, true, proc.path(), ready);
  EXPECT_NE(s.message().find("is missing or unreadable"), std::string::npos) << s.message();
}

TEST(SmProcess, ASleepNamedInThePidFileSurvives) {
  TempDir dir;
  const pid_t child = fork();
  if (child == 0) {
    execlp("sleep", "sleep", "30", static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_GT(child, 0);
  // Wait until the child is `sleep` (exec done), so the check sees what a stale file would name.
  for (int i = 0; i < 500; ++i) {
    std::string comm;
    std::ifstream("/proc/" + std::to_string(child) + "/comm") >> comm;
    if (comm == "sleep") break;
    usleep(10000);
  }
  std::ofstream(dir.Join("opensm.pid")) << child << "\n";
  Status s = SignalPidFile(dir.Join("opensm.pid"), SIGUSR2, RealSmProcessCheck(true));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("opensm.pid"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'sleep', not opensm"), std::string::npos) << s.message();

  // Through the signal action too: it fails, counts the failure, and the mapping was written.
  auto action =
      MakeSignalAction(dir.Join("jobs.map"), {dir.Join("opensm.pid")}, RealSmProcessCheck(true));
  const std::vector<MultiSwitchJob> jobs = {{"7", {"h0", "h2"}, 2, JobPattern::kDefault}};
  const JobMapping mapping = ToJobMapping(jobs);
  const std::vector<MultiSwitchJob> none;
  EXPECT_FALSE(action->Apply({jobs, mapping, none}).ok());
  EXPECT_EQ(action->stats().failed, 1u);

  usleep(100000);  // a SIGUSR2 sent would have ended it by now
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, WNOHANG), 0) << "sleep died: signalled despite the check";
  kill(child, SIGKILL);
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

}  // namespace
}  // namespace sar::filterd
