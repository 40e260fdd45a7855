#include "sources/cli_sources.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cctype>
#include <charconv>
#include <cstring>
#include <vector>

#include "sar/env.h"
#include "server/bounded_io.h"
#include "sources/slurm_json.h"

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

// squeue runs through the Env (Env::Run: spawn, bounded read, timeout), so that tests can script
// its replies. It leads its own process group and a timeout kills the whole group: squeue as a
// wrapper script leaves its own children running otherwise (issue 34); a child that closed its
// stdout but keeps running must not hold the poll (issue 19, defect 4).
class SqueueSource : public JobSource {
 public:
  SqueueSource(std::string squeue, std::string conf, double timeout_s, std::shared_ptr<Env> env)
      : squeue_(std::move(squeue)),
        conf_(std::move(conf)),
        timeout_s_(timeout_s),
        env_(env ? std::move(env) : RealEnv()) {}
  const char* name() const override { return "squeue"; }

  Status Poll(std::vector<SourceJob>* out) override {
    RunRequest request;
    request.argv = {squeue_, "--json"};
    if (!conf_.empty()) request.set_env.emplace_back("SLURM_CONF", conf_);
    request.timeout_s = timeout_s_;
    request.max_output_bytes = kMaxReplyBytes;
    request.stderr_to = RunRequest::Stderr::kDiscard;
    request.own_process_group = true;
    const RunResult r = env_->Run(request);
    if (!r.started) {
      if (r.start_errno != 0) {
        return Status::IOError("squeue: cannot run '" + squeue_ + "': " + strerror(r.start_errno));
      }
      return Status::IOError("squeue: " + r.status.message());
    }
    if (r.output_too_large) return ReadFailed("squeue", IoEnd::kTooLarge, r.out.size());
    if (!r.output_complete && r.timed_out) {
      return ReadFailed("squeue", IoEnd::kTimeout, r.out.size());
    }
    if (!r.output_complete) return Status::IOError("squeue: " + r.status.message());
    if (r.timed_out) return Status::IOError("squeue: still running at the timeout (killed)");
    if (r.term_signal != 0) {
      return Status::IOError("squeue: killed by signal " + std::to_string(r.term_signal));
    }
    if (r.exit_code != 0) {
      return Status::IOError("squeue: exit status " + std::to_string(r.exit_code));
    }
    return ParseSlurmJobsJson(r.out, out);
  }

 private:
  std::string squeue_;
  std::string conf_;
  double timeout_s_;
  std::shared_ptr<Env> env_;
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
                                            double timeout_s, std::shared_ptr<Env> env) {
  return std::make_unique<SqueueSource>(std::move(squeue_path), std::move(slurm_conf), timeout_s,
                                        std::move(env));
}

std::unique_ptr<JobSource> MakeSlurmrestdSource(std::string socket_path, std::string api_version,
                                                double timeout_s) {
  return std::make_unique<SlurmrestdSource>(std::move(socket_path), std::move(api_version),
                                            timeout_s);
}

}  // namespace sar::filterd
