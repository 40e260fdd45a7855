#include "route_planner.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>

#include "daemon.h"
#include "replay_source.h"
#include "sar/engine.h"
#include "sar/io/lft_dump.h"
#include "test_util.h"

namespace sar::filterd {
namespace {

// The planner's engine in these tests: libsar's MinHop.
std::unique_ptr<RoutingEngine> MinHop() { return MakeRoutingEngine("minhop"); }

// Tables that bounce every route between leaf0 and the spine: a loop validation must catch.
class LoopEngine : public RoutingEngine {
 public:
  std::string_view name() const override { return "test-loop"; }

 protected:
  Status DoRoute(const RoutingInput& in, RoutingOutput* out) const override {
    SAR_RETURN_IF_ERROR(MinHop()->Route(in, out));
    const Fabric& f = *in.fabric;
    const NodeId spine = f.FindByName("spine");
    for (Lid lid = 1; lid <= f.max_lid(); ++lid) {
      if (f.lid_owner(lid).valid()) out->lfts.set_port(f.switch_index(spine), lid, 1);
    }
    return Status::OK();
  }
};

TEST(RoutePlanner, ValidTablesAndTheirQuality) {
  RoutePlanner planner(TwoLeafFabric(), MinHop(), {});
  LftSet tables;
  RouteQuality q;
  // One job h0 + h2: its two routes cross each of the four leaf-spine channels once.
  ASSERT_TRUE(planner.Plan({{"1", {"h0", "h2"}, 2}}, &tables, &q).ok());
  EXPECT_EQ(q.max_effective_efi, 1u);
  EXPECT_DOUBLE_EQ(q.dark_fiber, 0.0);
  // No multi-switch job: every inter-switch channel is dark.
  ASSERT_TRUE(planner.Plan({}, &tables, &q).ok());
  EXPECT_DOUBLE_EQ(q.dark_fiber, 1.0);
  // Evaluate() judges the current tables the same way.
  ASSERT_TRUE(planner.SetCurrent(tables).ok());
  RouteQuality e;
  ASSERT_TRUE(planner.Evaluate({{"1", {"h0", "h2"}, 2}}, &e).ok());
  EXPECT_EQ(e.max_effective_efi, 1u);
}

TEST(RoutePlanner, InvalidOrFailedTablesAreNotHandedOut) {
  LftSet tables;
  RouteQuality q;
  RoutePlanner looping(TwoLeafFabric(), std::make_unique<LoopEngine>(), {});
  Status s = looping.Plan({{"1", {"h0", "h2"}, 2}}, &tables, &q);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("validation"), std::string::npos) << s.message();
  RoutePlanner unknown(TwoLeafFabric(), nullptr, {.engine = "no-such-engine"});
  EXPECT_FALSE(unknown.Plan({}, &tables, &q).ok());
}

// File mode in the daemon: tables on disk, then SIGHUP; a failing engine keeps the last good
// tables (no write, no signal).
class FileModeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sigemptyset(&hup_);
    sigaddset(&hup_, SIGHUP);
    sigprocmask(SIG_BLOCK, &hup_, nullptr);
    std::ofstream(dir_.Join("opensm.pid")) << getpid() << "\n";
    config_.fabric = "unused";
    config_.trigger = Trigger::kFile;
    config_.mapping_file = dir_.Join("jobs.map");
    config_.lft_file = dir_.Join("lfts.dump");
    config_.state_dir = dir_.Join("state");
    config_.opensm_pid_file = dir_.Join("opensm.pid");
    config_.verify_sm_process = false;  // this test process stands in for OpenSM
    config_.poll_retries = 0;
    config_.min_reroute_interval_s = 0;
    ASSERT_TRUE(ParseJobTrace("0 - a h[0-1]\n10 - b h0,h3\n", "t", &trace_).ok());
  }
  void TearDown() override {
    timespec zero{0, 0};
    while (sigtimedwait(&hup_, nullptr, &zero) == SIGHUP) {
    }
    sigprocmask(SIG_UNBLOCK, &hup_, nullptr);
  }
  int Hups() {
    int n = 0;
    timespec zero{0, 0};
    while (sigtimedwait(&hup_, nullptr, &zero) == SIGHUP) ++n;
    return n;
  }
  Daemon MakeDaemon(std::unique_ptr<RoutingEngine> engine) {
    LeafMap leaves;
    for (int i = 0; i < 4; ++i) leaves.Add("h" + std::to_string(i), i < 2 ? "leaf0" : "leaf1");
    Daemon d(config_, {}, std::move(leaves),
             std::make_unique<ReplaySource>(trace_, [this] { return now_; }));
    d.set_planner(
        std::make_unique<RoutePlanner>(TwoLeafFabric(), std::move(engine), PlannerOptions{}));
    d.Start();
    return d;
  }

  TempDir dir_;
  Config config_;
  std::vector<TraceJob> trace_;
  double now_ = 10;
  sigset_t hup_;
};

TEST_F(FileModeTest, GoodTablesAreWrittenThenSignalled) {
  Daemon d = MakeDaemon(MinHop());
  EXPECT_TRUE(d.RunCycle(now_));
  EXPECT_EQ(Hups(), 1);
  // The file on disk is what the engine computed, read back by libsar's own reader.
  const Fabric f = TwoLeafFabric();
  LftSet on_disk, want;
  ASSERT_TRUE(ReadLftDump(config_.lft_file, f, &on_disk).ok());
  RoutingOutput out;
  RoutingInput in;
  in.fabric = &f;
  ASSERT_TRUE(MinHop()->Route(in, &out).ok());
  EXPECT_TRUE(on_disk == out.lfts);
}

TEST_F(FileModeTest, FailingEngineKeepsTheLastGoodTables) {
  std::ofstream(config_.lft_file) << "last good\n";
  Daemon d = MakeDaemon(std::make_unique<LoopEngine>());
  EXPECT_FALSE(d.RunCycle(now_));
  EXPECT_EQ(Hups(), 0);
  EXPECT_EQ(d.metrics().trigger_errors, 1u);
  std::ifstream in(config_.lft_file);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "last good");
}

}  // namespace
}  // namespace sar::filterd
