// FORS tables: the fabric matches the paper's numbering, the tables deliver every LID, and every
// phase of a plan, traced through the tables alone, uses each link at most once.
#include <gtest/gtest.h>

#include <random>

#include "sar/analysis/analysis.h"
#include "sar/analysis/trace.h"
#include "sar/fors/fors.h"
#include "sar/fors/fors_tables.h"

namespace sar {
namespace {

TEST(ForsTables, FabricFollowsPaperNumbering) {
  Fabric fabric;
  ASSERT_TRUE(BuildForsFabric(5, 3, {{1, 2}}, &fabric).ok());
  EXPECT_EQ(fabric.num_links(), 5 * 3 + 5 * 3 - 1);
  for (int l = 0; l < 3; ++l) {
    char leaf[16];
    std::snprintf(leaf, sizeof leaf, "leaf%03d", l);
    const NodeId ln = fabric.FindByName(leaf);
    ASSERT_NE(ln, kNoNode);
    for (int i = 0; i < 5; ++i) {  // down port i+1: server l*M0+i
      char host[16];
      std::snprintf(host, sizeof host, "h%05d", l * 5 + i);
      EXPECT_EQ(fabric.peer({ln, i + 1}).node, fabric.FindByName(host));
      EXPECT_EQ(fabric.lmc({fabric.FindByName(host), 1}), 3);  // ceil(log2 5)
    }
    for (int k = 0; k < 5; ++k) {  // up port M0+1+k: spine k, arriving on spine port l+1
      char spine[16];
      std::snprintf(spine, sizeof spine, "spine%03d", k);
      const PortRef peer = fabric.peer({ln, 5 + 1 + k});
      if (l == 1 && k == 2) {
        EXPECT_FALSE(peer.valid()) << "the failed link is absent";
      } else {
        EXPECT_EQ(peer.node, fabric.FindByName(spine));
        EXPECT_EQ(peer.port, l + 1);
      }
    }
  }
  EXPECT_EQ(ForsLmc(1), 0);
  EXPECT_EQ(ForsLmc(2), 1);
  EXPECT_EQ(ForsLmc(20), 5);
  EXPECT_EQ(ForsLmc(32), 5);
}

TEST(ForsTables, EveryPhaseIsConflictFreeOnTheTables) {
  std::mt19937_64 rng(11);
  for (int m0 = 2; m0 <= 6; ++m0) {
    for (int m1 = 2; m1 <= 6; ++m1) {
      for (int trial = 0; trial < 3; ++trial) {
        std::vector<FailedLink> failed;
        const int count = trial == 0 ? 0 : static_cast<int>(rng() % (m1 + 1));
        std::vector<uint8_t> seen(m0 * m1, 0);
        for (int i = 0; i < count; ++i) {
          const FailedLink l{static_cast<int>(rng() % m1), static_cast<int>(rng() % m0)};
          if (!seen[l.leaf * m0 + l.spine]) failed.push_back(l);
          seen[l.leaf * m0 + l.spine] = 1;
        }
        SCOPED_TRACE(std::to_string(m0) + "," + std::to_string(m1) + " failures " +
                     std::to_string(failed.size()));
        ForsOptions o;
        o.m0 = m0;
        o.m1 = m1;
        o.failed = failed;
        ForsPlan plan;
        if (!PlanFors(o, &plan).ok()) continue;  // some leaf pair lost every common spine
        Fabric fabric;
        ASSERT_TRUE(BuildForsFabric(m0, m1, failed, &fabric).ok());
        LftSet lfts;
        ASSERT_TRUE(BuildForsLfts(fabric, m0, m1, failed, &lfts).ok());
        TraceOptions to;
        to.threads = 1;
        TraceReport report;
        ASSERT_TRUE(TraceAll(fabric, lfts, to, &report).ok());
        EXPECT_TRUE(report.valid()) << (report.examples.empty() ? "" : report.examples[0]);
        EXPECT_EQ(report.non_min_hop, 0u);
        const Status s = CheckPhasesOnTables(fabric, lfts, plan);
        EXPECT_TRUE(s.ok()) << s.ToString();
      }
    }
  }
}

TEST(ForsTables, TracingCatchesASharedLink) {
  ForsOptions o;
  o.m0 = 4;
  o.m1 = 4;
  o.failed = {{0, 3}};
  ForsPlan plan;
  ASSERT_TRUE(PlanFors(o, &plan).ok());
  Fabric fabric;
  ASSERT_TRUE(BuildForsFabric(4, 4, o.failed, &fabric).ok());
  LftSet lfts;
  ASSERT_TRUE(BuildForsLfts(fabric, 4, 4, o.failed, &lfts).ok());
  // Send every inter-leaf transfer of phase 0 through spine 0: the tables must show the clash.
  for (Transfer& t : plan.phases[0]) {
    if (t.spine >= 0) t.spine = 0;
  }
  EXPECT_FALSE(CheckPhasesOnTables(fabric, lfts, plan).ok());
}

}  // namespace
}  // namespace sar
