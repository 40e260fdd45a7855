// The block check (analysis/block_check.h) against the per-destination sweep it replaces for
// the validation: on random degraded PGFTs with LMC 0..2, switches without a LID, valley
// cycles and corrupted entries (holes, ports past the switch's, uncabled ports, port 0,
// ping-pong loops), every count of the trace, its examples, and the deadlock report (verdict,
// dependency count, cyclic layer, cycle) and the graphs kept must be equal, for every mix of
// analyses, switch LIDs or not, all LIDs or base LIDs, a subset of destinations with a base
// graph (the delta validation), one thread and two.
#include <gtest/gtest.h>

#include <random>

#include "engines/engine_test_util.h"
#include "sar/analysis/analysis.h"
#include "sar/model/generate.h"
#include "test_fabrics.h"

namespace sar {
namespace {

// Two neighbouring switches forward `lid` to each other: a loop for every route reaching them.
bool AddPingPong(const Fabric& f, Lid lid, std::mt19937_64* rng, LftSet* lfts) {
  for (int tries = 0; tries < 20; ++tries) {
    const int s = static_cast<int>((*rng)() % f.num_switches());
    const NodeId a = f.switches()[s];
    for (int p = 1; p <= f.num_ports(a); ++p) {
      const PortRef b = f.peer({a, p});
      if (!b.valid() || !f.is_switch(b.node)) continue;
      lfts->set_port(s, lid, static_cast<uint8_t>(p));
      lfts->set_port(f.switch_index(b.node), lid, static_cast<uint8_t>(b.port));
      return true;
    }
  }
  return false;
}

// Random bad entries: no entry, port 0, a port past the switch's, any port (uncabled or to an
// HCA that does not own the LID).
void Corrupt(const Fabric& f, int count, std::mt19937_64* rng, LftSet* lfts) {
  for (int i = 0; i < count; ++i) {
    const int s = static_cast<int>((*rng)() % f.num_switches());
    const Lid lid = static_cast<Lid>(1 + (*rng)() % lfts->max_lid());
    const int ports = f.num_ports(f.switches()[s]);
    const uint8_t choices[] = {LftSet::kNoRoute, 0, static_cast<uint8_t>(ports + 1),
                               static_cast<uint8_t>(1 + (*rng)() % ports)};
    lfts->set_port(s, lid, choices[(*rng)() % 4]);
  }
}

struct Counts {
  int cyclic = 0, acyclic = 0, loops = 0, unreachable = 0, compared = 0;
};

void ExpectSameAsSweep(const Fabric& f, const LftSet& lfts, AnalysisOptions o, Counts* counts) {
  AnalysisResult fast, reference;
  DependencyGraphs fast_kept, reference_kept;
  o.block_check = true;
  o.keep_dependencies = o.what & kAnalyseDeadlock ? &fast_kept : nullptr;
  ASSERT_TRUE(AnalyseRouting(f, lfts, o, &fast).ok());
  o.block_check = false;
  o.keep_dependencies = o.what & kAnalyseDeadlock ? &reference_kept : nullptr;
  ASSERT_TRUE(AnalyseRouting(f, lfts, o, &reference).ok());
  const TraceReport &a = fast.trace, &b = reference.trace;
  EXPECT_EQ(a.pairs, b.pairs);
  EXPECT_EQ(a.delivered, b.delivered);
  EXPECT_EQ(a.unreachable, b.unreachable);
  EXPECT_EQ(a.loops, b.loops);
  EXPECT_EQ(a.non_min_hop, b.non_min_hop);
  EXPECT_EQ(a.max_hops, b.max_hops);
  EXPECT_DOUBLE_EQ(a.mean_hops, b.mean_hops);
  EXPECT_EQ(a.examples, b.examples);
  const DeadlockReport &x = fast.deadlock, &y = reference.deadlock;
  EXPECT_EQ(x.deadlock_free, y.deadlock_free);
  EXPECT_EQ(x.dependencies, y.dependencies);
  EXPECT_EQ(x.cyclic_layer, y.cyclic_layer);
  EXPECT_EQ(x.cycle, y.cycle);
  EXPECT_EQ(x.layers, y.layers);
  EXPECT_EQ(x.switch_lids, y.switch_lids);
  EXPECT_EQ(fast_kept.words, reference_kept.words);
  EXPECT_EQ(fast_kept.layers, reference_kept.layers);
  ++counts->compared;
  if (o.what & kAnalyseDeadlock) (y.deadlock_free ? counts->acyclic : counts->cyclic)++;
  if (o.what & kAnalyseTrace) {
    counts->loops += b.loops > 0;
    counts->unreachable += b.unreachable > 0;
  }
}

TEST(BlockCheckTest, EqualsTheSweepOnDegradedCorruptedPgfts) {
  Counts counts;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    SCOPED_TRACE(seed);
    PgftSpec spec;
    ASSERT_TRUE(
        ParsePgftSpec(seed % 2 ? "pgft:3;4,4,4;1,4,2;1,1,1" : "pgft:3;3,4,5;1,3,2;1,1,1", &spec)
            .ok());
    Fabric intact, f;
    ASSERT_TRUE(GeneratePgft(spec, {}, &intact).ok());
    ASSERT_TRUE(enginetest::Degrade(intact, 1 + static_cast<int>(seed % 5), 0, seed, &f));
    // LIDs by hand: endpoints, then the switches, every third left without one; with LMC 2 the
    // LIDs pass 64, so destinations fall into several blocks.
    f.ClearLids();
    const int lmc = static_cast<int>(seed % 3);
    Lid next = Lid{1} << lmc;
    for (const PortRef& e : f.Endpoints()) {
      ASSERT_TRUE(f.SetLid(e, next, lmc).ok());
      next += Lid{1} << lmc;
    }
    for (size_t s = 0; s < f.switches().size(); ++s) {
      if ((s + seed) % 3 == 0) continue;
      ASSERT_TRUE(f.SetLid({f.switches()[s], 0}, next++, 0).ok());
    }
    std::mt19937_64 rng(seed * 7919);
    LftSet lfts = testfab::MinHopLfts(f, &rng);
    // A quarter of the fabrics valid, the others with valleys, loops and bad entries.
    if (seed % 4 != 0) {
      for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(AddPingPong(f, static_cast<Lid>(1 + rng() % lfts.max_lid()), &rng, &lfts));
      }
      Corrupt(f, 6, &rng, &lfts);
    }
    std::vector<uint8_t> some(static_cast<size_t>(lfts.max_lid()) + 1, 0);
    for (Lid l = 0; l <= lfts.max_lid(); ++l) some[l] = rng() % 3 == 0;
    DependencyGraphs base;  // the graphs of all routes, as the delta validation's base
    {
      AnalysisOptions o;
      o.what = kAnalyseDeadlock;
      o.block_check = false;
      o.keep_dependencies = &base;
      AnalysisResult r;
      ASSERT_TRUE(AnalyseRouting(f, lfts, o, &r).ok());
    }
    VirtualLayers no_entries;  // every route in its default layer
    no_entries.default_layer = 1;
    for (const unsigned what :
         {kAnalyseTrace | kAnalyseDeadlock, unsigned{kAnalyseTrace}, unsigned{kAnalyseDeadlock}}) {
      for (const bool switch_lids : {true, false}) {
        for (const bool all_lids : {true, false}) {
          for (int threads : {1, 2}) {
            SCOPED_TRACE(testing::Message() << "what " << what << " switch_lids " << switch_lids
                                            << " all_lids " << all_lids << " threads " << threads);
            AnalysisOptions o;
            o.what = what;
            o.trace.check_min_hop = false;  // as the validation's (the block check has none)
            o.trace.all_lids = all_lids;
            o.deadlock_switch_lids = switch_lids;
            o.threads = threads;
            ExpectSameAsSweep(f, lfts, o, &counts);
            o.layers = &no_entries;
            ExpectSameAsSweep(f, lfts, o, &counts);
            o.layers = nullptr;
            o.only_lids = &some;
            if (switch_lids && (what & kAnalyseDeadlock)) o.dependency_base = &base;
            ExpectSameAsSweep(f, lfts, o, &counts);
          }
        }
      }
    }
  }
  // The cases must include every kind of failure, and clean ones.
  EXPECT_GT(counts.cyclic, 20);
  EXPECT_GT(counts.acyclic, 20);
  EXPECT_GT(counts.loops, 20);
  EXPECT_GT(counts.unreachable, 20);
}

// A route the sweep counts as delivered and the block check would not, or the reverse, is
// caught above; this pins the counts themselves on a valid fabric against a walk per pair.
TEST(BlockCheckTest, CountsEqualAWalkPerPair) {
  PgftSpec spec;
  ASSERT_TRUE(ParsePgftSpec("pgft:3;4,4,4;1,4,2;1,1,1", &spec).ok());
  Fabric f;
  ASSERT_TRUE(GeneratePgft(spec, {}, &f).ok());
  f.ClearLids();
  Lid next = 1;
  for (const PortRef& e : f.Endpoints()) ASSERT_TRUE(f.SetLid(e, next++, 0).ok());
  for (NodeId s : f.switches()) ASSERT_TRUE(f.SetLid({s, 0}, next++, 0).ok());
  std::mt19937_64 rng(3);
  LftSet lfts = testfab::MinHopLfts(f, &rng);
  ASSERT_TRUE(AddPingPong(f, f.base_lid(f.Endpoints()[5]), &rng, &lfts));
  AnalysisOptions o;
  o.what = kAnalyseTrace;
  o.trace.check_min_hop = false;
  AnalysisResult r;
  ASSERT_TRUE(AnalyseRouting(f, lfts, o, &r).ok());
  uint64_t pairs = 0, delivered = 0, loops = 0, hops = 0;
  const RouteTracer tracer(f, lfts);
  for (const PortRef& src : f.Endpoints()) {
    for (const PortRef& dst : f.Endpoints()) {
      if (src.node == dst.node) continue;
      ++pairs;
      RouteFate fate;
      const std::vector<PortId> path = tracer.Path(src, f.base_lid(dst), &fate);
      delivered += fate == RouteFate::kDelivered;
      loops += fate == RouteFate::kLoop;
      if (fate == RouteFate::kDelivered) hops += path.size();
    }
  }
  EXPECT_GT(loops, 0u);
  EXPECT_GT(delivered, loops);
  EXPECT_EQ(r.trace.pairs, pairs);
  EXPECT_EQ(r.trace.delivered, delivered);
  EXPECT_EQ(r.trace.loops, loops);
  EXPECT_EQ(r.trace.unreachable, pairs - delivered - loops);
  EXPECT_DOUBLE_EQ(r.trace.mean_hops, static_cast<double>(hops) / static_cast<double>(delivered));
}

}  // namespace
}  // namespace sar
