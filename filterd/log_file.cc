#include "log_file.h"

#include <fcntl.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace sar::filterd {

Status MakeFileLogger(const std::string& name, const std::string& path,
                      std::shared_ptr<spdlog::logger>* out) {
  const std::string where = "log_file '" + path + "': ";
  const size_t slash = path.rfind('/');
  const std::string parent = slash == std::string::npos ? "."
                             : slash == 0               ? "/"
                                                        : path.substr(0, slash);
  struct stat st {};
  if (stat(parent.c_str(), &st) != 0) {
    return Status::InvalidArgument(where + "directory " + parent + ": " + strerror(errno) +
                                   " (not created; make it with the owner and mode you want)");
  }
  if (!S_ISDIR(st.st_mode)) return Status::InvalidArgument(where + parent + " is not a directory");
  // Opened here first for a plain errno (permission, a directory, a read-only file system);
  // spdlog would only throw. The sink then opens the same, now existing, file.
  const int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0640);
  if (fd < 0) return Status::IOError(where + strerror(errno));
  fstat(fd, &st);
  close(fd);
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument(where + "not a regular file");
  try {
    *out = std::make_shared<spdlog::logger>(
        name, std::make_shared<spdlog::sinks::basic_file_sink_mt>(path));
  } catch (const std::exception& e) {
    return Status::IOError(where + e.what());
  }
  return Status::OK();
}

namespace {

// "%*": the line's syslog priority as sd-daemon(3)'s "<N>" prefix.
class SyslogPriorityFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& dest) override {
    const char* prefix = "<6>";  // info
    switch (msg.level) {
      case spdlog::level::trace:
      case spdlog::level::debug:
        prefix = "<7>";
        break;
      case spdlog::level::warn:
        prefix = "<4>";
        break;
      case spdlog::level::err:
        prefix = "<3>";
        break;
      case spdlog::level::critical:
        prefix = "<2>";
        break;
      default:
        break;
    }
    dest.append(prefix, prefix + 3);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<SyslogPriorityFlag>();
  }
};

}  // namespace

bool StderrIsJournal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(stream, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  if (fstat(STDERR_FILENO, &st) != 0) return false;
  return static_cast<unsigned long long>(st.st_dev) == dev &&
         static_cast<unsigned long long>(st.st_ino) == ino;
}

std::shared_ptr<spdlog::logger> MakeStderrLogger(const std::string& name) {
  if (!StderrIsJournal()) return spdlog::stderr_color_mt(name);
  auto logger = spdlog::stderr_logger_mt(name);
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<SyslogPriorityFlag>('*').set_pattern("%*%l: %v");
  logger->set_formatter(std::move(formatter));
  return logger;
}

}  // namespace sar::filterd
