// RunProcess against real children (/bin/sh scripts): what they print, how they end, and the
// bounds on their time and output. The second computation is the shell's own: what the script
// prints and exits with is known from its text.
#include "sar/io/process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "io/test_util.h"
#include "sar/env.h"

namespace sar {
namespace {

RunRequest Shell(const std::string& script) {
  RunRequest request;
  request.argv = {"sh", "-c", script};
  return request;
}

TEST(RunProcessTest, CapturesStdoutStderrAndTheExitCode) {
  const RunResult r = RunProcess(Shell("echo out; echo err >&2; exit 3"));
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_TRUE(r.started);
  EXPECT_TRUE(r.output_complete);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.term_signal, 0);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_FALSE(r.exited_zero());
}

TEST(RunProcessTest, StderrMergedOrDiscardedAsAsked) {
  RunRequest merged = Shell("echo a; echo b >&2; echo c");
  merged.stderr_to = RunRequest::Stderr::kToStdout;
  RunResult r = RunProcess(merged);
  EXPECT_EQ(r.out, "a\nb\nc\n");
  EXPECT_EQ(r.err, "");
  RunRequest discarded = merged;
  discarded.stderr_to = RunRequest::Stderr::kDiscard;
  r = RunProcess(discarded);
  EXPECT_EQ(r.out, "a\nc\n");
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(r.exited_zero());
}

TEST(RunProcessTest, SetsTheGivenEnvironmentOverTheCallers) {
  ASSERT_EQ(setenv("SAR_RUN_PROCESS_TEST", "caller", 1), 0);
  RunRequest request = Shell("echo \"$SAR_RUN_PROCESS_TEST $SAR_RUN_PROCESS_NEW\"");
  EXPECT_EQ(RunProcess(request).out, "caller \n") << "the caller's environment was not passed";
  request.set_env = {{"SAR_RUN_PROCESS_TEST", "child"}, {"SAR_RUN_PROCESS_NEW", "new"}};
  EXPECT_EQ(RunProcess(request).out, "child new\n");
  unsetenv("SAR_RUN_PROCESS_TEST");
}

TEST(RunProcessTest, AChildPastItsTimeoutIsKilled) {
  RunRequest request = Shell("echo started; exec sleep 30");
  request.timeout_s = 0.3;
  const Stopwatch watch;
  const RunResult r = RunProcess(request);
  EXPECT_LT(watch.ElapsedSeconds(), 5.0) << "waited past the timeout";
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.output_complete);
  EXPECT_EQ(r.term_signal, SIGKILL);
  EXPECT_EQ(r.out, "started\n");
  EXPECT_NE(r.status.message().find("did not finish in 0.3 s"), std::string::npos)
      << r.status.ToString();

  // Output closed, process lingering: the timeout still holds.
  request = Shell("echo done; exec >&- 2>&-; exec sleep 30");
  request.timeout_s = 0.3;
  const RunResult lingering = RunProcess(request);
  EXPECT_TRUE(lingering.timed_out);
  EXPECT_TRUE(lingering.output_complete);
  EXPECT_EQ(lingering.out, "done\n");
  EXPECT_LT(watch.ElapsedSeconds(), 10.0);

  // A NaN timeout is no time at all, not no bound.
  request = Shell("exec sleep 30");
  request.timeout_s = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(RunProcess(request).timed_out);
  EXPECT_LT(watch.ElapsedSeconds(), 15.0);
}

TEST(RunProcessTest, OutputPastTheCapIsNotReadOn) {
  RunRequest request;
  request.argv = {"yes"};
  request.max_output_bytes = 100000;
  const RunResult r = RunProcess(request);
  EXPECT_TRUE(r.output_too_large);
  EXPECT_FALSE(r.status.ok());
  EXPECT_LE(r.out.size(), 100001u);
  EXPECT_GT(r.out.size(), 100000u - 65536u);
  EXPECT_EQ(r.term_signal, SIGKILL) << "the endless child was left running";
}

TEST(RunProcessTest, OutputToAFileIsWrittenThereNotCaptured) {
  const std::string dir = io::testing::MakeTempDir();
  RunRequest request = Shell("echo to-out; echo to-err >&2; exit 2");
  request.output_file = dir + "/log";
  request.timeout_s = std::numeric_limits<double>::infinity();
  const RunResult r = RunProcess(request);
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  std::ifstream in(request.output_file);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "to-out\nto-err\n");
  struct stat st {};
  ASSERT_EQ(stat(request.output_file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  unlink(request.output_file.c_str());
  rmdir(dir.c_str());
}

TEST(RunProcessTest, AProgramNotFoundIsAnErrorNamingIt) {
  RunRequest request;
  request.argv = {"/nonexistent/sar-no-such-program"};
  const RunResult r = RunProcess(request);
  EXPECT_FALSE(r.started);
  EXPECT_EQ(r.start_errno, ENOENT);
  EXPECT_NE(r.status.message().find("cannot run '/nonexistent/sar-no-such-program'"),
            std::string::npos)
      << r.status.ToString();
  EXPECT_FALSE(RunProcess(RunRequest{}).status.ok()) << "no argv";
}

// RealEnv's Run is RunProcess.
TEST(RunProcessTest, TheRealEnvRunsIt) {
  EXPECT_EQ(RealEnv()->Run(Shell("echo via-env")).out, "via-env\n");
}

}  // namespace
}  // namespace sar
