#include "sar/io/hostlist.h"

#include <gtest/gtest.h>

#include <cstdio>

// The check against libslurm's own expander is filterd/sources/hostlist_slurm_test.cc (libslurm is
// linked there, not into libsar's tests).

namespace sar {
namespace {

std::vector<std::string> Expand(const std::string& expr) {
  std::vector<std::string> out;
  Status s = ExpandHostlist(expr, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

TEST(Hostlist, RangeMatchesPrintfFormatting) {
  // Independent truth: the names printf gives for the same numbers and padding.
  std::vector<std::string> want;
  char buf[32];
  for (int i = 8; i <= 16; ++i) want.push_back((snprintf(buf, sizeof(buf), "n%03d", i), buf));
  for (int i = 33; i <= 35; ++i) want.push_back((snprintf(buf, sizeof(buf), "n%03d", i), buf));
  want.push_back("login");
  EXPECT_EQ(Expand("n[008-016,033-035],login"), want);
}

TEST(Hostlist, SeveralGroupsMultiply) {
  const auto hosts = Expand("r[1-2]n[01-03]");
  ASSERT_EQ(hosts.size(), 6u);
  EXPECT_EQ(hosts.front(), "r1n01");
  EXPECT_EQ(hosts.back(), "r2n03");
}

TEST(Hostlist, RejectsMalformed) {
  std::vector<std::string> out;
  EXPECT_FALSE(ExpandHostlist("n[1-3", &out).ok());
  EXPECT_FALSE(ExpandHostlist("n[3-1]", &out).ok());
  EXPECT_FALSE(ExpandHostlist("n[a-b]", &out).ok());
  EXPECT_FALSE(ExpandHostlist("n1]", &out).ok());
}

// Hostile lists (issue 19): a huge range is refused before anything is made, and many bracket
// groups neither recurse nor blow up.
TEST(Hostlist, HugeRangesAreRefusedWithoutExpanding) {
  for (const char* expr :
       {"x[0-999999999999999999]", "x[0-9999999]", "a[0-999]b[0-999]", "x[0-40000],y[0-40000]"}) {
    std::vector<std::string> out;
    const Status s = ExpandHostlist(expr, &out);
    EXPECT_FALSE(s.ok()) << expr;
    EXPECT_NE(s.message().find("names more than"), std::string::npos) << s.ToString();
    EXPECT_TRUE(out.size() <= kMaxHostlistHosts) << expr;
  }
  std::vector<std::string> out;
  EXPECT_TRUE(ExpandHostlist("n[1-4]", &out, 4).ok());
  EXPECT_FALSE(ExpandHostlist("n[1-5]", &out, 4).ok());
  EXPECT_EQ(Expand("x[0-49150]").size(), kMaxHostlistHosts);
}

TEST(Hostlist, ManyGroupsNeitherRecurseNorMultiply) {
  std::string expr = "h";
  for (int i = 0; i < 20000; ++i) expr += "[0]";
  const auto hosts = Expand(expr);
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0], "h" + std::string(20000, '0'));
  // Errors quote a bounded part of a long input.
  std::vector<std::string> out;
  const Status s = ExpandHostlist(expr + "[", &out);
  EXPECT_FALSE(s.ok());
  EXPECT_LT(s.ToString().size(), 200u);
}

TEST(Hostlist, OdometerOrderWithSeveralRangesPerGroup) {
  const std::vector<std::string> want = {"r1n1", "r1n3", "r1n4", "r5n1", "r5n3", "r5n4"};
  EXPECT_EQ(Expand("r[1,5]n[1,3-4]"), want);
}

}  // namespace
}  // namespace sar
