#include "sar/analysis/trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "engines/engine_test_util.h"
#include "sar/analysis/analysis.h"
#include "sar/model/failures.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"
#include "test_fabrics.h"

namespace sar {
namespace {

using testfab::NaiveRoute;
using testfab::NaiveWalk;

// Counts every (endpoint, LID of another node's endpoint) pair one route at a time.
TraceReport NaiveTrace(const Fabric& f, const LftSet& lfts, bool all_lids) {
  TraceReport r;
  uint64_t total_hops = 0;
  const std::vector<PortRef> endpoints = f.Endpoints();
  for (const PortRef& src : endpoints) {
    for (const PortRef& dst : endpoints) {
      if (dst.node == src.node || f.base_lid(dst) == 0) continue;
      const Lid count = all_lids ? Lid{1} << f.lmc(dst) : 1;
      for (Lid lid = f.base_lid(dst); lid < f.base_lid(dst) + count; ++lid) {
        ++r.pairs;
        const NaiveRoute route = NaiveWalk(f, lfts, src, lid);
        switch (route.fate) {
          case RouteFate::kDelivered: {
            ++r.delivered;
            const int hops = static_cast<int>(route.channels.size());
            total_hops += hops;
            r.max_hops = std::max(r.max_hops, hops);
            const int shortest = 2 + testfab::SwitchDistance(f, f.peer(src).node, f.peer(dst).node);
            if (hops > shortest) ++r.non_min_hop;
            break;
          }
          case RouteFate::kLoop:
            ++r.loops;
            break;
          default:
            ++r.unreachable;
        }
      }
    }
  }
  r.mean_hops = r.delivered ? static_cast<double>(total_hops) / r.delivered : 0;
  return r;
}

void ExpectSameCounts(const TraceReport& want, const TraceReport& got) {
  EXPECT_EQ(want.pairs, got.pairs);
  EXPECT_EQ(want.delivered, got.delivered);
  EXPECT_EQ(want.unreachable, got.unreachable);
  EXPECT_EQ(want.loops, got.loops);
  EXPECT_EQ(want.non_min_hop, got.non_min_hop);
  EXPECT_EQ(want.max_hops, got.max_hops);
  EXPECT_DOUBLE_EQ(want.mean_hops, got.mean_hops);
}

TEST(TraceTest, MinHopFatTreeDeliversEverythingOnShortestPaths) {
  const int leaves = 4, hosts = 3;
  const Fabric f = testfab::FatTree2(leaves, 3, hosts, /*lmc=*/1);
  const LftSet lfts = testfab::MinHopLfts(f);
  TraceReport r;
  ASSERT_TRUE(TraceAll(f, lfts, TraceOptions{}, &r).ok());
  const int n = leaves * hosts;
  EXPECT_EQ(r.pairs, static_cast<uint64_t>(n * (n - 1) * 2));
  EXPECT_EQ(r.delivered, r.pairs);
  EXPECT_EQ(r.non_min_hop, 0u);
  EXPECT_TRUE(r.valid());
  EXPECT_TRUE(r.examples.empty());
  // Same leaf: HCA-leaf-HCA (2 cables); otherwise HCA-leaf-spine-leaf-HCA (4).
  EXPECT_EQ(r.max_hops, 4);
  const double same = hosts - 1, other = n - hosts;
  EXPECT_DOUBLE_EQ(r.mean_hops, (2 * same + 4 * other) / (same + other));

  TraceOptions base_only;
  base_only.all_lids = false;
  ASSERT_TRUE(TraceAll(f, lfts, base_only, &r).ok());
  EXPECT_EQ(r.pairs, static_cast<uint64_t>(n * (n - 1)));
}

// Random irregular fabrics (switches with spare ports), and from seed 41 on fat trees and rings
// whose switches have every port cabled, so that routes leave by a switch's last port too.
TEST(TraceTest, BuildAndPathAgreeWithNaiveWalkOnCorruptedTables) {
  for (uint64_t seed = 1; seed <= 48; ++seed) {
    SCOPED_TRACE(seed);
    const Fabric f = seed <= 40 ? testfab::RandomIrregular(seed)
                     : seed % 2 ? testfab::FatTree2(3, 2, 3)
                                : testfab::Ring(5, 2);
    std::mt19937_64 rng(seed * 7919);
    LftSet lfts = testfab::MinHopLfts(f, &rng);
    testfab::Corrupt(f, static_cast<int>(seed % 12), &rng, &lfts);
    const RouteTracer tracer(f, lfts);
    DestinationTree tree;
    for (Lid lid = 1; lid <= f.max_lid() + 1; ++lid) {  // max_lid + 1 is owned by nobody
      tracer.Build(lid, &tree);
      ASSERT_EQ(tree.fate.size(), static_cast<size_t>(f.num_switches()));
      for (const PortRef& src : f.Endpoints()) {
        const NaiveRoute want = NaiveWalk(f, lfts, src, lid);
        const int leaf = f.switch_index(f.peer(src).node);
        EXPECT_EQ(tree.fate[leaf], want.fate) << "lid " << lid << " from " << f.name(src.node);
        if (want.fate == RouteFate::kDelivered) {
          EXPECT_EQ(1 + tree.hops[leaf], static_cast<int>(want.channels.size()));
        }
        RouteFate fate;
        EXPECT_EQ(tracer.Path(src, lid, &fate), want.channels);
        EXPECT_EQ(fate, want.fate);
      }
    }
  }
}

// The sweep reads a block of 64 consecutive LIDs' entries at once (LftColumns) where enough of
// them are traced, row by row otherwise: both must give the same tree, for every LID of degraded
// fabrics with corrupted tables (holes, loops, misdeliveries), blocks that straddle LMC ranges,
// switch LIDs and LIDs nobody owns, the partial last block and a block wholly past max_lid.
TEST(TraceTest, ColumnBlocksGiveTheSameTreesAsRowReads) {
  int blocks = 0;
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE(seed);
    Fabric f;
    if (seed % 2) {
      f = testfab::RandomIrregular(seed, 4, 12);
      testfab::AssignTestLids(&f, static_cast<int>(seed % 4));
    } else {
      PgftSpec spec;
      ASSERT_TRUE(ParsePgftSpec("pgft:3;4,4,4;1,4,2;1,1,1", &spec).ok());
      Fabric intact;
      ASSERT_TRUE(GeneratePgft(spec, {}, &intact).ok());
      LidOptions lo;
      lo.lmc = static_cast<int>(seed % 3);
      lo.lmc_switches = seed % 4 == 0;
      ASSERT_TRUE(AssignLids(lo, &intact).ok());
      ASSERT_TRUE(enginetest::Degrade(intact, 1 + static_cast<int>(seed % 5), 0, seed, &f));
    }
    std::mt19937_64 rng(seed * 131);
    LftSet lfts = testfab::MinHopLfts(f, &rng);
    testfab::Corrupt(f, 3 + static_cast<int>(seed % 9) * 4, &rng, &lfts);
    const RouteTracer tracer(f, lfts);
    std::vector<int> leaves, all;
    for (int s = 0; s < f.num_switches(); ++s) {
      all.push_back(s);
      for (int p = 1; p <= f.num_ports(f.switches()[s]); ++p) {
        const PortRef q = f.peer({f.switches()[s], p});
        if (q.valid() && !f.is_switch(q.node)) {
          leaves.push_back(s);
          break;
        }
      }
    }
    std::shuffle(leaves.begin(), leaves.end(), rng);
    LftColumns columns;
    DestinationTree want, got;
    const Lid end = (f.max_lid() / LftColumns::kLids + 2) * LftColumns::kLids;
    for (Lid lid = 0; lid < end; ++lid) {
      if (!columns.Holds(lid)) {
        tracer.LoadColumns(LftColumns::BlockOf(lid), &columns);
        ++blocks;
      }
      ASSERT_TRUE(columns.Holds(lid));
      for (const std::vector<int>* from : {&leaves, &all}) {
        tracer.BuildFrom(lid, *from, &want);
        tracer.BuildFrom(lid, *from, columns, &got);
        ASSERT_EQ(got.lid, lid);
        ASSERT_EQ(got.fate, want.fate) << "lid " << lid;
        ASSERT_EQ(got.hops, want.hops) << "lid " << lid;
        ASSERT_EQ(got.out, want.out) << "lid " << lid;
        for (size_t s = 0; s < got.out.size(); ++s) {
          if (got.out[s] == kNoPort) continue;
          ASSERT_EQ(got.port[s], f.port_ref(got.out[s]).port) << "lid " << lid;
          ASSERT_EQ(got.next[s], tracer.next_switch(got.out[s])) << "lid " << lid;
        }
      }
    }
    // A block loaded out of order (the sweep's workers jump between blocks) holds its own LIDs.
    tracer.LoadColumns(0, &columns);
    EXPECT_FALSE(columns.Holds(LftColumns::kLids));
    tracer.BuildFrom(5, leaves, &want);
    tracer.BuildFrom(5, leaves, columns, &got);
    EXPECT_EQ(got.fate, want.fate);
    EXPECT_EQ(got.out, want.out);
  }
  EXPECT_GT(blocks, 24 * 2);
}

TEST(TraceTest, TraceAllAgreesWithNaiveWalkAndIsDeterministic) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE(seed);
    const Fabric f = testfab::RandomIrregular(seed);
    std::mt19937_64 rng(seed);
    LftSet lfts = testfab::MinHopLfts(f, &rng);
    if (seed % 3 != 0) testfab::Corrupt(f, static_cast<int>(seed % 9), &rng, &lfts);
    for (bool all_lids : {true, false}) {
      TraceOptions options;
      options.all_lids = all_lids;
      options.threads = 1;
      TraceReport one, three;
      ASSERT_TRUE(TraceAll(f, lfts, options, &one).ok());
      ExpectSameCounts(NaiveTrace(f, lfts, all_lids), one);
      EXPECT_EQ(one.valid(), one.loops == 0 && one.unreachable == 0);
      options.threads = 3;
      ASSERT_TRUE(TraceAll(f, lfts, options, &three).ok());
      ExpectSameCounts(one, three);
      EXPECT_EQ(one.examples, three.examples);
      const uint64_t problems = one.loops + one.unreachable + one.non_min_hop;
      EXPECT_EQ(one.examples.empty(), problems == 0);
      EXPECT_LE(one.examples.size(), 10u);
    }
  }
}

// Two leaves under one spine; h0000,h0001 on leaf00, h0002,h0003 on leaf01.
class TraceFaultTest : public ::testing::Test {
 protected:
  TraceFaultTest() : f_(testfab::FatTree2(2, 1, 2)), lfts_(testfab::MinHopLfts(f_)) {}
  Lid LidOf(const char* host) const { return f_.base_lid({f_.FindByName(host), 1}); }
  int Switch(const char* name) const { return f_.switch_index(f_.FindByName(name)); }
  int PortTo(const char* from, const char* to) const {
    const NodeId a = f_.FindByName(from), b = f_.FindByName(to);
    for (int p = 1; p <= f_.num_ports(a); ++p) {
      if (f_.peer({a, p}).node == b) return p;
    }
    return 0;
  }
  TraceReport Trace() const {
    TraceReport r;
    EXPECT_TRUE(TraceAll(f_, lfts_, TraceOptions{}, &r).ok());
    return r;
  }
  Fabric f_;
  LftSet lfts_;
};

TEST_F(TraceFaultTest, LoopBetweenSpineAndLeaf) {
  const Lid lid = LidOf("h0002");
  lfts_.set_port(Switch("spine00"), lid, PortTo("spine00", "leaf00"));
  DestinationTree tree;
  RouteTracer(f_, lfts_).Build(lid, &tree);
  EXPECT_EQ(tree.fate[Switch("leaf00")], RouteFate::kLoop);
  EXPECT_EQ(tree.fate[Switch("spine00")], RouteFate::kLoop);
  EXPECT_EQ(tree.fate[Switch("leaf01")], RouteFate::kDelivered);
  EXPECT_EQ(tree.hops[Switch("leaf01")], 1);
  const TraceReport r = Trace();
  EXPECT_EQ(r.loops, 2u);  // h0000 and h0001 towards h0002
  EXPECT_FALSE(r.valid());
  ASSERT_EQ(r.examples.size(), 1u);
  EXPECT_NE(r.examples[0].find("h0000 -> lid"), std::string::npos) << r.examples[0];
  EXPECT_NE(r.examples[0].find("(h0002): loop at leaf00"), std::string::npos) << r.examples[0];
}

TEST_F(TraceFaultTest, HoleAndMisdelivery) {
  const Lid lid2 = LidOf("h0002"), lid0 = LidOf("h0000");
  lfts_.set_port(Switch("spine00"), lid2, LftSet::kNoRoute);
  lfts_.set_port(Switch("leaf00"), lid0, PortTo("leaf00", "h0001"));
  DestinationTree tree;
  const RouteTracer tracer(f_, lfts_);
  tracer.Build(lid2, &tree);
  EXPECT_EQ(tree.fate[Switch("leaf00")], RouteFate::kHole);
  EXPECT_EQ(tree.fate[Switch("leaf01")], RouteFate::kDelivered);
  tracer.Build(lid0, &tree);
  EXPECT_EQ(tree.fate[Switch("leaf00")], RouteFate::kMisdelivered);
  EXPECT_EQ(tree.fate[Switch("leaf01")], RouteFate::kMisdelivered);
  const TraceReport r = Trace();
  EXPECT_EQ(r.unreachable, 2u + 3u);  // h0000,h0001 -> h0002; everyone else -> h0000
  const std::string all = r.examples[0] + "\n" + r.examples[1] + "\n" + r.examples[2];
  EXPECT_NE(all.find("misdelivered at leaf00 port"), std::string::npos) << all;
  EXPECT_NE(all.find("to h0001"), std::string::npos) << all;
  bool hole = false;
  for (const std::string& e : r.examples) hole |= e.find("hole at spine00") != std::string::npos;
  EXPECT_TRUE(hole);
}

TEST_F(TraceFaultTest, PortZeroOnTheWrongSwitchIsMisdelivered) {
  const Lid lid = LidOf("h0003");
  lfts_.set_port(Switch("spine00"), lid, 0);
  DestinationTree tree;
  RouteTracer(f_, lfts_).Build(lid, &tree);
  EXPECT_EQ(tree.fate[Switch("leaf00")], RouteFate::kMisdelivered);
  // The spine's own LID is delivered at port 0.
  RouteTracer(f_, lfts_).Build(f_.switch_lid(f_.FindByName("spine00")), &tree);
  EXPECT_EQ(tree.fate[Switch("spine00")], RouteFate::kDelivered);
  EXPECT_EQ(tree.hops[Switch("spine00")], 0);
  EXPECT_EQ(tree.hops[Switch("leaf00")], 1);
}

TEST(TraceTest, DetourOnRingIsNotMinHop) {
  // Ring of 4: sw03 sends sw00's host traffic the long way (sw03 -> sw02 -> sw01 -> sw00).
  const Fabric f = testfab::Ring(4, 1);
  LftSet lfts = testfab::MinHopLfts(f);
  const Lid lid = f.base_lid({f.FindByName("h0000"), 1});
  const auto port_to = [&f](const char* a, const char* b) {
    const NodeId n = f.FindByName(a);
    for (int p = 1; p <= f.num_ports(n); ++p) {
      if (f.peer({n, p}).node == f.FindByName(b)) return p;
    }
    return 0;
  };
  lfts.set_port(f.switch_index(f.FindByName("sw03")), lid, port_to("sw03", "sw02"));
  lfts.set_port(f.switch_index(f.FindByName("sw02")), lid, port_to("sw02", "sw01"));
  TraceReport r;
  ASSERT_TRUE(TraceAll(f, lfts, TraceOptions{}, &r).ok());
  EXPECT_TRUE(r.valid());
  EXPECT_EQ(r.non_min_hop, 1u);  // h0003 -> h0000: 5 cables instead of 3; h0002's 4 = shortest
  EXPECT_EQ(r.max_hops, 5);
  ASSERT_EQ(r.examples.size(), 1u);
  EXPECT_NE(r.examples[0].find("h0003 -> lid"), std::string::npos) << r.examples[0];
  EXPECT_NE(r.examples[0].find("5 hops, shortest 3"), std::string::npos) << r.examples[0];
}

}  // namespace
}  // namespace sar
