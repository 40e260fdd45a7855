// sar-filterd's command line, driven through the real binary (path in SAR_FILTERD_BIN): usage
// errors exit 2 naming what was wrong (not CLI11's 109), --version and --help exit 0.
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "command_test_util.h"
#include "sar/io/topology.h"
#include "test_util.h"

namespace sar::filterd {
namespace {

using testcmd::Outcome;

Outcome RunFilterd(const TempDir& dir, const std::string& args, const std::string& env = "") {
  return testcmd::Run(env + " " + std::string(SAR_FILTERD_BIN) + " " + args, dir.path());
}

TEST(FilterdCli, VersionPrintsTheProjectVersion) {
  TempDir dir;
  const Outcome r = RunFilterd(dir, "--version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sar-filterd " SAR_VERSION), std::string::npos) << r.out;
}

TEST(FilterdCli, HelpShowsTheDefaultConfigPathAndExitCodes) {
  TempDir dir;
  const Outcome r = RunFilterd(dir, "--help");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(SAR_DEFAULT_CONFIG), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Exit codes"), std::string::npos) << r.out;
}

TEST(FilterdCli, UnknownOptionIsAUsageErrorNamingIt) {
  TempDir dir;
  const Outcome r = RunFilterd(dir, "--bogus");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--bogus"), std::string::npos) << r.err;
}

TEST(FilterdCli, UnknownLogLevelIsRefusedBeforeAnythingRuns) {
  TempDir dir;
  // A config that does not exist: the log level must be refused first, by name.
  const Outcome r = RunFilterd(dir, "--config " + dir.Join("none.yaml") + " --log-level loud");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("loud"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("none.yaml"), std::string::npos) << r.err;
}

TEST(FilterdCli, KnownLogLevelGetsAsFarAsTheConfig) {
  TempDir dir;
  const Outcome r = RunFilterd(dir, "--config " + dir.Join("none.yaml") + " --log-level debug");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("none.yaml"), std::string::npos) << r.err;
}

TEST(FilterdCli, MissingFabricFileSaysHowToMakeIt) {
  TempDir dir;
  {
    std::ofstream c(dir.Join("c.yaml"));
    c << "source: replay\nreplay_trace: " << dir.Join("trace")
      << "\nfabric: " << dir.Join("fabric.topo") << "\n";
  }
  const Outcome r = RunFilterd(dir, "--config " + dir.Join("c.yaml") + " --once");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ibnetdiscover > " + dir.Join("fabric.topo")), std::string::npos) << r.err;
}

// --check through the binary: a good config passes (exit 0), a mapping directory that does not
// exist fails (exit 1) and the daemon never starts either way.
TEST(FilterdCli, CheckPassesAGoodConfigAndFailsABadOne) {
  TempDir dir;
  {
    std::ofstream(dir.Join("topology.conf")) << "SwitchName=leaf0 Nodes=n[0-1]\n"
                                                "SwitchName=leaf1 Nodes=n[2-3]\n";
    std::ofstream(dir.Join("trace")) << "0 - 1 n[0-3]\n";
  }
  auto write_config = [&](const std::string& mapping) {
    std::ofstream c(dir.Join("c.yaml"));
    c << "source: replay\nreplay_trace: " << dir.Join("trace") << "\nfabric: \"\"\n"
      << "topology_conf: " << dir.Join("topology.conf") << "\ntrigger: none\n"
      << "mapping_file: " << mapping << "\nstate_dir: " << dir.Join("state") << "\n"
      << "control_socket: " << dir.Join("ctl.sock") << "\ncontrol_socket_group: \"\"\n";
  };
  write_config(dir.Join("jobs.map"));
  Outcome r = RunFilterd(dir, "--config " + dir.Join("c.yaml") + " --check");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ok   job source replay: 1 running job(s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("all checks passed"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir.Join("ctl.sock"))) << "--check started the daemon";
  write_config(dir.Join("no-such-dir") + "/jobs.map");
  r = RunFilterd(dir, "--config " + dir.Join("c.yaml") + " --check");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL mapping_file"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no-such-dir"), std::string::npos) << r.out;
}

// Under journald (JOURNAL_STREAM names stderr's file) each line carries its syslog priority,
// so `journalctl -p err` finds errors; elsewhere no "<N>" prefix appears.
TEST(FilterdCli, JournalLinesCarryTheirPriority) {
  TempDir dir;
  {
    std::ofstream c(dir.Join("c.yaml"));
    c << "source: replay\nreplay_trace: " << dir.Join("trace")
      << "\nfabric: " << dir.Join("fabric.topo") << "\n";
  }
  std::ofstream(dir.Join("err")).flush();  // the file stderr will be: its device and inode
  struct stat st {};
  ASSERT_EQ(stat(dir.Join("err").c_str(), &st), 0);
  const std::string stream =
      "JOURNAL_STREAM=" + std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  Outcome r = RunFilterd(dir, "--config " + dir.Join("c.yaml") + " --once", stream);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("<2>critical: topology: ", 0), 0u) << r.err;
  r = RunFilterd(dir, "--config " + dir.Join("c.yaml") + " --once");
  EXPECT_EQ(r.err.find("<2>"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("topology: "), std::string::npos) << r.err;
}

#ifdef SAR_HAVE_SYSTEMD
// Under systemd (NOTIFY_SOCKET, WATCHDOG_USEC): READY=1, a STATUS= line after each cycle, and
// WATCHDOG=1 at least twice per watchdog period even when the poll interval is far longer.
TEST(FilterdCli, TellsSystemdStatusAndPingsTheWatchdog) {
  TempDir dir;
  {
    std::ofstream(dir.Join("topology.conf")) << "SwitchName=leaf0 Nodes=n[0-1]\n";
    std::ofstream(dir.Join("trace")) << "0 - 1 n[0-1]\n";
    std::ofstream c(dir.Join("c.yaml"));
    c << "source: replay\nreplay_trace: " << dir.Join("trace") << "\nfabric: \"\"\n"
      << "topology_conf: " << dir.Join("topology.conf") << "\ntrigger: none\n"
      << "mapping_file: " << dir.Join("jobs.map") << "\nstate_dir: " << dir.Join("state")
      << "\ncontrol_socket: \"\"\npoll_interval_s: 3600\n";
  }
  const std::string notify_path = dir.Join("notify");
  const int sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, notify_path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  const pid_t child = fork();
  if (child == 0) {
    setenv("NOTIFY_SOCKET", notify_path.c_str(), 1);
    setenv("WATCHDOG_USEC", "400000", 1);  // 0.4 s: pings every 0.2 s at the latest
    unsetenv("WATCHDOG_PID");
    const std::string config = dir.Join("c.yaml");
    execl(SAR_FILTERD_BIN, SAR_FILTERD_BIN, "--config", config.c_str(), "--log-level", "warn",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int ready = 0, status = 0, watchdog = 0;
  std::string status_line;
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(1500)) {
    pollfd p{sock, POLLIN, 0};
    if (poll(&p, 1, 100) != 1) continue;
    char buf[1024];
    const ssize_t n = recv(sock, buf, sizeof buf - 1, 0);
    if (n <= 0) continue;
    const std::string msg(buf, static_cast<size_t>(n));
    ready += msg.find("READY=1") != std::string::npos;
    watchdog += msg.find("WATCHDOG=1") != std::string::npos;
    if (msg.rfind("STATUS=", 0) == 0) {
      ++status;
      status_line = msg;
    }
  }
  kill(child, SIGTERM);
  int wstatus = 0;
  waitpid(child, &wstatus, 0);
  close(sock);
  EXPECT_EQ(ready, 1);
  EXPECT_GE(status, 1);
  EXPECT_NE(status_line.find("polls=1"), std::string::npos) << status_line;
  // 1.5 s with a 0.4 s watchdog: about 7 pings; far more than the one poll_interval_s allows.
  EXPECT_GE(watchdog, 4);
  EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) << wstatus;
}
#endif

// Issue 20 item 4: a live-form fabric file (ibnetdiscover's, with LIDs) is enough routing data
// for the dry run's figures, as it is for sar-route; no guid2lid needed.
TEST(FilterdCli, DryRunTakesTheLidsOfALiveFormFabricFile) {
  TempDir dir;
  TopologyWriteOptions live;
  live.style = TopologyStyle::kIbnetdiscover;
  ASSERT_TRUE(WriteTopology(dir.Join("fabric.topo"), TwoLeafFabric(), live).ok());
  {
    std::ofstream(dir.Join("trace")) << "0 - 7 h0,h2\n";
    std::ofstream c(dir.Join("c.yaml"));
    c << "source: replay\nreplay_trace: " << dir.Join("trace")
      << "\nfabric: " << dir.Join("fabric.topo")
      << "\ntrigger: none\nmapping_file: " << dir.Join("jobs.map")
      << "\nstate_dir: " << dir.Join("state") << "\ncontrol_socket: \"\"\n"
      << "metrics_textfile: " << dir.Join("sar.prom") << "\n";
  }
  const Outcome r = RunFilterd(dir, "--config " + dir.Join("c.yaml") + " --once --dry-run");
  // "--dry-run writes nothing": not the mapping, and not the live daemon's metrics textfile.
  EXPECT_FALSE(std::filesystem::exists(dir.Join("sar.prom")));
  EXPECT_FALSE(std::filesystem::exists(dir.Join("jobs.map")));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("no routing data"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("EFI"), std::string::npos) << r.err;
  // No current_lfts: the current tables are not evaluated, and the log says so instead of
  // showing their figures as 0 (issue 38).
  EXPECT_EQ(r.err.find("(now 0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("current tables were not evaluated"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sar::filterd
