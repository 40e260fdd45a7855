#include "actions/route_planner.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "daemon.h"
#include "engines/engine_test_util.h"
#include "invalid_tables_test_util.h"
#include "leaf_map.h"
#include "sar/analysis/flows.h"
#include "sar/analysis/metrics.h"
#include "sar/engines/engine.h"
#include "sar/fors/fors_job.h"
#include "sar/io/lft_dump.h"
#include "sar/model/generate.h"
#include "sources/replay_source.h"
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

// Hands out fixed tables and layers, whatever the input: one invalid case of the routing pass.
class FixedEngine : public RoutingEngine {
 public:
  explicit FixedEngine(invalidtables::Case c) : c_(std::move(c)) {}
  std::string_view name() const override { return "test-fixed"; }

 protected:
  Status DoRoute(const RoutingInput&, RoutingOutput* out) const override {
    out->lfts = c_.lfts;
    out->layers = c_.layers;
    out->num_layers = c_.num_layers;
    return Status::OK();
  }

 private:
  invalidtables::Case c_;
};

// Plans for `jobs` (converted once, as the daemon does).
Status PlanFor(const RoutePlanner& p, const std::vector<MultiSwitchJob>& jobs, LftSet* tables,
               RouteQuality* q) {
  RoutingInputs in;
  SAR_RETURN_IF_ERROR(p.Inputs(jobs, &in));
  return p.Plan(in, tables, q);
}

TEST(RoutePlanner, ValidTablesAndTheirQuality) {
  RoutePlanner planner(TwoLeafFabric(), MinHop(), {});
  LftSet tables;
  RouteQuality q;
  // One job h0 + h2: its two routes cross each of the four leaf-spine channels once.
  ASSERT_TRUE(PlanFor(planner, {{"1", {"h0", "h2"}, 2}}, &tables, &q).ok());
  EXPECT_EQ(q.max_effective_efi, 1u);
  EXPECT_DOUBLE_EQ(q.dark_fiber, 0.0);
  // No multi-switch job: every inter-switch channel is dark.
  ASSERT_TRUE(PlanFor(planner, {}, &tables, &q).ok());
  EXPECT_DOUBLE_EQ(q.dark_fiber, 1.0);
  // Evaluate() judges the current tables the same way.
  ASSERT_TRUE(planner.SetCurrent(tables).ok());
  RouteQuality e;
  RoutingInputs in;
  ASSERT_TRUE(planner.Inputs({{"1", {"h0", "h2"}, 2}}, &in).ok());
  ASSERT_TRUE(planner.Evaluate(in, &e).ok());
  EXPECT_EQ(e.max_effective_efi, 1u);
}

TEST(RoutePlanner, InvalidOrFailedTablesAreNotHandedOut) {
  LftSet tables;
  RouteQuality q;
  RoutePlanner looping(TwoLeafFabric(), std::make_unique<LoopEngine>(), {});
  Status s = PlanFor(looping, {{"1", {"h0", "h2"}, 2}}, &tables, &q);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("invalid routing: 0 unreachable pairs, "), std::string::npos)
      << s.message();
  RoutePlanner unknown(TwoLeafFabric(), nullptr, {.engine = "no-such-engine"});
  EXPECT_FALSE(PlanFor(unknown, {}, &tables, &q).ok());
}

// The routing pass's one verdict: each invalid table set is refused with ValidateRouting's own
// message, behind the engine's name.
TEST(RoutePlanner, RefusesEachInvalidSetWithThePassMessage) {
  const Fabric f = invalidtables::Triangle();
  for (const invalidtables::Case& c : invalidtables::InvalidCases(f)) {
    // The case's lanes as the consumer's layer limit.
    PlannerOptions o;
    o.num_vls = 8;
    o.max_layers = c.num_vls;
    RoutePlanner planner(f, std::make_unique<FixedEngine>(c), o);
    LftSet tables;
    RouteQuality q;
    const Status s = PlanFor(planner, {}, &tables, &q);
    EXPECT_EQ(s.message(), "engine 'test-fixed': " + c.message) << c.name;
  }
}

// A degraded fat-tree on which SAR needs two virtual layers: with the plugin's lanes the plan
// passes, in file mode (one layer) it is refused, saying why and what to use instead.
TEST(RoutePlanner, FileModeRefusesTablesThatNeedVirtualLayers) {
  // Search degraded 3-level trees for one whose shortest routes cannot be made deadlock-free
  // in one layer (DFSSSP with one lane fails, with eight it succeeds).
  PgftSpec spec;
  ASSERT_TRUE(ParsePgftSpec("pgft:3;4,4,2;1,2,2;1,1,1", &spec).ok());
  const Fabric intact = enginetest::Pgft(spec, 0);
  Fabric degraded;
  int layers = 0;
  for (uint64_t seed = 1; seed < 400 && layers < 2; ++seed) {
    if (!enginetest::Degrade(intact, 2 + static_cast<int>(seed % 5), static_cast<int>(seed % 2),
                             seed, &degraded)) {
      continue;
    }
    RoutingInput in;
    in.fabric = &degraded;
    in.num_vls = 1;
    in.threads = 1;
    RoutingOutput out;
    if (MakeRoutingEngine("dfsssp")->Route(in, &out).ok()) continue;
    in.num_vls = 8;
    if (MakeRoutingEngine("dfsssp")->Route(in, &out).ok()) layers = 2;
  }
  ASSERT_GE(layers, 2) << "no degraded fabric that needs layers";
  const std::vector<MultiSwitchJob> job = {
      {"1",
       {std::string(degraded.hostname(degraded.hcas()[0])),
        std::string(degraded.hostname(degraded.hcas().back()))},
       2}};
  LftSet tables;
  RouteQuality q;
  RoutePlanner plugin(degraded, nullptr, {.engine = "sar", .max_layers = 0});
  RoutingInputs in;
  ASSERT_TRUE(plugin.Inputs(job, &in).ok());
  ASSERT_EQ(in.engine, "sar");
  ASSERT_TRUE(plugin.Plan(in, &tables, &q).ok());
  RoutePlanner file(degraded, nullptr, {.engine = "sar", .max_layers = 1});
  const Status s = PlanFor(file, job, &tables, &q);
  EXPECT_EQ(s.code(), Status::Code::kFailed);
  // With one lane SAR cannot make its routes deadlock-free and says so.
  EXPECT_NE(s.message().find("engine 'sar': deadlock-free routing needs more than 1 virtual "
                             "layers"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("route with the OpenSM plugin"), std::string::npos) << s.message();
  // A single-layer engine whose one layer is cyclic is refused the same way.
  const Fabric tri = invalidtables::Triangle();
  RoutePlanner cyclic(tri, std::make_unique<FixedEngine>(invalidtables::InvalidCases(tri)[2]), {});
  const Status c = PlanFor(cyclic, {}, &tables, &q);
  EXPECT_NE(c.message().find("cyclic channel dependency"), std::string::npos) << c.message();
  EXPECT_NE(c.message().find("route with the OpenSM plugin"), std::string::npos) << c.message();
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
    config_.opensm_pid_files = {dir_.Join("opensm.pid")};
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
  Daemon MakeDaemon(std::unique_ptr<RoutingEngine> engine, Fabric fabric = TwoLeafFabric()) {
    LeafMap leaves;
    for (int i = 0; i < 4; ++i) leaves.Add("h" + std::to_string(i), i < 2 ? "leaf0" : "leaf1");
    Daemon d(config_, {}, std::move(leaves),
             std::make_unique<ReplaySource>(trace_, [this] { return now_; }));
    d.set_planner(
        std::make_unique<RoutePlanner>(std::move(fabric), std::move(engine), PlannerOptions{}));
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

// File mode on each invalid table set: refused with the pass's message, the last good tables
// stay on disk, no SIGHUP.
TEST_F(FileModeTest, EachInvalidSetKeepsTheLastGoodTables) {
  const Fabric f = invalidtables::Triangle();
  for (const invalidtables::Case& c : invalidtables::InvalidCases(f)) {
    std::ofstream(config_.lft_file) << "last good\n";
    Daemon d = MakeDaemon(std::make_unique<FixedEngine>(c), f);
    EXPECT_FALSE(d.RunCycle(now_)) << c.name;
    EXPECT_EQ(Hups(), 0) << c.name;
    EXPECT_EQ(d.metrics().trigger_errors, 1u) << c.name;
    std::ifstream in(config_.lft_file);
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "last good") << c.name;
  }
}

// Issue 35: file mode publishes each alltoall job's FORS schedule beside the mapping once the
// tables went out (after the SIGHUP), as the plugin does; a job without FORS gets the "none"
// file and a WARN line, with the routing pass's reason.
TEST_F(FileModeTest, AlltoallJobsGetTheirScheduleOnceTheTablesWentOut) {
  trace_.clear();
  ASSERT_TRUE(ParseJobTrace("0 - x h[0-3] batch 60 sar-pattern=alltoall\n", "t", &trace_).ok());
  const std::string path = ForsSchedulePath(config_.mapping_file, "x");
  Daemon d = MakeDaemon(MinHop());
  EXPECT_TRUE(d.RunCycle(now_));
  EXPECT_EQ(Hups(), 1);
  ForsScheduleFile file;
  ASSERT_TRUE(ReadForsSchedule(path, &file).ok());
  EXPECT_FALSE(file.none);
  EXPECT_EQ(file.job_id, "x");
  EXPECT_EQ(file.rows.size(), 4u * 3u);  // every ordered pair of the job's 4 hosts once
}

TEST_F(FileModeTest, AJobWithoutForsGetsANoneFileAndAWarning) {
  trace_.clear();
  ASSERT_TRUE(ParseJobTrace("0 - x h[0-3] batch 60 sar-pattern=alltoall\n", "t", &trace_).ok());
  // A cable between the two leaves: no longer a 2-level fat-tree.
  Fabric f = TwoLeafFabric();
  ASSERT_TRUE(f.Connect({f.FindByName("leaf0"), 3}, {f.FindByName("leaf1"), 3}).ok());
  std::ostringstream log;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  Daemon d = MakeDaemon(MinHop(), f);
  const bool rerouted = d.RunCycle(now_);
  spdlog::set_default_logger(previous);
  EXPECT_TRUE(rerouted);
  EXPECT_EQ(Hups(), 1);
  ForsScheduleFile file;
  ASSERT_TRUE(ReadForsSchedule(ForsSchedulePath(config_.mapping_file, "x"), &file).ok());
  EXPECT_TRUE(file.none);
  EXPECT_TRUE(file.rows.empty());
  EXPECT_NE(file.none_reason.find("not a 2-level fat-tree"), std::string::npos) << file.none_reason;
  const std::string text = log.str();
  EXPECT_NE(text.find("[warning] alltoall job x gets no FORS schedule: " + file.none_reason),
            std::string::npos)
      << text;
}

// The OpenSM plugin's SAR keys in sar-filterd's configuration (issue 32) reach the tables file
// mode writes: the YAML text is parsed, the planner built as main.cc builds it
// (PlannerOptionsFor), the daemon's cycle writes the LFT file, and that file is read back.
// sar_no_regret (on by default): with it no job is slower than under dfsssp (flows counted on
// dfsssp's tables, routed by the same daemon); `sar_no_regret: false` leaves a job slower on some
// random mix, so the files differ. sar_refine_work 1 stops the refinement at once: a different
// file with a max effective EFI not below the default work's (both without no-regret). Without
// the wiring each key's file equals the default's.
TEST(FileModeKeys, ThePluginsSarKeysChangeTheTablesFileModeWrites) {
  PgftSpec spec;
  ASSERT_TRUE(ParsePgftSpec("pgft:2;8,6;1,6;1,1", &spec).ok());
  const Fabric f = enginetest::Pgft(spec, 0);
  std::vector<std::string> hosts;
  for (NodeId h : f.hcas()) hosts.emplace_back(f.hostname(h));
  TempDir dir;
  sigset_t hup;
  sigemptyset(&hup);
  sigaddset(&hup, SIGHUP);
  sigprocmask(SIG_BLOCK, &hup, nullptr);
  std::ofstream(dir.Join("opensm.pid")) << getpid() << "\n";
  int runs = 0;  // a fresh state directory per run: each run reroutes
  // The tables file mode writes for `trace` with `extra` config lines.
  auto written = [&](const std::string& trace, const std::string& extra, LftSet* out) {
    const std::string yaml =
        "fabric: unused\ntrigger: file\nguid2lid: unused\nlft_file: " + dir.Join("lfts.dump") +
        "\nmapping_file: " + dir.Join("jobs.map") +
        "\nstate_dir: " + dir.Join("state-" + std::to_string(++runs)) +
        "\nopensm_pid_file: " + dir.Join("opensm.pid") +
        "\nverify_sm_process: false\npoll_retries: 0\n"
        "min_reroute_interval_s: 0\nengine: sar\n" +
        extra;
    Config config;
    ASSERT_TRUE(ParseConfig(yaml, "t.yaml", &config).ok()) << yaml;
    std::vector<TraceJob> jobs;
    ASSERT_TRUE(ParseJobTrace(trace, "t", &jobs).ok()) << trace;
    Daemon d(config, {}, LeafMapFromFabric(f, {}),
             std::make_unique<ReplaySource>(jobs, [] { return 10.0; }));
    d.set_planner(std::make_unique<RoutePlanner>(f, nullptr, PlannerOptionsFor(config)));
    d.Start();
    ASSERT_TRUE(d.RunCycle(10));
    ASSERT_TRUE(ReadLftDump(config.lft_file, f, out).ok());
  };
  int regret_mixes = 0, refine_mixes = 0;
  for (uint64_t seed = 1; seed <= 10 && (regret_mixes == 0 || refine_mixes == 0); ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    // Random jobs of 3-12 hosts over the 48 hosts.
    std::mt19937_64 rng(seed);
    std::vector<std::string> order = hosts;
    std::shuffle(order.begin(), order.end(), rng);
    std::string trace;
    std::vector<ResolvedJob> resolved;
    for (size_t at = 0, id = 0; at + 3 <= order.size(); ++id) {
      const size_t n = std::min(order.size() - at, 3 + static_cast<size_t>(rng() % 10));
      std::string list;
      ResolvedJob job;
      job.id = "j" + std::to_string(id);
      std::set<NodeId> leaves;
      for (size_t i = at; i < at + n; ++i) {
        list += (list.empty() ? "" : ",") + order[i];
        const NodeId h = f.FindByName(order[i]);
        job.endpoints.push_back({h, 1});
        leaves.insert(f.peer({h, 1}).node);
      }
      job.num_leaf_switches = static_cast<int>(leaves.size());
      if (leaves.size() >= 2) resolved.push_back(job);
      trace += "0 - " + job.id + " " + list + "\n";
      at += n;
    }
    LftSet plain, regret, little_work, dfsssp;  // plain: the defaults, no-regret on
    written(trace, "", &plain);
    written(trace, "sar_no_regret: false\n", &regret);
    written(trace, "sar_refine_work: 1\nsar_no_regret: false\n", &little_work);
    written(trace, "engine: dfsssp\n", &dfsssp);
    const std::vector<FlowJob> flow_jobs = AllToAllFlowJobs(resolved);
    FlowOptions fo;
    fo.alone = false;
    auto slower = [&](const LftSet& t) {
      FlowReport want, got;
      EXPECT_TRUE(ComputeJobFlows(f, dfsssp, flow_jobs, fo, &want).ok());
      EXPECT_TRUE(ComputeJobFlows(f, t, flow_jobs, fo, &got).ok());
      int n = 0;
      for (size_t j = 0; j < flow_jobs.size(); ++j) {
        n += got.jobs[j].shared.time > want.jobs[j].shared.time * (1 + 1e-9);
      }
      return n;
    };
    EXPECT_EQ(slower(plain), 0);
    if (slower(regret) > 0) {
      ++regret_mixes;
      EXPECT_FALSE(plain == regret);
    }
    if (!(regret == little_work)) {
      ++refine_mixes;
      Metrics a, b;
      ASSERT_TRUE(ComputeMetrics(f, regret, resolved, {}, &a).ok());
      ASSERT_TRUE(ComputeMetrics(f, little_work, resolved, {}, &b).ok());
      EXPECT_GE(b.effective_efi.max, a.effective_efi.max);
    }
  }
  EXPECT_GT(regret_mixes, 0);
  EXPECT_GT(refine_mixes, 0);
  timespec zero{0, 0};
  while (sigtimedwait(&hup, nullptr, &zero) == SIGHUP) {
  }
  sigprocmask(SIG_UNBLOCK, &hup, nullptr);
}

}  // namespace
}  // namespace sar::filterd
