#include "sar/model/lids.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "sar/model/generate.h"

namespace sar {
namespace {

struct Range {
  Lid min = 0, max = 0;
  friend bool operator==(const Range&, const Range&) = default;
};

// Port GUID -> LID range, the way OpenSM's guid2lid lists them.
std::map<Guid, Range> LidTable(const Fabric& f) {
  std::map<Guid, Range> out;
  for (PortId id = 0; id < f.num_port_slots(); ++id) {
    const PortRef p = f.port_ref(id);
    if (f.base_lid(p) == 0) continue;
    out[f.port_guid(p)] = {f.base_lid(p), f.base_lid(p) + (Lid{1} << f.lmc(p)) - 1};
  }
  return out;
}

// Checks the properties every assignment must have, independently of how it was made.
void CheckAssignment(const Fabric& f, int lmc, bool lmc_switches) {
  std::vector<int> owners(kMaxUnicastLid + 1, 0);
  Lid max_hca = 0, min_switch = kMaxUnicastLid + 1;
  int with_lid = 0;
  for (PortId id = 0; id < f.num_port_slots(); ++id) {
    const PortRef p = f.port_ref(id);
    const bool is_switch = f.is_switch(p.node);
    const bool should_have = is_switch ? p.port == 0 : f.peer(p).valid();
    ASSERT_EQ(f.base_lid(p) != 0, should_have) << f.name(p.node) << " port " << p.port;
    if (!should_have) continue;
    ++with_lid;
    const int expected_lmc = is_switch && !lmc_switches ? 0 : lmc;
    ASSERT_EQ(f.lmc(p), expected_lmc) << f.name(p.node);
    const Lid base = f.base_lid(p), count = Lid{1} << expected_lmc;
    EXPECT_EQ(base % count, 0u) << f.name(p.node) << " LID " << base << " not aligned";
    ASSERT_GE(base, 1u);
    ASSERT_LE(base + count - 1, kMaxUnicastLid);
    for (Lid l = base; l < base + count; ++l) {
      EXPECT_EQ(++owners[l], 1) << "LID " << l << " given twice";
      EXPECT_EQ(f.lid_owner(l), p);
    }
    if (is_switch) {
      min_switch = std::min(min_switch, base);
      EXPECT_EQ(f.switch_lid(p.node), base);
    } else {
      max_hca = std::max(max_hca, base + count - 1);
    }
  }
  EXPECT_LT(max_hca, min_switch) << "HCA LIDs come first";
  EXPECT_EQ(static_cast<size_t>(with_lid), f.Endpoints().size() + f.switches().size());
  if (lmc == 0) {  // nothing to align: the LIDs are exactly 1..N
    EXPECT_EQ(f.max_lid(), static_cast<Lid>(with_lid));
  }
}

TEST(AssignLids, DistinctAlignedInRangeForEveryLmc) {
  for (int lmc = 0; lmc <= 7; ++lmc) {
    for (bool lmc_switches : {false, true}) {
      SCOPED_TRACE("lmc " + std::to_string(lmc) + (lmc_switches ? " +switches" : ""));
      Fabric f;
      ASSERT_TRUE(GenerateKaryNTree(3, 3, {}, &f).ok());
      ASSERT_TRUE(AssignLids({lmc, lmc_switches}, &f).ok());
      CheckAssignment(f, lmc, lmc_switches);
    }
  }
}

TEST(AssignLids, SkipsUncabledHcaPortsAndEmptySlots) {
  PgftSpec dual{2, {3, 2}, {2, 3}, {1, 1}};  // dual-homed hosts
  Fabric f;
  ASSERT_TRUE(GeneratePgft(dual, {}, &f).ok());
  const NodeId h = f.hcas()[1];
  f.Disconnect({h, 2});
  ASSERT_TRUE(AssignLids({2, false}, &f).ok());
  CheckAssignment(f, 2, false);
  EXPECT_EQ(f.base_lid({h, 2}), 0u);
  EXPECT_NE(f.base_lid({h, 1}), 0u);
}

TEST(AssignLids, DeterministicAndIndependentOfEarlierLids) {
  Fabric a, b;
  ASSERT_TRUE(GenerateFatTree2(6, 4, 1, {}, &a).ok());
  ASSERT_TRUE(GenerateFatTree2(6, 4, 1, {}, &b).ok());
  ASSERT_TRUE(AssignLids({1, false}, &a).ok());
  ASSERT_TRUE(AssignLids({3, true}, &b).ok());  // something else first
  ASSERT_TRUE(AssignLids({1, false}, &b).ok());
  EXPECT_EQ(LidTable(a), LidTable(b));
  CheckAssignment(b, 1, false);
}

// Ground truth from OpenSM 3.3.23 on ibsim: FT(2;2,2) written by hand as an ibsim file in the
// generator's order, guid2lid pre-seeded with these ranges, `opensm -o -l <lmc>`. OpenSM wrote
// back exactly these ranges and ibnetdiscover showed the same LIDs. With lmc_esp0 FALSE (the
// default) a switch keeps one unaligned LID; with lmc_esp0 TRUE it keeps an aligned 2^lmc range.
TEST(AssignLids, MatchesWhatOpenSmKept) {
  const Guid s0 = 0x0002c90000100000ULL, h0 = 0x0002c90000200001ULL;
  struct Case {
    int lmc;
    bool lmc_switches;
    std::map<Guid, Range> kept;
  };
  const std::vector<Case> cases = {
      {0,
       false,
       {{h0, {1, 1}},
        {h0 + 2, {2, 2}},
        {h0 + 4, {3, 3}},
        {h0 + 6, {4, 4}},
        {s0, {5, 5}},
        {s0 + 1, {6, 6}},
        {s0 + 2, {7, 7}},
        {s0 + 3, {8, 8}}}},
      {1,
       false,
       {{h0, {2, 3}},
        {h0 + 2, {4, 5}},
        {h0 + 4, {6, 7}},
        {h0 + 6, {8, 9}},
        {s0, {10, 10}},
        {s0 + 1, {11, 11}},
        {s0 + 2, {12, 12}},
        {s0 + 3, {13, 13}}}},
      {2,
       false,
       {{h0, {4, 7}},
        {h0 + 2, {8, 11}},
        {h0 + 4, {12, 15}},
        {h0 + 6, {16, 19}},
        {s0, {20, 20}},
        {s0 + 1, {21, 21}},
        {s0 + 2, {22, 22}},
        {s0 + 3, {23, 23}}}},
      {3,
       false,
       {{h0, {8, 15}},
        {h0 + 2, {16, 23}},
        {h0 + 4, {24, 31}},
        {h0 + 6, {32, 39}},
        {s0, {40, 40}},
        {s0 + 1, {41, 41}},
        {s0 + 2, {42, 42}},
        {s0 + 3, {43, 43}}}},
      {2,
       true,
       {{h0, {4, 7}},
        {h0 + 2, {8, 11}},
        {h0 + 4, {12, 15}},
        {h0 + 6, {16, 19}},
        {s0, {20, 23}},
        {s0 + 1, {24, 27}},
        {s0 + 2, {28, 31}},
        {s0 + 3, {32, 35}}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("lmc " + std::to_string(c.lmc));
    Fabric f;
    ASSERT_TRUE(GenerateFatTree2(2, 2, 1, {}, &f).ok());
    ASSERT_TRUE(AssignLids({c.lmc, c.lmc_switches}, &f).ok());
    EXPECT_EQ(LidTable(f), c.kept);
  }
}

TEST(AssignLids, FailsWhenLidsRunOut) {
  // 49152 hosts + 4096 switches need more than the 49151 unicast LIDs.
  Fabric f;
  ASSERT_TRUE(GeneratePgft({3, {32, 32, 48}, {1, 32, 32}, {1, 1, 1}}, {}, &f).ok());
  EXPECT_EQ(AssignLids({0, false}, &f).code(), Status::Code::kInvalidArgument);
  // ~45k nodes fit at LMC 0 but not at LMC 1.
  Fabric g;
  ASSERT_TRUE(GeneratePgft({3, {24, 36, 48}, {1, 24, 36}, {1, 1, 1}}, {}, &g).ok());
  ASSERT_TRUE(AssignLids({0, false}, &g).ok());
  CheckAssignment(g, 0, false);
  EXPECT_FALSE(AssignLids({1, false}, &g).ok());
  EXPECT_FALSE(AssignLids({8, false}, &g).ok());
  EXPECT_FALSE(AssignLids({-1, false}, &g).ok());
}

}  // namespace
}  // namespace sar
