#include "reroute_gate.h"

#include <gtest/gtest.h>

namespace sar::filterd {
namespace {

using D = RerouteGate::Decision;

TEST(RerouteGate, NoChangeNeverReroutes) {
  RerouteGate gate(0, 0);
  for (double t = 0; t < 10; t += 1) EXPECT_EQ(gate.Decide(false, false, t), D::kNothing);
}

TEST(RerouteGate, SettleDelayRestartsWhenTheSetMoves) {
  RerouteGate gate(5, 0);
  EXPECT_EQ(gate.Decide(true, true, 0), D::kWaitSettle);
  EXPECT_EQ(gate.Decide(true, false, 3), D::kWaitSettle);
  EXPECT_EQ(gate.Decide(true, true, 4), D::kWaitSettle);   // another job started
  EXPECT_EQ(gate.Decide(true, false, 8), D::kWaitSettle);  // 4 s since it last moved
  EXPECT_DOUBLE_EQ(gate.ReadyAt(), 9);
  EXPECT_EQ(gate.Decide(true, false, 9), D::kReroute);
}

TEST(RerouteGate, MinimumIntervalBetweenReroutes) {
  RerouteGate gate(0, 30);
  EXPECT_EQ(gate.Decide(true, true, 100), D::kReroute);
  gate.MarkRerouted(100);
  EXPECT_EQ(gate.Decide(true, true, 110), D::kWaitInterval);
  EXPECT_DOUBLE_EQ(gate.ReadyAt(), 130);
  EXPECT_EQ(gate.Decide(true, false, 129), D::kWaitInterval);
  EXPECT_EQ(gate.Decide(true, false, 130), D::kReroute);
}

TEST(RerouteGate, ChangeThatRevertsIsDropped) {
  RerouteGate gate(5, 0);
  EXPECT_EQ(gate.Decide(true, true, 0), D::kWaitSettle);
  EXPECT_EQ(gate.Decide(false, true, 2), D::kNothing);    // the job ended before settling
  EXPECT_EQ(gate.Decide(true, true, 3), D::kWaitSettle);  // a new change waits from scratch
  EXPECT_EQ(gate.Decide(true, false, 7), D::kWaitSettle);
}

}  // namespace
}  // namespace sar::filterd
