// FORS schedule and routing, checked against the paper's lemmas and by an independent counter.
#include "sar/fors/fors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "fors/list_edge_colouring.h"

namespace sar {
namespace {

// Lemmas 1, 3, 4, 5 of the paper plus coverage, for every 2 <= M0, M1 <= 8 and f < M0.
TEST(ForsSchedule, LemmasHoldExhaustively) {
  for (int m0 = 2; m0 <= 8; ++m0) {
    for (int m1 = 2; m1 <= 8; ++m1) {
      const int n = m0 * m1;
      for (int f = 0; f < m0; ++f) {
        SCOPED_TRACE("FT(2;" + std::to_string(m0) + "," + std::to_string(m1) +
                     ") f=" + std::to_string(f));
        const auto phases = InterLeafSchedule(m0, m1, f);
        // Lemma 1: every transmission lies in [0, P_f).
        const int64_t pf = (static_cast<int64_t>(m0) * (n - m0) + (m0 - f) - 1) / (m0 - f);
        ASSERT_EQ(static_cast<int64_t>(phases.size()), pf);
        std::vector<int> pair_count(n * n, 0);
        for (const auto& ph : phases) {
          std::vector<int> sends(n, 0), recvs(n, 0), leaf_out(m1, 0), leaf_in(m1, 0);
          for (const Transfer& t : ph) {
            ASSERT_NE(t.src / m0, t.dst / m0) << "inter-leaf schedule has an intra-leaf pair";
            ++pair_count[t.src * n + t.dst];
            ++sends[t.src];
            ++recvs[t.dst];  // Lemma 3: distinct senders have distinct destinations
            ++leaf_out[t.src / m0];
            ++leaf_in[t.dst / m0];
          }
          for (int s = 0; s < n; ++s) {
            ASSERT_LE(sends[s], 1);
            ASSERT_LE(recvs[s], 1);
          }
          for (int l = 0; l < m1; ++l) {  // Lemma 5
            ASSERT_LE(leaf_out[l], m0 - f);
            ASSERT_LE(leaf_in[l], m0 - f);
          }
        }
        for (int s = 0; s < n; ++s) {  // Lemma 4 + coverage: each off-leaf pair exactly once
          for (int d = 0; d < n; ++d) {
            ASSERT_EQ(pair_count[s * n + d], s / m0 != d / m0 ? 1 : 0) << s << "->" << d;
          }
        }
      }
    }
  }
}

// Failure sets with bandwidth reduction exactly f: seeded random links on random leaves, with
// one leaf forced to lose f links.
std::vector<FailedLink> RandomFailures(int m0, int m1, int f, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<FailedLink> out;
  std::set<std::pair<int, int>> seen;
  const int hot = static_cast<int>(rng() % m1);
  std::vector<int> spines(m0);
  for (int l = 0; l < m1; ++l) {
    const int k = l == hot ? f : static_cast<int>(rng() % (f + 1));
    for (int i = 0; i < m0; ++i) spines[i] = i;
    std::shuffle(spines.begin(), spines.end(), rng);
    for (int i = 0; i < k; ++i) out.push_back({l, spines[i]});
  }
  return out;
}

bool SomePairSharesNoSpine(int m0, int m1, const std::vector<FailedLink>& failed) {
  const auto mask = FailedMask(m0, m1, failed);
  for (int a = 0; a < m1; ++a) {
    for (int b = a + 1; b < m1; ++b) {
      int shared = 0;
      for (int s = 0; s < m0; ++s) shared += !mask[a * m0 + s] && !mask[b * m0 + s];
      if (shared == 0) return true;
    }
  }
  return false;
}

void ExpectGoodPlan(int m0, int m1, const std::vector<FailedLink>& failed, ForsPlan* plan_out) {
  ForsOptions o;
  o.m0 = m0;
  o.m1 = m1;
  o.failed = failed;
  ForsPlan plan;
  const Status s = PlanFors(o, &plan);
  if (SomePairSharesNoSpine(m0, m1, failed)) {
    EXPECT_EQ(s.code(), Status::Code::kFailed);
    return;
  }
  ASSERT_TRUE(s.ok()) << s.ToString();
  const int f = BandwidthReduction(m0, m1, failed);
  EXPECT_EQ(plan.stats.f, f);
  ASSERT_TRUE(CheckPlan(m0, m1, failed, plan.phases).ok())
      << CheckPlan(m0, m1, failed, plan.phases).ToString();
  EXPECT_EQ(plan.num_phases(),
            plan.stats.inter_phases + plan.stats.intra_extra_phases + plan.stats.split_phases);
  // At least P - 1 phases are needed (each server sends P - 1 times, once per phase), and the
  // inter-leaf part alone needs P_f.
  EXPECT_GE(plan.num_phases(), static_cast<int64_t>(m0) * m1 - 1);
  EXPECT_EQ(plan.stats.inter_phases, InterLeafPhases(m0, m1, f));
  // Theorem 1: with f > floor(M0/M1) the intra-leaf pairs fit into the idle slots.
  if (f > m0 / m1) {
    EXPECT_EQ(plan.stats.intra_extra_phases, 0);
  }
  if (plan_out) *plan_out = std::move(plan);
}

TEST(ForsPlan, ExhaustiveSmallFabricsAndRandomFailures) {
  for (int m0 = 2; m0 <= 8; ++m0) {
    for (int m1 = 2; m1 <= 8; ++m1) {
      for (int f = 0; f < m0; ++f) {
        for (uint64_t seed = 1; seed <= 3; ++seed) {
          SCOPED_TRACE("FT(2;" + std::to_string(m0) + "," + std::to_string(m1) +
                       ") f=" + std::to_string(f) + " seed=" + std::to_string(seed));
          ExpectGoodPlan(m0, m1, RandomFailures(m0, m1, f, seed * 1000 + m0 * 10 + m1), nullptr);
        }
        // Whole spines 0..f-1 down: m = f, Algorithm 2 applies and must need no split.
        std::vector<FailedLink> spines_down;
        for (int s = 0; s < f; ++s) {
          for (int l = 0; l < m1; ++l) spines_down.push_back({l, s});
        }
        ForsPlan plan;
        ExpectGoodPlan(m0, m1, spines_down, &plan);
        if (f > 0 && !plan.phases.empty()) {
          EXPECT_EQ(plan.stats.method, RouteMethod::kAlgorithm2);
          EXPECT_EQ(plan.stats.split_phases, 0);
        }
      }
    }
  }
}

TEST(ForsPlan, FaultFreeTakesPMinusOnePhases) {
  for (int m0 = 1; m0 <= 6; ++m0) {
    for (int m1 = 1; m1 <= 6; ++m1) {
      if (m0 * m1 < 2) continue;
      ForsPlan plan;
      ExpectGoodPlan(m0, m1, {}, &plan);
      EXPECT_EQ(plan.num_phases(), m0 * m1 - 1) << m0 << "," << m1;
      EXPECT_EQ(plan.stats.split_phases, 0);
    }
  }
}

TEST(ForsPlan, PaperScenarioOneFailureOnThreeLeavesIsExact) {
  // 1F SW0,5,11 on FT(2;20,18): f = 1 but three spines are hit, so Algorithm 2 does not apply.
  const std::vector<FailedLink> failed = {{0, 0}, {5, 1}, {11, 2}};
  ForsPlan plan;
  ExpectGoodPlan(20, 18, failed, &plan);
  EXPECT_EQ(plan.stats.method, RouteMethod::kExact);
  EXPECT_EQ(plan.stats.inter_phases, 358);  // ceil(20 * 340 / 19)
}

TEST(ForsPlan, RejectsLeafPairWithoutCommonSpine) {
  ForsOptions o;
  o.m0 = 4;
  o.m1 = 3;
  o.failed = {{0, 0}, {0, 1}, {1, 2}, {1, 3}};
  ForsPlan plan;
  EXPECT_EQ(PlanFors(o, &plan).code(), Status::Code::kFailed);
}

TEST(ForsCheck, CatchesBrokenPlans) {
  const std::vector<FailedLink> failed = {{0, 1}};
  ForsPlan plan;
  ExpectGoodPlan(4, 4, failed, &plan);
  ASSERT_FALSE(plan.phases.empty());
  auto find_inter = [&](int* p, int* i) {
    for (*p = 0; *p < static_cast<int>(plan.phases.size()); ++*p) {
      for (*i = 0; *i < static_cast<int>(plan.phases[*p].size()); ++*i) {
        if (plan.phases[*p][*i].spine >= 0) return;
      }
    }
  };
  int p = 0, i = 0;
  find_inter(&p, &i);
  {
    auto bad = plan.phases;
    bad[p].erase(bad[p].begin() + i);
    EXPECT_FALSE(CheckPlan(4, 4, failed, bad).ok()) << "missing pair";
  }
  {
    auto bad = plan.phases;
    const Transfer t = bad[p][i];
    bad[p].erase(bad[p].begin() + i);
    bad.push_back({t, t});
    EXPECT_FALSE(CheckPlan(4, 4, failed, bad).ok()) << "pair twice";
  }
  {
    auto bad = plan.phases;
    for (Transfer& t : bad[p]) {
      if (t.spine >= 0) t.spine = bad[p][i].spine;  // every flow on one spine
    }
    EXPECT_FALSE(CheckPlan(4, 4, failed, bad).ok()) << "shared link";
  }
  {
    auto bad = plan.phases;
    for (auto& ph : bad) {
      for (Transfer& t : ph) {
        if (t.spine >= 0 && t.src / 4 == 0) t.spine = 1;  // leaf 0's failed uplink
      }
    }
    EXPECT_FALSE(CheckPlan(4, 4, failed, bad).ok()) << "failed link";
  }
}

TEST(ForsFailedLinks, ParsesCommentsAndRejectsBadLines) {
  std::vector<FailedLink> links;
  ASSERT_TRUE(ParseFailedLinks("# scenario\n0 3\n\n 5\t1 # leaf 5\n", "f", 4, 8, &links).ok());
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0], (FailedLink{0, 3}));
  EXPECT_EQ(links[1], (FailedLink{5, 1}));
  Status s = ParseFailedLinks("0 1\n0 4\n", "f", 4, 8, &links);
  EXPECT_EQ(s.code(), Status::Code::kCorruption);
  EXPECT_NE(s.message().find("f:2:"), std::string::npos) << s.message();
  EXPECT_FALSE(ParseFailedLinks("0 1\n0 1\n", "f", 4, 8, &links).ok());
  EXPECT_FALSE(ParseFailedLinks("0\n", "f", 4, 8, &links).ok());
  EXPECT_FALSE(ParseFailedLinks("0 1 2\n", "f", 4, 8, &links).ok());
  EXPECT_FALSE(ParseFailedLinks("-1 1\n", "f", 4, 8, &links).ok());
  EXPECT_FALSE(ParseFailedLinks("8 0\n", "f", 4, 8, &links).ok());
}

// The colouring solvers against brute force on tiny random instances.
bool BruteForce(const fors_internal::ColouringProblem& p, std::vector<int>* c, size_t e) {
  if (e == p.edges.size()) return fors_internal::IsProperColouring(p, *c);
  for (int k = 0; k < p.num_colours; ++k) {
    (*c)[e] = k;
    bool ok = !p.forbids(p.edges[e].first, k) && !p.forbids(p.edges[e].second, k);
    for (size_t x = 0; ok && x < e; ++x) {
      ok = !((*c)[x] == k &&
             (p.edges[x].first == p.edges[e].first || p.edges[x].second == p.edges[e].second));
    }
    if (ok && BruteForce(p, c, e + 1)) return true;
  }
  (*c)[e] = -1;
  return false;
}

TEST(ForsColouring, SatAgreesWithBruteForceAndHeuristicStaysProper) {
  std::mt19937_64 rng(7);
  int feasible = 0, infeasible = 0;
  for (int iter = 0; iter < 300; ++iter) {
    fors_internal::ColouringProblem p;
    const int side = 2 + static_cast<int>(rng() % 3);
    p.num_vertices = 2 * side;
    p.num_colours = 2 + static_cast<int>(rng() % 3);
    p.forbidden.assign(p.num_vertices * p.num_colours, 0);
    for (auto& x : p.forbidden) x = rng() % 4 == 0;
    const int num_edges = 1 + static_cast<int>(rng() % 7);
    for (int e = 0; e < num_edges; ++e) {
      p.edges.emplace_back(static_cast<int>(rng() % side), side + static_cast<int>(rng() % side));
    }
    std::vector<int> brute(p.edges.size(), -1);
    const bool exists = BruteForce(p, &brute, 0);
    std::vector<int> heur;
    const int left = fors_internal::ColourByAlternatingPaths(p, iter, &heur);
    // The coloured part must be proper: check it as the sub-problem of coloured edges.
    fors_internal::ColouringProblem part = p;
    part.edges.clear();
    std::vector<int> part_c;
    for (size_t e = 0; e < p.edges.size(); ++e) {
      if (heur[e] >= 0) {
        part.edges.push_back(p.edges[e]);
        part_c.push_back(heur[e]);
      }
    }
    EXPECT_TRUE(fors_internal::IsProperColouring(part, part_c));
    if (left == 0) {
      EXPECT_TRUE(exists);
    }
    std::vector<int> sat;
    const auto outcome = fors_internal::ColourBySat(p, 0, &sat);
    EXPECT_EQ(outcome == fors_internal::SatOutcome::kColoured, exists) << "iter " << iter;
    if (outcome == fors_internal::SatOutcome::kColoured) {
      EXPECT_TRUE(fors_internal::IsProperColouring(p, sat));
    }
    (exists ? feasible : infeasible)++;
  }
  EXPECT_GT(feasible, 20);  // the generator exercises both outcomes
  EXPECT_GT(infeasible, 20);
}

TEST(ForsColouring, KoenigWithoutForbiddenColours) {
  std::mt19937_64 rng(3);
  for (int iter = 0; iter < 200; ++iter) {
    fors_internal::ColouringProblem p;
    const int side = 3 + static_cast<int>(rng() % 6);
    p.num_vertices = 2 * side;
    std::vector<int> deg(p.num_vertices, 0);
    const int num_edges = static_cast<int>(rng() % 40);
    for (int e = 0; e < num_edges; ++e) {
      const int u = static_cast<int>(rng() % side), v = side + static_cast<int>(rng() % side);
      p.edges.emplace_back(u, v);
      p.num_colours = std::max({p.num_colours, ++deg[u], ++deg[v]});
    }
    std::vector<int> c;
    ASSERT_EQ(fors_internal::ColourByAlternatingPaths(p, iter, &c), 0);
    EXPECT_TRUE(fors_internal::IsProperColouring(p, c));
  }
}

}  // namespace
}  // namespace sar
