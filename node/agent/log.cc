#include "log.h"

#include <ctime>

namespace sarmig {

void Logger::Log(LogLevel level, const char* fmt, ...) {
  if (level < min_level_ || out_ == nullptr) return;
  static const char* const kNames[] = {"debug", "info", "warn", "error"};
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  tm t{};
  gmtime_r(&ts.tv_sec, &t);
  char stamp[40];
  strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &t);
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  std::lock_guard<std::mutex> lock(mu_);
  fprintf(out_, "%s.%06ldZ %s %s\n", stamp, ts.tv_nsec / 1000, kNames[static_cast<int>(level)],
          msg);
  fflush(out_);
}

}  // namespace sarmig
