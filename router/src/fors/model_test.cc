// The throughput model: the fault-free linear shift is conflict-free on d-mod-k (the paper's
// premise), failures make the baselines congest, and FORS's time is its phase count.
#include <gtest/gtest.h>

#include "sar/fors/fors.h"
#include "sar/fors/fors_model.h"

namespace sar {
namespace {

TEST(ForsModel, PhaseMaxLoadCountsSharedLinks) {
  // FT(2;2,2): servers 0,1 on leaf 0, 2,3 on leaf 1.
  EXPECT_EQ(PhaseMaxLoad(2, 2, {}), 0);
  EXPECT_EQ(PhaseMaxLoad(2, 2, {{0, 2, 0}, {1, 3, 1}}), 1);
  EXPECT_EQ(PhaseMaxLoad(2, 2, {{0, 2, 0}, {1, 3, 0}}), 2);  // leaf0->spine0 twice
  EXPECT_EQ(PhaseMaxLoad(2, 2, {{0, 2, 0}, {0, 3, 1}}), 2);  // server 0 sends twice
  EXPECT_EQ(PhaseMaxLoad(2, 2, {{0, 1, -1}, {2, 3, -1}}), 1);
}

TEST(ForsModel, FaultFreeLinearShiftIsConflictFreeOnBaselines) {
  for (int m0 = 2; m0 <= 6; ++m0) {
    for (int m1 = 2; m1 <= 6; ++m1) {
      for (BaselineRouting r : {BaselineRouting::kFtree, BaselineRouting::kMinhop}) {
        auto phases = LinearShiftSchedule(m0, m1);
        ASSERT_TRUE(RouteByDestination(m0, m1, {}, r, &phases).ok());
        EXPECT_TRUE(CheckPlan(m0, m1, {}, phases).ok()) << m0 << "," << m1;
        EXPECT_EQ(ModelTime(m0, m1, phases), m0 * m1 - 1);
      }
    }
  }
}

TEST(ForsModel, OneFailedLinkCongestsTheBaselineButNotFors) {
  const std::vector<FailedLink> failed = {{0, 0}};
  for (BaselineRouting r : {BaselineRouting::kFtree, BaselineRouting::kMinhop}) {
    auto phases = LinearShiftSchedule(8, 6);
    ASSERT_TRUE(RouteByDestination(8, 6, failed, r, &phases).ok());
    for (const auto& ph : phases) {
      for (const Transfer& t : ph) {
        ASSERT_FALSE(t.spine == 0 && (t.src / 8 == 0 || t.dst / 8 == 0)) << "failed link used";
      }
    }
    EXPECT_GT(ModelTime(8, 6, phases), 8 * 6 - 1);
  }
  ForsOptions o;
  o.m0 = 8;
  o.m1 = 6;
  o.failed = failed;
  ForsPlan plan;
  ASSERT_TRUE(PlanFors(o, &plan).ok());
  EXPECT_EQ(ModelTime(8, 6, plan.phases), plan.num_phases());
}

TEST(ForsModel, Fig6RowsMatchThePapersShape) {
  std::vector<Fig6Row> rows;
  ASSERT_TRUE(ComputeFig6(20, 18, &rows).ok());
  ASSERT_EQ(rows.size(), 9u);
  EXPECT_DOUBLE_EQ(rows[0].ftree, 1.0);
  EXPECT_DOUBLE_EQ(rows[0].fors, 1.0);
  for (const Fig6Row& r : rows) {
    SCOPED_TRACE(r.scenario);
    EXPECT_EQ(r.fors_split_phases, 0);
    // FORS is conflict-free, so its time is its phase count; never slower than a baseline here.
    EXPECT_NEAR(r.fors, 359.0 / static_cast<double>(r.fors_phases), 1e-12);
    EXPECT_GE(r.fors + 1e-12, std::max(r.ftree, r.minhop));
  }
  EXPECT_EQ(rows[1].f, 1);              // 1F SW0
  EXPECT_EQ(rows[4].failed_spines, 3);  // 1F SW0,5,11
  EXPECT_EQ(rows[4].method, RouteMethod::kExact);
  EXPECT_EQ(rows[7].method, RouteMethod::kAlgorithm2);  // SW18,19: m = f = 2
  EXPECT_NE(FormatFig6(20, 18, rows).find("SW18,19,22,23"), std::string::npos);
}

TEST(ForsModel, Fig7FactorIsOneWithoutFailures) {
  const std::string t = FormatFig7();
  EXPECT_NE(t.find("FT(2;32,32)"), std::string::npos);
  // Row f=0 shows 1.000 for all five topologies.
  const size_t row0 = t.find("\n  0");
  ASSERT_NE(row0, std::string::npos);
  const std::string line = t.substr(row0 + 1, t.find('\n', row0 + 1) - row0 - 1);
  size_t count = 0;
  for (size_t p = line.find("1.000"); p != std::string::npos; p = line.find("1.000", p + 1)) {
    ++count;
  }
  EXPECT_EQ(count, 5u);
}

}  // namespace
}  // namespace sar
