#include <gtest/gtest.h>

#include "engines/engine_test_util.h"
#include "engines/sssp_test_util.h"
#include "sar/failures.h"
#include "sar/generate.h"
#include "sar/lids.h"
#include "test_fabrics.h"

namespace sar {
namespace {

using sssptest::ExpectValid;
using sssptest::Measure;
using sssptest::RandomJobs;
using sssptest::Route;

Fabric FatTree2(int m0, int m1, int lmc = 0) {
  Fabric f;
  EXPECT_TRUE(GenerateFatTree2(m0, m1, 1, GenerateOptions{}, &f).ok());
  LidOptions lids;
  lids.lmc = lmc;
  EXPECT_TRUE(AssignLids(lids, &f).ok());
  return f;
}

double MeanJobMax(const Metrics& m) {
  double sum = 0;
  int n = 0;
  for (const JobMetrics& j : m.jobs) {
    if (j.leaf_switches < 2) continue;
    sum += static_cast<double>(j.efi_max);
    ++n;
  }
  return n == 0 ? 0 : sum / n;
}

TEST(Sar, WithoutJobsBalancesLikeDfsssp) {
  for (auto [m0, m1] : {std::pair{6, 5}, {8, 4}, {5, 9}}) {
    const Fabric f = FatTree2(m0, m1);
    RoutingOutput sar, dfsssp;
    ASSERT_TRUE(Route("sar", f, &sar).ok());
    ASSERT_TRUE(Route("dfsssp", f, &dfsssp).ok());
    ExpectValid(f, sar, 8, true);
    const uint64_t a = Measure(f, sar.lfts, {}).efi.max;
    const uint64_t b = Measure(f, dfsssp.lfts, {}).efi.max;
    EXPECT_LE(a, b + 1);
    EXPECT_LE(b, a + 1);
  }
}

// Jobs inside one leaf cross no switch-to-switch channel, so SAR must ignore them.
TEST(Sar, SingleLeafJobsChangeNothing) {
  const Fabric f = FatTree2(4, 4);
  const std::vector<PortRef> eps = f.Endpoints();
  std::vector<ResolvedJob> jobs = {sssptest::MakeJob(f, "a", {eps[0], eps[1], eps[2]})};
  ASSERT_EQ(jobs[0].num_leaf_switches, 1);
  RoutingOutput with, without;
  ASSERT_TRUE(Route("sar", f, &with, &jobs).ok());
  ASSERT_TRUE(Route("sar", f, &without).ok());
  EXPECT_TRUE(with.lfts == without.lfts);
}

// The point of SAR: intra-job routes spread over the channels, so the effective EFI (intra-job
// routes per channel) drops against DFSSSP, which balances all routes alike.
TEST(Sar, LowersEffectiveEfiOnJobMixes) {
  const Fabric f = FatTree2(10, 8);
  double sar_max = 0, dfsssp_max = 0, sar_job = 0, dfsssp_job = 0;
  int sar_wins = 0;
  const int seeds = 6;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    const std::vector<ResolvedJob> jobs = RandomJobs(f, seed, 30);
    RoutingOutput sar, dfsssp;
    ASSERT_TRUE(Route("sar", f, &sar, &jobs).ok());
    ASSERT_TRUE(Route("dfsssp", f, &dfsssp, &jobs).ok());
    ExpectValid(f, sar, 8, true);
    const Metrics ms = Measure(f, sar.lfts, jobs), md = Measure(f, dfsssp.lfts, jobs);
    sar_max += ms.effective_efi.max;
    dfsssp_max += md.effective_efi.max;
    sar_job += MeanJobMax(ms);
    dfsssp_job += MeanJobMax(md);
    sar_wins += ms.effective_efi.max < md.effective_efi.max;
  }
  EXPECT_LT(sar_max, dfsssp_max);
  EXPECT_LT(sar_job, dfsssp_job);
  EXPECT_GE(sar_wins, seeds / 2);
}

TEST(Sar, RandomFabricsAndJobsStayValid) {
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE(seed);
    const Fabric f = testfab::RandomIrregular(seed, 3, 10);
    const std::vector<ResolvedJob> jobs = RandomJobs(f, seed, 5);
    RoutingOutput out;
    const Status st = Route("sar", f, &out, &jobs, 15);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ExpectValid(f, out, 15, true);
  }
}

TEST(Sar, DegradedTreeWithJobsAndLmc) {
  PgftSpec spec;
  ASSERT_TRUE(ParsePgftSpec("pgft:3;4,4,3;1,4,4;1,1,1", &spec).ok());
  Fabric base;
  ASSERT_TRUE(GeneratePgft(spec, GenerateOptions{}, &base).ok());
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(seed);
    Fabric f;
    ASSERT_TRUE(enginetest::Degrade(base, 5, 0, seed, &f));
    LidOptions lids;
    lids.lmc = static_cast<int>(seed % 3);
    ASSERT_TRUE(AssignLids(lids, &f).ok());
    const std::vector<ResolvedJob> jobs = RandomJobs(f, seed, 12);
    RoutingOutput out;
    const Status st = Route("sar", f, &out, &jobs);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ExpectValid(f, out, 8, true);
  }
}

}  // namespace
}  // namespace sar
