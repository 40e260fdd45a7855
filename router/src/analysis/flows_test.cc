#include "sar/analysis/flows.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <tuple>

#include "gtest/gtest.h"
#include "sar/model/lids.h"
#include "test_fabrics.h"

namespace sar {
namespace {

using testfab::AddHost;
using testfab::AddSwitch;
using testfab::Cable;

// Two leaves, two spines, two hosts per leaf: h0 h1 on leaf00, h2 h3 on leaf01. Ports: leaf
// p1,p2 hosts, p3 spine00, p4 spine01; spine p1 leaf00, p2 leaf01.
struct Small {
  Fabric f;
  NodeId leaf[2], spine[2], host[4];
};

Small MakeSmall(int lmc = 0) {
  Small s;
  for (int i = 0; i < 2; ++i) s.leaf[i] = AddSwitch(&s.f, 4, testfab::Numbered("leaf", i, 2));
  for (int i = 0; i < 2; ++i) s.spine[i] = AddSwitch(&s.f, 2, testfab::Numbered("spine", i, 2));
  for (int i = 0; i < 4; ++i) {
    s.host[i] = AddHost(&s.f, 1, testfab::Numbered("h", i, 4));
    Cable(&s.f, s.host[i], s.leaf[i / 2]);
  }
  for (int l = 0; l < 2; ++l) {
    for (int k = 0; k < 2; ++k) Cable(&s.f, s.leaf[l], s.spine[k]);
  }
  testfab::AssignTestLids(&s.f, lmc);
  return s;
}

// Tables where leaf l sends LID `lid` of a host on the other leaf up to spine pick(lid).
template <class Pick>
LftSet SmallTables(const Small& s, Pick pick) {
  LftSet lfts(s.f);
  for (Lid lid = 1; lid <= s.f.max_lid(); ++lid) {
    const PortRef owner = s.f.lid_owner(lid);
    if (!owner.valid() || s.f.is_switch(owner.node)) continue;
    const int h = static_cast<int>(std::find(s.host, s.host + 4, owner.node) - s.host);
    const int home = h / 2;
    for (int l = 0; l < 2; ++l) {
      lfts.set_port(
          s.f.switch_index(s.leaf[l]), lid,
          l == home ? static_cast<uint8_t>(h % 2 + 1) : static_cast<uint8_t>(3 + pick(lid, h)));
    }
    for (int k = 0; k < 2; ++k) {
      lfts.set_port(s.f.switch_index(s.spine[k]), lid, static_cast<uint8_t>(home + 1));
    }
  }
  return lfts;
}

FlowJob JobOf(const Small& s, const std::string& id, std::vector<int> hosts) {
  FlowJob j;
  j.id = id;
  for (int h : hosts) j.endpoints.push_back({s.host[h], 1});
  return j;
}

const JobFlows& Find(const FlowReport& r, const std::string& id) {
  for (const JobFlows& j : r.jobs) {
    if (j.id == id) return j;
  }
  ADD_FAILURE() << "no job " << id;
  return r.jobs.front();
}

TEST(FlowsTest, TwoJobsOnOneSpineShareItTheOtherSpineSeparatesThem) {
  const Small s = MakeSmall();
  const std::vector<FlowJob> jobs = {JobOf(s, "A", {0, 2}), JobOf(s, "B", {1, 3})};
  FlowReport shared;
  ASSERT_TRUE(
      ComputeJobFlows(s.f, SmallTables(s, [](Lid, int) { return 0; }), jobs, {}, &shared).ok());
  for (const char* id : {"A", "B"}) {
    const JobFlows& j = Find(shared, id);
    EXPECT_EQ(j.flows, 2u);
    EXPECT_EQ(j.undelivered, 0u);
    EXPECT_DOUBLE_EQ(j.shared.slowest, 0.5);  // both jobs on spine00 both ways
    EXPECT_DOUBLE_EQ(j.shared.mean, 0.5);
    EXPECT_DOUBLE_EQ(j.shared.time, 2.0);
    EXPECT_DOUBLE_EQ(j.alone.slowest, 1.0);
    EXPECT_DOUBLE_EQ(j.slowdown(), 2.0);
  }
  // Job B's hosts (h1, h3) go through spine01: nobody shares.
  FlowReport apart;
  ASSERT_TRUE(
      ComputeJobFlows(s.f, SmallTables(s, [](Lid, int h) { return h % 2; }), jobs, {}, &apart)
          .ok());
  for (const char* id : {"A", "B"}) EXPECT_DOUBLE_EQ(Find(apart, id).shared.slowest, 1.0);
  EXPECT_DOUBLE_EQ(apart.summary.median_time, 1.0);
  const FlowComparison c = CompareJobFlows(apart, shared);
  EXPECT_EQ(c.jobs, 2);
  EXPECT_EQ(c.faster, 2);
  EXPECT_EQ(c.slower, 0);
  EXPECT_DOUBLE_EQ(c.median_speedup, 2.0);
  const FlowComparison back = CompareJobFlows(shared, apart);
  EXPECT_EQ(back.slower, 2);
  EXPECT_EQ(back.slower_2pct, 2);
  EXPECT_EQ(CompareJobFlows(shared, shared).equal, 2);
}

TEST(FlowsTest, ASlowCableHoldsBackOnlyItsFlowsTheRestTakeWhatIsLeft) {
  // Job A = {h0, h1, h2}, cross-leaf routes via spine00. Intact: every channel carries two of
  // the six flows, all at 1/2.
  const Small s = MakeSmall();
  FlowReport r;
  ASSERT_TRUE(ComputeJobFlows(s.f, SmallTables(s, [](Lid, int) { return 0; }),
                              {JobOf(s, "A", {0, 1, 2})}, {}, &r)
                  .ok());
  EXPECT_EQ(Find(r, "A").flows, 6u);
  EXPECT_DOUBLE_EQ(Find(r, "A").shared.slowest, 0.5);
  EXPECT_DOUBLE_EQ(Find(r, "A").shared.mean, 0.5);
  // The leaf00-spine00 cable trained to 4xDDR (0.16 of 4xEDR) in both directions: its four
  // flows (h0->h2, h1->h2 up; h2->h0, h2->h1 down) get 0.08 each; then h0->h1 and h1->h0 take
  // what is left of their host links: 1 - 0.08 = 0.92 (max-min, not an equal split).
  Small slow = MakeSmall();
  const LinkRate edr{4, LaneSpeed::kEdr}, ddr{4, LaneSpeed::kDdr};
  for (NodeId n = 0; n < slow.f.num_nodes(); ++n) {
    for (int p = 1; p <= slow.f.num_ports(n); ++p) slow.f.set_port_rate({n, p}, edr);
  }
  slow.f.set_port_rate({slow.leaf[0], 3}, ddr);
  FlowReport rs;
  ASSERT_TRUE(ComputeJobFlows(slow.f, SmallTables(slow, [](Lid, int) { return 0; }),
                              {JobOf(slow, "A", {0, 1, 2})}, {}, &rs)
                  .ok());
  const JobFlows& as = Find(rs, "A");
  EXPECT_NEAR(as.shared.slowest, 0.08, 1e-12);
  EXPECT_NEAR(as.shared.time, 12.5, 1e-9);
  EXPECT_NEAR(as.shared.mean, (4 * 0.08 + 2 * 0.92) / 6, 1e-12);
  EXPECT_NEAR(as.alone.time, 12.5, 1e-9);  // alone: the same, nobody else is there
}

TEST(FlowsTest, SourceLidGroupsFollowTheLidEachSourceSendsTo) {
  const Small s = MakeSmall(/*lmc=*/1);
  // LID base (even offset) up spine00, base+1 up spine01.
  const LftSet lfts = SmallTables(s, [&](Lid lid, int h) {
    return static_cast<int>(lid - s.f.base_lid({s.host[h], 1}));
  });
  const std::vector<FlowJob> jobs = {JobOf(s, "A", {0, 2}), JobOf(s, "B", {1, 3})};
  FlowReport base;
  ASSERT_TRUE(ComputeJobFlows(s.f, lfts, jobs, {}, &base).ok());
  EXPECT_DOUBLE_EQ(Find(base, "A").shared.slowest, 0.5);
  // h1 and h3 (job B) send to base + 1: spine01.
  const std::vector<PortRef> ends = s.f.Endpoints();
  std::vector<uint8_t> offset(ends.size(), 0);
  for (size_t i = 0; i < ends.size(); ++i) {
    if (ends[i].node == s.host[1] || ends[i].node == s.host[3]) offset[i] = 1;
  }
  FlowOptions o;
  o.source_lid_offset = &offset;
  FlowReport grouped;
  ASSERT_TRUE(ComputeJobFlows(s.f, lfts, jobs, o, &grouped).ok());
  EXPECT_DOUBLE_EQ(Find(grouped, "A").shared.slowest, 1.0);
  EXPECT_DOUBLE_EQ(Find(grouped, "B").shared.slowest, 1.0);
}

TEST(FlowsTest, PhasesAddUpAndOtherJobsSeeEachPhase) {
  const Small s = MakeSmall();
  const LftSet lfts = SmallTables(s, [](Lid, int) { return 0; });
  // Job P = {h0, h2} in two phases (h0->h2, then h2->h0); job Q = {h1, h3} all-to-all.
  FlowJob p = JobOf(s, "P", {0, 2});
  p.phases = {{{0, 1}}, {{1, 0}}};
  const std::vector<FlowJob> jobs = {p, JobOf(s, "Q", {1, 3})};
  FlowReport r;
  ASSERT_TRUE(ComputeJobFlows(s.f, lfts, jobs, {}, &r).ok());
  EXPECT_EQ(r.rounds, 2);
  const JobFlows& jp = Find(r, "P");
  EXPECT_EQ(jp.phases, 2);
  EXPECT_EQ(jp.flows, 2u);
  // Each phase's one flow shares spine00 with one of Q's: 1/2 each phase, time 2 + 2.
  EXPECT_DOUBLE_EQ(jp.shared.slowest, 0.5);
  EXPECT_DOUBLE_EQ(jp.shared.time, 4.0);
  EXPECT_DOUBLE_EQ(jp.alone.time, 2.0);
  const JobFlows& jq = Find(r, "Q");
  EXPECT_DOUBLE_EQ(jq.shared.slowest, 0.5);  // its worst round
  EXPECT_DOUBLE_EQ(jq.shared.mean, 0.75);    // one flow at 1/2, the other at 1, each round
  // A phase naming an endpoint out of range is refused.
  FlowJob bad = p;
  bad.phases = {{{0, 7}}};
  EXPECT_FALSE(ComputeJobFlows(s.f, lfts, {bad}, {}, &r).ok());
}

TEST(FlowsTest, UnknownPortsAreRefusedAndUndeliveredRoutesCounted) {
  const Small s = MakeSmall();
  LftSet lfts = SmallTables(s, [](Lid, int) { return 0; });
  FlowReport r;
  FlowJob j = JobOf(s, "A", {0, 2});
  j.endpoints.push_back({s.leaf[0], 3});  // a switch port
  EXPECT_FALSE(ComputeJobFlows(s.f, lfts, {j}, {}, &r).ok());
  // Spine00 loses its entry for h2: h0->h2 is a hole, counted, not dropped silently.
  lfts.set_port(s.f.switch_index(s.spine[0]), s.f.base_lid({s.host[2], 1}), LftSet::kNoRoute);
  ASSERT_TRUE(ComputeJobFlows(s.f, lfts, {JobOf(s, "A", {0, 2})}, {}, &r).ok());
  EXPECT_EQ(Find(r, "A").undelivered, 1u);
  EXPECT_EQ(Find(r, "A").flows, 1u);
}

// --- The property and second-computation tests on random degraded fabrics. ---

// Flow-by-flow max-min: every flow its own path, all live flows rise together, a channel whose
// share is the least saturates and freezes its flows. No aggregation, no heap.
std::vector<double> ReferenceRates(const std::vector<std::vector<PortId>>& paths,
                                   const std::vector<double>& cap) {
  std::vector<double> rate(paths.size(), -1), used(cap.size(), 0);
  std::vector<int> count(cap.size(), 0);
  for (const auto& p : paths) {
    for (PortId c : p) ++count[c];
  }
  for (;;) {
    double level = std::numeric_limits<double>::infinity();
    for (size_t c = 0; c < cap.size(); ++c) {
      if (count[c] > 0) level = std::min(level, (cap[c] - used[c]) / count[c]);
    }
    if (std::isinf(level)) break;
    std::vector<char> sat(cap.size(), 0);
    for (size_t c = 0; c < cap.size(); ++c) {
      sat[c] = count[c] > 0 && (cap[c] - used[c]) / count[c] <= level * (1 + 1e-12);
    }
    for (size_t f = 0; f < paths.size(); ++f) {
      if (rate[f] >= 0) continue;
      bool hit = false;
      for (PortId c : paths[f]) hit |= sat[c] != 0;
      if (!hit) continue;
      rate[f] = level;
      for (PortId c : paths[f]) {
        --count[c];
        used[c] += level;
      }
    }
  }
  return rate;
}

struct RandomCase {
  Fabric f;
  LftSet lfts;
  std::vector<FlowJob> jobs;
};

// A 2-level tree with a few cables cut and a few slowed down, min-hop tables with random ties,
// and the hosts split into random jobs (some hosts idle).
RandomCase MakeRandomCase(uint64_t seed) {
  std::mt19937_64 rng(seed);
  RandomCase c;
  const int leaves = 2 + static_cast<int>(rng() % 4), spines = 1 + static_cast<int>(rng() % 4);
  c.f = testfab::FatTree2(leaves, spines, 1 + static_cast<int>(rng() % 4));
  const LinkRate edr{4, LaneSpeed::kEdr},
      slow[] = {{4, LaneSpeed::kDdr}, {4, LaneSpeed::kFdr}, {1, LaneSpeed::kEdr}};
  for (NodeId n = 0; n < c.f.num_nodes(); ++n) {
    for (int p = 1; p <= c.f.num_ports(n); ++p) c.f.set_port_rate({n, p}, edr);
  }
  const int cuts = static_cast<int>(rng() % 3), slows = static_cast<int>(rng() % 3);
  for (int k = 0; k < cuts + slows; ++k) {
    const NodeId leaf = c.f.switches()[rng() % leaves];
    std::vector<int> up;
    for (int p = 1; p <= c.f.num_ports(leaf); ++p) {
      const PortRef q = c.f.peer({leaf, p});
      if (q.valid() && c.f.is_switch(q.node)) up.push_back(p);
    }
    if (up.size() < 2) continue;  // keep every leaf connected
    const int p = up[rng() % up.size()];
    if (k < cuts) {
      c.f.Disconnect({leaf, p});
    } else {
      c.f.set_port_rate({leaf, p}, slow[rng() % 3]);
    }
  }
  c.lfts = testfab::MinHopLfts(c.f, &rng);
  const std::vector<PortRef> ends = c.f.Endpoints();
  const int njobs = 1 + static_cast<int>(rng() % 4);
  c.jobs.resize(njobs);
  for (int j = 0; j < njobs; ++j) c.jobs[j].id = "j" + std::to_string(j);
  for (const PortRef& e : ends) {
    const int j = static_cast<int>(rng() % (njobs + 1));
    if (j < njobs) c.jobs[j].endpoints.push_back(e);
  }
  return c;
}

TEST(FlowsTest, RandomDegradedFabricsAreMaxMinFairAndAgreeWithFlowByFlow) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const RandomCase c = MakeRandomCase(seed);
    FlowOptions o;
    o.record_rates = true;
    o.threads = 2;
    FlowReport r;
    ASSERT_TRUE(ComputeJobFlows(c.f, c.lfts, c.jobs, o, &r).ok());
    const std::vector<PortRef> ends = c.f.Endpoints();
    std::vector<double> cap(c.f.num_port_slots(), 1.0);
    {
      const std::vector<uint32_t> raw = c.f.ChannelCapacities();
      const double nominal = c.f.nominal_rate().mbps();
      for (size_t i = 0; i < raw.size(); ++i) cap[i] = raw[i] / nominal;
    }
    // The flows the model should see, walked one by one.
    std::map<std::tuple<uint32_t, int, int>, size_t> index;
    std::vector<std::vector<PortId>> paths;
    std::vector<uint64_t> undelivered(c.jobs.size(), 0);
    for (size_t j = 0; j < c.jobs.size(); ++j) {
      for (const PortRef& s : c.jobs[j].endpoints) {
        for (const PortRef& d : c.jobs[j].endpoints) {
          if (s.node == d.node) continue;
          const testfab::NaiveRoute route = testfab::NaiveWalk(c.f, c.lfts, s, c.f.base_lid(d));
          if (route.fate != RouteFate::kDelivered) {
            ++undelivered[j];
            continue;
          }
          const int si = static_cast<int>(std::find(ends.begin(), ends.end(), s) - ends.begin());
          const int di = static_cast<int>(std::find(ends.begin(), ends.end(), d) - ends.begin());
          index[{static_cast<uint32_t>(j), si, di}] = paths.size();
          paths.push_back(route.channels);
        }
      }
    }
    ASSERT_EQ(r.rates.size(), paths.size());
    const std::vector<double> ref = ReferenceRates(paths, cap);
    std::vector<double> rate(paths.size(), -1);
    for (const FlowRate& fr : r.rates) {
      const auto it = index.find({fr.job, fr.src, fr.dst});
      ASSERT_NE(it, index.end());
      rate[it->second] = fr.rate;
      EXPECT_NEAR(fr.rate, ref[it->second], 1e-9);
    }
    // The max-min condition: capacities hold, and every flow crosses a saturated channel on
    // which no flow is faster.
    std::vector<double> sum(cap.size(), 0), fastest(cap.size(), 0);
    for (size_t f = 0; f < paths.size(); ++f) {
      for (PortId ch : paths[f]) {
        sum[ch] += rate[f];
        fastest[ch] = std::max(fastest[ch], rate[f]);
      }
    }
    for (size_t ch = 0; ch < cap.size(); ++ch) EXPECT_LE(sum[ch], cap[ch] + 1e-9);
    for (size_t f = 0; f < paths.size(); ++f) {
      bool bottleneck = false;
      for (PortId ch : paths[f]) {
        bottleneck |= sum[ch] >= cap[ch] - 1e-9 && rate[f] >= fastest[ch] - 1e-9;
      }
      EXPECT_TRUE(bottleneck) << "flow " << f << " at " << rate[f] << " has no bottleneck";
    }
    // Per job: slowest and mean from the reference, undelivered pairs counted.
    for (size_t j = 0; j < c.jobs.size(); ++j) {
      double low = std::numeric_limits<double>::infinity(), total = 0;
      uint64_t n = 0;
      for (const auto& [key, f] : index) {
        if (std::get<0>(key) != j) continue;
        low = std::min(low, ref[f]);
        total += ref[f];
        ++n;
      }
      EXPECT_EQ(r.jobs[j].flows, n);
      EXPECT_EQ(r.jobs[j].undelivered, undelivered[j]);
      if (n == 0) continue;
      EXPECT_NEAR(r.jobs[j].shared.slowest, low, 1e-9);
      EXPECT_NEAR(r.jobs[j].shared.mean, total / n, 1e-9);
      EXPECT_LE(r.jobs[j].alone.time, r.jobs[j].shared.time * (1 + 1e-9));
    }
  }
}

TEST(FlowsTest, CorruptTablesCountEveryUndeliveredPair) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    RandomCase c = MakeRandomCase(seed);
    std::mt19937_64 rng(seed * 7);
    testfab::Corrupt(c.f, 6, &rng, &c.lfts);
    FlowReport r;
    ASSERT_TRUE(ComputeJobFlows(c.f, c.lfts, c.jobs, {}, &r).ok());
    for (size_t j = 0; j < c.jobs.size(); ++j) {
      uint64_t bad = 0, good = 0;
      for (const PortRef& s : c.jobs[j].endpoints) {
        for (const PortRef& d : c.jobs[j].endpoints) {
          if (s.node == d.node) continue;
          const bool ok =
              testfab::NaiveWalk(c.f, c.lfts, s, c.f.base_lid(d)).fate == RouteFate::kDelivered;
          ++(ok ? good : bad);
        }
      }
      EXPECT_EQ(r.jobs[j].undelivered, bad) << "seed " << seed << " job " << j;
      EXPECT_EQ(r.jobs[j].flows, good) << "seed " << seed << " job " << j;
    }
  }
}

TEST(FlowsTest, MoreFlowsThanTheLimitAreRefusedNotComputed) {
  const Small s = MakeSmall();
  const LftSet lfts = SmallTables(s, [](Lid, int) { return 0; });
  const std::vector<FlowJob> jobs = {JobOf(s, "A", {0, 1, 2, 3})};  // 16 pairs (12 flows)
  FlowOptions o;
  o.max_flows = 15;
  FlowReport r;
  r.rounds = 7;
  const Status st = ComputeJobFlows(s.f, lfts, jobs, o, &r);
  EXPECT_EQ(st.code(), Status::Code::kFailed);
  EXPECT_NE(st.message().find("over the limit of 15"), std::string::npos) << st.message();
  EXPECT_EQ(r.rounds, 7);  // nothing computed
  o.max_flows = 16;
  EXPECT_TRUE(ComputeJobFlows(s.f, lfts, jobs, o, &r).ok());
  EXPECT_EQ(Find(r, "A").flows, 12u);
}

TEST(FlowsTest, QuantilesAreNearestRank) {
  EXPECT_EQ(FlowQuantile({}, 0.5), 0);
  EXPECT_EQ(FlowQuantile({3, 1, 2}, 0.5), 2);
  EXPECT_EQ(FlowQuantile({4, 1, 3, 2}, 0.5), 2);
  EXPECT_EQ(FlowQuantile({4, 1, 3, 2}, 0.95), 4);
  EXPECT_EQ(FlowQuantile({4, 1, 3, 2}, 0.0), 1);
}

}  // namespace
}  // namespace sar
