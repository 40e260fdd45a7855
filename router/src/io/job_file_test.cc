#include "sar/io/job_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "io/test_util.h"
#include "sar/io/file_util.h"

namespace sar {
namespace {

bool SameMapping(const JobMapping& a, const JobMapping& b) {
  if (a.jobs.size() != b.jobs.size()) return false;
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    if (a.jobs[i].id != b.jobs[i].id || a.jobs[i].hosts != b.jobs[i].hosts ||
        a.jobs[i].pattern != b.jobs[i].pattern) {
      return false;
    }
  }
  return true;
}

TEST(JobFileTest, ParsesCommentsBlankLinesAndDuplicates) {
  const std::string text =
      "# written by the filter daemon\n"
      "\n"
      "h0101 42\n"
      "  h0102\t42   # trailing comment\n"
      "h0101 42\n"  // duplicate within a job: kept once
      "h0101 7\n"   // the same host in another job
      "h0201 7\r\n"
      "h0102 42";  // no final newline
  JobMapping m;
  const Status s = ParseJobMapping(text, "jobs.txt", &m);
  ASSERT_TRUE(s.ok()) << s.ToString();
  JobMapping want;
  want.jobs = {{"42", {"h0101", "h0102"}}, {"7", {"h0101", "h0201"}}};
  EXPECT_TRUE(SameMapping(m, want));
}

TEST(JobFileTest, WriteReadRoundTrip) {
  JobMapping m;
  m.jobs = {{"1001", {"a", "b", std::string(64, 'c')}},
            {"1002", {"c"}, JobPattern::kAllToAll},
            {"x.y", {"node-17"}}};
  const std::string path = io::testing::MakeTempDir() + "/jobs";
  ASSERT_TRUE(WriteJobMapping(path, m).ok());
  JobMapping back;
  const Status s = ReadJobMapping(path, &back);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(SameMapping(m, back));
}

// Issue 34: the mapping says where every job runs, and was world-readable (0644, or whatever
// the file it replaced had).
TEST(JobFileTest, MappingIsWrittenForOwnerAndGroupOnly) {
  JobMapping m;
  m.jobs = {{"1001", {"a", "b"}}};
  const std::string path = io::testing::MakeTempDir() + "/jobs";
  ASSERT_TRUE(WriteFileAtomic(path, "old 1\n").ok());
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  ASSERT_TRUE(WriteJobMapping(path, m).ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_gid, ::getegid());
  // A group of ours other than the primary one, if there is one (any group for root).
  gid_t other = ::getegid();
  std::vector<gid_t> groups(static_cast<size_t>(std::max(::getgroups(0, nullptr), 0)));
  if (!groups.empty()) groups.resize(std::max(::getgroups(groups.size(), groups.data()), 0));
  for (gid_t g : groups) other = g != ::getegid() ? g : other;
  if (::geteuid() == 0) other = ::getegid() == 1 ? 2 : 1;
  ASSERT_TRUE(WriteJobMapping(path, m, other).ok());
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_gid, other);
  JobMapping back;
  ASSERT_TRUE(ReadJobMapping(path, &back).ok());
  EXPECT_TRUE(SameMapping(m, back));
}

TEST(JobFileTest, PatternColumnIsOptionalAndPerJob) {
  JobMapping m;
  const Status s = ParseJobMapping("h1 7 alltoall\nh2 7 alltoall\nh3 8 default\nh4 9\n", "j", &m);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(m.jobs.size(), 3u);
  EXPECT_EQ(m.jobs[0].pattern, JobPattern::kAllToAll);
  EXPECT_EQ(m.jobs[1].pattern, JobPattern::kDefault);
  EXPECT_EQ(m.jobs[2].pattern, JobPattern::kDefault);
  // Default jobs are written in the two-column form older readers understand.
  const std::string text = FormatJobMapping(m);
  EXPECT_NE(text.find("h1 7 alltoall\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h4 9\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("default"), std::string::npos) << text;
}

TEST(JobFileTest, EmptyFileIsNoJobs) {
  JobMapping m;
  m.jobs = {{"stale", {"h"}}};
  ASSERT_TRUE(ParseJobMapping("# nothing runs\n\n", "j", &m).ok());
  EXPECT_TRUE(m.jobs.empty());
}

TEST(JobFileTest, MalformedInputNamesFileAndLine) {
  struct Case {
    std::string what, text;
    int line;
  } cases[] = {
      {"one word", "h1 1\n# c\nh2\n", 3},
      {"four words", "h1 1\nh2 2 alltoall x\n", 2},
      {"unknown pattern", "h1 1\nh2 2 ring\n", 2},
      {"pattern changes within a job", "h1 1 alltoall\nh2 1 alltoall\nh3 1\n", 3},
      {"pattern added later in a job", "h1 1\nh2 1 alltoall\n", 2},
      {"words around a comment", "h1 # 1\n", 1},
      {"control byte in a host", "h1 1\nh\x01x 1\n", 2},
      {"non-ASCII job id", "h1 1\nh2 j\xc3\xa9\n", 2},
      {"host longer than a node description", "h1 1\n" + std::string(65, 'h') + " 1\n", 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    JobMapping m;
    const Status s = ParseJobMapping(c.text, "/run/sar/jobs", &m);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), Status::Code::kCorruption);
    EXPECT_NE(s.message().find("/run/sar/jobs:" + std::to_string(c.line) + ":"), std::string::npos)
        << s.message();
  }
}

TEST(JobFileTest, OneJobOnAHundredThousandLinesKeepsEachHostOnce) {
  // Issue 19 defect 20: this took 25 s with a linear duplicate scan; bench/io_bench times it.
  std::string text;
  for (int i = 0; i < 100000; ++i) {
    // Hosts 0..49999, each twice (the second time in reverse order), in one job.
    const int host = i < 50000 ? i : 99999 - i;
    text += "h" + std::to_string(host) + " 4711\n";
  }
  text += "h7 4712\n";  // the same host in another job still counts there
  JobMapping m;
  const Status s = ParseJobMapping(text, "j", &m);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(m.jobs.size(), 2u);
  ASSERT_EQ(m.jobs[0].hosts.size(), 50000u);
  for (int i = 0; i < 50000; ++i) ASSERT_EQ(m.jobs[0].hosts[i], "h" + std::to_string(i));
  EXPECT_EQ(m.jobs[1].hosts, std::vector<std::string>{"h7"});
}

TEST(JobFileTest, MissingFileIsIoError) {
  JobMapping m;
  const Status s = ReadJobMapping("/nonexistent/jobs", &m);
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find("/nonexistent/jobs"), std::string::npos);
}

}  // namespace
}  // namespace sar
