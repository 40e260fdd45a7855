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
