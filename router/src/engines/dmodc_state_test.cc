// DmodcRouter's incremental reroute against the dmodc engine's full pass on the same degraded
// fabric, entry for entry, over random sequences of cable failures and repairs.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "engines/engine_test_util.h"
#include "sar/engines/dmodc.h"
#include "sar/model/failures.h"

namespace sar {
namespace {

using enginetest::Pgft;
using enginetest::Spec;

// Every switch-to-switch cable of `f`, named by its end with the lower port slot.
std::vector<std::pair<std::string, int>> SwitchCables(const Fabric& f) {
  std::vector<std::pair<std::string, int>> cables;
  for (PortId c = 0; c < f.num_port_slots(); ++c) {
    if (!f.is_inter_switch(c) || f.peer_id(c) < c) continue;
    const PortRef r = f.port_ref(c);
    cables.push_back({f.name(r.node), r.port});
  }
  return cables;
}

struct Counts {
  int steps = 0, incremental = 0, failed = 0;
};

// One random walk: each step cuts 1-3 live cables or repairs 1-2 cut ones, then compares.
Counts Walk(const Fabric& intact, uint64_t seed, int steps, int threads) {
  std::mt19937_64 rng(seed);
  const auto cables = SwitchCables(intact);
  std::set<size_t> cut;
  DmodcRouter router;
  const auto engine = MakeRoutingEngine("dmodc");
  Counts counts;
  for (int step = 0; step < steps; ++step) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " step " + std::to_string(step));
    if (step > 0) {
      if (!cut.empty() && rng() % 3 == 0) {
        for (int k = 1 + static_cast<int>(rng() % 2); k > 0 && !cut.empty(); --k) {
          auto it = cut.begin();
          std::advance(it, rng() % cut.size());
          cut.erase(it);
        }
      } else {
        for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k) cut.insert(rng() % cables.size());
      }
    }
    FailureSet fs;
    for (size_t c : cut) fs.links.push_back(cables[c]);
    Fabric f;
    EXPECT_TRUE(ApplyFailures(intact, fs, &f).ok());
    RoutingInput in;
    in.fabric = &f;
    in.threads = threads;
    RoutingOutput want;
    const Status full = engine->Route(in, &want);
    const Status inc = router.Reroute(in);
    EXPECT_EQ(inc.ok(), full.ok()) << inc.ToString() << " vs " << full.ToString();
    ++counts.steps;
    if (!full.ok()) {
      ++counts.failed;
      EXPECT_EQ(inc.ToString(), full.ToString());
      continue;
    }
    if (!inc.ok()) continue;
    counts.incremental += router.last().incremental;
    if (!(router.lfts() == want.lfts)) {
      int bad = 0;
      for (int s = 0; s < f.num_switches() && bad < 5; ++s) {
        for (Lid l = 0; l <= f.max_lid() && bad < 5; ++l) {
          if (router.lfts().port(s, l) != want.lfts.port(s, l)) {
            ADD_FAILURE() << f.name(f.switches()[s]) << " lid " << l << ": incremental "
                          << int(router.lfts().port(s, l)) << ", full " << int(want.lfts.port(s, l))
                          << " (incremental pass " << router.last().incremental << ", "
                          << router.last().full_reason << ")";
            ++bad;
          }
        }
      }
      return counts;  // later steps would only repeat the difference
    }
  }
  return counts;
}

TEST(DmodcRouter, IncrementalRerouteEqualsTheFullPassOverRandomFailuresAndRepairs) {
  std::mt19937_64 rng(3);
  std::vector<std::pair<PgftSpec, int>> fabrics = {
      {Spec(3, {4, 4, 4}, {1, 4, 4}, {1, 1, 1}), 0},
      {Spec(3, {4, 3, 2}, {1, 2, 3}, {1, 2, 2}), 1},  // parallel cables, LMC 1
      {Spec(3, {2, 2, 3}, {1, 2, 2}, {1, 2, 1}), 2},
      {Spec(2, {6, 5}, {1, 4}, {1, 1}), 0},
  };
  for (int i = 0; i < 6; ++i) fabrics.push_back({enginetest::RandomSpec(&rng), i % 3});
  Counts total;
  for (size_t i = 0; i < fabrics.size(); ++i) {
    const Fabric intact = Pgft(fabrics[i].first, fabrics[i].second);
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      const Counts c = Walk(intact, seed * 100 + i, 25, static_cast<int>(seed % 3));
      total.steps += c.steps;
      total.incremental += c.incremental;
      total.failed += c.failed;
    }
  }
  // The incremental path, not the fallback, did most of the work; some walks cut a leaf
  // pair apart (the full pass's error, reported the same way).
  EXPECT_GT(total.incremental, total.steps / 2) << total.incremental << " of " << total.steps;
  EXPECT_GT(total.failed, 0);
}

TEST(DmodcRouter, FallsBackToAFullPassWhenTheHcasChange) {
  const Fabric a = Pgft(Spec(2, {4, 4}, {1, 4}, {1, 1}), 0);
  const Fabric b = Pgft(Spec(2, {4, 5}, {1, 4}, {1, 1}), 0);
  DmodcRouter router;
  RoutingInput in;
  in.fabric = &a;
  ASSERT_TRUE(router.Reroute(in).ok());
  EXPECT_FALSE(router.last().incremental);
  in.fabric = &b;
  ASSERT_TRUE(router.Reroute(in).ok());
  EXPECT_FALSE(router.last().incremental);
  EXPECT_EQ(router.last().full_reason, "the switches changed");
  EXPECT_EQ(router.lfts(), enginetest::RouteOk("dmodc", b).lfts);
  // The same fabric again: nothing changed, nothing refilled.
  ASSERT_TRUE(router.Reroute(in).ok());
  EXPECT_TRUE(router.last().incremental);
  EXPECT_EQ(router.last().rows_refilled, 0);
  EXPECT_EQ(router.lfts(), enginetest::RouteOk("dmodc", b).lfts);
  // Bad input is refused as by every engine, and the last tables stay.
  in.num_vls = 0;
  const Status bad = router.Reroute(in);
  EXPECT_EQ(bad.code(), Status::Code::kInvalidArgument) << bad.ToString();
  EXPECT_EQ(router.lfts(), enginetest::RouteOk("dmodc", b).lfts);
}

}  // namespace
}  // namespace sar
