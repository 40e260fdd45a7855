// sar-filterd's command line, driven through the real binary (path in SAR_FILTERD_BIN): usage
// errors exit 2 naming what was wrong (not CLI11's 109), --version and --help exit 0.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "test_util.h"

namespace sar::filterd {
namespace {

struct Outcome {
  int exit_code = -1;
  std::string out, err;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Outcome RunFilterd(const TempDir& dir, const std::string& args, const std::string& env = "") {
  const std::string cmd = env + " " + std::string(SAR_FILTERD_BIN) + " " + args + " >" +
                          dir.Join("out") + " 2>" + dir.Join("err") + " </dev/null";
  const int status = std::system(cmd.c_str());
  Outcome r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = Slurp(dir.Join("out"));
  r.err = Slurp(dir.Join("err"));
  return r;
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

}  // namespace
}  // namespace sar::filterd
