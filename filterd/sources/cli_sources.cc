#include "sources/cli_sources.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <charconv>
#include <cstring>
#include <vector>

#include "server/bounded_io.h"
#include "sources/slurm_json.h"

extern char** environ;

namespace sar::filterd {
namespace {

// A jobs reply larger than this is not read on (SLURM prints a few KiB per job: this is room for
// tens of thousands of jobs, and a bound on what a runaway child can make us hold).
constexpr size_t kMaxReplyBytes = size_t{256} << 20;

Status ReadFailed(const std::string& who, IoEnd end, size_t got) {
  if (end == IoEnd::kTooLarge) {
    return Status::IOError(who + ": reply larger than " + std::to_string(kMaxReplyBytes >> 20) +
                           " MiB; not read on");
  }
  if (end == IoEnd::kError) return Status::IOError(who + ": read: " + strerror(errno));
  return Status::IOError(who + ": no complete answer within the timeout (" + std::to_string(got) +
                         " bytes read)");
}

// Reaps our child `pid` by the deadline, killing it if it is still running then: a child that
// closed its stdout but keeps running must not hold the poll (issue 19, defect 4). The child
// leads its own process group (spawned with POSIX_SPAWN_SETPGROUP), and the whole group is
// killed: squeue as a wrapper script leaves its own children running otherwise (issue 34).
// Returns the wait status; *killed tells whether we had to kill it.
int ReapBy(pid_t pid, IoClock::time_point deadline, bool* killed) {
  int status = 0;
  *killed = false;
  for (;;) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return status;
    if (r == 0 && IoClock::now() >= deadline) {
      kill(-pid, SIGKILL);
      *killed = true;
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return status;
    }
    if (r == 0) usleep(2000);
  }
}

class SqueueSource : public JobSource {
 public:
  SqueueSource(std::string squeue, std::string conf, double timeout_s)
      : squeue_(std::move(squeue)), conf_(std::move(conf)), timeout_s_(timeout_s) {}
  const char* name() const override { return "squeue"; }

  Status Poll(std::vector<SourceJob>* out) override {
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
      return Status::IOError("squeue: pipe: " + std::string(strerror(errno)));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) {
      if (!conf_.empty() && strncmp(*e, "SLURM_CONF=", 11) == 0) continue;
      env_strings.emplace_back(*e);
    }
    if (!conf_.empty()) env_strings.push_back("SLURM_CONF=" + conf_);
    std::vector<char*> envp;
    for (std::string& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string arg0 = squeue_, arg1 = "--json";
    char* argv[] = {arg0.data(), arg1.data(), nullptr};
    // Its own process group (pgid = its pid), so that a timeout kills what it started too.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, squeue_.c_str(), &actions, &attr, argv, envp.data());
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    close(pipe_fds[1]);
    if (rc != 0) {
      close(pipe_fds[0]);
      return Status::IOError("squeue: cannot run '" + squeue_ + "': " + strerror(rc));
    }
    std::string text;
    const IoClock::time_point deadline = DeadlineIn(timeout_s_);
    const IoEnd end = ReadBounded(pipe_fds[0], deadline, kMaxReplyBytes, &text);
    close(pipe_fds[0]);
    bool killed = false;
    const int status = ReapBy(pid, end == IoEnd::kComplete ? deadline : IoClock::now(), &killed);
    // A reply that did not end (or ended too large): whatever of the group is left holds the
    // pipe or runs on, though squeue itself may be gone. The group id stays taken while any of
    // it lives, so this reaches nobody else.
    if (end != IoEnd::kComplete) kill(-pid, SIGKILL);
    if (end != IoEnd::kComplete) return ReadFailed("squeue", end, text.size());
    if (killed) return Status::IOError("squeue: still running at the timeout (killed)");
    if (WIFSIGNALED(status)) {
      return Status::IOError("squeue: killed by signal " + std::to_string(WTERMSIG(status)));
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      return Status::IOError("squeue: exit status " + std::to_string(WEXITSTATUS(status)));
    }
    return ParseSlurmJobsJson(text, out);
  }

 private:
  std::string squeue_;
  std::string conf_;
  double timeout_s_;
};

// Decodes a chunked HTTP body; false if malformed.
bool Dechunk(std::string_view body, std::string* out) {
  for (;;) {
    const size_t eol = body.find("\r\n");
    if (eol == std::string_view::npos) return false;
    size_t size = 0;
    const std::string_view line = body.substr(0, eol);
    const std::string_view digits = line.substr(0, line.find(';'));  // chunk extensions
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), size, 16);
    if (ec != std::errc() || p != digits.data() + digits.size()) return false;
    body.remove_prefix(eol + 2);
    if (size == 0) return true;
    if (body.size() < size + 2) return false;
    out->append(body.substr(0, size));
    body.remove_prefix(size + 2);
  }
}

class SlurmrestdSource : public JobSource {
 public:
  SlurmrestdSource(std::string socket_path, std::string version, double timeout_s)
      : path_(std::move(socket_path)), version_(std::move(version)), timeout_s_(timeout_s) {}
  const char* name() const override { return "slurmrestd"; }

  Status Poll(std::vector<SourceJob>* out) override {
    const std::string where = "slurmrestd " + path_;
    sockaddr_un addr{};
    if (path_.size() >= sizeof(addr.sun_path))
      return Status::InvalidArgument(where + ": path too long");
    addr.sun_family = AF_UNIX;
    memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return Status::IOError(where + ": socket: " + strerror(errno));
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      Status s = Status::IOError(where + ": connect: " + strerror(errno));
      close(fd);
      return s;
    }
    const std::string request = "GET /slurm/" + version_ +
                                "/jobs HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\n"
                                "Connection: close\r\n\r\n";
    std::string reply;
    const IoClock::time_point deadline = DeadlineIn(timeout_s_);
    if (Status s = WriteBounded(fd, deadline, request); !s.ok()) {
      close(fd);
      return Status::IOError(where + ": " + s.message());
    }
    const IoEnd end = ReadBounded(fd, deadline, kMaxReplyBytes, &reply);
    close(fd);
    if (end != IoEnd::kComplete) return ReadFailed(where, end, reply.size());
    const size_t header_end = reply.find("\r\n\r\n");
    if (reply.rfind("HTTP/1.", 0) != 0 || header_end == std::string::npos) {
      return Status::Corruption(where + ": not an HTTP reply");
    }
    const std::string status_line = reply.substr(0, reply.find("\r\n"));
    if (status_line.find(" 200") == std::string::npos) {
      return Status::IOError(where + ": " + status_line);
    }
    std::string headers = reply.substr(0, header_end);
    for (char& c : headers) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    std::string_view body = std::string_view(reply).substr(header_end + 4);
    if (headers.find("transfer-encoding: chunked") != std::string::npos) {
      std::string plain;
      if (!Dechunk(body, &plain)) return Status::Corruption(where + ": bad chunked body");
      return ParseSlurmJobsJson(plain, out);
    }
    // Honour Content-Length: slurmrestd 22.05 writes a stray "Connection: Close" line after
    // the body it announced.
    if (const size_t cl = headers.find("\r\ncontent-length:"); cl != std::string::npos) {
      size_t length = 0;
      const char* p = headers.data() + cl + 17;
      while (*p == ' ') ++p;
      auto [end, ec] = std::from_chars(p, headers.data() + headers.size(), length);
      if (ec != std::errc() || length > body.size()) {
        return Status::Corruption(where + ": body shorter than its Content-Length");
      }
      body = body.substr(0, length);
    }
    return ParseSlurmJobsJson(body, out);
  }

 private:
  std::string path_;
  std::string version_;
  double timeout_s_;
};

}  // namespace

std::unique_ptr<JobSource> MakeSqueueSource(std::string squeue_path, std::string slurm_conf,
                                            double timeout_s) {
  return std::make_unique<SqueueSource>(std::move(squeue_path), std::move(slurm_conf), timeout_s);
}

std::unique_ptr<JobSource> MakeSlurmrestdSource(std::string socket_path, std::string api_version,
                                                double timeout_s) {
  return std::make_unique<SlurmrestdSource>(std::move(socket_path), std::move(api_version),
                                            timeout_s);
}

}  // namespace sar::filterd
