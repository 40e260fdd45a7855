#include "sar/model/jobs.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "sar/analysis/analysis.h"
#include "sar/analysis/flows.h"
#include "sar/analysis/lower_bound.h"
#include "sar/analysis/metrics.h"
#include "sar/engines/engine.h"
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
  // Its traffic stays inside the host: a one-host job is never multi-switch.
  EXPECT_EQ(jobs[0].num_leaf_switches, 1);
  // With a second host (one port, so on every rail) its ports on l1 talk to l0.
  m.jobs[0].hosts.push_back("small");
  EXPECT_EQ(ResolveJobs(f, m)[0].num_leaf_switches, 2);
}

TEST(ResolveJobs, NoJobsGiveNothing) {
  std::vector<std::string> unknown{"stale"};
  EXPECT_TRUE(ResolveJobs(Tree(), JobMapping{}, &unknown).empty());
  EXPECT_EQ(unknown, std::vector<std::string>{"stale"}) << "appends, never clears";
}

// ---- Hosts with several HCAs (rails) ----

// Two units of 3 DGX-like hosts with 4 rails each (RailFabric): dgx-U-HH on leaf-U-R for rail R.
const Fabric& Rails() {
  static const Fabric f = testfab::RailFabric(2, 3, 4, 2);
  return f;
}

// Brute force over every ordered endpoint pair of the job, from the fabric alone: the rail of a
// port is the number in its description, its host the description's first word.
struct Brute {
  uint64_t pairs = 0;
  bool crosses = false;  // some pair that talks is on two leaves
};
Brute BrutePairs(const Fabric& f, const ResolvedJob& job, bool all) {
  Brute b;
  for (const PortRef& a : job.endpoints) {
    for (const PortRef& c : job.endpoints) {
      const std::string& da = f.description(a.node);
      const std::string& dc = f.description(c.node);
      if (da.substr(0, da.find(' ')) == dc.substr(0, dc.find(' '))) continue;    // one host
      if (!all && da.substr(da.find(' ')) != dc.substr(dc.find(' '))) continue;  // other rail
      ++b.pairs;
      b.crosses |= f.peer(a).node != f.peer(c).node;
    }
  }
  return b;
}

TEST(HcaRails, TheNumberOfTheHcaNameRankedPerPrefix) {
  const Fabric& f = Rails();
  const std::vector<PortRef> ends = f.Endpoints();
  const std::vector<int> rails = HcaRails(f);
  ASSERT_EQ(rails.size(), ends.size());
  for (size_t i = 0; i < ends.size(); ++i) {
    const std::string& d = f.description(ends[i].node);
    EXPECT_EQ(rails[i], d.back() - '0') << d;
  }
  // HCA-1..4 are rails 0..3 too (ranks, not the numbers); a host of one HCA port is on every
  // rail.
  Fabric g = testfab::RailFabric(1, 2, 4, 1, "HCA-", 1);
  const NodeId sw = g.FindByName("leaf-0-0");
  const NodeId lone = g.AddNode(NodeKind::kHca, 1, 0x7700, "lone", "lone mlx5_3");
  ASSERT_TRUE(g.Connect({lone, 1}, {sw, 4}).ok());
  testfab::AssignTestLids(&g, 0);
  const std::vector<PortRef> gends = g.Endpoints();
  const std::vector<int> grails = HcaRails(g);
  for (size_t i = 0; i < gends.size(); ++i) {
    const std::string& d = g.description(gends[i].node);
    EXPECT_EQ(grails[i], gends[i].node == lone ? kAnyRail : d.back() - '1') << d;
  }
}

TEST(HcaRails, NamesWithoutDistinctNumbersFallBackToPortGuidOrder) {
  // One host with two HCAs both named "HCA-1": ranks by port GUID.
  Fabric f;
  const NodeId sw = testfab::AddSwitch(&f, 4, "sw");
  const NodeId b = f.AddNode(NodeKind::kHca, 1, 0x900, "b", "box HCA-1");
  const NodeId a = f.AddNode(NodeKind::kHca, 1, 0x800, "a", "box HCA-1");
  testfab::Cable(&f, b, sw);
  testfab::Cable(&f, a, sw);
  testfab::AssignTestLids(&f, 0);
  const std::vector<PortRef> ends = f.Endpoints();
  const std::vector<int> rails = HcaRails(f);
  for (size_t i = 0; i < ends.size(); ++i) EXPECT_EQ(rails[i], ends[i].node == a ? 0 : 1);
}

TEST(ResolveJobs, AOneHostJobOnRailsIsNeverMultiSwitch) {
  const Fabric& f = Rails();
  JobMapping m;
  m.jobs.push_back({"one", {"dgx-0-00"}, JobPattern::kDefault});
  for (JobHcaPairs mode : {JobHcaPairs::kRails, JobHcaPairs::kAll}) {
    const std::vector<ResolvedJob> jobs = ResolveJobs(f, m, nullptr, mode);
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].endpoints.size(), 4u);  // all its HCA ports, on 4 leaves
    EXPECT_EQ(jobs[0].num_leaf_switches, 1);
    EXPECT_TRUE(JobTrafficGroups(f, jobs[0]).empty());
    EXPECT_EQ(BrutePairs(f, jobs[0], true).pairs, 0u);
  }
}

TEST(ResolveJobs, RailAlignedJobsSpanOnlyWhereTheirTrafficCrosses) {
  const Fabric& f = Rails();
  JobMapping m;
  m.jobs.push_back({"unit", {"dgx-0-00", "dgx-0-01", "dgx-0-02"}, JobPattern::kDefault});
  m.jobs.push_back({"across", {"dgx-0-00", "dgx-1-02"}, JobPattern::kDefault});
  for (JobHcaPairs mode : {JobHcaPairs::kRails, JobHcaPairs::kAll}) {
    const bool all = mode == JobHcaPairs::kAll;
    const std::vector<ResolvedJob> jobs = ResolveJobs(f, m, nullptr, mode);
    ASSERT_EQ(jobs.size(), 2u);
    for (const ResolvedJob& j : jobs) {
      const Brute b = BrutePairs(f, j, all);
      uint64_t pairs = 0;
      for (size_t x = 0; x < j.endpoints.size(); ++x) {
        for (size_t y = 0; y < j.endpoints.size(); ++y) pairs += j.Sends(x, y);
      }
      EXPECT_EQ(pairs, b.pairs) << j.id << " " << JobHcaPairsName(mode);
      EXPECT_EQ(j.num_leaf_switches >= 2, b.crosses) << j.id << " " << JobHcaPairsName(mode);
    }
    // One unit: rail i of every host on leaf-0-i, so rail-aligned traffic never leaves a leaf.
    EXPECT_EQ(jobs[0].num_leaf_switches, all ? 4 : 1);
    EXPECT_EQ(jobs[1].num_leaf_switches, all ? 8 : 2);
    EXPECT_EQ(JobTrafficGroups(f, jobs[1]).size(), all ? 1u : 4u);
  }
}

TEST(ResolveJobs, OnRailsEffectiveEfiAndFlowsCountTheRailPairsOnly) {
  const Fabric& f = Rails();
  const LftSet lfts = testfab::MinHopLfts(f);
  JobMapping m;
  m.jobs.push_back({"one", {"dgx-1-01"}, JobPattern::kDefault});
  m.jobs.push_back({"across", {"dgx-0-00", "dgx-0-01", "dgx-1-02"}, JobPattern::kDefault});
  for (JobHcaPairs mode : {JobHcaPairs::kRails, JobHcaPairs::kAll}) {
    const std::vector<ResolvedJob> jobs = ResolveJobs(f, m, nullptr, mode);
    Metrics metrics;
    ASSERT_TRUE(ComputeMetrics(f, lfts, jobs, {}, &metrics).ok());
    // Independent truth: walk every pair that talks through the tables by hand.
    std::vector<std::pair<PortRef, PortRef>> flows;
    for (const ResolvedJob& j : jobs) {
      for (const PortRef& a : j.endpoints) {
        for (const PortRef& c : j.endpoints) {
          const std::string& da = f.description(a.node);
          const std::string& dc = f.description(c.node);
          if (da.substr(0, da.find(' ')) == dc.substr(0, dc.find(' '))) continue;
          if (mode == JobHcaPairs::kRails && da.substr(da.find(' ')) != dc.substr(dc.find(' '))) {
            continue;
          }
          flows.push_back({a, c});
        }
      }
    }
    std::vector<uint64_t> naive = testfab::NaiveLoad(f, lfts, flows);
    for (PortId c = 0; c < f.num_port_slots(); ++c) {
      if (!f.is_inter_switch(c)) naive[c] = 0;
    }
    EXPECT_EQ(metrics.effective_efi_per_channel, naive) << JobHcaPairsName(mode);
    ASSERT_EQ(metrics.jobs.size(), 2u);
    EXPECT_EQ(metrics.jobs[0].efi_max, 0u);  // the one-host job puts nothing on the fabric
    EXPECT_EQ(metrics.jobs[1].hosts, 3);

    FlowReport report;
    ASSERT_TRUE(ComputeJobFlows(f, lfts, AllToAllFlowJobs(jobs), {}, &report).ok());
    ASSERT_EQ(report.jobs.size(), 2u);
    EXPECT_EQ(report.jobs[0].flows, 0u);
    // 3 hosts x 2 others x (1 rail pair, or 4 x 4 HCA pairs) x 4 rails.
    EXPECT_EQ(report.jobs[1].flows, mode == JobHcaPairs::kRails ? 3u * 2 * 4 : 3u * 2 * 16);
  }
}

TEST(ResolveJobs, SarWithAOneHostRailJobRoutesAsDfsssp) {
  // SAR with no multi-switch job is DFSSSP; a one-DGX job (4 leaves, all its traffic inside the
  // host) must not make it one. A job across units does.
  const Fabric& f = Rails();
  JobMapping m;
  m.jobs.push_back({"one", {"dgx-1-01"}, JobPattern::kDefault});
  const std::vector<ResolvedJob> one = ResolveJobs(f, m);
  RoutingInput in;
  in.fabric = &f;
  RoutingOutput dfsssp, sar_one, sar_across;
  ASSERT_TRUE(MakeRoutingEngine("dfsssp")->Route(in, &dfsssp).ok());
  in.jobs = &one;
  ASSERT_TRUE(MakeRoutingEngine("sar")->Route(in, &sar_one).ok());
  EXPECT_TRUE(sar_one.lfts == dfsssp.lfts);
  m.jobs.push_back({"across", {"dgx-0-00", "dgx-0-01", "dgx-1-02"}, JobPattern::kDefault});
  const std::vector<ResolvedJob> across = ResolveJobs(f, m);
  in.jobs = &across;
  ASSERT_TRUE(MakeRoutingEngine("sar")->Route(in, &sar_across).ok());
  EXPECT_FALSE(sar_across.lfts == dfsssp.lfts);
  // The lower bound stays below what SAR achieves, in both modes.
  for (JobHcaPairs mode : {JobHcaPairs::kRails, JobHcaPairs::kAll}) {
    const std::vector<ResolvedJob> jobs = ResolveJobs(f, m, nullptr, mode);
    Metrics metrics;
    ASSERT_TRUE(ComputeMetrics(f, sar_across.lfts, jobs, {}, &metrics).ok());
    EXPECT_LE(EffectiveEfiLowerBound(f, jobs).value, metrics.effective_efi.max);
    EXPECT_GT(EffectiveEfiLowerBound(f, jobs).value, 0u);
  }
}

TEST(JobHcaPairs, NamesParseBack) {
  for (JobHcaPairs p : {JobHcaPairs::kRails, JobHcaPairs::kAll}) {
    JobHcaPairs back = p == JobHcaPairs::kAll ? JobHcaPairs::kRails : JobHcaPairs::kAll;
    ASSERT_TRUE(ParseJobHcaPairs(JobHcaPairsName(p), &back));
    EXPECT_EQ(back, p);
  }
  JobHcaPairs untouched = JobHcaPairs::kAll;
  EXPECT_FALSE(ParseJobHcaPairs("rail", &untouched));
  EXPECT_EQ(untouched, JobHcaPairs::kAll);
}

}  // namespace
}  // namespace sar
