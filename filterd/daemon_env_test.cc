// The daemon reads every clock and sleeps only through its Env (sar/env.h). Driven by a
// ManualEnv, whose clocks stand still unless the test moves them and whose sleeps return at
// once: retries, timings, the reroute stamp and the minimum interval across a restart follow
// that clock alone. A daemon that read the system clock directly fails these tests (the
// ManualEnv's wall clock is in 2017, its monotonic clock at 1000 s).
#include <gtest/gtest.h>

#include <memory>

#include "actions/recording_action.h"
#include "daemon.h"
#include "sar/env.h"
#include "state_store.h"
#include "test_util.h"

namespace sar::filterd {
namespace {

constexpr double kMonotonicStart = 1000;
constexpr double kUnixStart = 1.5e9;  // 2017-07-14: never the machine's date

// n0, n1 on leaf0; n2, n3 on leaf1.
LeafMap TwoLeaves() {
  LeafMap m;
  for (int i = 0; i < 4; ++i) m.Add("n" + std::to_string(i), i < 2 ? "leaf0" : "leaf1");
  return m;
}

// One multi-leaf job, `id` on `hosts`; fails the first `failures` polls. Each poll takes
// `poll_s` on the Env's clock.
class ScriptedSource : public JobSource {
 public:
  ScriptedSource(ManualEnv* env, double poll_s) : env_(env), poll_s_(poll_s) {}
  const char* name() const override { return "scripted"; }
  Status Poll(std::vector<SourceJob>* out) override {
    ++polls;
    env_->Advance(poll_s_);
    if (failures > 0) {
      --failures;
      return Status::IOError("controller down");
    }
    SourceJob job;
    job.id = id;
    job.partition = "batch";
    job.hosts = hosts;
    *out = {job};
    return Status::OK();
  }
  int failures = 0;
  int polls = 0;
  std::string id = "7";
  std::vector<std::string> hosts = {"n0", "n2"};

 private:
  ManualEnv* env_;
  double poll_s_;
};

// Records like RecordingAction; each apply takes `apply_s` on the Env's clock.
class SlowAction : public RecordingAction {
 public:
  SlowAction(ManualEnv* env, double apply_s) : env_(env), apply_s_(apply_s) {}

 protected:
  Status DoApply(const ActionRequest& request) override {
    env_->Advance(apply_s_);
    return RecordingAction::DoApply(request);
  }

 private:
  ManualEnv* env_;
  double apply_s_;
};

class DaemonEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.fabric = "unused";
    config_.state_dir = dir_.Join("state");
    config_.poll_retries = 3;
    config_.retry_backoff_s = 30;
    config_.settle_s = 0;
    config_.min_reroute_interval_s = 60;
  }
  // A daemon on env_ (started), its source in *source.
  std::unique_ptr<Daemon> Make(ScriptedSource** source, double poll_s = 0,
                               std::unique_ptr<Action> action = nullptr) {
    auto src = std::make_unique<ScriptedSource>(env_.get(), poll_s);
    *source = src.get();
    if (!action) action = std::make_unique<RecordingAction>();
    auto d = std::make_unique<Daemon>(config_, DaemonOptions{}, TwoLeaves(), std::move(src),
                                      std::move(action), env_);
    d->Start();
    return d;
  }

  TempDir dir_;
  Config config_;
  std::shared_ptr<ManualEnv> env_ = std::make_shared<ManualEnv>(kMonotonicStart, kUnixStart);
};

// The back-off between failed polls (30 s, doubled, at most 60 s) is slept on the Env: four
// attempts over 150 s take no real time.
TEST_F(DaemonEnvTest, RetryBackOffSleepsOnTheEnv) {
  ScriptedSource* src = nullptr;
  auto d = Make(&src);
  src->failures = 100;
  const Stopwatch real;
  EXPECT_FALSE(d->RunCycle(env_->NowMonotonic()));
  EXPECT_LT(real.ElapsedSeconds(), 5.0) << "the daemon slept for real";
  EXPECT_EQ(src->polls, 4);
  EXPECT_EQ(env_->sleeps(), (std::vector<double>{30, 60, 60}));
  EXPECT_EQ(d->metrics().poll_errors, 1u);

  // Two failures, then an answer: two sleeps, and the cycle goes on to reroute.
  src->failures = 2;
  src->polls = 0;
  EXPECT_TRUE(d->RunCycle(env_->NowMonotonic()));
  EXPECT_EQ(src->polls, 3);
  EXPECT_EQ(env_->sleeps(), (std::vector<double>{30, 60, 60, 30, 60}));
}

// The poll, cycle and action times in the metrics are differences on the Env's clock.
TEST_F(DaemonEnvTest, TimingsAreOnTheEnvsClock) {
  ScriptedSource* src = nullptr;
  auto d = Make(&src, 2.5, std::make_unique<SlowAction>(env_.get(), 0.75));
  EXPECT_TRUE(d->RunCycle(env_->NowMonotonic()));
  EXPECT_EQ(d->metrics().last_poll_seconds, 2.5);
  EXPECT_EQ(d->metrics().last_cycle_seconds, 2.5);
  EXPECT_EQ(d->metrics().last_action_seconds, 0.75) << "the action was not given the Env";
}

// A reroute is stamped with the Env's wall clock: in the metrics and in the state dir, and a
// change held back is pending since the Env's now.
TEST_F(DaemonEnvTest, RerouteAndPendingChangeAreStampedWithTheEnvsWallClock) {
  config_.settle_s = 5;
  ScriptedSource* src = nullptr;
  auto d = Make(&src);
  EXPECT_FALSE(d->RunCycle(env_->NowMonotonic())) << "settling";
  EXPECT_EQ(d->metrics().pending_change_since_unix_s, kUnixStart);
  env_->Advance(5);
  EXPECT_TRUE(d->RunCycle(env_->NowMonotonic()));
  EXPECT_EQ(d->metrics().last_reroute_unix_s, kUnixStart + 5);
  EXPECT_EQ(d->metrics().pending_change_since_unix_s, 0);
  PersistentState saved;
  ASSERT_TRUE(LoadState(config_.state_dir, &saved).ok());
  EXPECT_EQ(saved.last_reroute_unix_s, kUnixStart + 5);
}

// The minimum interval holds across a restart: the stored wall time of the last reroute is
// translated into the Env's monotonic clock. 20 s after the reroute, a restarted daemon waits
// the remaining 40 s for a new job set, and no longer.
TEST_F(DaemonEnvTest, MinimumIntervalHoldsAcrossARestartOnTheEnvsClocks) {
  ScriptedSource* src = nullptr;
  ASSERT_TRUE(Make(&src)->RunCycle(env_->NowMonotonic()));
  env_->Advance(20);
  auto restarted = Make(&src);
  src->id = "8";
  src->hosts = {"n1", "n3"};
  EXPECT_FALSE(restarted->RunCycle(env_->NowMonotonic())) << "20 s after the last reroute";
  env_->Advance(39.5);
  EXPECT_FALSE(restarted->RunCycle(env_->NowMonotonic())) << "59.5 s after the last reroute";
  env_->Advance(0.5);
  EXPECT_TRUE(restarted->RunCycle(env_->NowMonotonic())) << "60 s after the last reroute";
}

// The wall clock set back an hour while the daemon was down: the stored reroute is in the
// future, taken as now, so the next reroute waits one minimum interval (not an hour).
TEST_F(DaemonEnvTest, AWallClockSetBackHoldsOneIntervalNotTheStep) {
  ScriptedSource* src = nullptr;
  ASSERT_TRUE(Make(&src)->RunCycle(env_->NowMonotonic()));
  env_->StepUnix(-3600);
  auto restarted = Make(&src);
  src->id = "8";
  src->hosts = {"n1", "n3"};
  EXPECT_FALSE(restarted->RunCycle(env_->NowMonotonic()));
  env_->Advance(59);
  EXPECT_FALSE(restarted->RunCycle(env_->NowMonotonic()));
  env_->Advance(1);
  EXPECT_TRUE(restarted->RunCycle(env_->NowMonotonic()));
  EXPECT_EQ(restarted->metrics().last_reroute_unix_s, kUnixStart - 3600 + 60);
}

}  // namespace
}  // namespace sar::filterd
