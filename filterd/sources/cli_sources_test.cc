// The squeue and slurmrestd sources' own handling of their peers: children that misbehave and
// an HTTP server on a UNIX socket, both stand-ins written here (this tests our code, not SLURM's;
// the real ones are in tests/integration/test_filterd_sources.py).
#include "sources/cli_sources.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "sar/env.h"
#include "server/bounded_io.h"
#include "test_util.h"

namespace sar::filterd {
namespace {

double Since(IoClock::time_point t0) {
  return std::chrono::duration<double>(IoClock::now() - t0).count();
}

// The squeue source's child handling (a script stands in for squeue: this tests our own code).
class SqueueChild : public ::testing::Test {
 protected:
  std::string Script(const std::string& body) {
    const std::string path = dir_.Join("squeue");
    std::ofstream(path) << "#!/bin/sh\n" << body << "\n";
    chmod(path.c_str(), 0755);
    return path;
  }
  TempDir dir_;
};

TEST_F(SqueueChild, AChildThatClosesStdoutButRunsOnIsKilledAtTheTimeout) {
  auto source = MakeSqueueSource(Script("echo '{\"jobs\": []}'; exec >&-; exec sleep 30"), "", 0.5);
  std::vector<SourceJob> jobs;
  const IoClock::time_point t0 = IoClock::now();
  Status s = source->Poll(&jobs);
  EXPECT_LT(Since(t0), 2.0) << "waited for the child past the timeout";
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("killed"), std::string::npos) << s.message();
}

// Issue 34 defect 11: squeue printing `yes` (an endless "y\n") took sar-filterd to 531 MB against
// its 256 MiB reply cap: the reply buffer doubled to 512 MiB for the byte that proved the reply
// too large (whenever a read crossed the cap, as `yes` through a pipe mostly does). Measured in a
// child of this test (its peak RSS, from before the poll to after).
TEST_F(SqueueChild, AnEndlessReplyCostsNoMoreMemoryThanTheCap) {
  // One odd byte first: every read is then an even amount of "y\n" after it, so the reply can
  // never be exactly at the cap; the read that crosses it is the one that grew the buffer.
  const std::string squeue = Script("printf x; exec yes");
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(report[0]);
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    std::vector<SourceJob> jobs;
    const Status s = MakeSqueueSource(squeue, "", 30)->Poll(&jobs);
    getrusage(RUSAGE_SELF, &after);
    const long fields[3] = {
        before.ru_maxrss, after.ru_maxrss,
        !s.ok() && s.message().find("larger than 256 MiB") != std::string::npos};
    _exit(write(report[1], fields, sizeof(fields)) == sizeof(fields) ? 0 : 1);
  }
  close(report[1]);
  long fields[3] = {0, 0, 0};
  const ssize_t got = read(report[0], fields, sizeof(fields));
  close(report[0]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_EQ(got, static_cast<ssize_t>(sizeof(fields)));
  EXPECT_TRUE(fields[2]) << "the endless reply was not refused as too large";
  const double grew_mib = static_cast<double>(fields[1] - fields[0]) / 1024;  // ru_maxrss: KiB
  EXPECT_GT(grew_mib, 200) << "the reply was not read up to the cap: nothing measured";
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's shadow (a byte per 8 of the reply) and its allocator's own: still far
  // below the doubling's 512 MiB.
  const double shadow_mib = 256.0 / 8 + 32;
#else
  const double shadow_mib = 0;
#endif
  EXPECT_LT(grew_mib, 256 + 16 + shadow_mib)
      << "peak memory of one poll well over the 256 MiB reply cap";
}

// True once `pid` has exited (gone, or a zombie waiting for whoever adopted it).
bool Exited(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && line.size() > paren + 2 && line[paren + 2] == 'Z';
}

// Issue 34: at the timeout only squeue itself was killed; what it had started (a wrapper
// script's children) ran on.
TEST_F(SqueueChild, TheTimeoutKillsTheChildsWholeProcessGroup) {
  const std::string pid_file = dir_.Join("grandchild.pid");
  auto source = MakeSqueueSource(
      Script("sleep 30 >/dev/null 2>&1 & echo $! > " + pid_file + "\nexec sleep 30"), "", 0.5);
  std::vector<SourceJob> jobs;
  const IoClock::time_point t0 = IoClock::now();
  Status s = source->Poll(&jobs);
  EXPECT_LT(Since(t0), 2.0) << "waited for the child past the timeout";
  EXPECT_FALSE(s.ok());
  pid_t grandchild = 0;
  std::ifstream(pid_file) >> grandchild;
  ASSERT_GT(grandchild, 0);
  bool exited = false;
  for (int i = 0; i < 100 && !(exited = Exited(grandchild)); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!exited) kill(grandchild, SIGKILL);  // not left behind by the test either
  EXPECT_TRUE(exited) << "squeue's child " << grandchild << " outlived the timeout";
}

TEST_F(SqueueChild, AChildKilledByASignalIsAFailureNotExitZero) {
  auto source = MakeSqueueSource(Script("echo '{\"jobs\": []}'; kill -9 $$"), "", 5);
  std::vector<SourceJob> jobs;
  Status s = source->Poll(&jobs);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("signal 9"), std::string::npos) << s.message();
}

TEST_F(SqueueChild, AGoodReplyIsParsed) {
  auto source =
      MakeSqueueSource(Script("echo '{\"jobs\": [{\"job_id\": 3, \"job_state\": [\"RUNNING\"], "
                              "\"nodes\": \"n[1-2]\"}]}'"),
                       "", 5);
  std::vector<SourceJob> jobs;
  Status s = source->Poll(&jobs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].hosts, (std::vector<std::string>{"n1", "n2"}));
}

// The squeue source's reading of squeue's replies, with the child scripted by a ManualEnv
// (Env::Run): what it asks to run, and each way a reply can fail, without a process.
class SqueueReplies : public ::testing::Test {
 protected:
  // The source's poll with `reply` scripted; the request it made in *request.
  Status PollWith(RunResult reply, std::vector<SourceJob>* jobs, RunRequest* request = nullptr) {
    env_->ScriptRun(std::move(reply));
    const Status s = MakeSqueueSource("/opt/slurm/bin/squeue", conf_, 7.5, env_)->Poll(jobs);
    const std::vector<RunRequest> runs = env_->runs();
    EXPECT_FALSE(runs.empty()) << "squeue was not run through the Env";
    if (request != nullptr && !runs.empty()) *request = runs.back();
    return s;
  }
  // A child that ran and exited with `code` after printing `out` (and closed its output).
  static RunResult Exited(std::string out, int code = 0) {
    RunResult r;
    r.started = true;
    r.output_complete = true;
    r.exit_code = code;
    r.out = std::move(out);
    return r;
  }
  std::shared_ptr<ManualEnv> env_ = std::make_shared<ManualEnv>();
  std::string conf_ = "/etc/slurm-test/slurm.conf";
};

TEST_F(SqueueReplies, RunsSqueueJsonWithItsConfBoundsAndOwnGroup) {
  std::vector<SourceJob> jobs;
  RunRequest request;
  const Status s =
      PollWith(Exited(R"({"jobs": [{"job_id": 4, "job_state": "RUNNING", "nodes": "n[1-3]"}]})"),
               &jobs, &request);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id, "4");
  EXPECT_EQ(jobs[0].hosts, (std::vector<std::string>{"n1", "n2", "n3"}));
  EXPECT_EQ(request.argv, (std::vector<std::string>{"/opt/slurm/bin/squeue", "--json"}));
  ASSERT_EQ(request.set_env.size(), 1u);
  EXPECT_EQ(request.set_env[0], std::make_pair(std::string("SLURM_CONF"), conf_));
  EXPECT_EQ(request.timeout_s, 7.5);
  EXPECT_EQ(request.max_output_bytes, size_t{256} << 20);
  EXPECT_TRUE(request.own_process_group) << "a timeout would not reach a wrapper's children";
  EXPECT_EQ(request.stderr_to, RunRequest::Stderr::kDiscard);

  conf_.clear();  // no conf given: SLURM_CONF is the daemon's own, untouched
  ASSERT_TRUE(PollWith(Exited(R"({"jobs": []})"), &jobs, &request).ok());
  EXPECT_TRUE(request.set_env.empty());
}

// A job without its id (SLURM's reply shape changed, a truncated object) fails the poll: the
// daemon keeps the set it has rather than dropping the job.
TEST_F(SqueueReplies, AReplyWithAMissingFieldFailsThePoll) {
  std::vector<SourceJob> jobs;
  const Status s =
      PollWith(Exited(R"({"jobs": [{"job_state": "RUNNING", "nodes": "n1"}]})"), &jobs);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("job_id"), std::string::npos) << s.message();
}

// Each way the child can fail is a failed poll with its own message, and never parsed.
TEST_F(SqueueReplies, EachFailureOfTheChildIsAFailedPoll) {
  std::vector<SourceJob> jobs;
  RunResult half = Exited(R"({"jobs": [)");
  half.output_complete = false;
  half.timed_out = true;
  half.term_signal = 9;
  half.exit_code = -1;
  Status s = PollWith(half, &jobs);
  EXPECT_NE(s.message().find("no complete answer within the timeout (10 bytes read)"),
            std::string::npos)
      << s.message();

  RunResult lingering = Exited(R"({"jobs": []})");
  lingering.timed_out = true;  // printed all, then did not exit
  s = PollWith(lingering, &jobs);
  EXPECT_NE(s.message().find("still running at the timeout (killed)"), std::string::npos)
      << s.message();

  RunResult huge = Exited("{");
  huge.output_complete = false;
  huge.output_too_large = true;
  s = PollWith(huge, &jobs);
  EXPECT_NE(s.message().find("larger than 256 MiB"), std::string::npos) << s.message();

  s = PollWith(Exited(R"({"jobs": []})", 1), &jobs);
  EXPECT_NE(s.message().find("squeue: exit status 1"), std::string::npos) << s.message();

  RunResult signalled = Exited(R"({"jobs": []})", -1);
  signalled.term_signal = 15;
  s = PollWith(signalled, &jobs);
  EXPECT_NE(s.message().find("killed by signal 15"), std::string::npos) << s.message();

  RunResult missing;
  missing.start_errno = ENOENT;
  missing.status = Status::IOError("cannot run");
  s = PollWith(missing, &jobs);
  EXPECT_NE(s.message().find("cannot run '/opt/slurm/bin/squeue': No such file"), std::string::npos)
      << s.message();
  EXPECT_EQ(env_->runs().size(), 6u);
}

// A one-shot HTTP server on a UNIX socket that answers any request with `reply`.
class FakeRestd {
 public:
  FakeRestd(const std::string& path, std::string reply) : reply_(std::move(reply)) {
    fd_ = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(listen(fd_, 1), 0);
    thread_ = std::thread([this] {
      const int conn = accept(fd_, nullptr, nullptr);
      std::string request;
      ReadBounded(conn, DeadlineIn(5), 8192, &request,
                  [](std::string_view s) { return s.find("\r\n\r\n") != s.npos; });
      (void)WriteBounded(conn, DeadlineIn(5), reply_);
      close(conn);
    });
  }
  ~FakeRestd() {
    thread_.join();
    close(fd_);
  }

 private:
  int fd_;
  std::string reply_;
  std::thread thread_;
};

constexpr char kJobs[] =
    R"({"errors": [], "jobs": [{"job_id": 4, "job_state": "RUNNING", "nodes": "n[7-8]"}]})";

// Issue 19, defect 6: a valid chunked reply was always rejected (the chunk-size line was read
// to the end of the body).
TEST(Slurmrestd, AChunkedReplyIsDecoded) {
  TempDir dir;
  const std::string body = kJobs;
  const size_t half = body.size() / 2;
  char size1[32], size2[32];  // a size_t in hex and ";ext=1" fit
  snprintf(size1, sizeof(size1), "%zx", half);
  snprintf(size2, sizeof(size2), "%zx;ext=1", body.size() - half);
  FakeRestd restd(dir.Join("rest.sock"), "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                                             std::string(size1) + "\r\n" + body.substr(0, half) +
                                             "\r\n" + size2 + "\r\n" + body.substr(half) +
                                             "\r\n0\r\n\r\n");
  auto source = MakeSlurmrestdSource(dir.Join("rest.sock"), "v0.0.38", 5);
  std::vector<SourceJob> jobs;
  Status s = source->Poll(&jobs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].hosts, (std::vector<std::string>{"n7", "n8"}));
}

TEST(Slurmrestd, ABadChunkedReplyIsAnError) {
  TempDir dir;
  FakeRestd restd(dir.Join("rest.sock"),
                  "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n");
  auto source = MakeSlurmrestdSource(dir.Join("rest.sock"), "v0.0.38", 5);
  std::vector<SourceJob> jobs;
  Status s = source->Poll(&jobs);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("chunked"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace sar::filterd
