#include "sar/io/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace sar {

namespace {

Status PosixError(const std::string& what, const std::string& path, int err) {
  return Status::IOError(what + " '" + path + "': " + std::strerror(err));
}

// write(2) until everything is out; short writes happen on signals and full pipes.
bool WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

Status ReadFileToString(const std::string& path, std::string* out) {
  out->clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return PosixError("cannot open", path, errno);
  // Size the buffer once from fstat and read straight into it: LFT dumps of large fabrics are
  // gigabytes, and growing a string chunk by chunk copies them several times over. Keep reading
  // past the stat'ed size in case the file grew (or is a pipe reporting 0).
  struct stat st {};
  size_t capacity = (::fstat(fd, &st) == 0 && st.st_size > 0) ? static_cast<size_t>(st.st_size) : 0;
  out->resize(capacity + 1);
  size_t used = 0;
  for (;;) {
    if (used == out->size()) out->resize(out->size() * 2 + (1 << 16));
    const ssize_t n = ::read(fd, out->data() + used, out->size() - used);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      out->clear();
      return PosixError("cannot read", path, err);
    }
    used += static_cast<size_t>(n);
  }
  out->resize(used);
  ::close(fd);
  return Status::OK();
}

Status WriteFileAtomic(const std::string& path, std::string_view data) {
  // The temporary file must live in the same directory so that rename() is atomic (same file
  // system); mkstemp gives it a unique name so concurrent writers do not collide.
  std::string tmp = path + ".tmp.XXXXXX";
  const int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return PosixError("cannot create temporary file for", path, errno);
  auto fail = [&](const char* what) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return PosixError(what, path, err);
  };
  // mkstemp creates the file 0600. Keep the mode of the file we replace, else use the usual
  // 0644. (Reading the umask would need umask(), which changes it for every thread.)
  struct stat old {};
  const mode_t mode = ::stat(path.c_str(), &old) == 0 ? (old.st_mode & 07777) : 0644;
  if (::fchmod(fd, mode) != 0) return fail("cannot set mode of temporary file for");
  if (!WriteAll(fd, data)) return fail("cannot write temporary file for");
  if (::fsync(fd) != 0) return fail("cannot fsync temporary file for");
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return PosixError("cannot close temporary file for", path, err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return PosixError("cannot rename temporary file over", path, err);
  }
  return Status::OK();
}

}  // namespace sar
