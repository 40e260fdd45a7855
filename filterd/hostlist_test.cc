#include "hostlist.h"

#include <gtest/gtest.h>

#include <cstdio>

#ifdef SAR_HAVE_SLURM
#include <slurm/slurm.h>
#endif

namespace sar::filterd {
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

#ifdef SAR_HAVE_SLURM
// Second truth: SLURM's own expander, on the forms squeue and topology.conf use.
TEST(Hostlist, AgreesWithLibslurm) {
  for (const char* expr : {"n[001-016]", "n[008-016,033-043]", "a1,b[2-3],c", "x[09-11]",
                           "rack[1-2]node[1-2]", "n[1-3,7,10-11]"}) {
    std::vector<std::string> want;
    hostlist_t hl = slurm_hostlist_create(expr);
    ASSERT_NE(hl, nullptr);
    while (char* h = slurm_hostlist_shift(hl)) {
      want.emplace_back(h);
      free(h);
    }
    slurm_hostlist_destroy(hl);
    EXPECT_EQ(Expand(expr), want) << expr;
  }
}
#endif

}  // namespace
}  // namespace sar::filterd
