#include "sar/jobs.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "test_fabrics.h"

namespace sar {
namespace {

// FatTree2(3 leaves, 2 spines, 2 hosts): h0000 h0001 on leaf00, h0002 h0003 on leaf01, ...
const Fabric& Tree() {
  static const Fabric f = testfab::FatTree2(3, 2, 2);
  return f;
}

PortRef Host(const Fabric& f, const std::string& name) { return {f.FindByName(name), 1}; }

TEST(JobPattern, NamesParseBackToThemselves) {
  for (JobPattern p : {JobPattern::kDefault, JobPattern::kAllToAll}) {
    JobPattern back = p == JobPattern::kDefault ? JobPattern::kAllToAll : JobPattern::kDefault;
    ASSERT_TRUE(ParseJobPattern(JobPatternName(p), &back)) << JobPatternName(p);
    EXPECT_EQ(back, p);
  }
  EXPECT_STREQ(JobPatternName(JobPattern::kDefault), "default");
  EXPECT_STREQ(JobPatternName(JobPattern::kAllToAll), "alltoall");
  JobPattern untouched = JobPattern::kAllToAll;
  for (const char* bad : {"", "AllToAll", "all-to-all", "default ", "x"}) {
    EXPECT_FALSE(ParseJobPattern(bad, &untouched)) << bad;
    EXPECT_EQ(untouched, JobPattern::kAllToAll) << "a failed parse changed its output";
  }
}

TEST(ResolveJobs, HostsBecomeTheirCabledPortsAndLeavesAreCounted) {
  const Fabric& f = Tree();
  JobMapping m;
  m.jobs.push_back({"1", {"h0000", "h0001"}, JobPattern::kDefault});            // one leaf
  m.jobs.push_back({"2", {"h0005", "h0000", "h0002"}, JobPattern::kAllToAll});  // three leaves
  m.jobs.push_back({"3", {}, JobPattern::kDefault});
  const std::vector<ResolvedJob> jobs = ResolveJobs(f, m);
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].id, "1");
  EXPECT_EQ(jobs[0].endpoints, (std::vector<PortRef>{Host(f, "h0000"), Host(f, "h0001")}));
  EXPECT_EQ(jobs[0].num_leaf_switches, 1);
  EXPECT_EQ(jobs[0].pattern, JobPattern::kDefault);
  // File order is kept.
  EXPECT_EQ(jobs[1].endpoints,
            (std::vector<PortRef>{Host(f, "h0005"), Host(f, "h0000"), Host(f, "h0002")}));
  EXPECT_EQ(jobs[1].num_leaf_switches, 3);
  EXPECT_EQ(jobs[1].pattern, JobPattern::kAllToAll);
  EXPECT_TRUE(jobs[2].endpoints.empty());
  EXPECT_EQ(jobs[2].num_leaf_switches, 0);
  // Each endpoint is a cabled HCA port.
  for (const ResolvedJob& j : jobs) {
    for (const PortRef& p : j.endpoints) {
      EXPECT_FALSE(f.is_switch(p.node));
      EXPECT_TRUE(f.peer(p).valid());
    }
  }
}

TEST(ResolveJobs, UnknownHostsAreReportedOnceAndSkipped) {
  const Fabric& f = Tree();
  JobMapping m;
  m.jobs.push_back({"1", {"ghost", "h0000", "nobody"}, JobPattern::kDefault});
  m.jobs.push_back({"2", {"nobody", "h0004", "ghost"}, JobPattern::kDefault});
  std::vector<std::string> unknown;
  const std::vector<ResolvedJob> jobs = ResolveJobs(f, m, &unknown);
  EXPECT_EQ(unknown, (std::vector<std::string>{"ghost", "nobody"}));
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].endpoints, std::vector<PortRef>{Host(f, "h0000")});
  EXPECT_EQ(jobs[1].endpoints, std::vector<PortRef>{Host(f, "h0004")});
  EXPECT_EQ(jobs[1].num_leaf_switches, 1);
  // Without a list to report to, the result is the same.
  const std::vector<ResolvedJob> again = ResolveJobs(f, m);
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].endpoints, jobs[0].endpoints);
}

TEST(ResolveJobs, AHostListedTwiceInAJobCountsOnce) {
  // Job.hosts is documented without duplicates, but a hand-built mapping (filterd, tests) may
  // repeat one; each endpoint must still be in the job once, or the job's routes count twice.
  const Fabric& f = Tree();
  JobMapping m;
  m.jobs.push_back({"1", {"h0000", "h0002", "h0000"}, JobPattern::kDefault});
  m.jobs.push_back({"2", {"h0000"}, JobPattern::kDefault});  // other jobs may share it
  const std::vector<ResolvedJob> jobs = ResolveJobs(f, m);
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].endpoints, (std::vector<PortRef>{Host(f, "h0000"), Host(f, "h0002")}));
  EXPECT_EQ(jobs[0].num_leaf_switches, 2);
  EXPECT_EQ(jobs[1].endpoints, std::vector<PortRef>{Host(f, "h0000")});
}

TEST(ResolveJobs, AHostWithSeveralCabledPortsContributesEach) {
  // One host name on a dual-port HCA cabled to two leaves, plus a second HCA of the same host
  // (the hostname is the first word of the node description).
  Fabric f;
  const NodeId l0 = testfab::AddSwitch(&f, 4, "l0");
  const NodeId l1 = testfab::AddSwitch(&f, 4, "l1");
  testfab::Cable(&f, l0, l1);
  const NodeId dual = f.AddNode(NodeKind::kHca, 2, 0x10, "dual", "big HCA-1");
  const NodeId second = f.AddNode(NodeKind::kHca, 2, 0x20, "second", "big HCA-2");
  const NodeId other = f.AddNode(NodeKind::kHca, 1, 0x30, "other", "small HCA-1");
  ASSERT_TRUE(f.Connect({dual, 1}, {l0, 2}).ok());
  ASSERT_TRUE(f.Connect({dual, 2}, {l1, 2}).ok());
  ASSERT_TRUE(f.Connect({second, 2}, {l1, 3}).ok());  // port 1 uncabled: not an endpoint
  ASSERT_TRUE(f.Connect({other, 1}, {l0, 3}).ok());
  JobMapping m;
  m.jobs.push_back({"j", {"big"}, JobPattern::kDefault});
  const std::vector<ResolvedJob> jobs = ResolveJobs(f, m);
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].endpoints, (std::vector<PortRef>{{dual, 1}, {dual, 2}, {second, 2}}));
  EXPECT_EQ(jobs[0].num_leaf_switches, 2);
}

TEST(ResolveJobs, NoJobsGiveNothing) {
  std::vector<std::string> unknown{"stale"};
  EXPECT_TRUE(ResolveJobs(Tree(), JobMapping{}, &unknown).empty());
  EXPECT_EQ(unknown, std::vector<std::string>{"stale"}) << "appends, never clears";
}

}  // namespace
}  // namespace sar
