// OSRM2 / OSRM3: the oblivious ratio equals Yuan et al.'s closed forms (Theorems 1 and 2) on
// m-port 2- and 3-trees when each source sends to its group's LID; the routes follow Fig. 8
// checked by walking the tables; valid and deadlock-free; clear errors for a too-small LMC and
// a degraded tree.
#include <cmath>
#include <string>

#include "engines/engine_test_util.h"
#include "gtest/gtest.h"
#include "sar/analysis/oblivious.h"
#include "sar/pass/routing_pass.h"

namespace sar {
namespace {

using enginetest::Pgft;
using enginetest::RouteOk;
using enginetest::Spec;

// Yuan's FT(m,2): m leaves of m/2 hosts, m/2 spines; FT(m,3): m pods of m/2 leaves and m/2
// middles, (m/2)^2 tops.
PgftSpec YuanFt2(int m) { return Spec(2, {m / 2, m}, {1, m / 2}, {1, 1}); }
PgftSpec YuanFt3(int m) { return Spec(3, {m / 2, m / 2, m}, {1, m / 2, m / 2}, {1, 1, 1}); }

uint32_t Ratio(const Fabric& f, const RoutingOutput& out, bool use_offsets) {
  ObliviousOptions o;
  if (use_offsets) o.source_lid_offset = &out.source_lid_offset;
  ObliviousResult r;
  EXPECT_TRUE(ComputeObliviousRatio(f, out.lfts, o, &r).ok());
  EXPECT_TRUE(r.full_bisection);
  return r.max_disjoint;
}

void ExpectValid(const Fabric& f, const RoutingOutput& out) {
  ValidationOptions vo;
  vo.switch_lids = false;  // osrm's promise is about the routes between CAs
  ValidationReport report;
  const Status s = ValidateRouting(f, out.lfts, nullptr, out.num_layers, vo, &report);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(report.deadlock_checked);
}

TEST(Osrm2, RatioIsSqrtHalfMOnFtM2) {
  for (const auto& [m, lmc] : {std::pair{8, 1}, std::pair{18, 2}, std::pair{32, 2}}) {
    SCOPED_TRACE("FT(" + std::to_string(m) + ",2)");
    const Fabric f = Pgft(YuanFt2(m), lmc);
    const RoutingOutput out = RouteOk("osrm2", f);
    ExpectValid(f, out);
    const uint32_t z = static_cast<uint32_t>(std::lround(std::sqrt(m / 2.0)));
    EXPECT_EQ(Ratio(f, out, true), z);
    // The LID choice matters: every source on its base LID funnels a leaf into few spines.
    EXPECT_GT(Ratio(f, out, false), z);
  }
}

TEST(Osrm2, RoutesFollowFigure8) {
  // FT(8,2): Z = 2, hosts x = 0..3 on each of 8 leaves, spines 0..3; source group x / 2 and
  // destination group y / 2 pick spine (x / 2) * 2 + y / 2.
  const Fabric f = Pgft(YuanFt2(8), 1);
  const RoutingOutput out = RouteOk("osrm2", f);
  const std::vector<PortRef> ends = f.Endpoints();
  ASSERT_EQ(out.source_lid_offset.size(), ends.size());
  int checked = 0;
  for (size_t i = 0; i < ends.size(); ++i) {
    for (size_t j = 0; j < ends.size(); ++j) {
      const int x = static_cast<int>(i) % 4, y = static_cast<int>(j) % 4;
      if (i / 4 == j / 4) continue;
      EXPECT_EQ(out.source_lid_offset[i], x / 2);
      const Lid lid = f.base_lid(ends[j]) + out.source_lid_offset[i];
      const NodeId leaf = f.peer(ends[i]).node;
      const PortRef up = f.peer({leaf, out.lfts.port(f.switch_index(leaf), lid)});
      char want[16];
      std::snprintf(want, sizeof want, "spine%03d", (x / 2) * 2 + y / 2);
      ASSERT_EQ(f.name(up.node), want);
      const PortRef down = f.peer({up.node, out.lfts.port(f.switch_index(up.node), lid)});
      EXPECT_EQ(down.node, f.peer(ends[j]).node);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 32 * 28);
}

TEST(Osrm3, RatioIsHalfMOnFtM3) {
  for (const auto& [m, lmc] : {std::pair{4, 1}, std::pair{6, 2}, std::pair{8, 2}}) {
    SCOPED_TRACE("FT(" + std::to_string(m) + ",3)");
    const Fabric f = Pgft(YuanFt3(m), lmc);
    const RoutingOutput out = RouteOk("osrm3", f);
    ExpectValid(f, out);
    EXPECT_EQ(Ratio(f, out, true), static_cast<uint32_t>(m / 2));
    EXPECT_GT(Ratio(f, out, false), static_cast<uint32_t>(m / 2));
  }
}

TEST(Osrm, TooSmallLmcNamesTheLmcNeeded) {
  const Fabric f = Pgft(YuanFt3(8), 1);  // 4 source groups need LMC 2
  RoutingInput in;
  in.fabric = &f;
  RoutingOutput out;
  const Status s = MakeRoutingEngine("osrm3")->Route(in, &out);
  EXPECT_EQ(s.code(), Status::Code::kFailed);
  EXPECT_NE(s.message().find("needs LMC >= 2"), std::string::npos) << s.message();
}

TEST(Osrm, RefusesOtherShapes) {
  RoutingInput in;
  RoutingOutput out;
  const Fabric three = Pgft(YuanFt3(4), 1);
  in.fabric = &three;
  Status s = MakeRoutingEngine("osrm2")->Route(in, &out);
  EXPECT_EQ(s.code(), Status::Code::kFailed);
  EXPECT_NE(s.message().find("2-level"), std::string::npos) << s.message();
  // A cut leaf-spine cable breaks Fig. 8's every-leaf-to-every-spine rule.
  const Fabric two = Pgft(YuanFt2(8), 1);
  Fabric cut;
  ASSERT_TRUE(enginetest::Degrade(two, 1, 0, 3, &cut));
  in.fabric = &cut;
  s = MakeRoutingEngine("osrm2")->Route(in, &out);
  EXPECT_EQ(s.code(), Status::Code::kFailed);
  EXPECT_NE(s.message().find("no cable"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sar
