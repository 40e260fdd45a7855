#include "sar/io/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>

extern char** environ;

namespace sar {
namespace {

using Clock = std::chrono::steady_clock;

// Output past this size is given room for the rest of its cap at once (see ReadOutput).
constexpr size_t kReserveAt = size_t{4} << 20;

// A deadline `seconds` from now (now for a negative or NaN time); none (`bounded` false) for
// infinity or more than a year, which would overflow the clock's nanoseconds.
struct Deadline {
  explicit Deadline(double seconds) : bounded(!(seconds >= 365 * 86400.0)) {
    if (bounded) {
      at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(std::max(0.0, seconds)));
    }
  }
  // poll()'s timeout until the deadline: -1 unbounded, 0 when passed.
  int PollMs() const {
    if (!bounded) return -1;
    const double ms =
        std::ceil(std::chrono::duration<double, std::milli>(at - Clock::now()).count());
    return ms <= 0 ? 0 : static_cast<int>(std::min(ms, static_cast<double>(INT_MAX)));
  }
  bool Passed() const { return bounded && Clock::now() >= at; }

  bool bounded;
  Clock::time_point at{};
};

std::string SecondsText(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// The caller's environment with `set` put in (replacing a variable of the same name).
std::vector<std::string> ChildEnvironment(
    const std::vector<std::pair<std::string, std::string>>& set) {
  std::vector<std::string> out;
  for (char** e = environ; *e; ++e) {
    const std::string_view entry(*e);
    const bool replaced = std::any_of(set.begin(), set.end(), [&](const auto& kv) {
      return entry.size() > kv.first.size() && entry.compare(0, kv.first.size(), kv.first) == 0 &&
             entry[kv.first.size()] == '=';
    });
    if (!replaced) out.emplace_back(entry);
  }
  for (const auto& [name, value] : set) out.push_back(name + "=" + value);
  return out;
}

void CloseIfOpen(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

// Reads the child's pipes (*out_fd, *err_fd; -1 = none) until both end, the deadline, the output
// cap or an error; closes each at its end. Sets r's output_complete, timed_out,
// output_too_large, or status (a read error).
void ReadOutput(const RunRequest& req, const Deadline& deadline, int* out_fd, int* err_fd,
                RunResult* r) {
  char buf[65536];
  while (*out_fd >= 0 || *err_fd >= 0) {
    pollfd fds[2];
    int* owners[2];
    nfds_t n = 0;
    for (int* fd : {out_fd, err_fd}) {
      if (*fd < 0) continue;
      fds[n] = pollfd{*fd, POLLIN, 0};
      owners[n++] = fd;
    }
    const int wait_ms = deadline.PollMs();
    if (wait_ms == 0) {
      r->timed_out = true;
      return;
    }
    const int ready = poll(fds, n, wait_ms);
    if (ready < 0 && errno != EINTR) {
      r->status = Status::IOError(req.argv[0] + ": poll: " + strerror(errno));
      return;
    }
    for (nfds_t i = 0; ready > 0 && i < n; ++i) {
      if (fds[i].revents == 0) continue;
      std::string& text = owners[i] == out_fd ? r->out : r->err;
      const size_t used = r->out.size() + r->err.size();
      // One byte past the cap is enough to know the output is too large.
      const size_t room = req.max_output_bytes - std::min(used, req.max_output_bytes) + 1;
      // Past kReserveAt bytes the output gets room for all it may still send, at once: reserved,
      // not touched (RSS follows what is read), never copied again. std::string's own doubling
      // copied a large output into a buffer twice its size: 512 MiB peak for squeue printing
      // `yes` against its 256 MiB cap (issue 34 defect 11).
      if (text.size() >= kReserveAt && text.capacity() - text.size() < room) {
        text.reserve(text.size() + room);
      }
      const ssize_t got = read(fds[i].fd, buf, std::min(room, sizeof buf));
      if (got == 0) {
        CloseIfOpen(owners[i]);
      } else if (got < 0 && errno != EINTR && errno != EAGAIN) {
        r->status = Status::IOError(req.argv[0] + ": read: " + strerror(errno));
        return;
      } else if (got > 0) {
        text.append(buf, static_cast<size_t>(got));
        if (used + static_cast<size_t>(got) > req.max_output_bytes) {
          r->output_too_large = true;
          return;
        }
      }
    }
  }
  r->output_complete = true;
}

// Waits for `pid` until the deadline; then (or at once with `kill_now`) kills it, or its group,
// and reaps it. Returns the wait status; sets r->timed_out if the deadline killed it.
int Reap(pid_t pid, const RunRequest& req, const Deadline& deadline, bool kill_now, RunResult* r) {
  int status = 0;
  useconds_t pause_us = 1000;
  while (!kill_now) {
    const pid_t got = waitpid(pid, &status, deadline.bounded ? WNOHANG : 0);
    if (got == pid || (got < 0 && errno != EINTR)) return status;
    if (got == 0 && deadline.Passed()) {
      r->timed_out = true;
      break;
    }
    // A child that closed its output but runs on: check back soon, then less often.
    if (got == 0) usleep(pause_us);
    pause_us = std::min<useconds_t>(pause_us * 2, 20000);
  }
  // Not reaped yet, so the pid (and, while it leads it, its group id) is still ours to kill.
  kill(req.own_process_group ? -pid : pid, SIGKILL);
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

RunResult RunProcess(const RunRequest& req) {
  RunResult r;
  if (req.argv.empty()) {
    r.status = Status::InvalidArgument("RunProcess: no program to run");
    return r;
  }
  const std::string& program = req.argv[0];
  const bool capture = req.output_file.empty();
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (capture &&
      (pipe2(out_pipe, O_CLOEXEC) != 0 ||
       (req.stderr_to == RunRequest::Stderr::kCapture && pipe2(err_pipe, O_CLOEXEC) != 0))) {
    r.status = Status::IOError(program + ": pipe: " + strerror(errno));
    for (int* fd : {&out_pipe[0], &out_pipe[1], &err_pipe[0], &err_pipe[1]}) CloseIfOpen(fd);
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!capture) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, req.output_file.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  } else {
    posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
    switch (req.stderr_to) {
      case RunRequest::Stderr::kCapture:
        posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
        break;
      case RunRequest::Stderr::kToStdout:
        posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDERR_FILENO);
        break;
      case RunRequest::Stderr::kDiscard:
        posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
        break;
    }
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (req.own_process_group) {
    // pgid = its pid, so that a kill reaches what it started too (squeue as a wrapper script).
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
  }
  std::vector<std::string> env_strings = ChildEnvironment(req.set_env);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = req.argv;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  CloseIfOpen(&out_pipe[1]);
  CloseIfOpen(&err_pipe[1]);
  if (rc != 0) {
    CloseIfOpen(&out_pipe[0]);
    CloseIfOpen(&err_pipe[0]);
    r.start_errno = rc;
    r.status = Status::IOError("cannot run '" + program + "': " + strerror(rc));
    return r;
  }
  r.started = true;
  const Deadline deadline(req.timeout_s);
  if (capture) {
    ReadOutput(req, deadline, &out_pipe[0], &err_pipe[0], &r);
  } else {
    r.output_complete = true;
  }
  // Output that did not end (timeout, too large, an error): whatever holds the pipe runs on.
  const int status = Reap(pid, req, deadline, !r.output_complete, &r);
  CloseIfOpen(&out_pipe[0]);
  CloseIfOpen(&err_pipe[0]);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
  if (!r.status.ok()) return r;
  if (r.output_too_large) {
    r.status = Status::IOError(program + ": output larger than " +
                               std::to_string(req.max_output_bytes) + " bytes; not read on");
  } else if (r.timed_out) {
    r.status = Status::IOError(program + ": did not finish in " + SecondsText(req.timeout_s) +
                               " s (killed)");
  }
  return r;
}

}  // namespace sar
