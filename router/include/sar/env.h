// Env (LevelDB's idea): the outside world a long-running caller depends on, behind one
// interface: the clocks, sleeping, the file operations it uses and running other programs.
// RealEnv() is the system's; ManualEnv is a test clock that moves only when told (a sleep moves
// it too), so behaviour in time (a reroute gate, a retry back-off, a restart's minimum interval)
// is tested without real sleeps, and a test fails if the code reads the system clock instead of
// its Env. ManualEnv also fails the writes a test names (a full disk) and answers Run with the
// replies a test scripts (a child that times out, prints half a reply).
// Timings that no decision depends on (how long a routing stage took) use Stopwatch.
// Thread-safety: RealEnv is stateless; ManualEnv locks, so a test thread may move the clock of
// a daemon running in another.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sar/io/file_util.h"
#include "sar/io/process.h"
#include "sar/status.h"

namespace sar {

class Env {
 public:
  virtual ~Env() = default;

  /// Seconds on a clock that is never stepped (CLOCK_MONOTONIC): intervals and deadlines.
  virtual double NowMonotonic() = 0;
  /// Seconds since the Unix epoch (CLOCK_REALTIME, may be stepped): what is stored or shown.
  virtual double NowUnix() = 0;
  /// Sleeps `seconds` (nothing for 0, negative or NaN; at most a day, so no double overflows
  /// the clock's nanoseconds).
  virtual void SleepFor(double seconds) = 0;

  /// WriteFileAtomic (sar/io/file_util.h) by default.
  virtual Status WriteFileAtomic(const std::string& path, std::string_view data,
                                 const WriteOptions& options);
  /// ReadFileToString of a regular file of at most `max_bytes` (no FIFO, device or symlink);
  /// fills *info (if given) as ReadFileToString does.
  virtual Status ReadFileBounded(const std::string& path, size_t max_bytes, std::string* out,
                                 FileInfo* info = nullptr);
  /// Creates directory `path` with `mode` unless it exists (mkdir(2); EEXIST is OK).
  virtual Status CreateDir(const std::string& path, mode_t mode);
  /// Whether `path` names something (stat(2), symlinks followed).
  virtual bool FileExists(const std::string& path);
  /// RunProcess (sar/io/process.h) by default.
  virtual RunResult Run(const RunRequest& request);
};

/// The system's Env. A new object per call (it holds nothing): no process-wide instance.
std::shared_ptr<Env> RealEnv();

/// A test Env: both clocks stand still until Advance() or SleepFor() moves them (together),
/// or StepUnix() steps the wall clock alone (an NTP step, a clock set back). Sleeps return at
/// once and are recorded. Files are the real ones, except that writes under a path given to
/// FailWrites() fail. Run() spawns nothing: it answers with the replies ScriptRun() queued.
class ManualEnv : public Env {
 public:
  explicit ManualEnv(double monotonic_s = 1000, double unix_s = 1.5e9)
      : monotonic_s_(monotonic_s), unix_s_(unix_s) {}

  double NowMonotonic() override;
  double NowUnix() override;
  /// Advances both clocks by `seconds` (not negative) and records it.
  void SleepFor(double seconds) override;

  /// Time passes: both clocks move by `seconds` (not negative).
  void Advance(double seconds);
  /// The wall clock is stepped by `seconds` (either sign); the monotonic one does not move.
  void StepUnix(double seconds);
  /// Every SleepFor so far, in order.
  std::vector<double> sleeps() const;

  /// From now on WriteFileAtomic, and CreateDir of a directory not there yet, of a path that
  /// starts with `path_prefix` fail as a full disk would: IOError "<path>: <error>", the file
  /// left as it was. An empty `error` stops it.
  void FailWrites(std::string path_prefix, std::string error);
  Status WriteFileAtomic(const std::string& path, std::string_view data,
                         const WriteOptions& options) override;
  Status CreateDir(const std::string& path, mode_t mode) override;

  /// The reply to the next Run() (queued in order). A Run with none queued fails (IOError).
  void ScriptRun(RunResult reply);
  RunResult Run(const RunRequest& request) override;
  /// Every Run so far, in order.
  std::vector<RunRequest> runs() const;

 private:
  Status WriteError(const std::string& path) const;  // mu_ held

  mutable std::mutex mu_;
  double monotonic_s_;                                               // guarded by mu_
  double unix_s_;                                                    // guarded by mu_
  std::vector<double> sleeps_;                                       // guarded by mu_
  std::vector<std::pair<std::string, std::string>> failing_writes_;  // guarded by mu_
  std::vector<RunResult> scripted_runs_;                             // guarded by mu_, next first
  std::vector<RunRequest> runs_;                                     // guarded by mu_
};

/// Measures a computation's duration on the monotonic clock, from construction (or Restart).
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  void Restart() { start_ = std::chrono::steady_clock::now(); }
  double ElapsedSeconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  double ElapsedMs() const { return ElapsedSeconds() * 1e3; }
  /// Milliseconds since construction or the previous LapMs(), and starts the next lap.
  double LapMs() {
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - start_).count();
    start_ = now;
    return ms;
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace sar
