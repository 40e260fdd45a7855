#include "sar/env.h"

#include <algorithm>
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

Status Env::ReadFileBounded(const std::string& path, size_t max_bytes, std::string* out) {
  return ReadFileToString(path, UntrustedInputOptions(max_bytes), out);
}

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

}  // namespace sar
