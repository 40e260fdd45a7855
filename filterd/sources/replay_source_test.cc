#include "sources/replay_source.h"

#include <gtest/gtest.h>

namespace sar::filterd {
namespace {

TEST(ReplaySource, JobsHoldNodesFromStartUntilEnd) {
  std::vector<TraceJob> trace;
  Status s = ParseJobTrace(
      "# start end id hosts [partition [limit]]\n0 10 a n[1-2]\n5 - b n3 gpu 60\n10 20 c n4\n",
      "t.trace", &trace);
  ASSERT_TRUE(s.ok()) << s.ToString();
  double now = 0;
  ReplaySource src(trace, [&now] { return now; });
  auto ids_at = [&](double t) {
    now = t;
    std::vector<SourceJob> jobs;
    EXPECT_TRUE(src.Poll(&jobs).ok());
    std::string ids;
    for (const auto& j : jobs) ids += j.id;
    return ids;
  };
  EXPECT_EQ(ids_at(0), "a");
  EXPECT_EQ(ids_at(5), "ab");
  EXPECT_EQ(ids_at(10), "bc");  // a ended at 10, c started
  EXPECT_EQ(ids_at(1e9), "b");  // never ends
  EXPECT_EQ(trace[0].job.hosts, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(trace[1].job.partition, "gpu");
  EXPECT_EQ(trace[1].job.time_limit_min, 60);
}

TEST(ReplaySource, MalformedLinesNameTheLine) {
  for (const char* text : {"0 1 a\n", "\nx 1 a n1\n", "5 1 a n1\n", "0 1 a n[1-\n",
                           "0 1 a n1 p z\n", "0 1 a n1 p 5 sar-pattern=alltoall extra\n",
                           // Not finite: from_chars takes these, a time must not.
                           "nan 1 a n1\n", "0 nan a n1\n", "inf - a n1\n", "0 inf a n1\n",
                           "-inf 5 a n1\n", "0 infinity a n1\n"}) {
    std::vector<TraceJob> trace;
    Status s = ParseJobTrace(text, "t.trace", &trace);
    EXPECT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.message().rfind("t.trace:", 0), 0u) << s.message();
  }
}

TEST(ReplaySource, TheSeventhWordIsTheAdminComment) {
  std::vector<TraceJob> trace;
  Status s = ParseJobTrace("0 - a n1 batch 60 sar-pattern=alltoall\n0 - b n2 batch 60 other\n",
                           "t.trace", &trace);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_EQ(trace[0].job.pattern, JobPattern::kAllToAll);
  EXPECT_EQ(trace[1].job.pattern, JobPattern::kDefault);
}

}  // namespace
}  // namespace sar::filterd
