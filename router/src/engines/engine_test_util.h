// Helpers for the engine tests (header-only; not part of libsar): fabrics to route, and checks
// written against the Fabric and LftSet APIs only, independent of the engines' own code.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "sar/analysis/analysis.h"
#include "sar/analysis/deadlock.h"
#include "sar/analysis/trace.h"
#include "sar/engines/engine.h"
#include "sar/model/failures.h"
#include "sar/model/generate.h"
#include "sar/model/lids.h"

namespace sar::enginetest {

inline Fabric Pgft(const PgftSpec& spec, int lmc) {
  Fabric f;
  EXPECT_TRUE(GeneratePgft(spec, {}, &f).ok());
  LidOptions lo;
  lo.lmc = lmc;
  EXPECT_TRUE(AssignLids(lo, &f).ok());
  return f;
}

/// A small random PGFT (height 2 or 3, a few children and parents, some parallel cables).
/// A PgftSpec from its four parts, as the tests write them: Spec(2, {4, 4}, {1, 4}, {1, 1}).
inline PgftSpec Spec(int h, std::vector<int> m, std::vector<int> w, std::vector<int> p) {
  return PgftSpec{h, std::move(m), std::move(w), std::move(p)};
}

inline PgftSpec RandomSpec(std::mt19937_64* rng) {
  auto pick = [rng](int lo, int hi) { return lo + static_cast<int>((*rng)() % (hi - lo + 1)); };
  PgftSpec s;
  s.height = pick(2, 3);
  for (int l = 0; l < s.height; ++l) {
    s.m.push_back(pick(2, 4));
    s.w.push_back(l == 0 ? 1 : pick(1, 3));
    s.p.push_back(l == 0 ? 1 : pick(1, 2));
  }
  return s;
}

/// `f` with random switch-to-switch cables and switches removed, HCAs kept connected. Returns
/// false (and leaves *out alone) if the generator could not find such failures.
inline bool Degrade(const Fabric& f, int links, int switches, uint64_t seed, Fabric* out) {
  RandomFailureOptions o;
  o.num_links = links;
  o.num_switches = switches;
  o.seed = seed;
  FailureSet fs;
  if (!PickRandomFailures(f, o, &fs).ok()) return false;
  return ApplyFailures(f, fs, out).ok();
}

/// Runs `check(fabric)` on 30 random degraded PGFTs: spec from `rng_seed`, LMC seed % 3,
/// 1 + seed % link_spread failed cables and seed % 2 failed switches. Returns how many fabrics
/// it could build (a failure request the generator cannot meet is skipped).
template <class Check>
int ForEachDegradedPgft(uint64_t rng_seed, int link_spread, Check check) {
  std::mt19937_64 rng(rng_seed);
  int built = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    const Fabric intact = Pgft(RandomSpec(&rng), static_cast<int>(seed % 3));
    Fabric f;
    if (!Degrade(intact, 1 + static_cast<int>(seed % link_spread), static_cast<int>(seed % 2), seed,
                 &f)) {
      continue;
    }
    SCOPED_TRACE("seed " + std::to_string(seed));
    check(f);
    ++built;
  }
  return built;
}

inline RoutingOutput RouteOk(const std::string& engine, const Fabric& f, RoutingInput in = {}) {
  in.fabric = &f;
  RoutingOutput out;
  const Status s = MakeRoutingEngine(engine)->Route(in, &out);
  EXPECT_TRUE(s.ok()) << engine << ": " << s.ToString();
  return out;
}

inline TraceReport Trace(const Fabric& f, const LftSet& lfts) {
  TraceReport r;
  TraceOptions o;
  o.max_examples = 3;
  EXPECT_TRUE(TraceAll(f, lfts, o, &r).ok());
  return r;
}

/// Walks the tables from every switch to every LID (switch and HCA LIDs, all 2^LMC) whose
/// owner it is cabled to; returns the number of walks that do not arrive, and counts in *longer
/// the arrivals that took more switch hops than the BFS distance.
inline int BadSwitchRoutes(const Fabric& f, const LftSet& lfts, int* longer) {
  int bad = 0;
  *longer = 0;
  for (Lid lid = 1; lid <= f.max_lid(); ++lid) {
    const PortRef owner = f.lid_owner(lid);
    if (!owner.valid()) continue;
    const NodeId target = f.is_switch(owner.node) ? owner.node : f.peer(owner).node;
    if (target == kNoNode || !f.is_switch(target)) continue;
    std::vector<int> dist(f.num_nodes(), -1);  // switch hops to the target's switch
    std::vector<NodeId> queue{target};
    dist[target] = 0;
    for (size_t i = 0; i < queue.size(); ++i) {
      for (int p = 1; p <= f.num_ports(queue[i]); ++p) {
        const PortRef q = f.peer({queue[i], p});
        if (q.valid() && f.is_switch(q.node) && dist[q.node] < 0) {
          dist[q.node] = dist[queue[i]] + 1;
          queue.push_back(q.node);
        }
      }
    }
    for (NodeId from : f.switches()) {
      if (dist[from] < 0) continue;
      NodeId at = from;
      int hops = 0;
      bool arrived = false;
      for (; hops <= f.num_switches(); ++hops) {
        const int port = lfts.port(f.switch_index(at), lid);
        if (port == LftSet::kNoRoute) break;
        if (port == 0) {
          arrived = PortRef{at, 0} == owner;
          break;
        }
        const PortRef next = f.peer({at, port});
        if (!next.valid()) break;
        if (!f.is_switch(next.node)) {
          arrived = next == owner;
          break;
        }
        at = next.node;
      }
      if (!arrived) {
        ++bad;
      } else if (hops > dist[from]) {
        ++*longer;
      }
    }
  }
  return bad;
}

/// `f` with its LIDs permuted over the ports by `seed`, as a guid2lid in no particular order
/// gives them: with LMC 0 every LID goes anywhere (HCA and switch LIDs mixed), with LMC > 0 the
/// HCA ports swap their aligned blocks and the switches their LIDs.
inline Fabric ShuffleLids(const Fabric& f, uint64_t seed) {
  std::vector<PortRef> hcas = f.Endpoints(), sws;
  for (NodeId s : f.switches()) sws.push_back({s, 0});
  const bool mix = !hcas.empty() && f.lmc(hcas[0]) == 0;
  if (mix) {
    hcas.insert(hcas.end(), sws.begin(), sws.end());
    sws.clear();
  }
  Fabric g = f;
  g.ClearLids();
  std::mt19937_64 rng(seed);
  for (const std::vector<PortRef>* group : {&hcas, &sws}) {
    std::vector<Lid> lids;
    for (const PortRef& p : *group) lids.push_back(f.base_lid(p));
    std::shuffle(lids.begin(), lids.end(), rng);
    for (size_t i = 0; i < group->size(); ++i) {
      const PortRef p = (*group)[i];
      EXPECT_TRUE(g.SetLid(p, lids[i], f.is_switch(p.node) ? 0 : f.lmc(p)).ok());
    }
  }
  return g;
}

/// Number of (switch, destination LID) entries that differ between tables `a` of fabric `fa`
/// and `b` of `fb`, the same fabric with other LIDs: each destination (every LID of every
/// cabled HCA port, every switch) is looked up under its LIDs in each fabric.
inline int RouteDifferencesAcrossLids(const Fabric& fa, const LftSet& a, const Fabric& fb,
                                      const LftSet& b) {
  int diff = 0;
  for (int s = 0; s < fa.num_switches(); ++s) {
    for (const PortRef& e : fa.Endpoints()) {
      for (int i = 0; i < (1 << fa.lmc(e)); ++i) {
        diff += a.port(s, fa.base_lid(e) + i) != b.port(s, fb.base_lid(e) + i);
      }
    }
    for (NodeId t : fa.switches())
      diff += a.port(s, fa.switch_lid(t)) != b.port(s, fb.switch_lid(t));
  }
  return diff;
}

}  // namespace sar::enginetest
