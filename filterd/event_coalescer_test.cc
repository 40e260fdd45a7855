#include "event_coalescer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace sar::filterd {
namespace {

// Drives a coalescer as the daemon's loop does: before each request, every poll that fell due
// is run. Returns the poll times.
std::vector<double> PollTimes(EventCoalescer* c, const std::vector<double>& requests) {
  std::vector<double> polls;
  for (double t : requests) {
    if (c->pending() && c->DueAt() <= t) {
      polls.push_back(c->DueAt());
      c->Clear();
    }
    c->Request(t);
  }
  if (c->pending()) polls.push_back(c->DueAt());
  return polls;
}

TEST(EventCoalescer, OneRequestPollsAfterOneWindow) {
  EventCoalescer c(0.2);
  EXPECT_FALSE(c.pending());
  EXPECT_TRUE(std::isinf(c.DueAt()));
  c.Request(10.0);
  EXPECT_DOUBLE_EQ(c.DueAt(), 10.2);
  c.Clear();
  EXPECT_FALSE(c.pending());
}

TEST(EventCoalescer, ABurstWithinFiveWindowsIsOnePoll) {
  // 200 job starts spread at random over one second (5 windows of 0.2 s): one poll.
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> within(0.0, 0.999);
  for (int round = 0; round < 20; ++round) {
    std::vector<double> t(200);
    for (double& x : t) x = 100 + within(rng);
    std::sort(t.begin(), t.end());
    EventCoalescer c(0.2);
    EXPECT_EQ(PollTimes(&c, t).size(), 1u);
  }
}

TEST(EventCoalescer, EveryRequestIsAnsweredWithinTheCapAndPollsAreFew) {
  // Random request streams with gaps around the window. Properties, per request r answered by
  // the first poll at or after it: the poll comes at most 5 windows after r; a poll comes
  // either after a full quiet window or at the cap; polls are no more than bursts allow.
  std::mt19937 rng(5);
  std::exponential_distribution<double> gap(1 / 0.15);
  const double w = 0.2;
  for (int round = 0; round < 50; ++round) {
    std::vector<double> t;
    double now = 0;
    for (int i = 0; i < 100; ++i) t.push_back(now += gap(rng));
    EventCoalescer c(w);
    const std::vector<double> polls = PollTimes(&c, t);
    ASSERT_FALSE(polls.empty());
    EXPECT_TRUE(std::is_sorted(polls.begin(), polls.end()));
    for (double r : t) {
      auto p = std::lower_bound(polls.begin(), polls.end(), r);
      ASSERT_NE(p, polls.end()) << "request at " << r << " never answered";
      EXPECT_LE(*p - r, 5 * w + 1e-9);
    }
    // Independent count of quiet gaps: each gap longer than a window ends a burst, and a burst
    // of length L needs at most ceil(L / 5w) polls (+1 for where its cap boundaries fall).
    size_t bound = 0;
    size_t start = 0;
    for (size_t i = 1; i <= t.size(); ++i) {
      if (i == t.size() || t[i] - t[i - 1] >= w) {
        bound += static_cast<size_t>(std::ceil((t[i - 1] - t[start]) / (5 * w))) + 1;
        start = i;
      }
    }
    EXPECT_LE(polls.size(), bound);
    EXPECT_LT(polls.size(), t.size() / 2);  // the point of coalescing
  }
}

TEST(EventCoalescer, ZeroWindowPollsAtOnce) {
  EventCoalescer c(0);
  c.Request(4.0);
  EXPECT_DOUBLE_EQ(c.DueAt(), 4.0);
}

}  // namespace
}  // namespace sar::filterd
