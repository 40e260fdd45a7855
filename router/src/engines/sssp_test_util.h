// Test helpers for the dfsssp and sar engines: route, then judge the result only with the
// independent analyses (TraceAll, CheckDeadlock, ComputeMetrics).
#pragma once

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "sar/analysis/analysis.h"
#include "sar/analysis/deadlock.h"
#include "sar/analysis/metrics.h"
#include "sar/analysis/trace.h"
#include "sar/engines/engine.h"
#include "sar/model/jobs.h"

namespace sar::sssptest {

inline Status Route(const std::string& engine, const Fabric& f, RoutingOutput* out,
                    const std::vector<ResolvedJob>* jobs = nullptr, int num_vls = 8) {
  RoutingInput in;
  in.fabric = &f;
  in.num_vls = num_vls;
  in.jobs = jobs;
  return MakeRoutingEngine(engine)->Route(in, out);
}

/// Every pair delivered without loops (shortest paths if `min_hop`), and the layers make every
/// layer's channel dependency graph acyclic within num_vls layers.
inline void ExpectValid(const Fabric& f, const RoutingOutput& out, int num_vls, bool min_hop) {
  TraceReport trace;
  ASSERT_TRUE(TraceAll(f, out.lfts, TraceOptions{}, &trace).ok());
  EXPECT_TRUE(trace.valid()) << (trace.examples.empty() ? "" : trace.examples[0]);
  EXPECT_EQ(trace.delivered, trace.pairs);
  if (min_hop) {
    EXPECT_EQ(trace.non_min_hop, 0u);
  }
  DeadlockReport dl;
  ASSERT_TRUE(CheckDeadlock(f, out.lfts, &out.layers, &dl).ok());
  EXPECT_TRUE(dl.deadlock_free) << "cycle in layer " << dl.cyclic_layer;
  EXPECT_LE(out.num_layers, num_vls);
  EXPECT_LE(out.layers.num_layers(), num_vls);
  EXPECT_GE(out.num_layers, out.layers.num_layers());
}

inline ResolvedJob MakeJob(const Fabric& f, std::string id, std::vector<PortRef> endpoints) {
  ResolvedJob job;
  job.id = std::move(id);
  std::set<NodeId> leaves;
  for (const PortRef& p : endpoints) leaves.insert(f.peer(p).node);
  job.num_leaf_switches = static_cast<int>(leaves.size());
  job.endpoints = std::move(endpoints);
  return job;
}

/// A random job mix: the endpoints shuffled and cut into jobs of random sizes (2..max_size),
/// leaving about a fifth of the nodes idle.
inline std::vector<ResolvedJob> RandomJobs(const Fabric& f, uint64_t seed, int max_size) {
  std::mt19937_64 rng(seed);
  std::vector<PortRef> eps = f.Endpoints();
  std::shuffle(eps.begin(), eps.end(), rng);
  std::vector<ResolvedJob> jobs;
  size_t at = 0;
  const size_t busy = eps.size() * 4 / 5;
  while (at + 2 <= busy) {
    const size_t size = std::min<size_t>(busy - at, 2 + rng() % (max_size - 1));
    std::vector<PortRef> members(eps.begin() + at, eps.begin() + at + size);
    jobs.push_back(MakeJob(f, "job" + std::to_string(jobs.size()), std::move(members)));
    at += size;
  }
  return jobs;
}

inline Metrics Measure(const Fabric& f, const LftSet& lfts, const std::vector<ResolvedJob>& jobs) {
  Metrics m;
  EXPECT_TRUE(ComputeMetrics(f, lfts, jobs, MetricsOptions{}, &m).ok());
  return m;
}

}  // namespace sar::sssptest
