// sar-filterd --check's items: each of the four cases issue 21 found passing the dry run (a dead
// OpenSM pid, an unknown socket group, an unbindable metrics address, an unwritable mapping
// path) fails here, naming what is wrong, and a good config passes. The subnet-manager check
// itself (CheckSmProcess) has its own tests; here it is injected.
#include "preflight.h"

#include <arpa/inet.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "server/metrics_http.h"
#include "test_util.h"

namespace sar::filterd {
namespace {

const PreflightItem* Find(const std::vector<PreflightItem>& items, const std::string& what) {
  for (const PreflightItem& i : items)
    if (i.what == what) return &i;
  return nullptr;
}

SmProcessCheck AcceptAll() {
  return [](pid_t, int) { return Status::OK(); };
}

// A config where everything holds: our own pid stands in for OpenSM (the check is injected).
Config GoodConfig(const TempDir& dir) {
  Config c;
  c.trigger = Trigger::kSignal;
  c.opensm_pid_files = {dir.Join("opensm.pid")};
  std::ofstream(c.opensm_pid_files[0]) << getpid() << "\n";
  c.mapping_file = dir.Join("jobs.map");
  c.state_dir = dir.Join("state");
  c.control_socket = dir.Join("ctl.sock");
  c.control_socket_group = "";
  c.metrics_listen = "127.0.0.1:0";
  c.metrics_textfile = dir.Join("sar.prom");
  return c;
}

TEST(Preflight, GoodConfigPassesEveryItem) {
  TempDir dir;
  const auto items = RunPreflight(GoodConfig(dir), AcceptAll());
  ASSERT_EQ(items.size(), 6u);
  for (const PreflightItem& i : items)
    EXPECT_TRUE(i.status.ok()) << i.what << ": " << i.status.ToString();
  // Nothing is left behind by the write probes.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    files += e.path().filename() != "opensm.pid";
  EXPECT_EQ(files, 0);
}

TEST(Preflight, DeadOpensmPidFails) {
  TempDir dir;
  Config c = GoodConfig(dir);
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);  // reaped: the pid names no process now
  std::ofstream(c.opensm_pid_files[0]) << child << "\n";
  const auto items = RunPreflight(c, AcceptAll());
  const PreflightItem* t = Find(items, "trigger signal");
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(t->status.ok());
  EXPECT_NE(t->status.message().find("not running"), std::string::npos) << t->status.ToString();
}

// Issue 34: --check passed where the first reroute's kill() failed with EPERM (the daemon as its
// system user without CAP_KILL). Run in a child as another user (nobody) when this test is root,
// else as this user: a process of another uid (the root parent, or init) fails naming CAP_KILL,
// the child's own pid passes.
TEST(Preflight, APidWeMayNotSignalFailsNamingCapKill) {
  TempDir dir;
  pid_t other = getpid();  // the root parent, once the child is nobody
  if (geteuid() != 0) {
    other = 1;
    if (kill(other, 0) == 0) GTEST_SKIP() << "this user may signal pid 1: no other uid to try";
  }
  chmod(dir.path().c_str(), 0777);  // the child, as nobody, writes its own pid file
  const std::string other_pid = dir.Join("other.pid");
  const std::string own_pid = dir.Join("own.pid");
  std::ofstream(other_pid) << other << "\n";
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(report[0]);
    if (geteuid() == 0 && (setgroups(0, nullptr) != 0 || setgid(65534) != 0 || setuid(65534) != 0))
      _exit(3);
    std::ofstream(own_pid) << getpid() << "\n";
    std::string out;
    for (const std::string& pid_file : {other_pid, own_pid}) {
      Config c;
      c.trigger = Trigger::kSignal;
      c.opensm_pid_files = {pid_file};
      c.mapping_file = "/nonexistent/jobs.map";
      c.state_dir = "/nonexistent/state";
      const auto items = RunPreflight(c, AcceptAll());
      const PreflightItem* t = Find(items, "trigger signal");
      out += t == nullptr ? "missing" : t->status.ok() ? "ok" : t->status.message();
      out += '\n';
    }
    _exit(write(report[1], out.data(), out.size()) == static_cast<ssize_t>(out.size()) ? 0 : 1);
  }
  close(report[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = read(report[0], buf, sizeof(buf))) > 0;) out.append(buf, n);
  close(report[0]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  const size_t eol = out.find('\n');
  ASSERT_NE(eol, std::string::npos) << out;
  const std::string other_result = out.substr(0, eol), own_result = out.substr(eol + 1);
  EXPECT_NE(other_result.find("CAP_KILL"), std::string::npos) << other_result;
  EXPECT_NE(other_result.find("EPERM"), std::string::npos) << other_result;
  EXPECT_EQ(own_result, "ok\n");
}

TEST(Preflight, ProcessThatIsNotOpensmFailsWithTheChecksReason) {
  TempDir dir;
  const auto items = RunPreflight(GoodConfig(dir), [](pid_t, int signum) {
    return signum == SIGUSR2 ? Status::Failed("not opensm with libosmsar.so") : Status::OK();
  });
  const PreflightItem* t = Find(items, "trigger signal");
  ASSERT_NE(t, nullptr);
  EXPECT_NE(t->status.message().find("libosmsar.so"), std::string::npos) << t->status.ToString();
}

TEST(Preflight, UnknownSocketGroupFails) {
  TempDir dir;
  Config c = GoodConfig(dir);
  c.control_socket_group = "no-such-group-sar";
  const std::vector<PreflightItem> items1 = RunPreflight(c, AcceptAll());  // Find points into it
  const PreflightItem* t = Find(items1, "control_socket");
  ASSERT_NE(t, nullptr);
  EXPECT_NE(t->status.message().find("no-such-group-sar"), std::string::npos);
}

// Under the packaged unit sar-filterd is the system user sar-filterd: it can give its socket
// to control_socket_group only as a member of it.
TEST(Preflight, SocketGroupNeedsMembershipUnlessRoot) {
  EXPECT_TRUE(MayChownToGroup(0, 0, {}, 64));           // root
  EXPECT_TRUE(MayChownToGroup(998, 64, {}, 64));        // its primary group
  EXPECT_TRUE(MayChownToGroup(998, 998, {5, 64}, 64));  // a supplementary group
  EXPECT_FALSE(MayChownToGroup(998, 998, {5, 7}, 64));  // not a member: chown would fail
}

// Issue 34: the mapping is written 0640 with mapping_group; a daemon that may not give files
// that group fails every mapping write, so --check says so. Run as a user who is not a member
// (as root: a child that becomes nobody).
TEST(Preflight, MappingGroupNeedsMembershipUnlessRoot) {
  TempDir dir;
  Config c = GoodConfig(dir);
  c.mapping_group = "0";
  c.mapping_gid = 0;
  auto failed_for_non_member = [&c] {
    const std::vector<PreflightItem> items = RunPreflight(c, AcceptAll());
    const PreflightItem* t = Find(items, "mapping_group");
    return t != nullptr && !t->status.ok() &&
           t->status.message().find("mapping_group '0': this user is not a member") !=
               std::string::npos;
  };
  if (geteuid() != 0) {
    if (getegid() == 0) GTEST_SKIP() << "needs a user outside group 0";
    EXPECT_TRUE(failed_for_non_member());
    return;
  }
  const std::vector<PreflightItem> as_root = RunPreflight(c, AcceptAll());
  const PreflightItem* t = Find(as_root, "mapping_group");
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->status.ok()) << t->status.ToString();  // root may give any group
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const bool dropped = setgroups(0, nullptr) == 0 && setgid(65534) == 0 && setuid(65534) == 0;
    _exit(dropped && failed_for_non_member() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "as nobody, --check did not fail on mapping_group";
}

TEST(Preflight, UnbindableMetricsAddressFails) {
  TempDir dir;
  MetricsHttpServer taken;
  ASSERT_TRUE(taken.Open("127.0.0.1:0").ok());
  Config c = GoodConfig(dir);
  c.metrics_listen = "127.0.0.1:" + std::to_string(taken.port());
  const auto items = RunPreflight(c, AcceptAll());
  const PreflightItem* t = Find(items, "metrics_listen");
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(t->status.ok());
}

TEST(Preflight, UnwritableMappingPathFails) {
  TempDir dir;
  Config c = GoodConfig(dir);
  // A parent that is a regular file fails for root too (permission bits would not).
  std::ofstream(dir.Join("plainfile")) << "x";
  c.mapping_file = dir.Join("plainfile") + "/jobs.map";
  const std::vector<PreflightItem> items2 = RunPreflight(c, AcceptAll());  // Find points into it
  const PreflightItem* t = Find(items2, "mapping_file");
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(t->status.ok());
  c.mapping_file = dir.Join("missing-dir") + "/jobs.map";
  const std::vector<PreflightItem> items3 = RunPreflight(c, AcceptAll());  // Find points into it
  t = Find(items3, "mapping_file");
  ASSERT_NE(t, nullptr);
  EXPECT_NE(t->status.message().find("missing-dir"), std::string::npos);
}

TEST(Preflight, FileModeChecksTheLftFileAndSighup) {
  TempDir dir;
  Config c = GoodConfig(dir);
  c.trigger = Trigger::kFile;
  c.lft_file = dir.Join("nowhere") + "/lfts.dump";
  int seen_signal = 0;
  const auto items = RunPreflight(c, [&](pid_t, int signum) {
    seen_signal = signum;
    return Status::OK();
  });
  EXPECT_EQ(seen_signal, SIGHUP);
  const PreflightItem* t = Find(items, "lft_file");
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(t->status.ok());
}

TEST(Preflight, ConsoleIsReachedOnlyWhenItListens) {
  TempDir dir;
  Config c = GoodConfig(dir);
  c.trigger = Trigger::kConsole;
  c.console_host = "127.0.0.1";
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 4), 0);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  c.console_port = ntohs(addr.sin_port);
  const std::vector<PreflightItem> items4 = RunPreflight(c, AcceptAll());  // Find points into it
  const PreflightItem* t = Find(items4, "trigger console");
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->status.ok()) << t->status.ToString();
  close(fd);  // now nothing listens there
  const auto items = RunPreflight(c, AcceptAll());
  t = Find(items, "trigger console");
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(t->status.ok());
}

}  // namespace
}  // namespace sar::filterd
