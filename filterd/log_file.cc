#include "log_file.h"

#include <fcntl.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

}  // namespace sar::filterd
