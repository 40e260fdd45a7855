// sar-notify's command line through the real binary (SAR_NOTIFY_BIN) against a UNIX socket the
// test listens on: what it sends, what it refuses to send, and its exit codes by hand and as a
// SLURM hook (where nothing may fail a job).
#include <gtest/gtest.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "command_test_util.h"

namespace {

using sar::testcmd::Outcome;

class SarNotifyCli : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/sar_notify_test_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    socket_path_ = dir_ + "/control.sock";
    listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(listen_fd_, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket_path_.c_str(), sizeof(addr.sun_path) - 1);
    ASSERT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    ASSERT_EQ(listen(listen_fd_, 8), 0);
  }
  void TearDown() override {
    close(listen_fd_);
    std::filesystem::remove_all(dir_);
  }

  // Runs sar-notify with `env` (e.g. "SLURM_SCRIPT_CONTEXT=prolog_slurmctld") and `args`.
  // The socket comes from the environment unless the args name one.
  Outcome Run(const std::string& env, const std::string& args) {
    return sar::testcmd::Run("env -u SLURM_SCRIPT_CONTEXT -u SLURM_JOB_ID SAR_FILTERD_SOCKET=" +
                                 socket_path_ + " " + env + " " + SAR_NOTIFY_BIN + " " + args,
                             dir_);
  }

  // Serves one connection in the background: reads one line into *request, answers `reply`.
  std::thread ServeOne(const std::string& reply, std::string* request) {
    return std::thread([this, reply, request] {
      pollfd p{listen_fd_, POLLIN, 0};
      if (poll(&p, 1, 5000) != 1) return;
      const int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      char buf[256];
      std::string got;
      while (got.find('\n') == std::string::npos) {
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) break;
        got.append(buf, static_cast<size_t>(n));
      }
      *request = got;
      const ssize_t w = write(fd, reply.data(), reply.size());
      (void)w;
      close(fd);
    });
  }

  // True if a client connected (and was not served): the command sent something.
  bool SomeoneConnected() {
    pollfd p{listen_fd_, POLLIN, 0};
    return poll(&p, 1, 0) == 1;
  }

  std::string dir_, socket_path_;
  int listen_fd_ = -1;
};

TEST_F(SarNotifyCli, JobStartSendsTheEventAndTheJob) {
  std::string request;
  std::thread server = ServeOne("ok\n", &request);
  const Outcome r = Run("", "job-start 42");
  server.join();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(request, "job-start 42\n");
}

TEST_F(SarNotifyCli, HookContextGivesTheEvent) {
  std::string request;
  std::thread server = ServeOne("ok\n", &request);
  const Outcome r = Run("SLURM_SCRIPT_CONTEXT=epilog_slurmctld SLURM_JOB_ID=7", "");
  server.join();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(request, "job-end 7\n");
}

TEST_F(SarNotifyCli, HelpSendsNothing) {
  for (const char* flag : {"-h", "--help"}) {
    const Outcome r = Run("", flag);
    EXPECT_EQ(r.exit_code, 0) << flag;
    EXPECT_NE(r.out.find("usage: sar-notify"), std::string::npos) << r.out;
    EXPECT_FALSE(SomeoneConnected()) << flag;
  }
}

TEST_F(SarNotifyCli, UsageErrorsSendNothingAndExit2ByHand) {
  const std::pair<const char*, const char*> cases[] = {
      {"job-strat 42", "job-strat"},
      {"--timeout-ms x job-start 1", "'x'"},
      {"--timeout-ms 0 job-start 1", "'0'"},
      {"--config /nonexistent/sar-notify.conf job-start 1", "/nonexistent/sar-notify.conf"},
      {"--frobnicate job-start 1", "--frobnicate"},
      {"job-start 1 extra", "extra"},
      {"--socket", "needs a value"},
  };
  for (const auto& [args, named] : cases) {
    const Outcome r = Run("", args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find(named), std::string::npos) << args << ": " << r.err;
    EXPECT_NE(r.err.find("nothing sent"), std::string::npos) << r.err;
    EXPECT_FALSE(SomeoneConnected()) << args;
  }
}

TEST_F(SarNotifyCli, UsageErrorInAHookStillExits0) {
  const Outcome r = Run("SLURM_SCRIPT_CONTEXT=prolog_slurmctld SLURM_JOB_ID=3", "job-strat");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("job-strat"), std::string::npos) << r.err;
  EXPECT_FALSE(SomeoneConnected());
}

TEST_F(SarNotifyCli, StatusPrintsTheDaemonsLine) {
  std::string request;
  std::thread server =
      ServeOne("jobs 3 multi-leaf 2 last_reroute 2026-11-22T17:00:00Z\n", &request);
  const Outcome r = Run("", "status");
  server.join();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(request, "status\n");
  EXPECT_EQ(r.out, "jobs 3 multi-leaf 2 last_reroute 2026-11-22T17:00:00Z\n");
}

TEST_F(SarNotifyCli, MappingPrintsEveryLineOfTheReply) {
  // Bigger than one read (64 KiB), as a real mapping of a busy machine is.
  std::string mapping = "# sar-filterd: 1 multi-leaf job(s) the router was last told\n";
  for (int i = 0; i < 12000; ++i) mapping += "node" + std::to_string(i) + " 42\n";
  std::string request;
  std::thread server = ServeOne(mapping, &request);
  const Outcome r = Run("", "--timeout-ms 5000 mapping");
  server.join();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(request, "mapping\n");
  EXPECT_EQ(r.out, mapping);
}

TEST_F(SarNotifyCli, MappingFromADaemonWithoutTheCommandExits1) {
  std::string request;
  std::thread server = ServeOne("error: unknown command\n", &request);
  const Outcome r = Run("", "mapping");
  server.join();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("unknown command"), std::string::npos) << r.err;
}

// Issue 34 defect 9: a mapping reply the daemon cut at its deadline (a slow reader) ends with its
// error line, or, from an older daemon, in the middle of a line: either is a failure (exit 1,
// the reason on stderr), not a normal end.
TEST_F(SarNotifyCli, ACutMappingReplyExits1) {
  std::string mapping = "# sar-filterd: 1 multi-leaf job(s) the router was last told\n";
  for (int i = 0; i < 12000; ++i) mapping += "node" + std::to_string(i) + " 42\n";
  for (const std::string& reply :
       {mapping + "error: reply cut: not read within sar-filterd's 2 s deadline\n",
        mapping + "node12000 4"}) {
    std::string request;
    std::thread server = ServeOne(reply, &request);
    const Outcome r = Run("", "--timeout-ms 5000 mapping");
    server.join();
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("cut"), std::string::npos) << r.err;
  }
}

TEST_F(SarNotifyCli, StatusWithoutADaemonExits1) {
  const Outcome r = Run("", "--socket " + dir_ + "/absent.sock status");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("absent.sock"), std::string::npos) << r.err;
}

TEST_F(SarNotifyCli, NoDaemonNeverFailsAJobStart) {
  const Outcome r = Run("", "--socket " + dir_ + "/absent.sock job-start 9");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("not told"), std::string::npos) << r.err;
}

}  // namespace
