// dmodk, dmodc and sar-dmodc against computations written here from the paper and from the
// generator's documented labelling (generate.h), not from the engines' code.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <set>

#include "engines/engine_test_util.h"
#include "engines/sssp_test_util.h"
#include "sar/pass/routing_pass.h"
#include "test_fabrics.h"

namespace sar {
namespace {

using enginetest::BadSwitchRoutes;
using enginetest::Pgft;
using enginetest::RouteOk;
using enginetest::Spec;
using enginetest::Trace;

// Intact PGFTs with single-homed hosts (w_1 = p_1 = 1), the paper's Fig. 1 among them.
std::vector<PgftSpec> IntactSpecs() {
  std::vector<PgftSpec> specs = {
      Spec(3, {2, 2, 3}, {1, 2, 2}, {1, 2, 1}),  // Fig. 1 of the Dmodc paper
      Spec(3, {4, 4, 4}, {1, 4, 4}, {1, 1, 1}),  // 4-ary-3-tree
      Spec(2, {4, 3}, {1, 2}, {1, 2}),
      Spec(3, {3, 2, 2}, {1, 3, 2}, {1, 1, 2}),
      Spec(4, {2, 2, 2, 2}, {1, 2, 2, 2}, {1, 1, 1, 1}),
      Spec(3, {4, 3, 2}, {1, 2, 3}, {1, 2, 2}),
  };
  std::mt19937_64 rng(5);
  for (int i = 0; i < 8; ++i) specs.push_back(enginetest::RandomSpec(&rng));
  return specs;
}

std::string SwitchName(int level, int h, int64_t i) {
  char buf[40];
  if (level == 1) {
    std::snprintf(buf, sizeof buf, "leaf%03lld", static_cast<long long>(i));
  } else if (level == h) {
    std::snprintf(buf, sizeof buf, "spine%03lld", static_cast<long long>(i));
  } else {
    std::snprintf(buf, sizeof buf, "l%dsw%03lld", level, static_cast<long long>(i));
  }
  return buf;
}

// The paper's Dmodk (Sec. 2) on the labels of generate.h: for host d and the level-l switch
// (a_{l+1..h}; b_{1..l}), with W_l = prod_{k<=l} w_k and M_l = prod_{k<=l} m_k:
//  - d below it (d / M_l = its a-part): down to child a_l = (d / M_{l-1}) mod m_l, parallel
//    cable (d / W_l) mod p_l (Eq. 4 with one candidate group), port a_l * p_l + cable + 1;
//  - else up: q = (d / W_l) mod (w_{l+1} p_{l+1}), parent b = q mod w_{l+1} and cable
//    k = q / w_{l+1}, port m_l * p_l + b * p_{l+1} + k + 1 (down ports first in generate.h).
// Checks every switch's entry for every host's base LID; returns the number of mismatches.
int DmodkMismatches(const PgftSpec& spec, const Fabric& f, const LftSet& lfts) {
  const int h = spec.height;
  std::vector<int64_t> W(h + 1, 1), M(h + 1, 1), apart(h + 1, 1);
  for (int l = 1; l <= h; ++l) {
    W[l] = W[l - 1] * spec.w[l - 1];
    M[l] = M[l - 1] * spec.m[l - 1];
  }
  for (int l = h - 1; l >= 0; --l) apart[l] = apart[l + 1] * spec.m[l];
  int bad = 0;
  for (int l = 1; l <= h; ++l) {
    const int64_t count = apart[l] * W[l];
    for (int64_t i = 0; i < count; ++i) {
      const NodeId sw = f.FindByName(SwitchName(l, h, i));
      EXPECT_NE(sw, kNoNode);
      if (sw == kNoNode) return 1;
      const int64_t my_apart = i / W[l];
      for (int64_t d = 0; d < M[h]; ++d) {
        char host[24];
        std::snprintf(host, sizeof host, "h%05lld", static_cast<long long>(d));
        const Lid lid = f.base_lid({f.FindByName(host), 1});
        int port;
        if (d / M[l] == my_apart) {
          const int a = static_cast<int>((d / M[l - 1]) % spec.m[l - 1]);
          const int cable = static_cast<int>((d / W[l]) % spec.p[l - 1]);
          port = a * spec.p[l - 1] + cable + 1;
        } else {
          const int64_t q = (d / W[l]) % (int64_t{spec.w[l]} * spec.p[l]);
          const int b = static_cast<int>(q % spec.w[l]), k = static_cast<int>(q / spec.w[l]);
          port = spec.m[l - 1] * spec.p[l - 1] + b * spec.p[l] + k + 1;
        }
        if (lfts.port(f.switch_index(sw), lid) != port) {
          if (bad++ < 3) {
            ADD_FAILURE() << f.name(sw) << " to h" << d << ": port "
                          << int{lfts.port(f.switch_index(sw), lid)} << ", Dmodk says " << port;
          }
        }
      }
    }
  }
  return bad;
}

TEST(Dmodk, EqualsThePapersClosedFormOnIntactPgfts) {
  for (const PgftSpec& spec : IntactSpecs()) {
    SCOPED_TRACE(::testing::PrintToString(spec.m) + ::testing::PrintToString(spec.w) +
                 ::testing::PrintToString(spec.p));
    const Fabric f = Pgft(spec, 0);
    const RoutingOutput out = RouteOk("dmodk", f);
    EXPECT_EQ(DmodkMismatches(spec, f, out.lfts), 0);
    int longer = 0;
    EXPECT_EQ(BadSwitchRoutes(f, out.lfts, &longer), 0);  // switch LIDs too
    // The LID assignment does not matter: only whose LID it is.
    const Fabric shuffled = enginetest::ShuffleLids(f, 3);
    EXPECT_EQ(enginetest::RouteDifferencesAcrossLids(f, out.lfts, shuffled,
                                                     RouteOk("dmodk", shuffled).lfts),
              0);
  }
}

TEST(Dmodc, EqualsDmodkOnIntactPgfts) {
  for (const PgftSpec& spec : IntactSpecs()) {
    for (int lmc : {0, 1}) {
      const Fabric f = Pgft(spec, lmc);
      EXPECT_EQ(RouteOk("dmodc", f).lfts, RouteOk("dmodk", f).lfts);
    }
  }
}

TEST(Dmodk, RefusesADegradedTree) {
  const Fabric intact = Pgft(Spec(3, {4, 4, 4}, {1, 4, 4}, {1, 1, 1}), 0);
  Fabric f;
  ASSERT_TRUE(enginetest::Degrade(intact, 1, 0, 7, &f));
  RoutingInput in;
  in.fabric = &f;
  RoutingOutput out;
  const Status s = MakeRoutingEngine("dmodk")->Route(in, &out);
  EXPECT_EQ(s.code(), Status::Code::kFailed);
  EXPECT_NE(s.message().find("dmodk needs an intact PGFT"), std::string::npos) << s.ToString();
  EXPECT_TRUE(MakeRoutingEngine("dmodc")->Route(in, &out).ok());
}

// --- An independent up*-down* reachability and direction check -----------------------------

// Ranks: hops from the nearest switch with an HCA (written here with the Fabric API only).
std::vector<int> Ranks(const Fabric& f) {
  std::vector<int> rank(f.num_nodes(), -1);
  std::vector<NodeId> queue;
  for (NodeId s : f.switches()) {
    for (int p = 1; p <= f.num_ports(s); ++p) {
      const PortRef q = f.peer({s, p});
      if (q.valid() && !f.is_switch(q.node) && rank[s] < 0) {
        rank[s] = 0;
        queue.push_back(s);
      }
    }
  }
  for (size_t i = 0; i < queue.size(); ++i) {
    for (int p = 1; p <= f.num_ports(queue[i]); ++p) {
      const PortRef q = f.peer({queue[i], p});
      if (q.valid() && f.is_switch(q.node) && rank[q.node] < 0) {
        rank[q.node] = rank[queue[i]] + 1;
        queue.push_back(q.node);
      }
    }
  }
  return rank;
}

// Switch pairs (from, to) joined by a path that climbs ranks strictly and then descends
// strictly: a breadth-first search over (switch, descending yet?) states from each switch.
std::set<std::pair<NodeId, NodeId>> UpDownReachable(const Fabric& f, const std::vector<int>& rank) {
  std::set<std::pair<NodeId, NodeId>> reach;
  for (NodeId from : f.switches()) {
    std::set<std::pair<NodeId, bool>> seen{{from, false}};
    std::vector<std::pair<NodeId, bool>> queue{{from, false}};
    for (size_t i = 0; i < queue.size(); ++i) {
      const auto [at, down] = queue[i];
      reach.insert({from, at});
      for (int p = 1; p <= f.num_ports(at); ++p) {
        const PortRef q = f.peer({at, p});
        if (!q.valid() || !f.is_switch(q.node)) continue;
        const bool up = rank[q.node] > rank[at], dn = rank[q.node] < rank[at];
        if ((up && !down) || dn) {
          const std::pair<NodeId, bool> next{q.node, down || dn};
          if (seen.insert(next).second) queue.push_back(next);
        }
      }
    }
  }
  return reach;
}

struct RouteCheck {
  int delivered = 0, undelivered_connected = 0, delivered_unconnected = 0, down_then_up = 0;
};

// Walks every endpoint pair: delivered exactly when up*-down* reachable, never up after down.
RouteCheck CheckRoutes(const Fabric& f, const LftSet& lfts) {
  const std::vector<int> rank = Ranks(f);
  const auto reach = UpDownReachable(f, rank);
  RouteCheck rc;
  for (const PortRef& src : f.Endpoints()) {
    for (const PortRef& dst : f.Endpoints()) {
      if (src == dst) continue;
      const bool connected = reach.count({f.peer(src).node, f.peer(dst).node}) > 0;
      const testfab::NaiveRoute r = testfab::NaiveWalk(f, lfts, src, f.base_lid(dst));
      const bool ok = r.fate == RouteFate::kDelivered;
      rc.delivered += ok;
      rc.undelivered_connected += connected && !ok;
      rc.delivered_unconnected += !connected && ok;
      bool went_down = false;
      for (PortId c : r.channels) {
        if (!f.is_inter_switch(c)) continue;
        const int a = rank[f.port_node(c)], b = rank[f.port_node(f.peer_id(c))];
        if (b > a && went_down) {
          ++rc.down_then_up;
          break;
        }
        went_down = went_down || b < a;
      }
    }
  }
  return rc;
}

bool AllLeafPairsReachable(const Fabric& f) {
  const std::vector<int> rank = Ranks(f);
  const auto reach = UpDownReachable(f, rank);
  for (const PortRef& a : f.Endpoints()) {
    for (const PortRef& b : f.Endpoints()) {
      if (!reach.count({f.peer(a).node, f.peer(b).node})) return false;
    }
  }
  return true;
}

// Random degradations, heavy enough that some lose up*-down* paths between cabled leaves.
TEST(Dmodc, RandomDegradedPgftsDeliverEveryUpDownPairDeadlockFree) {
  std::mt19937_64 rng(21);
  int valid = 0, invalid = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Fabric intact = Pgft(enginetest::RandomSpec(&rng), static_cast<int>(seed % 3));
    Fabric f;
    if (!enginetest::Degrade(intact, 1 + static_cast<int>(seed % 7), static_cast<int>(seed % 3),
                             seed, &f)) {
      continue;
    }
    const bool reachable = AllLeafPairsReachable(f);
    for (const char* engine : {"dmodc", "sar-dmodc"}) {
      RoutingInput in;
      in.fabric = &f;
      const std::vector<ResolvedJob> jobs = sssptest::RandomJobs(f, seed, 6);
      in.jobs = &jobs;
      RoutingOutput out;
      const Status s = MakeRoutingEngine(engine)->Route(in, &out);
      // The validity pass agrees with the breadth-first search above.
      EXPECT_EQ(s.ok(), reachable) << engine << ": " << s.ToString();
      if (!s.ok()) {
        EXPECT_NE(s.message().find("no up-down path"), std::string::npos) << s.ToString();
        in.allow_disconnected = true;
        ASSERT_TRUE(MakeRoutingEngine(engine)->Route(in, &out).ok());
      }
      const RouteCheck rc = CheckRoutes(f, out.lfts);
      EXPECT_GT(rc.delivered, 0);
      EXPECT_EQ(rc.undelivered_connected, 0) << engine;
      EXPECT_EQ(rc.delivered_unconnected, 0) << engine;
      EXPECT_EQ(rc.down_then_up, 0) << engine;
      // The project's one definition of valid: delivered, loop-free, one acyclic layer between
      // CAs (its switch-LID routes may go down and then up: the routing pass layers them).
      ValidationOptions vo;
      vo.num_vls = 1;
      vo.switch_lids = false;
      vo.allow_disconnected = !reachable;
      ValidationReport report;
      const Status v = ValidateRouting(f, out.lfts, nullptr, 1, vo, &report);
      EXPECT_TRUE(v.ok()) << engine << ": " << v.ToString();
      EXPECT_TRUE(report.deadlock_checked && report.deadlock.deadlock_free) << engine;
      int longer = 0;
      if (reachable) {
        EXPECT_EQ(BadSwitchRoutes(f, out.lfts, &longer), 0) << engine;
      }
    }
    (reachable ? valid : invalid)++;
  }
  EXPECT_GE(valid, 20);
  EXPECT_GE(invalid, 1);  // the validity pass was exercised both ways
}

// leaf000 hangs only off spine000, leaf001 only off spine001, leaf002 off both: leaf000 and
// leaf001 are cabled (through leaf002) but have no up*-down* path.
TEST(Dmodc, ValidityPassNamesAPairWithoutUpDownPath) {
  const Fabric intact = Pgft(Spec(2, {2, 3}, {1, 2}, {1, 1}), 0);
  FailureSet fs;
  const NodeId leaf0 = intact.FindByName("leaf000"), leaf1 = intact.FindByName("leaf001");
  for (int p = 1; p <= intact.num_ports(leaf0); ++p) {
    if (intact.peer({leaf0, p}).node == intact.FindByName("spine001"))
      fs.links.push_back({"leaf000", p});
    if (intact.peer({leaf1, p}).node == intact.FindByName("spine000"))
      fs.links.push_back({"leaf001", p});
  }
  ASSERT_EQ(fs.links.size(), 2u);
  Fabric f;
  ASSERT_TRUE(ApplyFailures(intact, fs, &f).ok());
  RoutingInput in;
  in.fabric = &f;
  RoutingOutput out;
  const Status s = MakeRoutingEngine("dmodc")->Route(in, &out);
  ASSERT_EQ(s.code(), Status::Code::kFailed);
  EXPECT_NE(s.message().find("no up-down path from leaf00"), std::string::npos) << s.ToString();
  in.allow_disconnected = true;
  ASSERT_TRUE(MakeRoutingEngine("dmodc")->Route(in, &out).ok());
  bool noted = false;
  for (const std::string& n : out.notes) noted |= n.find("8 endpoint pairs have no route") == 0;
  EXPECT_TRUE(noted) << ::testing::PrintToString(out.notes);  // 2 hosts x 2 hosts, both ways
  const RouteCheck rc = CheckRoutes(f, out.lfts);
  EXPECT_EQ(rc.delivered, 6 * 5 - 8);
  EXPECT_EQ(rc.undelivered_connected + rc.delivered_unconnected + rc.down_then_up, 0);
}

// sar-dmodc: a multi-switch job's destinations are indexed b, b+1, ... inside the job, leaf by
// leaf, b the machine-wide index of its first member; on an intact tree every switch then routes
// job member k the way Dmodk routes host b + k.
TEST(SarDmodc, JobMembersTakeTheirIndexInsideTheJob) {
  const PgftSpec spec = Spec(3, {4, 4, 4}, {1, 4, 4}, {1, 1, 1});
  const Fabric f = Pgft(spec, 0);
  const LftSet dmodk = RouteOk("dmodk", f).lfts;
  const std::vector<PortRef> eps = f.Endpoints();  // h00000.. in order
  // Hosts 1, 2 (leaf000), 5 (leaf001), 22, 23 (leaf005), 40 (leaf010), listed out of order.
  const std::vector<int> members = {23, 5, 40, 1, 22, 2};
  std::vector<PortRef> job_eps;
  for (int m : members) job_eps.push_back(eps[m]);
  const std::vector<ResolvedJob> jobs = {sssptest::MakeJob(f, "j", job_eps),
                                         sssptest::MakeJob(f, "single", {eps[60], eps[61]})};
  RoutingInput in;
  in.jobs = &jobs;
  const RoutingOutput out = RouteOk("sar-dmodc", f, in);
  const std::vector<int> sorted = {1, 2, 5, 22, 23, 40};
  const int b = 1;  // h00001, the job's first member
  for (int s = 0; s < f.num_switches(); ++s) {
    for (size_t k = 0; k < sorted.size(); ++k) {
      const NodeId leaf = f.peer(eps[sorted[k]]).node;
      if (f.switch_index(leaf) == s) continue;  // delivered locally, by the cable
      // Going down, the route follows the tree (one child, one cable here); only the choice
      // among up ports (5..8 on levels 1-2) depends on the index. Wherever both member k and
      // host k climb, they take the same port.
      const bool both_climb = dmodk.port(s, f.base_lid(eps[sorted[k]])) > 4 &&
                              dmodk.port(s, f.base_lid(eps[b + k])) > 4;
      if (both_climb) {
        EXPECT_EQ(out.lfts.port(s, f.base_lid(eps[sorted[k]])),
                  dmodk.port(s, f.base_lid(eps[b + k])))
            << f.name(f.switches()[s]) << " member " << k;
      }
    }
    // Hosts in no multi-switch job keep Dmodc's machine-wide index.
    for (int other : {0, 3, 60, 61, 63}) {
      EXPECT_EQ(out.lfts.port(s, f.base_lid(eps[other])), dmodk.port(s, f.base_lid(eps[other])));
    }
  }
  // Without jobs sar-dmodc is dmodc.
  EXPECT_EQ(RouteOk("sar-dmodc", f).lfts, dmodk);
}

}  // namespace
}  // namespace sar
