#include "analysis/destination_sweep.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <vector>

#include "test_fabrics.h"

namespace sar::internal {
namespace {

// Records every call; checks each tree against a fresh Build of the same LID on every switch a
// route from an endpoint's switch crosses (the sweep traces from those only; others stay holes).
class Recorder : public SweepVisitor {
 public:
  explicit Recorder(const SweepContext& ctx) : ctx_(ctx) {}
  void Start(int workers) override { workers_ = workers; }
  void Visit(int worker, const SweepDestination& d, const DestinationTree& tree) override {
    DestinationTree fresh;
    ctx_.tracer.Build(d.lid, &fresh);
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_GE(worker, 0);
    EXPECT_LT(worker, workers_);
    EXPECT_EQ(tree.lid, d.lid);
    std::vector<bool> reached(fresh.fate.size(), false);
    for (int s : ctx_.leaves) {
      for (int t = s; t >= 0 && !reached[t];) {
        reached[t] = true;
        t = fresh.out[t] == kNoPort ? -1 : ctx_.tracer.next_switch(fresh.out[t]);
      }
    }
    for (size_t s = 0; s < reached.size(); ++s) {
      if (reached[s]) {
        EXPECT_EQ(tree.fate[s], fresh.fate[s]) << "switch " << s;
        EXPECT_EQ(tree.hops[s], fresh.hops[s]) << "switch " << s;
        EXPECT_EQ(tree.out[s], fresh.out[s]) << "switch " << s;
        if (tree.out[s] != kNoPort) {
          EXPECT_EQ(tree.port[s], ctx_.fabric.port_ref(tree.out[s]).port) << "switch " << s;
          EXPECT_EQ(tree.next[s], ctx_.tracer.next_switch(tree.out[s])) << "switch " << s;
        }
      } else {
        EXPECT_EQ(tree.fate[s], RouteFate::kHole) << "switch " << s;
        EXPECT_EQ(tree.out[s], kNoPort) << "switch " << s;
      }
    }
    EXPECT_EQ(ctx_.fabric.lid_owner(d.lid), ctx_.endpoints[d.endpoint]);
    EXPECT_EQ(d.leaf, ctx_.leaf[d.endpoint]);
    EXPECT_EQ(d.base, d.lid == ctx_.fabric.base_lid(ctx_.endpoints[d.endpoint]));
    visits.push_back(d);
    if (d.job >= 0) {
      EXPECT_FALSE(ended.count(d.job)) << "job " << d.job << " visited after EndJob";
    }
  }
  void EndJob(int job, int worker) override {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_TRUE(ended.emplace(job, worker).second) << "job " << job << " ended twice";
  }
  void Finish() override { finished = true; }

  std::vector<SweepDestination> visits;
  std::map<int, int> ended;  // job -> worker given to EndJob
  bool finished = false;

 private:
  const SweepContext& ctx_;
  std::mutex mu_;
  int workers_ = 0;
};

ResolvedJob JobOf(const std::vector<PortRef>& endpoints) {
  ResolvedJob job;
  job.endpoints = endpoints;
  return job;
}

TEST(DestinationSweepTest, BuildsEachTreeOncePerLidAndOncePerJob) {
  // 70 hosts, LMC 1: a job of every host is more than one work item (64 destinations), so with
  // two or more workers it is spread over them.
  const Fabric f = testfab::FatTree2(14, 3, 5, /*lmc=*/1);
  const LftSet lfts = testfab::MinHopLfts(f);
  const std::vector<PortRef> all = f.Endpoints();
  std::vector<ResolvedJob> jobs;
  jobs.push_back(JobOf({all[0], all[1], all[7]}));
  jobs.push_back(JobOf({all[1], all[2], all[1]}));  // overlaps job 0, lists a host twice
  jobs.push_back(JobOf(all));                       // every host
  jobs.push_back(JobOf({}));                        // nobody
  const SweepContext ctx(f, lfts, &jobs);
  ASSERT_EQ(ctx.job_members[1].size(), 2u);

  for (int threads : {1, 2, 4}) {
    SCOPED_TRACE(threads);
    for (bool lmc_lids : {false, true}) {
      Recorder rec(ctx);
      SweepOptions o;
      o.lmc_lids = lmc_lids;
      o.job_phases = true;
      o.threads = threads;
      RunSweep(ctx, o, {&rec});
      EXPECT_TRUE(rec.finished);

      std::multiset<Lid> first;
      std::set<std::pair<int, Lid>> per_job;
      for (const SweepDestination& d : rec.visits) {
        if (d.first) first.insert(d.lid);
        if (d.job >= 0) {
          EXPECT_TRUE(per_job.insert({d.job, d.lid}).second);
        }
      }
      // Every endpoint LID exactly once as a first visit.
      std::multiset<Lid> want;
      for (const PortRef& e : all) {
        for (Lid l = f.base_lid(e); l < f.base_lid(e) + (lmc_lids ? 2u : 1u); ++l) want.insert(l);
      }
      EXPECT_EQ(first, want);
      // Each job's base LIDs once each, and nothing else.
      std::set<std::pair<int, Lid>> want_jobs;
      for (size_t j = 0; j < jobs.size(); ++j) {
        for (const PortRef& e : jobs[j].endpoints) {
          want_jobs.insert({static_cast<int>(j), f.base_lid(e)});
        }
      }
      EXPECT_EQ(per_job, want_jobs);
      // Trees built: one per LID, plus one per repeated visit (job 1's hosts 1 and 2 were job
      // 0's and job 2's too).
      EXPECT_EQ(rec.visits.size(), want.size() + (per_job.size() - ctx.endpoints.size()));
      // EndJob once per job; the job of every host is spread over the workers when there are
      // several.
      ASSERT_EQ(rec.ended.size(), jobs.size());
      EXPECT_EQ(rec.ended[2] == SweepVisitor::kAllWorkers, threads > 1);
      EXPECT_GE(rec.ended[3], 0);
    }
  }
}

}  // namespace
}  // namespace sar::internal
