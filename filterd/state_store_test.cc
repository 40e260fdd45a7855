#include "state_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "test_util.h"

namespace sar::filterd {
namespace {

TEST(StateStore, RoundTripAndEmptyStart) {
  TempDir dir;
  PersistentState st;
  ASSERT_TRUE(LoadState(*RealEnv(), dir.Join("absent"), &st).ok());
  EXPECT_FALSE(st.has_router_set);

  st.has_router_set = true;
  st.router_set = {{"7", {"a", "b"}, 2}, {"9", {"c", "d", "e"}, 3}};
  st.last_reroute_unix_s = 1700000000.25;
  ASSERT_TRUE(SaveState(*RealEnv(), dir.Join("state"), st).ok());
  struct stat s {};
  ASSERT_EQ(stat(dir.Join("state").c_str(), &s), 0);
  EXPECT_EQ(s.st_mode & 0777, 0700u);

  PersistentState back;
  ASSERT_TRUE(LoadState(*RealEnv(), dir.Join("state"), &back).ok());
  EXPECT_TRUE(back.has_router_set);
  ASSERT_EQ(back.router_set.size(), 2u);
  EXPECT_EQ(back.router_set[0].hosts, st.router_set[0].hosts);
  EXPECT_EQ(back.router_set[1].id, "9");
  EXPECT_DOUBLE_EQ(back.last_reroute_unix_s, st.last_reroute_unix_s);
}

TEST(StateStore, UnwritableDirIsAnError) {
  PersistentState st;
  Status s = SaveState(*RealEnv(), "/proc/sar-filterd-state", st);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/proc/sar-filterd-state"), std::string::npos);
}

}  // namespace
}  // namespace sar::filterd
