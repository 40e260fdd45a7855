#include "sar/study/job_mix.h"

#include <map>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "sar/model/generate.h"
#include "sar/model/jobs.h"

namespace sar {
namespace {

Fabric Ft2(int m0, int m1) {
  Fabric f;
  EXPECT_TRUE(GenerateFatTree2(m0, m1, 1, GenerateOptions(), &f).ok());
  return f;
}

TEST(JobMixTest, JobsAreDisjointSizedAndFillTheMachine) {
  const Fabric f = Ft2(18, 20);  // 20 leaves x 18 hosts
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    JobMixOptions o;
    o.seed = seed;
    JobMapping mix;
    ASSERT_TRUE(GenerateJobMix(f, o, &mix).ok());
    std::set<std::string> used;
    size_t busy = 0;
    for (const Job& j : mix.jobs) {
      EXPECT_GE(static_cast<int>(j.hosts.size()), o.min_size);
      EXPECT_LE(static_cast<int>(j.hosts.size()), o.max_size);
      for (const std::string& h : j.hosts) EXPECT_TRUE(used.insert(h).second) << h;
      busy += j.hosts.size();
    }
    EXPECT_LE(busy, 360u);
    EXPECT_GE(busy, 360u * 6 / 10) << "seed " << seed;
    // Every host is a real host of the fabric.
    std::vector<std::string> unknown;
    ResolveJobs(f, mix, &unknown);
    EXPECT_TRUE(unknown.empty());
  }
}

TEST(JobMixTest, SmallJobsStayOnOneLeafAndBigOnesSpanFew) {
  const Fabric f = Ft2(18, 20);
  int multi = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    JobMixOptions o;
    o.seed = seed;
    JobMapping mix;
    ASSERT_TRUE(GenerateJobMix(f, o, &mix).ok());
    for (const ResolvedJob& r : ResolveJobs(f, mix)) {
      const int hosts = static_cast<int>(r.endpoints.size());
      // Best fit never spreads a job over more leaves than it needs by more than the holes
      // force; at the least, no job uses more leaves than hosts.
      EXPECT_LE(r.num_leaf_switches, hosts);
      if (hosts > 18) {
        EXPECT_GE(r.num_leaf_switches, 2);
      }
      multi += r.num_leaf_switches >= 2;
    }
  }
  EXPECT_GT(multi, 0) << "a busy machine has multi-leaf jobs";
}

// --run-length: every job in runs of at most N hosts per leaf, so any job larger than N spans
// several leaves, and (as long as it fits in one round over the leaves) never more than N on one.
TEST(JobMixTest, RunLengthFragmentsJobsOverLeaves) {
  const Fabric f = Ft2(18, 20);
  int multi = 0, jobs = 0;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    JobMixOptions o;
    o.seed = seed;
    o.run_length = 3;
    o.max_size = 40;
    o.rounds = 1;  // half full: every job finds 14+ leaves with 3 free hosts
    o.utilization = 0.5;
    JobMapping mix;
    ASSERT_TRUE(GenerateJobMix(f, o, &mix).ok());
    for (const ResolvedJob& r : ResolveJobs(f, mix)) {
      const int hosts = static_cast<int>(r.endpoints.size());
      std::map<NodeId, int> per_leaf;
      for (const PortRef& e : r.endpoints) ++per_leaf[f.peer(e).node];
      for (const auto& [leaf, n] : per_leaf) EXPECT_LE(n, 3) << r.id;
      if (hosts > 3) {
        EXPECT_GE(r.num_leaf_switches, (hosts + 2) / 3) << r.id;
      }
      multi += r.num_leaf_switches >= 2;
      ++jobs;
    }
  }
  EXPECT_GT(multi, jobs / 2);
  JobMixOptions bad;
  bad.run_length = -1;
  JobMapping mix;
  EXPECT_FALSE(GenerateJobMix(f, bad, &mix).ok());
}

TEST(JobMixTest, DeterministicForASeedAndDifferentAcrossSeeds) {
  const Fabric f = Ft2(8, 8);
  JobMixOptions o;
  o.max_size = 24;
  JobMapping a, b, c;
  ASSERT_TRUE(GenerateJobMix(f, o, &a).ok());
  ASSERT_TRUE(GenerateJobMix(f, o, &b).ok());
  o.seed = 2;
  ASSERT_TRUE(GenerateJobMix(f, o, &c).ok());
  auto flat = [](const JobMapping& m) {
    std::string s;
    for (const Job& j : m.jobs) {
      s += j.id + ":";
      for (const std::string& h : j.hosts) s += h + ",";
    }
    return s;
  };
  EXPECT_EQ(flat(a), flat(b));
  EXPECT_NE(flat(a), flat(c));
}

TEST(JobMixTest, RejectsBadOptions) {
  const Fabric f = Ft2(4, 4);
  JobMapping m;
  JobMixOptions o;
  o.min_size = 5;
  o.max_size = 4;
  EXPECT_EQ(GenerateJobMix(f, o, &m).code(), Status::Code::kInvalidArgument);
  o = JobMixOptions();
  o.utilization = 1.5;
  EXPECT_EQ(GenerateJobMix(f, o, &m).code(), Status::Code::kInvalidArgument);
}

}  // namespace
}  // namespace sar
