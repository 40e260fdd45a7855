// A small thread-safe logger for the agent and the reference consumer: one line per event,
// realtime timestamp with microseconds, level, message. Writes to stderr (journald) or a file.
#ifndef SAR_AGENT_LOG_H_
#define SAR_AGENT_LOG_H_

#include <cstdarg>
#include <cstdio>
#include <mutex>

namespace sarmig {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

/// Lines go to `out` (not owned); nothing below `min_level` is written.
class Logger {
 public:
  explicit Logger(FILE* out, LogLevel min_level = LogLevel::kInfo)
      : out_(out), min_level_(min_level) {}
  void set_level(LogLevel l) { min_level_ = l; }
  void Log(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

 private:
  std::mutex mu_;
  FILE* out_;
  LogLevel min_level_;
};

#define SARMIG_LOG(logger, level, ...) (logger)->Log(::sarmig::LogLevel::level, __VA_ARGS__)

}  // namespace sarmig

#endif  // SAR_AGENT_LOG_H_
