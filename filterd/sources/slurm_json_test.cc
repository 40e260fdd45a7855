#include "sources/slurm_json.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>

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

// Issue 34 defect 6: each job under the per-job cap (49151), 100 of them in 6 KB of JSON asked
// for 4.9 M host names (24 s, 0.9 GB). The reply's total is bounded, and counted first.
TEST(SlurmJson, AReplyNamingMillionsOfHostsInAllIsRefusedAtOnce) {
  std::string reply = R"({"errors": [], "jobs": [)";
  for (int i = 0; i < 100; ++i) {
    reply += (i ? ",\n" : "") + std::string(R"({"job_id": )") + std::to_string(1000 + i) +
             R"(, "job_state": "RUNNING", "nodes": "h[00000-49000]"})";
  }
  reply += "]}";
  ASSERT_LT(reply.size(), 8000u);
  std::vector<SourceJob> jobs{SourceJob{}};
  const auto t0 = std::chrono::steady_clock::now();
  const Status s = ParseSlurmJobsJson(reply, &jobs);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_FALSE(s.ok()) << "4.9 M hosts expanded";
  EXPECT_NE(s.message().find("more than " + std::to_string(kMaxReplyHosts) + " hosts in all"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(jobs.empty()) << "no partial answer";
  EXPECT_LT(took, 0.1) << "the refusal must not expand first";
}

TEST(SlurmJson, TheReplyCapCountsEveryJobsHosts) {
  const char* reply = R"({"errors": [], "jobs": [
    {"job_id": 1, "job_state": "RUNNING", "nodes": "n[1-3]"},
    {"job_id": 2, "job_state": "PENDING", "nodes": "n[1-9]"},
    {"job_id": 3, "job_state": "RUNNING", "nodes": "n[3-4],m1"}]})";
  std::vector<SourceJob> jobs;
  Status s = ParseSlurmJobsJson(reply, &jobs, 6);  // 3 + 3: at the cap (pending jobs not counted)
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[1].hosts, (std::vector<std::string>{"n3", "n4", "m1"}));
  s = ParseSlurmJobsJson(reply, &jobs, 5);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("more than 5 hosts in all"), std::string::npos) << s.message();
  EXPECT_TRUE(jobs.empty());
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

// SLURM 23.02 and later (OpenAPI v0.0.39, v0.0.40, v0.0.41): job_state is an array (base state,
// then flags) and time_limit an object. Both shapes must give the same jobs.
TEST(SlurmJson, ReadsTheArrayShapeOfSlurm2302AndLater) {
  const char* reply = R"({"meta": {}, "errors": [], "warnings": [], "jobs": [
    {"job_id": 7, "job_state": ["RUNNING"], "nodes": "n[001-003]", "partition": "batch",
     "time_limit": {"set": true, "infinite": false, "number": 30}},
    {"job_id": 8, "job_state": ["PENDING"], "nodes": "", "partition": "batch"},
    {"job_id": 9, "job_state": ["RUNNING", "CONFIGURING"], "nodes": "a1", "partition": "gpu",
     "time_limit": {"set": true, "infinite": true, "number": 0}},
    {"job_id": 10, "job_state": ["COMPLETED"], "nodes": "n004"},
    {"job_id": 11, "job_state": ["RUNNING"], "nodes": "n5",
     "time_limit": {"set": false, "infinite": false, "number": 0}}]})";
  std::vector<SourceJob> jobs;
  Status s = ParseSlurmJobsJson(reply, &jobs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].id, "7");
  EXPECT_EQ(jobs[0].time_limit_min, 30);
  EXPECT_EQ(jobs[0].hosts, (std::vector<std::string>{"n001", "n002", "n003"}));
  EXPECT_EQ(jobs[1].id, "9");
  EXPECT_EQ(jobs[1].time_limit_min, -1);  // infinite
  EXPECT_EQ(jobs[2].id, "11");
  EXPECT_EQ(jobs[2].time_limit_min, -1);  // not set
}

// A running job as text, with `field` ("time_limit.number": inside time_limit) set to `value`.
std::string JobWith(const std::string& field, const std::string& value) {
  std::map<std::string, std::string> job = {{"job_id", "7"},           {"job_state", "\"RUNNING\""},
                                            {"nodes", "\"n1\""},       {"partition", "\"p\""},
                                            {"admin_comment", "\"\""}, {"time_limit", ""}};
  std::map<std::string, std::string> limit = {
      {"set", "true"}, {"infinite", "false"}, {"number", "5"}};
  const size_t dot = field.find('.');
  (dot == std::string::npos ? job[field] : limit[field.substr(dot + 1)]) = value;
  auto object = [](const std::map<std::string, std::string>& m) {
    std::string text;
    for (const auto& [k, v] : m) text += (text.empty() ? "{\"" : ", \"") + k + "\": " + v;
    return text + "}";
  };
  if (job["time_limit"].empty()) job["time_limit"] = object(limit);
  return object(job);
}

// Every field the reader looks at, with every JSON type neither shape uses there: a failed
// poll (no jobs handed out) whose message names the field and the job; never an exception.
TEST(SlurmJson, AWrongTypeInAnyFieldIsAFailedPollNamingFieldAndJob) {
  const std::vector<std::string> all = {"[\"x\"]", "[]",   "42",    "4.5",     "null",
                                        "{}",      "true", "false", "\"text\""};
  // Each field and the values of `all` it accepts; every other one must fail.
  const std::vector<std::pair<std::string, std::vector<std::string>>> fields = {
      {"job_id", {"42"}},
      {"job_state", {"[\"x\"]", "\"text\""}},
      {"nodes", {"\"text\""}},
      {"partition", {"\"text\""}},
      {"admin_comment", {"null", "\"text\""}},
      {"time_limit", {"42", "{}"}},
      {"time_limit.number", {"42"}},
      {"time_limit.set", {"true", "false"}},
      {"time_limit.infinite", {"true", "false"}},
  };
  int checked = 0;
  for (const auto& [field, accepted] : fields) {
    for (const std::string& value : all) {
      const std::string reply = R"({"errors": [], "jobs": [)" + JobWith(field, value) + "]}";
      std::vector<SourceJob> jobs = {SourceJob{"stale", "", -1, {"x"}}};
      Status s;
      ASSERT_NO_THROW(s = ParseSlurmJobsJson(reply, &jobs)) << reply;
      if (std::find(accepted.begin(), accepted.end(), value) != accepted.end()) {
        // The accepted shapes parse (hosts "text" and "x" are plain names).
        EXPECT_TRUE(s.ok()) << reply << ": " << s.ToString();
        continue;
      }
      EXPECT_FALSE(s.ok()) << reply;
      EXPECT_TRUE(jobs.empty()) << reply;
      EXPECT_NE(s.message().find("'" + field), std::string::npos) << s.message();
      // The job is named by id, except when the id itself is what is wrong.
      const std::string who = field == "job_id" ? "job #0:" : "job 7:";
      EXPECT_NE(s.message().find(who), std::string::npos) << s.message();
      ++checked;
    }
  }
  EXPECT_GE(checked, 60);
}

TEST(SlurmJson, WrongTypesAroundTheJobsAreErrorsToo) {
  std::vector<SourceJob> jobs;
  for (const char* reply :
       {R"({"errors": {}, "jobs": []})", R"({"errors": "x", "jobs": []})", R"({"jobs": {}})",
        R"({"jobs": null})", R"({"jobs": "RUNNING"})", R"({"jobs": [7]})", R"({"jobs": [null]})",
        R"({"jobs": [["RUNNING"]]})",
        R"({"jobs": [{"job_id": 1, "job_state": [], "nodes": "n1"}]})",
        R"({"jobs": [{"job_id": 1, "job_state": [["RUNNING"]], "nodes": "n1"}]})",
        R"({"jobs": [{"job_id": -1, "job_state": "RUNNING", "nodes": "n1"}]})",
        R"({"jobs": [{"job_id": 1, "nodes": "n1"}]})",
        // A pending job's fields are checked too: the reply is either understood or not.
        R"({"jobs": [{"job_id": "1", "job_state": "PENDING"}]})"}) {
    Status s;
    ASSERT_NO_THROW(s = ParseSlurmJobsJson(reply, &jobs)) << reply;
    EXPECT_FALSE(s.ok()) << reply;
  }
}

}  // namespace
}  // namespace sar::filterd
