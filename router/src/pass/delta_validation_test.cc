// The delta validation (ValidateRouting with a ValidationBaseline) against the full check, its
// reference: the same verdict and message on every change, and only the changed destinations
// traced where the baseline applies.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>

#include "engines/engine_test_util.h"
#include "sar/model/failures.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"
#include "sar/pass/routing_pass.h"
#include "test_fabrics.h"

namespace sar {
namespace {

ValidationOptions Options(bool switch_lids) {
  ValidationOptions o;
  o.switch_lids = switch_lids;
  o.threads = 2;
  return o;
}

Status Full(const Fabric& f, const LftSet& lfts, const ValidationOptions& o) {
  ValidationReport r;
  return ValidateRouting(f, lfts, nullptr, 1, o, &r);
}

Status Delta(const Fabric& f, const LftSet& previous, const LftSet& lfts,
             const ValidationOptions& o, ValidationBaseline* b, ValidationReport* r) {
  AnalysisResult analysis;
  return ValidateRouting(f, previous, lfts, nullptr, 1, o, AnalysisOptions(), &analysis, b, r);
}

LftSet RouteWith(const std::string& engine, const Fabric& f) {
  RoutingOptions ro;
  ro.engine = engine;
  ro.threads = 1;
  RoutingInputs in;
  EXPECT_TRUE(LoadRoutingInputs(f, ro, &in).ok());
  RoutingOutput out;
  const Status s = MakeRoutingEngine(engine)->Route(in.EngineInput(), &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return std::move(out.lfts);
}

int ChangedColumns(const LftSet& a, const LftSet& b) {
  int n = 0;
  for (Lid l = 0; l <= a.max_lid(); ++l) {
    bool differs = false;
    for (int s = 0; s < a.num_switches(); ++s) differs |= a.port(s, l) != b.port(s, l);
    n += differs;
  }
  return n;
}

enum Outcome { kValid, kCycle, kUnreachable };

// One change judged both ways: equal verdicts and messages, the delta check tracing exactly the
// changed columns; the baseline moves on with valid tables (as a pass's would).
Outcome ExpectDeltaEqualsFull(const Fabric& f, LftSet* current, const LftSet& next,
                              const ValidationOptions& o, ValidationBaseline* b) {
  const Status full = Full(f, next, o);
  ValidationReport r;
  const Status delta = Delta(f, *current, next, o, b, &r);
  EXPECT_EQ(delta.ok(), full.ok()) << full.message() << " / " << delta.message();
  EXPECT_EQ(delta.message(), full.message());
  EXPECT_EQ(r.full_because, "");
  if (!r.delta_cycle_rechecked) {
    EXPECT_EQ(r.delta_lids, ChangedColumns(*current, next));
  }
  if (full.ok()) *current = next;
  if (full.ok()) return kValid;
  return full.message().find("cyclic") != std::string::npos ? kCycle : kUnreachable;
}

// Up*/Down* tables (deadlock-free) on degraded PGFTs and rings, changed at random, each change
// judged against the last valid tables: columns of random min-hop tables (on these PGFTs often
// cyclic with the rest), entries corrupted (holes, loops, misdeliveries), or both. A chain of valid
// changes lets the baseline's graphs grow beyond the tables' (they keep the old routes' edges):
// a cycle only through such edges must not fail valid tables.
TEST(DeltaValidation, AgreesWithTheFullCheckOnRandomChanges) {
  int valid = 0, cycles = 0, unreachable = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    SCOPED_TRACE(seed);
    PgftSpec spec;
    ASSERT_TRUE(
        ParsePgftSpec(seed % 2 ? "pgft:3;3,3,4;1,3,2;1,1,1" : "pgft:2;4,6;1,3;1,1", &spec).ok());
    Fabric intact, f;
    ASSERT_TRUE(GeneratePgft(spec, {}, &intact).ok());
    ASSERT_TRUE(AssignLids({}, &intact).ok());
    ASSERT_TRUE(enginetest::Degrade(intact, 1 + static_cast<int>(seed % 3), 0, seed, &f));
    // On a ring min-hop columns make cycles with Up*/Down*'s (on a fat-tree both go up, then
    // down).
    if (seed > 6) f = testfab::Ring(5 + static_cast<int>(seed % 2), 2);
    LftSet current = RouteWith("updn", f);
    // Up*/Down* routes to switch LIDs may be cyclic on a degraded 3-level tree: then between
    // HCAs only.
    ValidationOptions o = Options(seed % 3 != 0);
    if (!Full(f, current, o).ok()) o = Options(false);
    ValidationBaseline b;
    ValidationReport r;
    const Status first = Delta(f, LftSet(), current, o, &b, &r);
    ASSERT_TRUE(first.ok()) << first.message();
    EXPECT_EQ(r.full_because, "no baseline");
    ASSERT_TRUE(b.valid);
    std::mt19937_64 rng(seed * 131);
    for (int step = 0; step < 12; ++step) {
      SCOPED_TRACE(step);
      LftSet next = current;
      const int kind = static_cast<int>(rng() % 3);
      if (kind != 1) {
        const LftSet other = testfab::MinHopLfts(f, &rng);
        const int columns = 1 + static_cast<int>(rng() % 6);
        for (int k = 0; k < columns; ++k) {
          const Lid l = 1 + static_cast<Lid>(rng() % f.max_lid());
          for (int s = 0; s < f.num_switches(); ++s) next.set_port(s, l, other.port(s, l));
        }
      }
      if (kind != 0) testfab::Corrupt(f, 1 + static_cast<int>(rng() % 3), &rng, &next);
      switch (ExpectDeltaEqualsFull(f, &current, next, o, &b)) {
        case kValid:
          ++valid;
          break;
        case kCycle:
          ++cycles;
          break;
        case kUnreachable:
          ++unreachable;
          break;
      }
    }
  }
  EXPECT_GT(valid, 5);
  EXPECT_GT(cycles, 2);
  EXPECT_GT(unreachable, 5);
}

// On a ring every min-hop routing is cyclic: a change of a few columns from Up*/Down* to
// min-hop creates a cycle, which the delta check must catch (and the full check confirms).
TEST(DeltaValidation, CatchesACycleTheChangeCreates) {
  const Fabric f = testfab::Ring(6, 2);
  const ValidationOptions o = Options(true);
  LftSet current = RouteWith("updn", f);
  ValidationBaseline b;
  ValidationReport r;
  ASSERT_TRUE(Delta(f, LftSet(), current, o, &b, &r).ok());
  const LftSet minhop = testfab::MinHopLfts(f);
  ASSERT_FALSE(Full(f, minhop, o).ok());
  int caught = 0;
  for (Lid l = 1; l <= f.max_lid(); ++l) {
    LftSet next = current;
    for (Lid k = 1; k <= l; ++k) {
      for (int s = 0; s < f.num_switches(); ++s) next.set_port(s, k, minhop.port(s, k));
    }
    const Status full = Full(f, next, o);
    ValidationBaseline copy = b;
    const Status delta = Delta(f, current, next, o, &copy, &r);
    EXPECT_EQ(delta.message(), full.message()) << l;
    if (!full.ok()) {
      ++caught;
      EXPECT_TRUE(r.delta_cycle_rechecked);
    }
  }
  EXPECT_GT(caught, 0);
}

// A cable fails under unchanged tables: no column differs, but the routes over the cable now
// end in a hole, and the delta check must find them (it traces every LID a switch forwards
// through a recabled port). Tables routed again for the degraded fabric are valid, and only
// the destinations whose routes may differ are traced.
TEST(DeltaValidation, ACableFailingUnderUnchangedTablesBreaksReachability) {
  PgftSpec spec;
  ASSERT_TRUE(ParsePgftSpec("pgft:2;4,6;1,3;1,1", &spec).ok());
  Fabric f;
  ASSERT_TRUE(GeneratePgft(spec, {}, &f).ok());
  ASSERT_TRUE(AssignLids({}, &f).ok());
  const ValidationOptions o = Options(false);
  const LftSet tables = RouteWith("dmodc", f);
  ValidationBaseline b;
  ValidationReport r;
  ASSERT_TRUE(Delta(f, LftSet(), tables, o, &b, &r).ok());
  Fabric g;
  ASSERT_TRUE(enginetest::Degrade(f, 1, 0, 7, &g));
  const Status full = Full(g, tables, o);
  ASSERT_FALSE(full.ok());
  ValidationBaseline copy = b;
  EXPECT_EQ(Delta(g, tables, tables, o, &copy, &r).message(), full.message());
  EXPECT_EQ(r.full_because, "");
  EXPECT_GT(r.delta_lids, 0);
  EXPECT_TRUE(copy.valid);  // invalid tables leave the baseline alone

  const LftSet rerouted = RouteWith("dmodc", g);
  ASSERT_TRUE(Full(g, rerouted, o).ok());
  ASSERT_TRUE(Delta(g, tables, rerouted, o, &b, &r).ok());
  EXPECT_EQ(r.full_because, "");
  EXPECT_GT(r.delta_lids, 0);
  EXPECT_LT(r.delta_lids, static_cast<int64_t>(f.Endpoints().size()));
  // The baseline now describes the degraded fabric: the same tables again trace nothing.
  ASSERT_TRUE(Delta(g, rerouted, rerouted, o, &b, &r).ok());
  EXPECT_EQ(r.delta_lids, 0);
}

// Where the baseline does not describe the previous tables, the check is the full one.
TEST(DeltaValidation, FullCheckWhereTheBaselineDoesNotApply) {
  PgftSpec spec;
  ASSERT_TRUE(ParsePgftSpec("pgft:2;4,6;1,3;1,1", &spec).ok());
  Fabric f;
  ASSERT_TRUE(GeneratePgft(spec, {}, &f).ok());
  ASSERT_TRUE(AssignLids({}, &f).ok());
  const ValidationOptions o = Options(true);
  const LftSet a = RouteWith("updn", f);
  std::mt19937_64 rng(5);
  LftSet other = a;
  testfab::Corrupt(f, 3, &rng, &other);
  ValidationBaseline b;
  ValidationReport r;
  ASSERT_TRUE(Delta(f, LftSet(), a, o, &b, &r).ok());
  EXPECT_EQ(r.delta_lids, -1);
  EXPECT_TRUE(Delta(f, LftSet(), a, o, &b, &r).ok());
  EXPECT_EQ(r.full_because, "no previous tables");
  EXPECT_TRUE(Delta(f, other, a, o, &b, &r).ok());  // the switches hold other tables
  EXPECT_EQ(r.full_because, "the previous tables are not the last valid ones");
  ValidationOptions one_lane = o;
  one_lane.num_vls = 1;
  EXPECT_TRUE(Delta(f, a, a, one_lane, &b, &r).ok());
  EXPECT_EQ(r.full_because, "other validation options");
  Fabric lids = f;
  LidOptions lo;
  lo.lmc = 1;
  ASSERT_TRUE(AssignLids(lo, &lids).ok());
  ValidationBaseline c = b;
  EXPECT_FALSE(Delta(lids, a, a, one_lane, &c, &r).ok());  // tables of the LMC 0 fabric
  EXPECT_EQ(r.delta_lids, -1);
}

// The pass with a memory and delta on: a second pass over the same fabric with the first's
// tables as the switches' checks nothing new, one after a cable failed checks only what the
// cable and the engine changed, with the full check's verdict and the same tables as a pass
// without memory.
TEST(DeltaValidation, ThePassValidatesOnlyWhatChanged) {
  PgftSpec spec;
  ASSERT_TRUE(ParsePgftSpec("pgft:3;3,3,4;1,3,2;1,1,1", &spec).ok());
  Fabric f;
  ASSERT_TRUE(GeneratePgft(spec, {}, &f).ok());
  ASSERT_TRUE(AssignLids({}, &f).ok());
  RoutingMemory memory;
  RoutingRequest request;
  request.fabric = &f;
  request.options.engine = "dmodc";
  request.options.threads = 1;
  // dmodc's one layer can be cyclic through switch-LID routes on a 3-level tree; the layer
  // guard's layers would then differ from pass to pass (a full check each time).
  request.options.switch_lids = false;
  request.memory = &memory;
  RoutingResult first;
  ASSERT_TRUE(RunRoutingPass(request, &first).ok());
  EXPECT_EQ(first.report.delta_lids, -1);
  request.previous = first.output.lfts;
  RoutingResult again;
  ASSERT_TRUE(RunRoutingPass(request, &again).ok());
  EXPECT_EQ(again.report.delta_lids, 0);

  Fabric g;
  ASSERT_TRUE(enginetest::Degrade(f, 1, 0, 3, &g));
  request.fabric = &g;
  RoutingResult degraded;
  ASSERT_TRUE(RunRoutingPass(request, &degraded).ok());
  EXPECT_GT(degraded.report.delta_lids, 0) << degraded.report.full_because;
  EXPECT_LE(degraded.report.delta_lids, static_cast<int64_t>(g.max_lid()));
  RoutingRequest plain = request;
  plain.memory = nullptr;
  RoutingResult reference;
  ASSERT_TRUE(RunRoutingPass(plain, &reference).ok());
  EXPECT_EQ(reference.report.delta_lids, -1);
  EXPECT_TRUE(reference.output.lfts == degraded.output.lfts);
  request.options.delta = false;
  RoutingResult no_delta;
  ASSERT_TRUE(RunRoutingPass(request, &no_delta).ok());
  EXPECT_EQ(no_delta.report.full_because, "no previous tables");
}

}  // namespace
}  // namespace sar
