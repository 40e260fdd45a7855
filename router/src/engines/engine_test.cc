// RoutingEngine::Route: the checks, timing and error contract every engine shares. Each bad input
// is run through every engine MakeRoutingEngine knows and must fail the same way; a few fake
// engines (test-only subclasses) show what Route does around DoRoute.
#include "sar/engines/engine.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "engines/engine_test_util.h"
#include "sar/model/jobs.h"
#include "test_fabrics.h"

namespace sar {
namespace {

// What a caller had in *out before the call; Route must not touch it on error.
RoutingOutput Sentinel() {
  RoutingOutput out;
  out.lfts = LftSet(3, 7);
  out.num_layers = 5;
  out.notes = {"left over"};
  return out;
}

bool IsSentinel(const RoutingOutput& out) {
  return out.lfts == LftSet(3, 7) && out.num_layers == 5 &&
         out.notes == std::vector<std::string>{"left over"};
}

// osrm2/osrm3 route one LID per source group, so the LMC-0 fabrics here are not theirs to route
// (they fail asking for the LMC): osrm_test.cc covers them on m-port trees with that LMC. The
// input checks before any engine runs apply to them as to every engine.
bool NeedsSourceGroupLids(const std::string& name) { return name.rfind("osrm", 0) == 0; }

// Runs `in` through every engine; expects every one to fail with `code` and one message, which
// it returns (and which must contain `needle`).
std::string FailsAlikeForEveryEngine(const RoutingInput& in, Status::Code code,
                                     const std::string& needle) {
  std::string first;
  for (const std::string& name : RoutingEngineNames()) {
    SCOPED_TRACE(name);
    RoutingOutput out = Sentinel();
    const Status s = MakeRoutingEngine(name)->Route(in, &out);
    EXPECT_EQ(s.code(), code) << s.ToString();
    EXPECT_NE(s.message().find(needle), std::string::npos) << s.message();
    EXPECT_TRUE(IsSentinel(out)) << "a failed Route changed its output";
    if (first.empty()) first = s.message();
    EXPECT_EQ(s.message(), first) << "engines disagree on the same bad input";
  }
  return first;
}

TEST(RoutingEngine, EveryEngineRoutesTheSameValidInput) {
  const Fabric f = testfab::FatTree2(3, 2, 2);
  ASSERT_EQ(RoutingEngineNames().size(), 9u);
  for (const std::string& name : RoutingEngineNames()) {
    SCOPED_TRACE(name);
    auto engine = MakeRoutingEngine(name);
    ASSERT_NE(engine, nullptr);
    if (NeedsSourceGroupLids(name)) continue;
    ASSERT_NE(engine, nullptr);
    EXPECT_EQ(engine->name(), name);
    RoutingInput in;
    in.fabric = &f;
    RoutingOutput out;
    ASSERT_TRUE(engine->Route(in, &out).ok());
    EXPECT_TRUE(out.lfts.CheckFits(f).ok());
    EXPECT_EQ(out.lfts.max_lid(), f.max_lid());
    EXPECT_GE(out.paths_ms, 0);
    EXPECT_GE(out.layers_ms, 0);
  }
  EXPECT_EQ(MakeRoutingEngine("no-such-engine"), nullptr);
}

// uses_jobs() lets a replay route an engine once for all job sets: an engine that says false
// must give the same tables whatever the jobs (and sar / sar-dmodc, which say true, differ).
TEST(RoutingEngine, UsesJobsSaysWhetherTheJobsChangeTheTables) {
  const Fabric f = testfab::FatTree2(4, 4, 4);
  JobMapping mapping;
  mapping.jobs.push_back({"1", {"h0000", "h0004", "h0008", "h0012"}, JobPattern::kDefault});
  mapping.jobs.push_back({"2", {"h0001", "h0005"}, JobPattern::kDefault});
  const std::vector<ResolvedJob> jobs = ResolveJobs(f, mapping);
  ASSERT_EQ(jobs.size(), 2u);
  for (const std::string& name : RoutingEngineNames()) {
    SCOPED_TRACE(name);
    if (NeedsSourceGroupLids(name)) continue;
    RoutingInput with;
    with.jobs = &jobs;
    const RoutingOutput a = enginetest::RouteOk(name, f);
    const RoutingOutput b = enginetest::RouteOk(name, f, with);
    if (MakeRoutingEngine(name)->uses_jobs()) {
      EXPECT_NE(a.lfts, b.lfts) << "says it uses jobs, but they change nothing here";
    } else {
      EXPECT_EQ(a.lfts, b.lfts) << "says it ignores jobs, but they changed its tables";
    }
  }
}

TEST(RoutingEngine, BadNumVlsAndThreadsFailIdenticallyForEveryEngine) {
  const Fabric f = testfab::FatTree2(2, 2, 2);
  RoutingInput in;
  in.fabric = &f;
  for (int vls : {0, -1, 16}) {
    in.num_vls = vls;
    EXPECT_EQ(FailsAlikeForEveryEngine(in, Status::Code::kInvalidArgument, "num_vls"),
              "num_vls must be 1..15, got " + std::to_string(vls));
  }
  in.num_vls = 15;
  in.threads = -1;
  FailsAlikeForEveryEngine(in, Status::Code::kInvalidArgument, "threads must be >= 0");
}

TEST(RoutingEngine, MissingFabricSwitchesOrLidsFailForEveryEngine) {
  RoutingInput in;
  FailsAlikeForEveryEngine(in, Status::Code::kInvalidArgument, "no fabric");

  Fabric lonely;
  testfab::AddHost(&lonely, 1, "h0");
  in.fabric = &lonely;
  FailsAlikeForEveryEngine(in, Status::Code::kInvalidArgument, "no switches");

  // One HCA port without a LID: it could never be routed to.
  Fabric f = testfab::FatTree2(2, 2, 2);
  const PortRef h = f.Endpoints()[1];
  f.ClearLids();
  Lid next = 1;
  for (const PortRef& e : f.Endpoints()) {
    if (!(e == h)) {
      ASSERT_TRUE(f.SetLid(e, next++, 0).ok());
    }
  }
  in.fabric = &f;
  FailsAlikeForEveryEngine(in, Status::Code::kInvalidArgument,
                           "HCA '" + f.name(h.node) + "' port 1 has no LID");

  const Fabric ok = testfab::FatTree2(2, 2, 2);
  in.fabric = &ok;
  for (const std::string& name : RoutingEngineNames()) {
    EXPECT_EQ(MakeRoutingEngine(name)->Route(in, nullptr).code(), Status::Code::kInvalidArgument);
  }
}

TEST(RoutingEngine, RootsMustBeSwitchesForEveryEngine) {
  const Fabric f = testfab::FatTree2(2, 2, 2);
  RoutingInput in;
  in.fabric = &f;
  in.roots = {f.switches()[0], f.hcas()[0]};
  FailsAlikeForEveryEngine(in, Status::Code::kInvalidArgument,
                           "root '" + f.name(f.hcas()[0]) + "' is not a switch");
  in.roots = {f.num_nodes()};
  FailsAlikeForEveryEngine(in, Status::Code::kInvalidArgument, "is not a node of the fabric");
  in.roots = {-1};
  FailsAlikeForEveryEngine(in, Status::Code::kInvalidArgument, "is not a node of the fabric");
  // Valid roots are accepted by every engine (only updn uses them).
  in.roots = {f.switches().back()};
  for (const std::string& name : RoutingEngineNames()) {
    if (NeedsSourceGroupLids(name)) continue;
    RoutingOutput out;
    EXPECT_TRUE(MakeRoutingEngine(name)->Route(in, &out).ok()) << name;
  }
}

TEST(RoutingEngine, JobsMustReferToCabledHcaPortsOfThisFabric) {
  const Fabric f = testfab::FatTree2(2, 2, 2);
  const std::vector<PortRef> eps = f.Endpoints();
  // A valid job from ResolveJobs is accepted.
  JobMapping mapping;
  mapping.jobs.push_back({"7", {"h0000", "h0003"}, JobPattern::kDefault});
  std::vector<ResolvedJob> jobs = ResolveJobs(f, mapping);
  ASSERT_EQ(jobs.size(), 1u);
  ASSERT_EQ(jobs[0].num_leaf_switches, 2);
  RoutingInput in;
  in.fabric = &f;
  in.jobs = &jobs;
  for (const std::string& name : RoutingEngineNames()) {
    if (NeedsSourceGroupLids(name)) continue;
    RoutingOutput out;
    EXPECT_TRUE(MakeRoutingEngine(name)->Route(in, &out).ok()) << name;
  }

  const ResolvedJob good = jobs[0];
  auto with_endpoint = [&](PortRef p) {
    ResolvedJob j = good;
    j.endpoints.push_back(p);
    return std::vector<ResolvedJob>{j};
  };
  jobs = with_endpoint({f.switches()[0], 1});  // a switch port
  FailsAlikeForEveryEngine(
      in, Status::Code::kInvalidArgument,
      "job '7': endpoint '" + f.name(f.switches()[0]) + "' port 1 is not a cabled HCA port");
  jobs = with_endpoint({f.num_nodes() + 3, 1});  // not a node at all
  FailsAlikeForEveryEngine(in, Status::Code::kInvalidArgument, "is not a cabled HCA port");
  jobs = with_endpoint({eps[0].node, 2});  // a port the single-port HCA does not have
  FailsAlikeForEveryEngine(in, Status::Code::kInvalidArgument, "is not a cabled HCA port");
  jobs = with_endpoint({});  // an invalid PortRef
  FailsAlikeForEveryEngine(in, Status::Code::kInvalidArgument, "is not a cabled HCA port");

  // An uncabled port of an HCA whose other port is cabled.
  Fabric loose;
  const NodeId sw = testfab::AddSwitch(&loose, 4, "sw");
  testfab::Cable(&loose, testfab::AddHost(&loose, 1, "a"), sw);
  const NodeId spare = testfab::AddHost(&loose, 2, "spare");
  testfab::Cable(&loose, spare, sw);  // port 1
  testfab::AssignTestLids(&loose, 0);
  std::vector<ResolvedJob> loose_jobs(1);
  loose_jobs[0].id = "8";
  loose_jobs[0].endpoints = {{spare, 1}, {spare, 2}};
  loose_jobs[0].num_leaf_switches = 1;
  RoutingInput loose_in;
  loose_in.fabric = &loose;
  loose_in.jobs = &loose_jobs;
  FailsAlikeForEveryEngine(loose_in, Status::Code::kInvalidArgument,
                           "job '8': endpoint 'spare' port 2 is not a cabled HCA port");

  // A leaf count that disagrees with the endpoints would make SAR skip or keep the job wrongly.
  jobs = {good};
  jobs[0].num_leaf_switches = 1;
  FailsAlikeForEveryEngine(in, Status::Code::kInvalidArgument,
                           "job '7' says it spans 1 leaf switches, its traffic spans 2");
  // Hosts and rails must be given for every endpoint or for none.
  jobs = {good};
  jobs[0].host_of = {0};
  FailsAlikeForEveryEngine(in, Status::Code::kInvalidArgument, "hosts and");
}

TEST(RoutingEngine, NodeClassesMustBeSizedForTheFabric) {
  const Fabric f = testfab::FatTree2(2, 2, 2);
  NodeClasses classes;
  classes.of_node.assign(f.num_nodes() - 1, NodeClass::kCompute);
  RoutingInput in;
  in.fabric = &f;
  in.classes = &classes;
  FailsAlikeForEveryEngine(in, Status::Code::kInvalidArgument,
                           "node classes are for " + std::to_string(f.num_nodes() - 1));
  classes.of_node.clear();  // empty = every HCA compute: fine
  for (const std::string& name : RoutingEngineNames()) {
    if (NeedsSourceGroupLids(name)) continue;
    RoutingOutput out;
    EXPECT_TRUE(MakeRoutingEngine(name)->Route(in, &out).ok()) << name;
  }
}

// Two islands, two hosts each: sw0-sw1 and sw2-sw3.
Fabric TwoIslands() {
  Fabric f;
  std::vector<NodeId> sw;
  for (int i = 0; i < 4; ++i)
    sw.push_back(testfab::AddSwitch(&f, 8, testfab::Numbered("sw", i, 1)));
  for (int i = 0; i < 4; ++i)
    testfab::Cable(&f, testfab::AddHost(&f, 1, testfab::Numbered("h", i, 1)), sw[i]);
  testfab::Cable(&f, sw[0], sw[1]);
  testfab::Cable(&f, sw[2], sw[3]);
  testfab::AssignTestLids(&f, 0);
  return f;
}

TEST(RoutingEngine, DisconnectedFabricFailsAlikeOrIsNotedOnce) {
  const Fabric f = TwoIslands();
  RoutingInput in;
  in.fabric = &f;
  const std::string msg = FailsAlikeForEveryEngine(in, Status::Code::kFailed, "cannot reach");
  EXPECT_NE(msg.find("no cable path"), std::string::npos) << msg;

  in.allow_disconnected = true;
  for (const std::string& name : RoutingEngineNames()) {
    // The Dmodc family ranks both islands' switches as leaves (each has a host): the cable
    // between them joins equal ranks, which up*-down* never uses, so they add their own note
    // (dmodc_test.cc covers that); dmodk refuses anything but an intact PGFT.
    if (name == "dmodk" || name == "dmodc" || name == "sar-dmodc") continue;
    if (NeedsSourceGroupLids(name)) continue;  // two islands are no fat-tree for them either
    SCOPED_TRACE(name);
    RoutingOutput out;
    ASSERT_TRUE(MakeRoutingEngine(name)->Route(in, &out).ok());
    int noted = 0;
    for (const std::string& n : out.notes) noted += n.find("have no route") != std::string::npos;
    EXPECT_EQ(noted, 1) << "the disconnected pairs must be noted exactly once";
    ASSERT_FALSE(out.notes.empty());
    // 2 hosts x 2 hosts on each side, both ways.
    EXPECT_EQ(out.notes[0].rfind("8 endpoint pairs have no route", 0), 0u) << out.notes[0];
  }
}

// --- What Route does around DoRoute, with fake engines ---

// Counts its calls, takes a while, and claims `layers_ms` of layer work.
class SlowEngine : public RoutingEngine {
 public:
  std::string_view name() const override { return "test-slow"; }
  mutable int calls = 0;
  double claimed_layers_ms = 0;

 protected:
  Status DoRoute(const RoutingInput& in, RoutingOutput* out) const override {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    out->lfts = LftSet(*in.fabric);
    out->layers_ms = claimed_layers_ms;
    out->notes.push_back("slow: done");
    return Status::OK();
  }
};

TEST(RoutingEngine, RouteTimesTheEngineAndSkipsItOnBadInput) {
  const Fabric f = testfab::FatTree2(2, 2, 2);
  SlowEngine engine;
  RoutingInput in;
  in.fabric = &f;
  in.num_vls = 0;
  RoutingOutput out;
  EXPECT_FALSE(engine.Route(in, &out).ok());
  EXPECT_EQ(engine.calls, 0) << "DoRoute ran on input Route rejected";

  in.num_vls = 8;
  engine.claimed_layers_ms = 10;
  ASSERT_TRUE(engine.Route(in, &out).ok());
  EXPECT_EQ(engine.calls, 1);
  EXPECT_EQ(out.notes, std::vector<std::string>{"slow: done"});
  EXPECT_EQ(out.layers_ms, 10);
  // 30 ms of work, 10 of them claimed as layers: the rest is paths.
  EXPECT_GE(out.paths_ms, 19.0);
  EXPECT_LT(out.paths_ms, 30.0 + 1000.0);
}

// Writes output, then fails or returns tables/layers that do not fit.
class BadEngine : public RoutingEngine {
 public:
  enum class Mode { kFailAfterWriting, kWrongSize, kNoLayer };
  explicit BadEngine(Mode mode) : mode_(mode) {}
  std::string_view name() const override { return "test-bad"; }

 protected:
  Status DoRoute(const RoutingInput& in, RoutingOutput* out) const override {
    out->lfts = LftSet(*in.fabric);
    out->notes.push_back("half done");
    switch (mode_) {
      case Mode::kFailAfterWriting:
        return Status::Failed("gave up");
      case Mode::kWrongSize:
        out->lfts = LftSet(in.fabric->num_switches() + 1, in.fabric->max_lid());
        return Status::OK();
      case Mode::kNoLayer:
        out->num_layers = 0;
        return Status::OK();
    }
    return Status::OK();
  }

 private:
  Mode mode_;
};

TEST(RoutingEngine, NothingIsHandedOutWhenTheEngineFailsOrMisbehaves) {
  const Fabric f = testfab::FatTree2(2, 2, 2);
  RoutingInput in;
  in.fabric = &f;
  in.num_vls = 2;
  struct Case {
    BadEngine::Mode mode;
    std::string needle;
  };
  for (const Case& c :
       {Case{BadEngine::Mode::kFailAfterWriting, "gave up"},
        Case{BadEngine::Mode::kWrongSize, "engine 'test-bad' returned tables for"},
        Case{BadEngine::Mode::kNoLayer, "engine 'test-bad' reported 0 virtual layers"}}) {
    RoutingOutput out = Sentinel();
    const Status s = BadEngine(c.mode).Route(in, &out);
    EXPECT_EQ(s.code(), Status::Code::kFailed);
    EXPECT_NE(s.message().find(c.needle), std::string::npos) << s.message();
    EXPECT_TRUE(IsSentinel(out));
  }
}

}  // namespace
}  // namespace sar
