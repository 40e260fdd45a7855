#include "sar/pass/routing_pass.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <initializer_list>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>

#include "engines/engine_test_util.h"
#include "invalid_tables_test_util.h"
#include "sar/analysis/analysis.h"
#include "sar/io/job_file.h"
#include "sar/model/failures.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"
#include "test_fabrics.h"

namespace sar {
namespace {

std::string TempFile(const std::string& name, const std::string& text) {
  static const std::string dir = [] {
    std::string t = "/tmp/routing_pass_test.XXXXXX";
    EXPECT_NE(::mkdtemp(t.data()), nullptr);
    return t;
  }();
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

Status Validate(const Fabric& f, const invalidtables::Case& c, int max_layers = 0) {
  ValidationOptions o;
  o.num_vls = c.num_vls;
  o.max_layers = max_layers;
  o.threads = 1;
  ValidationReport r;
  return ValidateRouting(f, c.lfts, c.layers.size() > 0 ? &c.layers : nullptr, c.num_layers, o, &r);
}

TEST(ValidateRouting, ValidTablesPass) {
  const Fabric f = invalidtables::Triangle();
  ValidationOptions o;
  ValidationReport r;
  const Status s = ValidateRouting(f, invalidtables::Valid(f), nullptr, 1, o, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(r.trace.pairs, 6u);
  EXPECT_EQ(r.trace.delivered, 6u);
  EXPECT_TRUE(r.deadlock_checked);
}

TEST(ValidateRouting, EachInvalidKindFailsWithItsMessage) {
  const Fabric f = invalidtables::Triangle();
  for (const invalidtables::Case& c : invalidtables::InvalidCases(f)) {
    const Status s = Validate(f, c);
    EXPECT_EQ(s.code(), Status::Code::kFailed) << c.name;
    EXPECT_EQ(s.message(), c.message) << c.name;
  }
}

TEST(ValidateRouting, MaxLayersBelowTheVirtualLanes) {
  const Fabric f = invalidtables::Triangle();
  invalidtables::Case c = invalidtables::TooManyLayers(f, 8);
  EXPECT_TRUE(Validate(f, c).ok());
  const Status s = Validate(f, c, /*max_layers=*/1);
  EXPECT_EQ(s.message(), "invalid routing: the routes need 3 virtual layers, 1 usable");
}

TEST(ValidateRouting, TablesOfAnotherFabricAreRefused) {
  const Fabric f = invalidtables::Triangle();
  ValidationReport r;
  const Status s = ValidateRouting(f, LftSet(2, f.max_lid()), nullptr, 1, {}, &r);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
}

TEST(ValidateRouting, UnknownLayersSkipTheDependencyCheckOnly) {
  const Fabric f = invalidtables::Triangle();
  const invalidtables::Case cyclic = invalidtables::InvalidCases(f)[2];
  ValidationOptions o;
  o.layers_known = false;
  ValidationReport r;
  EXPECT_TRUE(ValidateRouting(f, cyclic.lfts, nullptr, 1, o, &r).ok());
  EXPECT_FALSE(r.deadlock_checked);
  const invalidtables::Case hole = invalidtables::InvalidCases(f)[0];
  EXPECT_FALSE(ValidateRouting(f, hole.lfts, nullptr, 1, o, &r).ok());
}

TEST(ValidateRouting, AllowDisconnectedToleratesHolesNotLoops) {
  const Fabric f = invalidtables::Triangle();
  const auto cases = invalidtables::InvalidCases(f);
  ValidationOptions o;
  o.allow_disconnected = true;
  ValidationReport r;
  EXPECT_TRUE(ValidateRouting(f, cases[0].lfts, nullptr, 1, o, &r).ok());
  EXPECT_EQ(r.trace.unreachable, 1u);
  EXPECT_FALSE(ValidateRouting(f, cases[1].lfts, nullptr, 1, o, &r).ok());
}

// --- LoadRoutingInputs ----------------------------------------------------------------------

TEST(LoadRoutingInputs, EmptyOrMissingMappingRoutesPlainDfsssp) {
  const Fabric f = testfab::FatTree2(3, 2, 2);
  RoutingOptions o;
  RoutingInputs in;
  ASSERT_TRUE(LoadRoutingInputs(f, o, &in).ok());
  EXPECT_EQ(in.engine, "dfsssp");
  ASSERT_EQ(in.notes.size(), 1u);
  EXPECT_EQ(in.notes[0], "job mapping (none given): routing with plain dfsssp");

  o.mapping_path = TempFile("empty.map", "# nothing\n");
  ASSERT_TRUE(LoadRoutingInputs(f, o, &in).ok());
  EXPECT_EQ(in.engine, "dfsssp");
  EXPECT_EQ(in.notes[0],
            "job mapping " + o.mapping_path + " lists no jobs: routing with plain dfsssp");

  o.mapping_path = "/nonexistent/routing_pass/jobs";
  EXPECT_EQ(LoadRoutingInputs(f, o, &in).code(), Status::Code::kIOError);
  o.mapping_optional = true;
  ASSERT_TRUE(LoadRoutingInputs(f, o, &in).ok());
  EXPECT_EQ(in.engine, "dfsssp");
  EXPECT_NE(in.notes[0].find("does not exist: routing with plain dfsssp"), std::string::npos);

  // Another engine is never replaced.
  o.engine = "minhop";
  ASSERT_TRUE(LoadRoutingInputs(f, o, &in).ok());
  EXPECT_EQ(in.engine, "minhop");
  EXPECT_TRUE(in.notes.empty());
}

TEST(LoadRoutingInputs, JobsPatternsUnknownHostsAndRoots) {
  const Fabric f = testfab::FatTree2(3, 2, 2);
  RoutingOptions o;
  o.mapping_path =
      TempFile("jobs.map", "h0000 7 alltoall\nh0002 7 alltoall\nh0001 8\nh0005 8\nghost 8\n");
  o.root_names = {"spine01"};
  RoutingInputs in;
  ASSERT_TRUE(LoadRoutingInputs(f, o, &in).ok());
  EXPECT_EQ(in.engine, "sar");
  ASSERT_EQ(in.jobs.size(), 2u);
  EXPECT_EQ(in.jobs[0].pattern, JobPattern::kAllToAll);
  EXPECT_EQ(in.jobs[1].endpoints.size(), 2u);
  ASSERT_EQ(in.roots.size(), 1u);
  EXPECT_EQ(f.name(in.roots[0]), "spine01");
  ASSERT_EQ(in.notes.size(), 1u);
  EXPECT_EQ(in.notes[0], "host 'ghost' of job mapping " + o.mapping_path + " is not in the fabric");
  const RoutingInput ein = in.EngineInput();
  EXPECT_EQ(ein.jobs, &in.jobs);
  EXPECT_EQ(ein.classes, nullptr);

  o.root_names = {"h0000"};
  EXPECT_EQ(LoadRoutingInputs(f, o, &in).code(), Status::Code::kInvalidArgument);
  o.root_names.clear();
  o.engine = "ftree";
  EXPECT_EQ(LoadRoutingInputs(f, o, &in).code(), Status::Code::kInvalidArgument);
}

TEST(LoadRoutingInputs, BrokenFilesNameFileAndLine) {
  const Fabric f = testfab::FatTree2(3, 2, 2);
  RoutingOptions o;
  o.mapping_path = TempFile("bad.map", "h0000 1\nh0001 1 2 3\n");
  RoutingInputs in;
  Status s = LoadRoutingInputs(f, o, &in);
  EXPECT_NE(s.message().find(o.mapping_path + ":2"), std::string::npos) << s.ToString();
  o.mapping_path.clear();
  o.io_guids_path = TempFile("io.guids", "0x1\nnot-a-guid\n");
  s = LoadRoutingInputs(f, o, &in);
  EXPECT_NE(s.message().find(o.io_guids_path + ":2"), std::string::npos) << s.ToString();
}

TEST(LoadRoutingInputs, InMemoryMappingEqualsTheFile) {
  const Fabric f = testfab::FatTree2(3, 2, 2);
  const std::string text = "h0000 1\nh0003 1\nh0004 1\n";
  RoutingOptions o;
  o.mapping_path = TempFile("mem.map", text);
  RoutingInputs from_file, from_memory;
  ASSERT_TRUE(LoadRoutingInputs(f, o, &from_file).ok());
  JobMapping m;
  ASSERT_TRUE(ParseJobMapping(text, "mem", &m).ok());
  ASSERT_TRUE(LoadRoutingInputs(f, o, m, &from_memory).ok());
  RoutingOutput a, b;
  ValidationReport ra, rb;
  ASSERT_TRUE(RunRoutingPass(from_file, &a, &ra).ok());
  ASSERT_TRUE(RunRoutingPass(from_memory, &b, &rb).ok());
  EXPECT_TRUE(a.lfts == b.lfts);
  EXPECT_EQ(ra.trace.pairs, 30u);
}

// --- RunRoutingPass ---------------------------------------------------------------------------

// A fabric where SAR needs more than one virtual layer: the pass passes it with the fabric's
// lanes and refuses it when the consumer carries one layer (sar-filterd's file mode).
TEST(RunRoutingPass, LayeredRoutesAreRefusedWhereOnlyOneLayerIsCarried) {
  const Fabric f = testfab::Ring(6, 2);
  RoutingOptions o;
  o.engine = "dfsssp";
  o.threads = 1;
  RoutingInputs in;
  ASSERT_TRUE(LoadRoutingInputs(f, o, &in).ok());
  RoutingOutput out;
  ValidationReport r;
  ASSERT_TRUE(RunRoutingPass(in, &out, &r).ok());
  EXPECT_GE(r.layers, 2);
  // One lane carried: the engine gets one and cannot make its routes deadlock-free.
  in.options.max_layers = 1;
  EXPECT_EQ(in.EngineInput().num_vls, 1);
  const Status s = RunRoutingPass(in, &out, &r);
  EXPECT_EQ(s.code(), Status::Code::kFailed);
  EXPECT_NE(s.message().find("needs more than 1 virtual layers"), std::string::npos) << s.message();
  // A fabric whose routes need one layer: the engine does not spread them over unused lanes.
  const Fabric tree = testfab::FatTree2(4, 2, 2);
  RoutingInputs tin;
  ASSERT_TRUE(LoadRoutingInputs(tree, o, &tin).ok());
  tin.options.max_layers = 1;
  ASSERT_TRUE(RunRoutingPass(tin, &out, &r).ok());
  EXPECT_EQ(out.num_layers, 1);
  // ... and its tables are those it makes with every lane (only the layers differ).
  RoutingOutput all_lanes;
  tin.options.max_layers = 0;
  ASSERT_TRUE(RunRoutingPass(tin, &all_lanes, &r).ok());
  EXPECT_TRUE(out.lfts == all_lanes.lfts);
}

// --- Migration mode (LMC 1: base LIDs by the engine, highLIDs by Up*/Down*) -------------------

RoutingOutput MigrationPass(const Fabric& f, const std::string& engine, const std::string& jobs,
                            int num_vls = 4, bool migration = true) {
  RoutingOptions o;
  o.engine = engine;
  o.num_vls = num_vls;
  o.threads = 1;
  o.migration = migration;
  JobMapping m;
  EXPECT_TRUE(ParseJobMapping(jobs, "mem", &m).ok());
  RoutingInputs in;
  EXPECT_TRUE(LoadRoutingInputs(f, o, m, &in).ok());
  RoutingOutput out;
  ValidationReport r;
  const Status s = RunRoutingPass(in, &out, &r);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

// Entries of every switch for the base (high = false) or high LIDs of the endpoints.
std::vector<uint8_t> Entries(const Fabric& f, const LftSet& lfts, bool high) {
  std::vector<uint8_t> v;
  for (int sw = 0; sw < f.num_switches(); ++sw) {
    for (const PortRef& e : f.Endpoints()) v.push_back(lfts.port(sw, f.base_lid(e) + high));
  }
  return v;
}

const char kJobsA[] = "h0000 a\nh0004 a\nh0008 a\nh0012 a\nh0001 b\nh0006 b\n";
const char kJobsB[] = "h0001 c\nh0005 c\nh0010 c\nh0003 d\nh0007 d\nh0011 d\nh0015 d\n";

TEST(MigrationMode, HighEntriesDependOnTheTopologyOnly) {
  const Fabric f = testfab::FatTree2(4, 3, 4, /*lmc=*/1);
  const RoutingOutput a = MigrationPass(f, "sar", kJobsA), b = MigrationPass(f, "sar", kJobsB),
                      none = MigrationPass(f, "sar", "");
  // The premise: the two mappings give different base tables ...
  ASSERT_NE(Entries(f, a.lfts, false), Entries(f, b.lfts, false));
  // ... yet the highLID entries are the same, and those of plain Up*/Down* on the highLIDs.
  EXPECT_EQ(Entries(f, a.lfts, true), Entries(f, b.lfts, true));
  EXPECT_EQ(Entries(f, a.lfts, true), Entries(f, none.lfts, true));
  // Without migration mode SAR routes the highLIDs itself, and they follow the jobs.
  const RoutingOutput pa = MigrationPass(f, "sar", kJobsA, 4, false),
                      pb = MigrationPass(f, "sar", kJobsB, 4, false);
  EXPECT_NE(Entries(f, pa.lfts, true), Entries(f, pb.lfts, true));
  // Switch LIDs are the engine's: the base view routes them like the plain pass does.
  for (int sw = 0; sw < f.num_switches(); ++sw) {
    for (NodeId t : f.switches()) {
      EXPECT_NE(a.lfts.port(sw, f.switch_lid(t)), LftSet::kNoRoute);
    }
  }
}

TEST(MigrationMode, LayersFollowTheDestination) {
  const Fabric f = testfab::FatTree2(4, 3, 4, 1);
  const RoutingOutput out = MigrationPass(f, "sar", kJobsA, 4);
  EXPECT_EQ(out.num_layers, 4);
  int base_routes = 0;
  for (const PortRef& s : f.Endpoints()) {
    for (const PortRef& d : f.Endpoints()) {
      if (s.node == d.node) continue;
      const Lid sb = f.base_lid(s), db = f.base_lid(d);
      EXPECT_EQ(out.layers.get(sb + 1, db + 1), 3);
      EXPECT_EQ(out.layers.get(sb, db + 1), 3);
      EXPECT_LT(out.layers.get(sb, db), 3);
      EXPECT_EQ(out.layers.get(sb + 1, db), out.layers.get(sb, db));
      ++base_routes;
    }
  }
  EXPECT_EQ(base_routes, 16 * 15);
}

TEST(MigrationMode, RefusesLmc0AndOneLane) {
  RoutingOptions o;
  o.migration = true;
  o.threads = 1;
  RoutingInputs in;
  RoutingOutput out;
  ValidationReport r;
  const Fabric lmc0 = testfab::FatTree2(2, 2, 2, 0);
  ASSERT_TRUE(LoadRoutingInputs(lmc0, o, &in).ok());
  Status s = RunRoutingPass(in, &out, &r);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("needs LMC 1"), std::string::npos) << s.message();
  const Fabric lmc1 = testfab::FatTree2(2, 2, 2, 1);
  o.num_vls = 1;
  ASSERT_TRUE(LoadRoutingInputs(lmc1, o, &in).ok());
  s = RunRoutingPass(in, &out, &r);
  EXPECT_NE(s.message().find("at least 2 virtual lanes"), std::string::npos) << s.message();
}

// A ring needs layers for its base routes; the highLID routes must stay alone in the last one.
TEST(MigrationMode, ValidationCatchesHighRoutesOnABaseLayer) {
  Fabric f = testfab::Ring(5, 2);
  testfab::AssignTestLids(&f, 1);
  const RoutingOutput out = MigrationPass(f, "dfsssp", "", 3);
  ValidationOptions vo;
  vo.num_vls = 3;
  vo.threads = 1;
  vo.migration = true;
  ValidationReport r;
  ASSERT_TRUE(ValidateRouting(f, out.lfts, &out.layers, out.num_layers, vo, &r).ok());
  EXPECT_GT(r.trace.pairs, 0u);
  // Every LID is traced, highLIDs included.
  EXPECT_EQ(r.trace.delivered, r.trace.pairs);
  EXPECT_EQ(r.trace.pairs, static_cast<uint64_t>(10 * 9 * 2));

  // The highLID routes moved onto layer 0, where dfsssp's base routes already are.
  VirtualLayers moved = out.layers;
  for (const PortRef& s : f.Endpoints()) {
    for (const PortRef& d : f.Endpoints()) {
      if (s.node == d.node) continue;
      for (Lid sl : {f.base_lid(s), f.base_lid(s) + 1}) moved.set(sl, f.base_lid(d) + 1, 0);
    }
  }
  Status s = ValidateRouting(f, out.lfts, &moved, out.num_layers, vo, &r);
  EXPECT_EQ(s.code(), Status::Code::kFailed);
  EXPECT_NE(s.message().find("not the highLID layer 2"), std::string::npos) << s.message();
  // Even without the migration rule the mix is refused: Up*/Down* and dfsssp's layer 0 together
  // close a cycle in the channel dependencies.
  vo.migration = false;
  s = ValidateRouting(f, out.lfts, &moved, out.num_layers, vo, &r);
  EXPECT_EQ(s.code(), Status::Code::kFailed);
  EXPECT_NE(s.message().find("cyclic channel dependency"), std::string::npos) << s.message();

  // A base route in the highLID layer breaks the rule too.
  VirtualLayers base_high = out.layers;
  const Lid s0 = f.base_lid(f.Endpoints()[0]), d0 = f.base_lid(f.Endpoints()[9]);
  base_high.set(s0, d0, 2);
  vo.migration = true;
  s = ValidateRouting(f, out.lfts, &base_high, out.num_layers, vo, &r);
  EXPECT_NE(s.message().find("which only highLID routes may use"), std::string::npos)
      << s.message();
  // A highLID entry removed: the trace finds the unreachable LID.
  LftSet holed = out.lfts;
  for (int sw = 0; sw < f.num_switches(); ++sw) holed.set_port(sw, d0 + 1, LftSet::kNoRoute);
  s = ValidateRouting(f, holed, &out.layers, out.num_layers, vo, &r);
  EXPECT_NE(s.message().find("unreachable pairs"), std::string::npos) << s.message();
}

// The brute-force verdict: every (endpoint, other node's endpoint LID) pair walked hop by hop, its
// channel dependencies collected (a looping route also gets the one closing its loop), the
// graph checked by Kahn's algorithm.
struct BruteForce {
  uint64_t pairs = 0, delivered = 0, unreachable = 0, loops = 0;
  std::set<std::pair<PortId, PortId>> deps;
  bool acyclic = true;
};

BruteForce BruteForceValidate(const Fabric& f, const LftSet& lfts) {
  BruteForce b;
  auto inter_switch = [&](PortId c) {
    const PortRef a = f.port_ref(c), p = f.peer(a);
    return p.valid() && f.is_switch(a.node) && f.is_switch(p.node);
  };
  const std::vector<PortRef> endpoints = f.Endpoints();
  for (const PortRef& src : endpoints) {
    for (const PortRef& dst : endpoints) {
      if (src.node == dst.node || f.base_lid(dst) == 0) continue;
      for (Lid d = f.base_lid(dst); d < f.base_lid(dst) + (Lid{1} << f.lmc(dst)); ++d) {
        testfab::NaiveRoute route = testfab::NaiveWalk(f, lfts, src, d);
        ++b.pairs;
        if (route.fate == RouteFate::kDelivered) {
          ++b.delivered;
        } else if (route.fate == RouteFate::kLoop) {
          ++b.loops;
          const NodeId again = f.peer(f.port_ref(route.channels.back())).node;
          route.channels.push_back(f.port_id(again, lfts.port(f.switch_index(again), d)));
        } else {
          ++b.unreachable;
        }
        for (size_t i = 0; i + 1 < route.channels.size(); ++i) {
          const PortId a = route.channels[i], c = route.channels[i + 1];
          if (inter_switch(a) && inter_switch(c)) b.deps.insert({a, c});
        }
      }
    }
  }
  std::map<PortId, int> indegree;
  std::map<PortId, std::vector<PortId>> succ;
  for (const auto& [a, c] : b.deps) {
    indegree[a];
    ++indegree[c];
    succ[a].push_back(c);
  }
  std::vector<PortId> ready;
  for (const auto& [c, in] : indegree) {
    if (in == 0) ready.push_back(c);
  }
  size_t removed = 0;
  while (!ready.empty()) {
    const PortId c = ready.back();
    ready.pop_back();
    ++removed;
    for (PortId t : succ[c]) {
      if (--indegree[t] == 0) ready.push_back(t);
    }
  }
  b.acyclic = removed == indegree.size();
  return b;
}

enum class Verdict { kInvalid, kCyclic, kValid };

// ValidateRouting with each thread count against one walk per pair: counts, dependency graph,
// verdict and the message's opening. Returns the walk's verdict.
Verdict ExpectValidationEqualsWalk(const Fabric& f, const LftSet& lfts,
                                   std::initializer_list<int> thread_counts) {
  const BruteForce want = BruteForceValidate(f, lfts);
  const bool delivered = want.loops == 0 && want.unreachable == 0;
  for (int threads : thread_counts) {
    SCOPED_TRACE(threads);
    ValidationOptions o;
    o.threads = threads;
    o.switch_lids = false;  // the walk is between CAs (switch LIDs: deadlock_test.cc, lft_truth)
    ValidationReport r;
    AnalysisResult analysis;
    const Status s = ValidateRouting(f, lfts, nullptr, 1, o, AnalysisOptions(), &analysis, &r);
    EXPECT_EQ(r.trace.pairs, want.pairs);
    EXPECT_EQ(r.trace.delivered, want.delivered);
    EXPECT_EQ(r.trace.unreachable, want.unreachable);
    EXPECT_EQ(r.trace.loops, want.loops);
    EXPECT_EQ(analysis.deadlock.dependencies, want.deps.size());
    EXPECT_EQ(analysis.deadlock.deadlock_free, want.acyclic);
    EXPECT_EQ(s.ok(), delivered && want.acyclic) << s.message();
    if (!delivered) {
      EXPECT_EQ(s.message().rfind("invalid routing: " + std::to_string(want.unreachable) +
                                      " unreachable pairs, " + std::to_string(want.loops) +
                                      " loops; first: ",
                                  0),
                0u)
          << s.message();
    } else if (!want.acyclic) {
      EXPECT_NE(s.message().find("cyclic channel dependency"), std::string::npos) << s.message();
    }
  }
  return !delivered ? Verdict::kInvalid : !want.acyclic ? Verdict::kCyclic : Verdict::kValid;
}

// The validating sweep traces each destination from the switches with endpoints only, sharing
// each switch's classification among all sources behind it. On degraded PGFTs (upper switches
// carry no endpoints) with dmodc or random min-hop tables and injected holes, loops and
// misdeliveries, its verdict, counts and dependency graph must equal one walk per pair.
TEST(ValidateRouting, AgreesWithAWalkPerPairOnDegradedPgfts) {
  int invalid = 0, cyclic = 0, valid = 0;
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE(seed);
    PgftSpec spec;
    ASSERT_TRUE(
        ParsePgftSpec(seed % 2 ? "pgft:3;3,3,4;1,3,2;1,1,1" : "pgft:2;4,6;1,3;1,1", &spec).ok());
    Fabric intact, f;
    ASSERT_TRUE(GeneratePgft(spec, {}, &intact).ok());
    LidOptions lid_options;
    lid_options.lmc = seed % 3 == 0 ? 1 : 0;
    ASSERT_TRUE(AssignLids(lid_options, &intact).ok());
    ASSERT_TRUE(enginetest::Degrade(intact, 1 + static_cast<int>(seed % 4), 0, seed, &f));
    std::mt19937_64 rng(seed * 977);
    LftSet lfts;
    if (seed % 4 < 2) {
      RoutingOptions ro;
      ro.engine = "dmodc";
      ro.threads = 1;
      RoutingInputs in;
      ASSERT_TRUE(LoadRoutingInputs(f, ro, &in).ok());
      RoutingOutput out;
      ASSERT_TRUE(MakeRoutingEngine("dmodc")->Route(in.EngineInput(), &out).ok());
      lfts = std::move(out.lfts);
    } else {
      lfts = testfab::MinHopLfts(f, &rng);
    }
    if (seed % 6 != 1) testfab::Corrupt(f, 1 + static_cast<int>(seed % 7) * 3, &rng, &lfts);
    const Verdict v = ExpectValidationEqualsWalk(f, lfts, {1, 3});
    (v == Verdict::kInvalid ? invalid : v == Verdict::kCyclic ? cyclic : valid)++;
  }
  // The cases must exercise every verdict.
  EXPECT_GT(invalid, 3);
  EXPECT_GT(valid, 1);
  EXPECT_GE(cyclic, 0);
}

// The sweep reads the tables a block of 64 LIDs at a time where a work item traces enough LIDs
// of one block, row by row elsewhere (LftColumns). Larger PGFTs with 2^lmc LIDs per HCA (and per
// switch) put block boundaries inside leaves' LID ranges, LMC ranges and among the switch LIDs;
// with holes, loops and misdeliveries injected, verdict, counts and dependency graph must still
// equal one walk per pair, with one thread and with several.
TEST(ValidateRouting, AgreesWithAWalkPerPairAcrossLidBlocks) {
  int invalid = 0, valid = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    PgftSpec spec;
    ASSERT_TRUE(ParsePgftSpec("pgft:3;4,4,4;1,4,2;1,1,1", &spec).ok());
    Fabric intact, f;
    ASSERT_TRUE(GeneratePgft(spec, {}, &intact).ok());
    LidOptions lid_options;
    lid_options.lmc = static_cast<int>(seed % 3);
    lid_options.lmc_switches = seed % 2 == 0;
    ASSERT_TRUE(AssignLids(lid_options, &intact).ok());
    ASSERT_TRUE(enginetest::Degrade(intact, 1 + static_cast<int>(seed % 3), 0, seed, &f));
    ASSERT_GT(f.max_lid(), LftColumns::kLids);  // two blocks at least
    std::mt19937_64 rng(seed * 4111);
    LftSet lfts = testfab::MinHopLfts(f, &rng);
    if (seed % 4 != 1) testfab::Corrupt(f, static_cast<int>(seed % 4) * 5, &rng, &lfts);
    (ExpectValidationEqualsWalk(f, lfts, {1, 2}) == Verdict::kInvalid ? invalid : valid)++;
  }
  EXPECT_GT(invalid, 1);
  EXPECT_GT(valid, 0);
}

}  // namespace
}  // namespace sar

namespace sar {
namespace {

// A SHARP Aggregation Node on every switch (GenerateOptions::aggregation_nodes), as NVIDIA's
// fabrics have: with switch LIDs and ANs counted as sources and destinations (the default check),
// sar and dfsssp route intact and degraded 3-level PGFTs within 8 virtual layers, and their
// layers pass the full check (so every switch-LID route has a layer the check accepts). dmodc
// (on the same trees without ANs: it takes a switch with a CA for a leaf) gets layers from the
// pass where its one layer is cyclic with switch LIDs (noted).
TEST(RunRoutingPass, AggregationNodeOnEverySwitchRoutesWithinEightLayers) {
  PgftSpec spec;
  ASSERT_TRUE(ParsePgftSpec("pgft:3;4,4,4;1,4,2;1,1,1", &spec).ok());
  int dmodc_layered = 0;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    SCOPED_TRACE(seed);
    GenerateOptions go;
    go.aggregation_nodes = seed % 2 == 0;
    Fabric intact, f;
    ASSERT_TRUE(GeneratePgft(spec, go, &intact).ok());
    ASSERT_TRUE(AssignLids(LidOptions(), &intact).ok());
    if (seed < 2) {
      f = intact;
    } else if (!enginetest::Degrade(intact, 2 + static_cast<int>(seed), 0, seed, &f)) {
      continue;
    }
    for (const char* engine : {"sar", "dfsssp", "dmodc"}) {
      if (go.aggregation_nodes == (std::string(engine) == "dmodc")) continue;
      SCOPED_TRACE(engine);
      RoutingOptions o;
      o.engine = engine;
      o.threads = 1;
      JobMapping m;
      ASSERT_TRUE(ParseJobMapping("h00000 a\nh00017 a\nh00040 a\n", "mem", &m).ok());
      RoutingInputs in;
      ASSERT_TRUE(LoadRoutingInputs(f, o, m, &in).ok());
      RoutingOutput out;
      ValidationReport r;
      const Status s = RunRoutingPass(in, &out, &r);
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_LE(r.layers, 8);
      EXPECT_TRUE(r.deadlock_checked);
      EXPECT_TRUE(r.deadlock.switch_lids);
      EXPECT_TRUE(r.deadlock.deadlock_free);
      // The same tables and layers, judged by a second check call.
      DeadlockReport again;
      ASSERT_TRUE(
          CheckDeadlock(f, out.lfts, out.layers.size() ? &out.layers : nullptr, &again).ok());
      EXPECT_TRUE(again.deadlock_free);
      if (std::string(engine) == "dmodc") {
        DeadlockReport one_layer;
        ASSERT_TRUE(CheckDeadlock(f, out.lfts, nullptr, &one_layer).ok());
        bool noted = false;
        for (const std::string& n : out.notes) noted |= n.find("layers make them") != n.npos;
        EXPECT_EQ(noted, !one_layer.deadlock_free);
        EXPECT_EQ(out.layers.size() > 0, !one_layer.deadlock_free);
        dmodc_layered += !one_layer.deadlock_free;
      }
    }
  }
  std::printf("dmodc tables cyclic with switch LIDs (layered by the pass): %d of 4\n",
              dmodc_layered);
  EXPECT_GT(dmodc_layered, 0);
}

// Even a plain 2-level fat-tree needs a second layer once switch LIDs count: dfsssp's
// spine-to-spine routes go down and up. With one lane (the file engine) the one-lane rule
// applies: the routes between CAs must be deadlock-free, and they are; the pass succeeds.
TEST(RunRoutingPass, OneLaneRuleOnAFatTree) {
  const Fabric f = testfab::FatTree2(4, 2, 2);
  RoutingOptions o;
  o.engine = "dfsssp";
  o.threads = 1;
  RoutingInputs in;
  ASSERT_TRUE(LoadRoutingInputs(f, o, &in).ok());
  RoutingOutput out;
  ValidationReport r;
  ASSERT_TRUE(RunRoutingPass(in, &out, &r).ok());
  EXPECT_TRUE(r.deadlock.switch_lids);
  DeadlockReport one_layer;
  ASSERT_TRUE(CheckDeadlock(f, out.lfts, nullptr, &one_layer).ok());
  EXPECT_FALSE(one_layer.deadlock_free);  // so the layers above were needed
  in.options.max_layers = 1;
  ASSERT_TRUE(RunRoutingPass(in, &out, &r).ok());
  EXPECT_EQ(out.num_layers, 1);
  EXPECT_FALSE(r.deadlock.switch_lids);  // the one-lane rule: checked between CAs
  DeadlockReport hcas;
  ASSERT_TRUE(CheckDeadlock(f, out.lfts, nullptr, &hcas, /*switch_lids=*/false).ok());
  EXPECT_TRUE(hcas.deadlock_free);
  // A cycle between CAs is still refused with one lane (a ring).
  const Fabric ring = testfab::Ring(6, 2);
  RoutingInputs rin;
  ASSERT_TRUE(LoadRoutingInputs(ring, o, &rin).ok());
  rin.options.max_layers = 1;
  EXPECT_FALSE(RunRoutingPass(rin, &out, &r).ok());
}

}  // namespace
}  // namespace sar
