#include "sar/env.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

namespace sar {
namespace {

// What any SleepFor may wait: a day. Longer (or infinite) waits would overflow the
// nanoseconds of std::chrono's clocks; no caller means them.
constexpr double kMaxSleepSeconds = 86400;

// A sleep as asked, clamped into 0..kMaxSleepSeconds; NaN is 0.
double SleepSeconds(double seconds) {
  return seconds > 0 ? std::min(seconds, kMaxSleepSeconds) : 0.0;
}

class SystemEnv : public Env {
 public:
  double NowMonotonic() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  double NowUnix() override {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  void SleepFor(double seconds) override {
    const double s = SleepSeconds(seconds);
    if (s > 0) std::this_thread::sleep_for(std::chrono::duration<double>(s));
  }
};

}  // namespace

Status Env::WriteFileAtomic(const std::string& path, std::string_view data,
                            const WriteOptions& options) {
  return sar::WriteFileAtomic(path, data, options);
}

Status Env::ReadFileBounded(const std::string& path, size_t max_bytes, std::string* out,
                            FileInfo* info) {
  return ReadFileToString(path, UntrustedInputOptions(max_bytes), out, info);
}

Status Env::CreateDir(const std::string& path, mode_t mode) {
  if (mkdir(path.c_str(), mode) != 0 && errno != EEXIST) {
    return Status::IOError(path + ": mkdir: " + strerror(errno));
  }
  return Status::OK();
}

bool Env::FileExists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

RunResult Env::Run(const RunRequest& request) { return RunProcess(request); }

std::shared_ptr<Env> RealEnv() { return std::make_shared<SystemEnv>(); }

double ManualEnv::NowMonotonic() {
  std::lock_guard<std::mutex> lock(mu_);
  return monotonic_s_;
}

double ManualEnv::NowUnix() {
  std::lock_guard<std::mutex> lock(mu_);
  return unix_s_;
}

void ManualEnv::SleepFor(double seconds) {
  const double s = SleepSeconds(seconds);
  std::lock_guard<std::mutex> lock(mu_);
  sleeps_.push_back(s);
  monotonic_s_ += s;
  unix_s_ += s;
}

void ManualEnv::Advance(double seconds) {
  const double s = seconds > 0 ? seconds : 0.0;
  std::lock_guard<std::mutex> lock(mu_);
  monotonic_s_ += s;
  unix_s_ += s;
}

void ManualEnv::StepUnix(double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  unix_s_ += seconds;
}

std::vector<double> ManualEnv::sleeps() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sleeps_;
}

void ManualEnv::FailWrites(std::string path_prefix, std::string error) {
  std::lock_guard<std::mutex> lock(mu_);
  failing_writes_.erase(std::remove_if(failing_writes_.begin(), failing_writes_.end(),
                                       [&](const auto& f) { return f.first == path_prefix; }),
                        failing_writes_.end());
  if (!error.empty()) failing_writes_.emplace_back(std::move(path_prefix), std::move(error));
}

Status ManualEnv::WriteError(const std::string& path) const {
  for (const auto& [prefix, error] : failing_writes_) {
    if (path.compare(0, prefix.size(), prefix) == 0) return Status::IOError(path + ": " + error);
  }
  return Status::OK();
}

Status ManualEnv::WriteFileAtomic(const std::string& path, std::string_view data,
                                  const WriteOptions& options) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (Status s = WriteError(path); !s.ok()) return s;
  }
  return Env::WriteFileAtomic(path, data, options);
}

Status ManualEnv::CreateDir(const std::string& path, mode_t mode) {
  // A directory that is there already needs no room: mkdir's EEXIST comes first on a full disk.
  if (!FileExists(path)) {
    std::lock_guard<std::mutex> lock(mu_);
    if (Status s = WriteError(path); !s.ok()) return s;
  }
  return Env::CreateDir(path, mode);
}

void ManualEnv::ScriptRun(RunResult reply) {
  std::lock_guard<std::mutex> lock(mu_);
  scripted_runs_.push_back(std::move(reply));
}

RunResult ManualEnv::Run(const RunRequest& request) {
  std::lock_guard<std::mutex> lock(mu_);
  runs_.push_back(request);
  if (scripted_runs_.empty()) {
    RunResult none;
    none.status = Status::IOError("ManualEnv: no reply scripted for '" +
                                  (request.argv.empty() ? std::string() : request.argv[0]) + "'");
    return none;
  }
  RunResult reply = std::move(scripted_runs_.front());
  scripted_runs_.erase(scripted_runs_.begin());
  return reply;
}

std::vector<RunRequest> ManualEnv::runs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return runs_;
}

}  // namespace sar
