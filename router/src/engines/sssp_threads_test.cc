// The SSSP engines' worker threads (RoutingInput::threads) change nothing but the time: SAR's
// refinement splits each search among them and the virtual layers walk and fill blocks of
// destinations on them, and the tables and virtual layers must be those of one thread. (The
// paths themselves are computed on one thread.) The fabrics are three-level PGFTs (432
// switches), degraded at random, with random job mixes, and once with slower cables (the
// capacity-weighted mode).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "engines/engine_test_util.h"
#include "engines/sssp_test_util.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"

namespace sar {
namespace {

constexpr LinkRate kEdr{4, LaneSpeed::kEdr};
constexpr LinkRate kDdr{4, LaneSpeed::kDdr};

// 576 hosts: 144 leaves, 144 second-level and 144 top switches.
Fabric Base(int lmc) {
  return enginetest::Pgft(enginetest::Spec(3, {4, 12, 12}, {1, 12, 12}, {1, 1, 1}), lmc);
}

// Every cabled port at 4xEDR, then about one inter-switch cable in `one_in` at 4xDDR (both ends).
void SlowSomeCables(Fabric* f, uint64_t seed, int one_in) {
  std::mt19937_64 rng(seed);
  for (PortId id = 0; id < f->num_port_slots(); ++id) {
    if (f->peer_id(id) != kNoPort) f->set_port_rate(f->port_ref(id), kEdr);
  }
  for (PortId id = 0; id < f->num_port_slots(); ++id) {
    const PortId peer = f->peer_id(id);
    if (peer == kNoPort || peer < id || !f->is_inter_switch(id)) continue;
    if (rng() % one_in != 0) continue;
    f->set_port_rate(f->port_ref(id), kDdr);
    f->set_port_rate(f->port_ref(peer), kDdr);
  }
}

RoutingOutput RouteWith(const std::string& engine, const Fabric& f,
                        const std::vector<ResolvedJob>& jobs, int threads) {
  RoutingInput in;
  in.fabric = &f;
  in.jobs = &jobs;
  in.threads = threads;
  RoutingOutput out;
  const Status st = MakeRoutingEngine(engine)->Route(in, &out);
  EXPECT_TRUE(st.ok()) << st.message();
  return out;
}

void ExpectSameForAnyThreads(const Fabric& f, const std::vector<ResolvedJob>& jobs) {
  for (const char* engine : {"sar", "dfsssp"}) {
    SCOPED_TRACE(engine);
    const RoutingOutput one = RouteWith(engine, f, jobs, 1);
    ASSERT_GT(one.lfts.num_switches(), 0);
    for (int threads : {2, 3}) {
      SCOPED_TRACE("threads " + std::to_string(threads));
      const RoutingOutput many = RouteWith(engine, f, jobs, threads);
      EXPECT_TRUE(many.lfts == one.lfts) << "tables differ";
      EXPECT_EQ(many.num_layers, one.num_layers);
      const std::vector<VirtualLayers::Entry> a = one.layers.Entries(), b = many.layers.Entries();
      ASSERT_EQ(a.size(), b.size());
      size_t differ = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        differ += a[i].src != b[i].src || a[i].dst != b[i].dst || a[i].layer != b[i].layer;
      }
      EXPECT_EQ(differ, 0u) << "layer entries differ";
    }
  }
}

TEST(SsspThreads, DegradedPgftsWithJobsRouteAlikeOnAnyThreadCount) {
  int built = 0;
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Fabric intact = Base(static_cast<int>(seed % 2));
    Fabric f;
    if (!enginetest::Degrade(intact, 5 + 10 * static_cast<int>(seed), static_cast<int>(seed % 2),
                             seed, &f)) {
      continue;
    }
    ++built;
    ExpectSameForAnyThreads(f, sssptest::RandomJobs(f, seed, 40));
  }
  EXPECT_GE(built, 2);
}

TEST(SsspThreads, SlowCablesRouteAlikeOnAnyThreadCount) {
  Fabric f;
  ASSERT_TRUE(enginetest::Degrade(Base(0), 12, 0, 7, &f));
  SlowSomeCables(&f, 7, 10);
  ExpectSameForAnyThreads(f, sssptest::RandomJobs(f, 7, 30));
}

}  // namespace
}  // namespace sar
