#include "filter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <utility>

#include "job_set_diff.h"
#include "sar/model/jobs.h"
#include "test_fabrics.h"

namespace sar::filterd {
namespace {

LeafMap Leaves(int num_leaves, int per_leaf) {
  LeafMap map;
  for (int l = 0; l < num_leaves; ++l) {
    for (int h = 0; h < per_leaf; ++h) {
      map.Add("n" + std::to_string(l * per_leaf + h), "leaf" + std::to_string(l));
    }
  }
  return map;
}

TEST(Filter, KeepsExactlyTheJobsSpanningEnoughLeaves) {
  // Property check against a brute-force count of distinct leaves (host number / 8).
  const LeafMap leaves = Leaves(6, 8);
  std::mt19937 rng(7);
  std::vector<SourceJob> jobs;
  for (int j = 0; j < 300; ++j) {
    SourceJob job{"j" + std::to_string(j), j % 5 == 0 ? "debug" : "batch", 10 * (j % 7), {}};
    const int n = 1 + static_cast<int>(rng() % 12);
    for (int k = 0; k < n; ++k)
      job.hosts.push_back("n" + std::to_string(rng() % 50));  // 48, 49 unknown
    jobs.push_back(job);
  }
  FilterOptions opt;
  opt.min_leaves = 2;
  opt.min_nodes = 3;
  opt.min_time_limit_min = 20;
  opt.ignore_partitions = {"debug"};
  const FilterResult r = FilterJobs(jobs, leaves, opt);

  std::set<std::string> want_ids;
  std::set<std::string> want_unknown;
  for (const SourceJob& job : jobs) {
    std::set<int> job_leaves;
    std::set<std::string> known;
    for (const std::string& h : job.hosts) {
      const int num = std::stoi(h.substr(1));
      if (num >= 48) {
        if (job.partition != "debug" && job.time_limit_min >= 20) want_unknown.insert(h);
        continue;
      }
      job_leaves.insert(num / 8);
      known.insert(h);
    }
    if (job.partition == "debug" || job.time_limit_min < 20) continue;
    if (job_leaves.size() >= 2 && known.size() >= 3) want_ids.insert(job.id);
  }
  std::set<std::string> got_ids;
  for (const MultiSwitchJob& j : r.jobs) {
    got_ids.insert(j.id);
    EXPECT_TRUE(std::is_sorted(j.hosts.begin(), j.hosts.end()));
  }
  EXPECT_EQ(got_ids, want_ids);
  EXPECT_EQ(std::set<std::string>(r.unknown_hosts.begin(), r.unknown_hosts.end()), want_unknown);
  EXPECT_FALSE(want_ids.empty());
}

TEST(Filter, UnlimitedJobsPassTheTimeLimit) {
  const LeafMap leaves = Leaves(2, 2);
  FilterOptions opt;
  opt.min_time_limit_min = 60;
  const FilterResult r =
      FilterJobs({{"1", "p", -1, {"n0", "n2"}}, {"2", "p", 59, {"n1", "n3"}}}, leaves, opt);
  ASSERT_EQ(r.jobs.size(), 1u);
  EXPECT_EQ(r.jobs[0].id, "1");
  EXPECT_EQ(r.jobs[0].num_leaves, 2);
}

TEST(JobSetDiff, IgnoresIdsAndMatchesMultisetDifference) {
  // Keys are (hosts, pattern): the same hosts with another --sar-pattern are another job.
  using Key = std::pair<std::vector<std::string>, JobPattern>;
  std::mt19937 rng(11);
  for (int round = 0; round < 50; ++round) {
    std::vector<MultiSwitchJob> a, b;
    std::multiset<Key> ma, mb;
    for (int i = 0; i < 20; ++i) {
      std::vector<std::string> hosts = {"h" + std::to_string(rng() % 6),
                                        "x" + std::to_string(rng() % 3)};
      const JobPattern pattern = rng() % 3 ? JobPattern::kDefault : JobPattern::kAllToAll;
      if (rng() % 2) {
        a.push_back({"a" + std::to_string(i), hosts, 2, pattern});
        ma.insert({hosts, pattern});
      } else {
        b.push_back({"b" + std::to_string(i), hosts, 2, pattern});
        mb.insert({hosts, pattern});
      }
    }
    a = FromJobMapping(ToJobMapping(a));  // sorts as FilterJobs does
    b = FromJobMapping(ToJobMapping(b));
    const JobSetDiff d = DiffJobSets(a, b);
    std::multiset<Key> added, removed;
    for (const auto& j : d.added) added.insert({j.hosts, j.pattern});
    for (const auto& j : d.removed) removed.insert({j.hosts, j.pattern});
    // Truth: multiset differences computed by erasing one match at a time.
    std::multiset<Key> want_added = mb, want_removed = ma;
    for (const auto& h : ma) {
      if (auto it = want_added.find(h); it != want_added.end()) want_added.erase(it);
    }
    for (const auto& h : mb) {
      if (auto it = want_removed.find(h); it != want_removed.end()) want_removed.erase(it);
    }
    EXPECT_EQ(added, want_added);
    EXPECT_EQ(removed, want_removed);
  }
}

TEST(JobSetDiff, SameHostsUnderNewIdsIsNoChange) {
  std::vector<MultiSwitchJob> a = {{"1", {"n0", "n9"}, 2}, {"2", {"n1", "n8"}, 2}};
  std::vector<MultiSwitchJob> b = {{"77", {"n0", "n9"}, 2}, {"78", {"n1", "n8"}, 2}};
  EXPECT_FALSE(
      DiffJobSets(FromJobMapping(ToJobMapping(a)), FromJobMapping(ToJobMapping(b))).changed());
}

// The id-only changes are reported (the daemon logs them), each matched job once.
TEST(JobSetDiff, ReportsIdOnlyChanges) {
  const std::vector<MultiSwitchJob> a = {
      {"1", {"n0", "n9"}, 2}, {"2", {"n1", "n8"}, 2}, {"3", {"n2", "n7"}, 2}};
  const std::vector<MultiSwitchJob> b = {{"77", {"n0", "n9"}, 2}, {"2", {"n1", "n8"}, 2}};
  const JobSetDiff d =
      DiffJobSets(FromJobMapping(ToJobMapping(a)), FromJobMapping(ToJobMapping(b)));
  ASSERT_EQ(d.removed.size(), 1u);
  EXPECT_EQ(d.removed[0].id, "3");
  EXPECT_TRUE(d.added.empty());
  ASSERT_EQ(d.renamed.size(), 1u);
  EXPECT_EQ(d.renamed[0], std::make_pair(std::string("1"), std::string("77")));
}

TEST(JobSetDiff, APatternChangeOnTheSameHostsIsAChange) {
  const std::vector<MultiSwitchJob> before = {{"1", {"n0", "n9"}, 2, JobPattern::kDefault}};
  const std::vector<MultiSwitchJob> after = {{"1", {"n0", "n9"}, 2, JobPattern::kAllToAll}};
  const JobSetDiff d = DiffJobSets(before, after);
  ASSERT_EQ(d.added.size(), 1u);
  ASSERT_EQ(d.removed.size(), 1u);
  EXPECT_EQ(d.added[0].pattern, JobPattern::kAllToAll);
  EXPECT_EQ(d.removed[0].pattern, JobPattern::kDefault);
}

TEST(Filter, KeepsEachJobsPattern) {
  LeafMap leaves;
  for (int i = 0; i < 4; ++i) leaves.Add("n" + std::to_string(i), i < 2 ? "l0" : "l1");
  std::vector<SourceJob> jobs(2);
  jobs[0].id = "a2a";
  jobs[0].hosts = {"n0", "n3"};
  jobs[0].pattern = JobPattern::kAllToAll;
  jobs[1].id = "plain";
  jobs[1].hosts = {"n1", "n2"};
  const FilterResult r = FilterJobs(jobs, leaves, FilterOptions());
  ASSERT_EQ(r.jobs.size(), 2u);
  for (const MultiSwitchJob& j : r.jobs) {
    EXPECT_EQ(j.pattern, j.id == "a2a" ? JobPattern::kAllToAll : JobPattern::kDefault) << j.id;
  }
}

// Hosts with several HCAs (rails): sar-filterd's span is the router's (ResolveJobs), for random
// jobs on a rail-optimised fabric, in both pair modes. A one-host job never spans; hosts of one
// unit share a leaf on every rail.
TEST(Filter, RailHostsSpanAsTheRouterSaysInBothPairModes) {
  Fabric f = testfab::RailFabric(3, 4, 4, 2);
  const LeafMap leaves = LeafMapFromFabric(f, {});
  EXPECT_EQ(leaves.num_hosts(), 12);
  ASSERT_NE(leaves.PortsOf("dgx-0-00"), nullptr);
  EXPECT_EQ(leaves.PortsOf("dgx-0-00")->size(), 4u);
  std::mt19937 rng(3);
  std::vector<SourceJob> jobs;
  JobMapping mapping;
  for (int j = 0; j < 120; ++j) {
    SourceJob job{"j" + std::to_string(j), "batch", 60, {}};
    const int n = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < n; ++k) {
      const int unit = j % 3 == 0 ? 0 : static_cast<int>(rng() % 3);  // a third stay in unit 0
      job.hosts.push_back("dgx-" + std::to_string(unit) + "-0" + std::to_string(rng() % 4));
    }
    jobs.push_back(job);
    Job mj{job.id, {}, JobPattern::kDefault};
    for (const std::string& h : job.hosts) {
      if (std::find(mj.hosts.begin(), mj.hosts.end(), h) == mj.hosts.end()) mj.hosts.push_back(h);
    }
    mapping.jobs.push_back(mj);
  }
  for (JobHcaPairs mode : {JobHcaPairs::kRails, JobHcaPairs::kAll}) {
    FilterOptions opt;
    opt.min_leaves = 1;
    opt.hca_pairs = mode;
    const FilterResult r = FilterJobs(jobs, leaves, opt);
    ASSERT_EQ(r.jobs.size(), jobs.size());
    std::map<std::string, int> span;
    for (const MultiSwitchJob& m : r.jobs) span[m.id] = m.num_leaves;
    int spanning = 0, one_host = 0;
    for (const ResolvedJob& rj : ResolveJobs(f, mapping, nullptr, mode)) {
      EXPECT_EQ(span[rj.id], rj.num_leaf_switches) << rj.id << " " << JobHcaPairsName(mode);
      spanning += rj.num_leaf_switches >= 2;
      if (rj.endpoints.size() == 4) {
        ++one_host;
        EXPECT_EQ(span[rj.id], 1) << rj.id;
      }
    }
    EXPECT_GT(one_host, 0);
    EXPECT_GT(spanning, 0);
    EXPECT_LT(spanning, static_cast<int>(jobs.size()));
  }
  // A job of two hosts of one unit: four leaves between them, no rail-aligned traffic across.
  const std::vector<SourceJob> pair = {{"p", "batch", 60, {"dgx-1-00", "dgx-1-03"}}};
  FilterOptions opt;
  EXPECT_TRUE(FilterJobs(pair, leaves, opt).jobs.empty());
  opt.hca_pairs = JobHcaPairs::kAll;
  ASSERT_EQ(FilterJobs(pair, leaves, opt).jobs.size(), 1u);
  EXPECT_EQ(FilterJobs(pair, leaves, opt).jobs[0].num_leaves, 4);
}

}  // namespace
}  // namespace sar::filterd
