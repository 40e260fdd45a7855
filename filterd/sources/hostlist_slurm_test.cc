// libsar's host-list expander (sar/io/hostlist.h) against SLURM's own, where libslurm is linked.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "sources/hostlist.h"

#ifdef SAR_HAVE_SLURM
#include <slurm/slurm.h>
#endif

namespace sar::filterd {
namespace {

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
    std::vector<std::string> got;
    ASSERT_TRUE(ExpandHostlist(expr, &got).ok());
    EXPECT_EQ(got, want) << expr;
    size_t count = 0;
    ASSERT_TRUE(CountHostlist(expr, &count).ok());
    EXPECT_EQ(count, want.size()) << expr;
  }
}
#endif

// CountHostlist (issue 34 defect 6: a reply's hosts are counted before any is expanded) gives
// what ExpandHostlist makes, fails where it fails, and costs nothing for a huge count.
TEST(Hostlist, CountIsTheExpansionsSizeWithItsErrors) {
  for (const char* expr : {"n1", "n[001-016]", "a1,b[2-3],c", "r[1-2]n[01-03]", "x[0-49150]",
                           "n[1-3,7,10-11],m[5-6]", ",n1,,"}) {
    std::vector<std::string> hosts;
    ASSERT_TRUE(ExpandHostlist(expr, &hosts).ok()) << expr;
    size_t count = 99;
    ASSERT_TRUE(CountHostlist(expr, &count).ok()) << expr;
    EXPECT_EQ(count, hosts.size()) << expr;
  }
  for (const char* expr : {"n[1-3", "n[3-1]", "x[0-49151]", "x[0-999999999999]", "n1]"}) {
    size_t count = 99;
    EXPECT_FALSE(CountHostlist(expr, &count).ok()) << expr;
    EXPECT_EQ(count, 0u) << expr;
  }
  size_t count = 0;
  EXPECT_TRUE(CountHostlist("n[1-4]", &count, 4).ok());
  EXPECT_FALSE(CountHostlist("n[1-5]", &count, 4).ok());
}

}  // namespace
}  // namespace sar::filterd
