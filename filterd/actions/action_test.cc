#include "actions/action.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "actions/recording_action.h"
#include "job_set_diff.h"
#include "sar/io/job_file.h"
#include "test_util.h"

namespace sar::filterd {
namespace {

TEST(Action, SignalReachesThePidInTheFile) {
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
  Status s = SignalPidFile(dir.Join("opensm.pid"), SIGUSR2, nullptr);
  EXPECT_TRUE(s.ok()) << s.ToString();
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 42);
}

TEST(Action, MissingOrBadPidFileOrDeadProcess) {
  TempDir dir;
  EXPECT_FALSE(SignalPidFile(dir.Join("none.pid"), SIGUSR2, nullptr).ok());
  std::ofstream(dir.Join("bad.pid")) << "opensm\n";
  Status s = SignalPidFile(dir.Join("bad.pid"), SIGUSR2, nullptr);
  EXPECT_NE(s.message().find("bad.pid"), std::string::npos) << s.message();
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);  // reaped: the pid no longer exists
  std::ofstream(dir.Join("dead.pid")) << child;
  EXPECT_FALSE(SignalPidFile(dir.Join("dead.pid"), 0, nullptr).ok());
}

// Master and standby subnet managers: each listed pid is signalled; one that is down (no pid
// file, a dead pid) does not fail the reroute, while none reachable does, naming every file.
TEST(Action, SignalPidFilesTellsEveryRunningSm) {
  TempDir dir;
  sigset_t usr2, old;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  sigprocmask(SIG_BLOCK, &usr2, &old);
  pid_t children[2];
  for (pid_t& child : children) {
    child = fork();
    if (child == 0) {
      timespec timeout{5, 0};
      _exit(sigtimedwait(&usr2, nullptr, &timeout) == SIGUSR2 ? 42 : 1);
    }
  }
  sigprocmask(SIG_SETMASK, &old, nullptr);
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  std::ofstream(dir.Join("master.pid")) << children[0] << "\n";
  std::ofstream(dir.Join("standby.pid")) << children[1] << "\n";
  std::ofstream(dir.Join("dead.pid")) << dead << "\n";
  Status s = SignalPidFiles(
      {dir.Join("dead.pid"), dir.Join("master.pid"), dir.Join("none.pid"), dir.Join("standby.pid")},
      SIGUSR2, nullptr);
  EXPECT_TRUE(s.ok()) << s.ToString();
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 42);
  }
  s = SignalPidFiles({dir.Join("dead.pid"), dir.Join("none.pid")}, 0, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("dead.pid"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("none.pid"), std::string::npos) << s.message();
  // One file: its own error, as before.
  s = SignalPidFiles({dir.Join("none.pid")}, 0, nullptr);
  EXPECT_EQ(s.message().find("no subnet manager"), std::string::npos) << s.message();
}

TEST(Action, ConsoleGetsReroute) {
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

TEST(Action, ConsoleRefusedIsAnError) {
  // Port 1 on loopback has no listener here; the error must say which console failed.
  Status s = ConsoleReroute("127.0.0.1", 1, 1.0);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("127.0.0.1:1"), std::string::npos) << s.message();
}

// Apply() is the same for every action: the mapping is whole on disk before DoApply runs, a
// failure is counted and leaves the error to the caller, the dry run writes nothing.
TEST(Action, ApplyWritesTheMappingFirstAndCounts) {
  TempDir dir;
  const std::vector<MultiSwitchJob> set = {{"7", {"h0", "h2"}, 2, JobPattern::kAllToAll}};
  const JobMapping mapping = ToJobMapping(set);
  const std::vector<MultiSwitchJob> none;

  class CheckingAction : public RecordingAction {
   public:
    using RecordingAction::RecordingAction;
    bool mapping_was_there = false;

   protected:
    Status DoApply(const ActionRequest& r) override {
      JobMapping on_disk;
      mapping_was_there = ReadJobMapping(mapping_file(), &on_disk).ok() &&
                          on_disk.jobs.size() == 1 && on_disk.jobs[0].hosts.size() == 2;
      return RecordingAction::DoApply(r);
    }
  };
  CheckingAction action(dir.Join("jobs.map"));
  ASSERT_TRUE(action.Apply({set, mapping, none}).ok());
  EXPECT_TRUE(action.mapping_was_there);
  ASSERT_EQ(action.applied.size(), 1u);
  EXPECT_EQ(action.applied[0][0].id, "7");
  EXPECT_EQ(action.stats().succeeded, 1u);

  action.fail_with = Status::IOError("router gone");
  Status s = action.Apply({set, mapping, none});
  EXPECT_EQ(s.message(), "router gone");
  EXPECT_EQ(action.stats().failed, 1u);

  // An unwritable mapping: the action is not told at all, and that is a failure too.
  CheckingAction unwritable(dir.Join("no/such/dir/jobs.map"));
  EXPECT_FALSE(unwritable.Apply({set, mapping, none}).ok());
  EXPECT_TRUE(unwritable.applied.empty());
  EXPECT_EQ(unwritable.stats().failed, 1u);

  // Dry run: DoApply reports, nothing is written.
  RecordingAction dry(dir.Join("dry.map"), /*dry_run=*/true);
  ASSERT_TRUE(dry.Apply({set, mapping, none}).ok());
  EXPECT_EQ(dry.applied.size(), 1u);
  struct stat st {};
  EXPECT_NE(stat(dir.Join("dry.map").c_str(), &st), 0);
}

// Issue 34: the mapping says where every job runs; it was written 0644 for every local user.
TEST(Action, TheMappingIsWrittenForOwnerAndMappingGroupOnly) {
  TempDir dir;
  const std::vector<MultiSwitchJob> set = {{"7", {"h0", "h2"}, 2, JobPattern::kAllToAll}};
  const std::vector<MultiSwitchJob> none;
  Config config;
  config.trigger = Trigger::kNone;
  config.mapping_file = dir.Join("jobs.map");
  // Any group for root; else our own (the group is then only checked to be ours).
  const gid_t group = geteuid() == 0 ? (getegid() == 1 ? 2 : 1) : getegid();
  ASSERT_TRUE(ParseConfig("fabric: f\nmapping_file: " + config.mapping_file +
                              "\nmapping_group: " + std::to_string(group) + "\n",
                          "x.yaml", &config)
                  .ok());
  EXPECT_EQ(config.mapping_gid, group);
  auto action = MakeAction(config, false, nullptr);
  ASSERT_TRUE(action->Apply({set, ToJobMapping(set), none}).ok());
  struct stat st {};
  ASSERT_EQ(stat(config.mapping_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_gid, group);
}

TEST(Action, TheFactoryMakesOneActionPerTrigger) {
  Config config;
  config.mapping_file = "/nonexistent/jobs.map";
  for (Trigger t : {Trigger::kSignal, Trigger::kConsole, Trigger::kFile, Trigger::kNone}) {
    config.trigger = t;
    EXPECT_STREQ(MakeAction(config, false, nullptr)->name(), TriggerName(t));
    auto dry = MakeAction(config, true, nullptr);
    EXPECT_TRUE(dry->dry_run());
    EXPECT_STREQ(dry->name(), TriggerName(t));  // the dry run reports on the configured one
  }
  Trigger t = Trigger::kNone;
  EXPECT_TRUE(ParseTrigger("console", &t));
  EXPECT_EQ(t, Trigger::kConsole);
  EXPECT_FALSE(ParseTrigger("Signal", &t));
}

}  // namespace
}  // namespace sar::filterd
