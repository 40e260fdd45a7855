#include <gtest/gtest.h>

#include "engines/engine_test_util.h"
#include "engines/sssp_test_util.h"
#include "sar/analysis/analysis.h"
#include "sar/model/failures.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"
#include "test_fabrics.h"

namespace sar {
namespace {

using sssptest::ExpectValid;
using sssptest::Route;

Fabric Generated(const std::string& spec_text, int lmc = 0) {
  PgftSpec spec;
  EXPECT_TRUE(ParsePgftSpec(spec_text, &spec).ok());
  Fabric f;
  EXPECT_TRUE(GeneratePgft(spec, GenerateOptions{}, &f).ok());
  LidOptions lids;
  lids.lmc = lmc;
  EXPECT_TRUE(AssignLids(lids, &f).ok());
  return f;
}

TEST(Dfsssp, FatTreesAreMinHopDeliveredAndDeadlockFree) {
  for (const char* spec :
       {"ft2:6,5", "ft2:4,8", "kary:4,3", "pgft:3;4,4,2;1,4,4;1,1,1", "pgft:2;4,3;1,2;1,2"}) {
    SCOPED_TRACE(spec);
    const Fabric f = Generated(spec);
    RoutingOutput out;
    ASSERT_TRUE(Route("dfsssp", f, &out).ok());
    ExpectValid(f, out, 8, /*min_hop=*/true);
    EXPECT_GT(out.paths_ms, 0);
    EXPECT_FALSE(out.notes.empty());
  }
}

// All-to-all on FT(2;M0,M1): each leaf sends M0 * M0 * (M1 - 1) routes up over its M0 up
// channels and receives as many down, so no routing can beat ceil(that / M0) on some channel;
// weights that count routes reach it exactly.
TEST(Dfsssp, BalancesAllToAllOnTwoLevelTreesToTheLowerBound) {
  for (auto [m0, m1] : {std::pair{4, 4}, {6, 5}, {8, 3}, {5, 7}}) {
    Fabric f;
    ASSERT_TRUE(GenerateFatTree2(m0, m1, 1, GenerateOptions{}, &f).ok());
    ASSERT_TRUE(AssignLids(LidOptions{}, &f).ok());
    RoutingOutput out;
    ASSERT_TRUE(Route("dfsssp", f, &out).ok());
    const Metrics m = sssptest::Measure(f, out.lfts, {});
    const uint64_t bound = (uint64_t(m0) * m0 * (m1 - 1) + m0 - 1) / m0;
    EXPECT_EQ(m.efi.max, bound) << "FT(2;" << m0 << "," << m1 << ")";
  }
}

TEST(Dfsssp, RandomIrregularFabricsNeedLayersAndGetThem) {
  int layered = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE(seed);
    const Fabric f = testfab::RandomIrregular(seed, 3, 12);
    RoutingOutput out;
    const Status st = Route("dfsssp", f, &out, nullptr, 15);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ExpectValid(f, out, 15, /*min_hop=*/true);
    DeadlockReport single;
    ASSERT_TRUE(CheckDeadlock(f, out.lfts, nullptr, &single).ok());
    if (!single.deadlock_free) ++layered;
  }
  EXPECT_GT(layered, 0) << "no seed needed more than one layer: the test proves little";
}

TEST(Dfsssp, DegradedTreesFromRandomFailures) {
  const Fabric base = Generated("pgft:3;4,4,3;1,4,4;1,1,1");
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE(seed);
    Fabric f;
    ASSERT_TRUE(enginetest::Degrade(base, 6, seed % 3 == 0 ? 1 : 0, seed, &f));
    RoutingOutput out;
    const Status st = Route("dfsssp", f, &out);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ExpectValid(f, out, 8, /*min_hop=*/true);
  }
}

TEST(Dfsssp, LmcLidsAreAllRoutedAndLayered) {
  for (int lmc : {1, 2}) {
    const Fabric f = testfab::FatTree2(4, 3, 3, lmc);
    RoutingOutput out;
    ASSERT_TRUE(Route("dfsssp", f, &out).ok());
    ExpectValid(f, out, 8, true);
    // Different LIDs of one HCA should not all share one spine path.
    const PortRef dst = f.Endpoints().back();
    const int leaf0 = 0;
    std::set<int> ports;
    for (Lid l = f.base_lid(dst); l < f.base_lid(dst) + (Lid{1} << lmc); ++l) {
      ports.insert(out.lfts.port(leaf0, l));
    }
    EXPECT_GT(ports.size(), 1u);
  }
}

TEST(Dfsssp, DisconnectedFabricFailsOrIsNoted) {
  Fabric f;
  const NodeId a = testfab::AddSwitch(&f, 4, "swa");
  const NodeId b = testfab::AddSwitch(&f, 4, "swb");
  testfab::Cable(&f, testfab::AddHost(&f, 1, "ha"), a);
  testfab::Cable(&f, testfab::AddHost(&f, 1, "hb"), b);
  testfab::Cable(&f, testfab::AddHost(&f, 1, "hc"), b);
  testfab::AssignTestLids(&f, 0);
  RoutingOutput out;
  RoutingInput in;
  in.fabric = &f;
  const auto engine = MakeRoutingEngine("dfsssp");
  const Status st = engine->Route(in, &out);
  EXPECT_EQ(st.code(), Status::Code::kFailed);
  EXPECT_NE(st.message().find("hb cannot reach ha"), std::string::npos) << st.message();
  in.allow_disconnected = true;
  ASSERT_TRUE(engine->Route(in, &out).ok());
  TraceReport trace;
  ASSERT_TRUE(TraceAll(f, out.lfts, TraceOptions{}, &trace).ok());
  EXPECT_EQ(trace.delivered, 2u);  // hb <-> hc
  EXPECT_EQ(trace.unreachable, 4u);
  bool noted = false;
  for (const std::string& n : out.notes) noted |= n.find("have no route") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Dfsssp, RingNeedsTwoLayersAndFailsWithOne) {
  const Fabric f = testfab::Ring(6, 2);
  RoutingOutput out;
  const Status one = Route("dfsssp", f, &out, nullptr, 1);
  EXPECT_EQ(one.code(), Status::Code::kFailed);
  ASSERT_TRUE(Route("dfsssp", f, &out, nullptr, 2).ok());
  ExpectValid(f, out, 2, true);
  EXPECT_EQ(out.num_layers, 2);
}

}  // namespace
}  // namespace sar
