// The daemon reads every clock and sleeps only through its Env (sar/env.h). Driven by a
// ManualEnv, whose clocks stand still unless the test moves them and whose sleeps return at
// once: retries, timings, the reroute stamp and the minimum interval across a restart follow
// that clock alone. A daemon that read the system clock directly fails these tests (the
// ManualEnv's wall clock is in 2017, its monotonic clock at 1000 s).
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <sstream>

#include "actions/recording_action.h"
#include "daemon.h"
#include "sar/env.h"
#include "sar/io/job_file.h"
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
  ASSERT_TRUE(LoadState(*env_, config_.state_dir, &saved).ok());
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

// The default logger, captured while in scope.
class LogCapture {
 public:
  LogCapture() : previous_(spdlog::default_logger()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>(
        "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)));
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::shared_ptr<spdlog::logger> previous_;
};

// The job set saved in the state dir, read back.
std::vector<std::string> SavedJobIds(const std::string& state_dir) {
  PersistentState saved;
  EXPECT_TRUE(LoadState(*RealEnv(), state_dir, &saved).ok());
  std::vector<std::string> ids;
  for (const MultiSwitchJob& job : saved.router_set) ids.push_back(job.id);
  return ids;
}

// The state dir's disk full: the reroute itself stands (the router has job 8), the state dir
// keeps the last good state (job 7) whole, the failure is counted and the log names the file.
TEST_F(DaemonEnvTest, AStateWriteThatFailsKeepsTheLastGoodStateAndSaysWhere) {
  ScriptedSource* src = nullptr;
  auto d = Make(&src);
  ASSERT_TRUE(d->RunCycle(env_->NowMonotonic()));
  ASSERT_EQ(SavedJobIds(config_.state_dir), std::vector<std::string>{"7"});

  env_->FailWrites(config_.state_dir, "No space left on device");
  src->id = "8";
  src->hosts = {"n1", "n3"};
  env_->Advance(60);
  LogCapture log;
  EXPECT_TRUE(d->RunCycle(env_->NowMonotonic())) << "a state dir that is full stopped a reroute";
  EXPECT_EQ(d->metrics().state_write_errors, 1u);
  EXPECT_EQ(d->metrics().reroutes, 2u);
  EXPECT_EQ(SavedJobIds(config_.state_dir), std::vector<std::string>{"7"})
      << "the last good state was not kept";
  EXPECT_NE(log.text().find("state: not saved (I/O error: " + config_.state_dir +
                            "/router.jobs: No space left on device)"),
            std::string::npos)
      << log.text();
}

// The mapping file's disk full: the router is not told (a subnet manager must never read half a
// mapping, nor one that differs from what it was told), the daemon keeps job 7 as the router's,
// the file on disk and the state dir keep it too, the log names the file; the next cycle after
// the disk has room again reroutes.
TEST_F(DaemonEnvTest, AMappingWriteThatFailsTellsTheRouterNothingAndSaysWhere) {
  const std::string mapping = dir_.Join("jobs.map");
  auto action = std::make_unique<RecordingAction>(mapping);
  RecordingAction* rec = action.get();
  ScriptedSource* src = nullptr;
  auto d = Make(&src, 0, std::move(action));
  ASSERT_TRUE(d->RunCycle(env_->NowMonotonic()));
  ASSERT_EQ(rec->applied.size(), 1u);

  env_->FailWrites(mapping, "No space left on device");
  src->id = "8";
  src->hosts = {"n1", "n3"};
  env_->Advance(60);
  LogCapture log;
  EXPECT_FALSE(d->RunCycle(env_->NowMonotonic()));
  EXPECT_EQ(rec->applied.size(), 1u) << "the router was told of a mapping not written";
  EXPECT_EQ(d->metrics().mapping_write_errors, 1u);
  EXPECT_EQ(d->metrics().reroutes, 1u);
  JobMapping on_disk;
  ASSERT_TRUE(ReadJobMapping(mapping, &on_disk).ok());
  ASSERT_EQ(on_disk.jobs.size(), 1u);
  EXPECT_EQ(on_disk.jobs[0].id, "7") << "the last good mapping was not kept";
  EXPECT_EQ(SavedJobIds(config_.state_dir), std::vector<std::string>{"7"});
  EXPECT_NE(log.text().find("mapping not written, not triggering: I/O error: " + mapping +
                            ": No space left on device"),
            std::string::npos)
      << log.text();

  env_->FailWrites(mapping, "");
  env_->Advance(60);
  EXPECT_TRUE(d->RunCycle(env_->NowMonotonic())) << "no retry once the disk had room";
  ASSERT_EQ(rec->applied.size(), 2u);
  EXPECT_EQ(rec->applied[1][0].id, "8");
  EXPECT_EQ(SavedJobIds(config_.state_dir), std::vector<std::string>{"8"});
}

}  // namespace
}  // namespace sar::filterd
