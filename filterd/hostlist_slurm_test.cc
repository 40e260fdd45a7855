// libsar's host-list expander (sar/io/hostlist.h) against SLURM's own, where libslurm is linked.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "hostlist.h"

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
  }
}
#endif

}  // namespace
}  // namespace sar::filterd
