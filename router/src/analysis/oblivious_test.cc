// The oblivious ratio against brute force on tiny fabrics and against Yuan et al.'s closed form.
#include "sar/analysis/oblivious.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "io/test_util.h"
#include "sar/engines/engine.h"
#include "sar/io/lft_dump.h"
#include "sar/io/topology.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"

namespace sar {
namespace {

using PairSet = std::set<std::pair<int, int>>;

// Every ordered pair's route walked hop by hop from the source's switch until it is delivered,
// dropped or revisits a switch; each switch-to-switch channel collects the pairs that cross it.
std::map<PortId, PairSet> BrutePairs(const Fabric& f, const LftSet& lfts) {
  const std::vector<PortRef> ends = f.Endpoints();
  std::map<PortId, PairSet> out;
  for (size_t i = 0; i < ends.size(); ++i) {
    for (size_t j = 0; j < ends.size(); ++j) {
      if (i == j) continue;
      NodeId sw = f.peer(ends[i]).node;
      std::set<NodeId> visited;
      while (visited.insert(sw).second) {
        const int port = lfts.port(f.switch_index(sw), f.base_lid(ends[j]));
        if (port == 0 || port == LftSet::kNoRoute || port > f.num_ports(sw)) break;
        const PortId c = f.port_id(sw, port);
        if (!f.is_inter_switch(c)) break;
        out[c].insert({static_cast<int>(i), static_cast<int>(j)});
        sw = f.port_node(f.peer_id(c));
      }
    }
  }
  return out;
}

// Largest subset with distinct sources and distinct destinations, by trying every choice.
int BruteMatching(const std::vector<std::pair<int, int>>& pairs, size_t k, std::set<int>* srcs,
                  std::set<int>* dsts) {
  if (k == pairs.size()) return 0;
  int best = BruteMatching(pairs, k + 1, srcs, dsts);  // without pair k
  const auto [s, d] = pairs[k];
  if (!srcs->count(s) && !dsts->count(d)) {
    srcs->insert(s);
    dsts->insert(d);
    best = std::max(best, 1 + BruteMatching(pairs, k + 1, srcs, dsts));
    srcs->erase(s);
    dsts->erase(d);
  }
  return best;
}

void ExpectMatchesBruteForce(const Fabric& f, const LftSet& lfts) {
  ObliviousOptions o;
  o.all_channels = true;
  ObliviousResult r;
  ASSERT_TRUE(ComputeObliviousRatio(f, lfts, o, &r).ok());
  int best = 0;
  for (const auto& [c, pairs] : BrutePairs(f, lfts)) {
    std::set<int> s, d;
    const int m = BruteMatching({pairs.begin(), pairs.end()}, 0, &s, &d);
    EXPECT_EQ(r.per_channel[c], static_cast<uint32_t>(m)) << "channel " << c;
    best = std::max(best, m);
  }
  EXPECT_EQ(r.max_disjoint, static_cast<uint32_t>(std::max(best, 1)));
  // Pruned: the same maximum.
  ObliviousResult fast;
  ASSERT_TRUE(ComputeObliviousRatio(f, lfts, ObliviousOptions(), &fast).ok());
  EXPECT_EQ(fast.max_disjoint, r.max_disjoint);
  EXPECT_LE(fast.channels_matched, r.channels_matched);
}

LftSet Route(const Fabric& f, const std::string& engine) {
  RoutingInput in;
  in.fabric = &f;
  in.threads = 1;
  RoutingOutput out;
  EXPECT_TRUE(MakeRoutingEngine(engine)->Route(in, &out).ok()) << engine;
  return out.lfts;
}

TEST(Oblivious, EqualsBruteForceForEveryEngineOnTinyFabrics) {
  for (const char* spec : {"ft2:2,3", "ft2:3,3", "kary:2,3", "pgft:2;3,3;1,2;1,1"}) {
    PgftSpec p;
    ASSERT_TRUE(ParsePgftSpec(spec, &p).ok());
    Fabric f;
    ASSERT_TRUE(GeneratePgft(p, GenerateOptions(), &f).ok());
    ASSERT_TRUE(AssignLids({}, &f).ok());
    for (const std::string& e : RoutingEngineNames()) {
      if (e.rfind("osrm", 0) == 0) continue;  // per source group, with LMC: osrm_test.cc
      SCOPED_TRACE(std::string(spec) + " " + e);
      ExpectMatchesBruteForce(f, Route(f, e));
    }
  }
}

TEST(Oblivious, EqualsBruteForceOnRandomTablesWithLoopsAndHoles) {
  Fabric f;
  ASSERT_TRUE(GenerateFatTree2(2, 3, 1, GenerateOptions(), &f).ok());
  ASSERT_TRUE(AssignLids({}, &f).ok());
  std::mt19937 rng(3);
  for (int round = 0; round < 20; ++round) {
    LftSet lfts = Route(f, "minhop");
    for (int s = 0; s < f.num_switches(); ++s) {
      const NodeId sw = f.switches()[s];
      for (Lid l = 1; l <= lfts.max_lid(); ++l) {
        if (rng() % 3 == 0) {
          const int choice = static_cast<int>(rng() % (f.num_ports(sw) + 2));
          lfts.set_port(s, l, choice > f.num_ports(sw) ? LftSet::kNoRoute : choice);
        }
      }
    }
    SCOPED_TRACE(round);
    ExpectMatchesBruteForce(f, lfts);
  }
}

TEST(Oblivious, EqualsBruteForceOnOpenSmsRealTables) {
  // OpenSM's ftree tables read back from ibsim's switches (tests/data/README.md).
  Fabric f;
  ASSERT_TRUE(ReadTopology(io::testing::TestDataPath("small.ibnetdiscover"), &f).ok());
  LftSet lfts;
  ASSERT_TRUE(ReadLftDump(io::testing::TestDataPath("small.dump_fts"), f, &lfts).ok());
  ExpectMatchesBruteForce(f, lfts);
}

TEST(Oblivious, DestinationRoutingOnFtM2IsMOver2AsYuansTable1) {
  // FT(m,2) of the paper: m leaves with m/2 hosts, m/2 spines = our FT(2;m/2,m). Every
  // destination-based routing (MLID's row in Table 1) has ratio m/2 there: an up channel has at
  // most the leaf's m/2 sources, a down channel at most m/2 destinations, and some up channel
  // of a leaf carries >= m-1 destinations from all m/2 of its sources.
  for (int m : {4, 6, 8, 12}) {
    Fabric f;
    ASSERT_TRUE(GenerateFatTree2(m / 2, m, 1, GenerateOptions(), &f).ok());
    ASSERT_TRUE(AssignLids({}, &f).ok());
    EXPECT_TRUE(IsFullBisectionTree(f));
    for (const std::string& e : RoutingEngineNames()) {
      if (e.rfind("osrm", 0) == 0) continue;  // per source group, with LMC: osrm_test.cc
      ObliviousResult r;
      ASSERT_TRUE(ComputeObliviousRatio(f, Route(f, e), ObliviousOptions(), &r).ok());
      EXPECT_EQ(r.max_disjoint, static_cast<uint32_t>(m / 2)) << "m " << m << " " << e;
      EXPECT_TRUE(r.full_bisection);
    }
  }
}

TEST(Oblivious, OversubscribedTreeIsNotFullBisection) {
  PgftSpec p;
  ASSERT_TRUE(ParsePgftSpec("pgft:2;4,4;1,2;1,1", &p).ok());
  Fabric f;
  ASSERT_TRUE(GeneratePgft(p, GenerateOptions(), &f).ok());
  ASSERT_TRUE(AssignLids({}, &f).ok());
  EXPECT_FALSE(IsFullBisectionTree(f));
  Fabric g;
  ASSERT_TRUE(GenerateKaryNTree(2, 3, GenerateOptions(), &g).ok());
  ASSERT_TRUE(AssignLids({}, &g).ok());
  EXPECT_TRUE(IsFullBisectionTree(g));
}

// Refused at once, before any pair is walked, when even shortest routes cannot fit the limit:
// a 3-level tree of 4^3 = 64 hosts has 4,032 pairs; those on different leaves cross 2 or 4
// switch-to-switch channels at their shortest. Just below that sum: refused naming it; at it:
// computed (min-hop routes need exactly that many entries).
TEST(Oblivious, RefusedAtOnceWhenEvenShortestRoutesDoNotFit) {
  Fabric f;
  ASSERT_TRUE(GenerateKaryNTree(4, 3, GenerateOptions(), &f).ok());
  ASSERT_TRUE(AssignLids({}, &f).ok());
  // 16 leaves of 4 hosts; 4 leaves per pod. Same pod: 2 channels, other pod: 4.
  const uint64_t shortest = 16 * (3 * 16 * 2 + 12 * 16 * 4);
  ObliviousOptions o;
  o.max_entries = shortest - 1;
  ObliviousResult r;
  const Status s = ComputeObliviousRatio(f, Route(f, "minhop"), o, &r);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("at least " + std::to_string(shortest)), std::string::npos)
      << s.message();
  o.max_entries = shortest;
  EXPECT_TRUE(ComputeObliviousRatio(f, Route(f, "minhop"), o, &r).ok());
}

TEST(Oblivious, TablesOfAnotherFabricAreRefused) {
  Fabric f, g;
  ASSERT_TRUE(GenerateFatTree2(2, 3, 1, GenerateOptions(), &f).ok());
  ASSERT_TRUE(AssignLids({}, &f).ok());
  ASSERT_TRUE(GenerateFatTree2(2, 4, 1, GenerateOptions(), &g).ok());
  ASSERT_TRUE(AssignLids({}, &g).ok());
  ObliviousResult r;
  EXPECT_FALSE(ComputeObliviousRatio(f, Route(g, "minhop"), ObliviousOptions(), &r).ok());
}

}  // namespace
}  // namespace sar
