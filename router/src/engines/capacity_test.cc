// Capacity weighting in the SSSP core (dfsssp and sar): a cable trained below the fabric's
// nominal rate gets routes in proportion to its rate, and the per-capacity load beats the
// capacity-blind routing of the same fabric. Judged only with ComputeMetrics.
#include <gtest/gtest.h>

#include "engines/sssp_test_util.h"
#include "sar/generate.h"
#include "sar/lids.h"

namespace sar {
namespace {

using sssptest::ExpectValid;
using sssptest::Measure;
using sssptest::RandomJobs;
using sssptest::Route;

constexpr LinkRate kEdr{4, LaneSpeed::kEdr};
constexpr LinkRate kDdr{4, LaneSpeed::kDdr};

// A two-level PGFT (the production fabric by default: 4 leaves of 24 hosts, 2 spines, 6
// cables per leaf-spine pair), every port 4xEDR (declared: all equal) or, with `slow`, the
// first leaf's first uplink cable trained down to 4xDDR.
struct Degraded {
  Fabric fabric;
  PortId up = kNoPort;    // the slow cable, leaf -> spine
  PortId down = kNoPort;  // and spine -> leaf
};

Degraded Build(bool slow, const char* spec = "pgft:2;24,4;1,2;1,6") {
  Degraded d;
  Fabric& f = d.fabric;
  PgftSpec pgft;
  EXPECT_TRUE(ParsePgftSpec(spec, &pgft).ok());
  EXPECT_TRUE(GeneratePgft(pgft, GenerateOptions{}, &f).ok());
  EXPECT_TRUE(AssignLids(LidOptions{}, &f).ok());
  for (PortId id = 0; id < f.num_port_slots(); ++id) {
    if (f.peer_id(id) != kNoPort) f.set_port_rate(f.port_ref(id), kEdr);
  }
  const NodeId leaf = f.switches()[0];
  for (int p = 1; p <= f.num_ports(leaf) && d.up == kNoPort; ++p) {
    if (f.is_inter_switch(f.port_id(leaf, p))) d.up = f.port_id(leaf, p);
  }
  d.down = f.peer_id(d.up);
  if (slow) {
    f.set_port_rate(f.port_ref(d.up), kDdr);
    f.set_port_rate(f.port_ref(d.down), kDdr);
  }
  return d;
}

// The fabric's other leaf-to-spine channels (same direction as `like`).
double MeanOthers(const Fabric& f, const std::vector<uint64_t>& load, PortId like) {
  const bool up = f.switch_index(f.port_node(like)) < f.switch_index(f.port_node(f.peer_id(like)));
  double sum = 0;
  int n = 0;
  for (PortId id = 0; id < f.num_port_slots(); ++id) {
    if (id == like || !f.is_inter_switch(id)) continue;
    const bool id_up = f.switch_index(f.port_node(id)) < f.switch_index(f.port_node(f.peer_id(id)));
    if (id_up != up) continue;
    sum += static_cast<double>(load[id]);
    ++n;
  }
  return sum / n;
}

// With every link declared at one rate the weights scale uniformly: the tables are exactly
// those of a fabric that declares nothing.
TEST(Capacity, AllEqualRatesChangeNothing) {
  for (const char* engine : {"dfsssp", "sar"}) {
    const Degraded declared = Build(false);
    Fabric plain;
    PgftSpec pgft;
    ASSERT_TRUE(ParsePgftSpec("pgft:2;24,4;1,2;1,6", &pgft).ok());
    ASSERT_TRUE(GeneratePgft(pgft, GenerateOptions{}, &plain).ok());
    ASSERT_TRUE(AssignLids(LidOptions{}, &plain).ok());
    const std::vector<ResolvedJob> jobs = RandomJobs(plain, 7, 9);
    RoutingOutput a, b;
    ASSERT_TRUE(Route(engine, declared.fabric, &a, &jobs).ok());
    ASSERT_TRUE(Route(engine, plain, &b, &jobs).ok());
    for (int s = 0; s < plain.num_switches(); ++s) {
      for (Lid l = 1; l <= plain.max_lid(); ++l) {
        ASSERT_EQ(a.lfts.port(s, l), b.lfts.port(s, l))
            << engine << " switch " << s << " lid " << l;
      }
    }
  }
}

// Without jobs (dfsssp, and sar's balancing of all routes): the slow cable carries at most its
// share by rate (4xDDR = 0.16 of 4xEDR; routes come in chunks of a leaf's 24 sources per
// destination, so here the share rounds to nothing), and the per-capacity maximum is far below
// the capacity-blind routing's, where the slow cable carries a full share.
TEST(Capacity, SlowCableGetsAtMostItsShareByRate) {
  const Degraded slow = Build(true);
  const Degraded blind = Build(false);
  const double ratio = 16000.0 / 100000.0;
  for (const char* engine : {"dfsssp", "sar"}) {
    RoutingOutput aware, unaware;
    ASSERT_TRUE(Route(engine, slow.fabric, &aware).ok());
    ASSERT_TRUE(Route(engine, blind.fabric, &unaware).ok());
    ExpectValid(slow.fabric, aware, 8, true);
    const Metrics ma = Measure(slow.fabric, aware.lfts, {});
    const Metrics mu = Measure(slow.fabric, unaware.lfts, {});  // judged on the real rates
    for (PortId c : {slow.up, slow.down}) {
      const double mean = MeanOthers(slow.fabric, ma.efi_per_channel, c);
      const double got = static_cast<double>(ma.efi_per_channel[c]);
      EXPECT_LE(got, ratio * mean + 24)
          << engine << " channel " << c << ": " << got << " routes vs mean " << mean;
      // Blind, it carries about a full share.
      EXPECT_GT(static_cast<double>(mu.efi_per_channel[c]), 0.4 * mean) << engine;
    }
    EXPECT_EQ(ma.slow_channels, 2);
    EXPECT_LT(ma.efi_per_capacity.max, 0.5 * mu.efi_per_capacity.max) << engine;
    // The other cables absorb the difference; the raw maximum grows by at most half.
    EXPECT_LE(ma.efi.max, mu.efi.max * 3 / 2) << engine;
  }
}

// SAR with jobs: the per-capacity maximum of the effective EFI is below capacity-blind SAR's
// on every job mix tried.
TEST(Capacity, SarEffectiveLoadPerCapacityBelowBlindSar) {
  const Degraded slow = Build(true);
  const Degraded blind = Build(false);
  for (uint64_t seed : {1, 2, 3, 4}) {
    const std::vector<ResolvedJob> jobs = RandomJobs(slow.fabric, seed, 12);
    RoutingOutput aware, unaware;
    ASSERT_TRUE(Route("sar", slow.fabric, &aware, &jobs).ok());
    ASSERT_TRUE(Route("sar", blind.fabric, &unaware, &jobs).ok());
    ExpectValid(slow.fabric, aware, 8, true);
    const Metrics ma = Measure(slow.fabric, aware.lfts, jobs);
    const Metrics mu = Measure(slow.fabric, unaware.lfts, jobs);
    EXPECT_LT(ma.effective_efi_per_capacity.max, mu.effective_efi_per_capacity.max)
        << "seed " << seed;
    for (PortId c : {slow.up, slow.down}) {
      EXPECT_LT(ma.effective_efi_per_channel[c], mu.effective_efi_per_channel[c] + 1)
          << "seed " << seed;
    }
  }
}

}  // namespace
}  // namespace sar
