#include "slurm_json.h"

#include <gtest/gtest.h>

namespace sar::filterd {
namespace {

TEST(SlurmJson, KeepsJobsHoldingNodes) {
  // Shaped like squeue --json of SLURM 22.05 (trimmed to the fields read, plus noise).
  const char* reply = R"({"meta": {}, "errors": [], "jobs": [
    {"job_id": 7, "job_state": "RUNNING", "nodes": "n[001-003]", "partition": "batch",
     "time_limit": 30, "admin_comment": ""},
    {"job_id": 8, "job_state": "PENDING", "nodes": "", "partition": "batch", "time_limit": 5},
    {"job_id": 9, "job_state": "CONFIGURING", "nodes": "a1,b[2-3]", "partition": "gpu",
     "time_limit": 4294967295},
    {"job_id": 10, "job_state": "COMPLETED", "nodes": "n004", "partition": "batch"}]})";
  std::vector<SourceJob> jobs;
  Status s = ParseSlurmJobsJson(reply, &jobs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].id, "7");
  EXPECT_EQ(jobs[0].hosts, (std::vector<std::string>{"n001", "n002", "n003"}));
  EXPECT_EQ(jobs[0].time_limit_min, 30);
  EXPECT_EQ(jobs[1].id, "9");
  EXPECT_EQ(jobs[1].partition, "gpu");
  EXPECT_EQ(jobs[1].time_limit_min, -1);  // INFINITE
  EXPECT_EQ(jobs[1].hosts, (std::vector<std::string>{"a1", "b2", "b3"}));
}

TEST(SlurmJson, IncompleteOrFailedRepliesAreErrors) {
  std::vector<SourceJob> jobs;
  for (const char* reply :
       {"", "{\"jobs\": [", "[]", "{\"meta\": {}}",
        R"({"errors": [{"error": "Unable to contact slurm controller"}], "jobs": []})",
        R"({"jobs": [{"job_state": "RUNNING", "nodes": "n1"}]})",
        R"({"jobs": [{"job_id": 1, "job_state": "RUNNING", "nodes": "n[2-1]"}]})"}) {
    EXPECT_FALSE(ParseSlurmJobsJson(reply, &jobs).ok()) << reply;
  }
}

TEST(SlurmJson, ReadsThePatternFromTheAdminComment) {
  const char* reply = R"({"errors": [], "jobs": [
    {"job_id": 1, "job_state": "RUNNING", "nodes": "n1", "admin_comment": "sar-pattern=alltoall"},
    {"job_id": 2, "job_state": "RUNNING", "nodes": "n2", "admin_comment": "x,sar-pattern=default"},
    {"job_id": 3, "job_state": "RUNNING", "nodes": "n3", "admin_comment": null},
    {"job_id": 4, "job_state": "RUNNING", "nodes": "n4"}]})";
  std::vector<SourceJob> jobs;
  Status s = ParseSlurmJobsJson(reply, &jobs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(jobs.size(), 4u);
  EXPECT_EQ(jobs[0].pattern, JobPattern::kAllToAll);
  for (size_t i = 1; i < 4; ++i) EXPECT_EQ(jobs[i].pattern, JobPattern::kDefault) << i;
}

}  // namespace
}  // namespace sar::filterd
