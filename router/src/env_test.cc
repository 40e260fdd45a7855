#include "sar/env.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <ctime>
#include <limits>
#include <thread>

#include "io/test_util.h"

namespace sar {
namespace {

// The real clocks against the C library's: the wall clock is time(2)'s, the monotonic one
// moves by at least what was slept.
TEST(EnvTest, RealEnvReadsTheSystemClocks) {
  std::shared_ptr<Env> env = RealEnv();
  const double unix_now = env->NowUnix();
  EXPECT_NEAR(unix_now, static_cast<double>(std::time(nullptr)), 2.0);
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  EXPECT_NEAR(env->NowMonotonic(), ts.tv_sec + ts.tv_nsec / 1e9, 1.0);
  const double t0 = env->NowMonotonic();
  env->SleepFor(0.05);
  EXPECT_GE(env->NowMonotonic() - t0, 0.05);
}

// No wait for what is not a duration: NaN, negative, zero.
TEST(EnvTest, RealSleepOfNoDurationReturnsAtOnce) {
  std::shared_ptr<Env> env = RealEnv();
  const Stopwatch watch;
  env->SleepFor(std::numeric_limits<double>::quiet_NaN());
  env->SleepFor(-1e300);
  env->SleepFor(0);
  EXPECT_LT(watch.ElapsedSeconds(), 0.5);
}

TEST(EnvTest, ManualClocksMoveOnlyWhenTold) {
  ManualEnv env(100, 1.5e9);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(env.NowMonotonic(), 100);  // real time passed; this clock did not move
  EXPECT_EQ(env.NowUnix(), 1.5e9);
  env.Advance(2.5);
  EXPECT_EQ(env.NowMonotonic(), 102.5);
  EXPECT_EQ(env.NowUnix(), 1.5e9 + 2.5);
  env.Advance(-10);  // time does not run backwards
  EXPECT_EQ(env.NowMonotonic(), 102.5);
  env.StepUnix(-3600);  // the wall clock set back an hour
  EXPECT_EQ(env.NowUnix(), 1.5e9 + 2.5 - 3600);
  EXPECT_EQ(env.NowMonotonic(), 102.5);
}

TEST(EnvTest, ManualSleepsReturnAtOnceAndMoveTheClocks) {
  ManualEnv env(0, 1e9);
  const Stopwatch watch;
  env.SleepFor(3600);
  env.SleepFor(30);
  env.SleepFor(std::numeric_limits<double>::quiet_NaN());
  EXPECT_LT(watch.ElapsedSeconds(), 0.5);
  EXPECT_EQ(env.sleeps(), (std::vector<double>{3600, 30, 0}));
  EXPECT_EQ(env.NowMonotonic(), 3630);
  EXPECT_EQ(env.NowUnix(), 1e9 + 3630);
}

TEST(EnvTest, FilesAreWrittenWholeAndReadBounded) {
  const std::string dir = io::testing::MakeTempDir();
  std::shared_ptr<Env> env = RealEnv();
  const std::string path = dir + "/f";
  ASSERT_TRUE(env->WriteFileAtomic(path, "twelve bytes", WriteOptions{}).ok());
  std::string text;
  ASSERT_TRUE(env->ReadFileBounded(path, 12, &text).ok());
  EXPECT_EQ(text, "twelve bytes");
  EXPECT_FALSE(env->ReadFileBounded(path, 11, &text).ok()) << "read past its bound";
  // Hostile inputs: a FIFO would block, a symlink may point anywhere.
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const Status s = env->ReadFileBounded(fifo, 100, &text);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(fifo), std::string::npos) << s.ToString();
  const std::string link = dir + "/link";
  ASSERT_EQ(symlink(path.c_str(), link.c_str()), 0);
  EXPECT_FALSE(env->ReadFileBounded(link, 100, &text).ok());
  unlink(link.c_str());
  unlink(fifo.c_str());
  unlink(path.c_str());
  rmdir(dir.c_str());
}

// A test Env fails the writes it is told to fail, as a full disk: the file keeps what it had,
// and the error names the file; other paths and CreateDir outside the prefix are real.
TEST(EnvTest, ManualWritesFailUnderTheGivenPathAsADiskFull) {
  const std::string dir = io::testing::MakeTempDir();
  ManualEnv env;
  const std::string path = dir + "/state/last_reroute";
  ASSERT_TRUE(env.CreateDir(dir + "/state", 0700).ok());
  ASSERT_TRUE(env.WriteFileAtomic(path, "old\n", WriteOptions{}).ok());
  env.FailWrites(dir + "/state", "No space left on device");
  const Status s = env.WriteFileAtomic(path, "new\n", WriteOptions{});
  EXPECT_EQ(s.ToString(), "I/O error: " + path + ": No space left on device");
  EXPECT_FALSE(env.CreateDir(dir + "/state/sub", 0700).ok());
  std::string text;
  ASSERT_TRUE(env.ReadFileBounded(path, 100, &text).ok());
  EXPECT_EQ(text, "old\n") << "a failed write changed the file";
  ASSERT_TRUE(env.WriteFileAtomic(dir + "/other", "x", WriteOptions{}).ok()) << "not under it";
  env.FailWrites(dir + "/state", "");
  ASSERT_TRUE(env.WriteFileAtomic(path, "new\n", WriteOptions{}).ok());
  ASSERT_TRUE(env.ReadFileBounded(path, 100, &text).ok());
  EXPECT_EQ(text, "new\n");
  EXPECT_TRUE(env.FileExists(path));
  EXPECT_FALSE(env.FileExists(dir + "/absent"));
  unlink(path.c_str());
  unlink((dir + "/other").c_str());
  rmdir((dir + "/state").c_str());
  rmdir(dir.c_str());
}

// A test Env spawns nothing: Run answers with the scripted replies, in order, records what was
// asked, and fails when nothing is scripted.
TEST(EnvTest, ManualRunAnswersWithTheScriptedRepliesOnly) {
  ManualEnv env;
  RunResult first;
  first.started = true;
  first.output_complete = true;
  first.exit_code = 0;
  first.out = "hello";
  RunResult second;
  second.started = true;
  second.timed_out = true;
  env.ScriptRun(first);
  env.ScriptRun(second);
  RunRequest request;
  request.argv = {"/nonexistent/never-run", "-x"};
  EXPECT_EQ(env.Run(request).out, "hello");
  EXPECT_TRUE(env.Run(request).timed_out);
  const RunResult none = env.Run(request);
  EXPECT_FALSE(none.started);
  EXPECT_NE(none.status.message().find("no reply scripted for '/nonexistent/never-run'"),
            std::string::npos)
      << none.status.ToString();
  ASSERT_EQ(env.runs().size(), 3u);
  EXPECT_EQ(env.runs()[0].argv, request.argv);
}

TEST(EnvTest, StopwatchMeasuresTheMonotonicClock) {
  Stopwatch watch;
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_GE(watch.ElapsedMs(), 30);
  EXPECT_LT(watch.ElapsedMs(), 30000);
  watch.Restart();
  EXPECT_LT(watch.ElapsedMs(), 30);
}

}  // namespace
}  // namespace sar
