// Whole-file reads and atomic writes. Every error names the file.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sar/status.h"

namespace sar {

/// How ReadFileToString may open and read a file.
struct ReadOptions {
  /// Larger files are refused before anything is allocated (and a file that grows past it while
  /// being read is refused too).
  size_t max_bytes = SIZE_MAX;
  /// Refuse FIFOs, devices, directories and sockets, without blocking on them: they are never
  /// opened for reading (a FIFO would block until a writer comes, /dev/zero never ends).
  bool regular_file_only = false;
  /// Refuse a path whose last component is a symbolic link (O_NOFOLLOW), so a process with more
  /// rights than the file's writer cannot be made to read another file through it.
  bool follow_symlinks = true;
};

/// What a privileged reader (the OpenSM plugin runs as root under the SM lock) uses for the small
/// input files another user writes: the job mapping and the node-class GUID files. Regular files
/// only, the last component no symlink, at most `max_bytes`.
ReadOptions UntrustedInputOptions(size_t max_bytes);

/// Who owns the file that was read and its permission bits (from fstat on the open descriptor).
struct FileInfo {
  uid_t owner = 0;
  mode_t mode = 0;
  /// Whether error messages may quote the file's bytes: true if every local user may read the
  /// file anyway, or if it belongs to the (non-root) user reading it. A root process never
  /// quotes a root-owned file that others cannot read, so a file such as /etc/shadow that ends
  /// up under a mapping path is never echoed into a world-readable log.
  bool may_quote() const;
  /// The file's group (after owner and mode, which `FileInfo{owner, mode}` sets).
  gid_t group = 0;
};

/// Reads all of `path` into *out. Follows symlinks and reads pipes (`-t <(ibnetdiscover)`); no
/// size limit beyond memory (running out of it is an IOError, not an exception).
Status ReadFileToString(const std::string& path, std::string* out);
/// The same, under `options`; fills *info (if given) on success.
Status ReadFileToString(const std::string& path, const ReadOptions& options, std::string* out,
                        FileInfo* info = nullptr);
/// Writes `data` to a temporary file beside `path`, fsyncs it, and renames it over `path`, so a
/// reader sees either the old file or the whole new one. On failure `path` is untouched. The new
/// file keeps the mode of the regular file it replaces (0644 if there was none). A symbolic link
/// at `path` is replaced, not followed (and its target's mode is not copied: 0644). A character
/// device (`-o /dev/null`) is written in place: renaming over it would, as root, replace the device
/// node itself. A FIFO, socket, directory or block device is refused (IOError naming what it is)
/// and left alone.
Status WriteFileAtomic(const std::string& path, std::string_view data);

/// How WriteFileAtomic sets up the file it creates.
struct WriteOptions {
  /// Permission bits of the new file; -1: those of the regular file it replaces (else 0644).
  int mode = -1;
  /// Group of the new file; -1: the writer's. Group and mode are set before the data is written
  /// and the file renamed, so the file is never visible with other rights than these.
  gid_t group = static_cast<gid_t>(-1);
};
/// The same, under `options` (ignored for a character device, which is written in place).
Status WriteFileAtomic(const std::string& path, std::string_view data, const WriteOptions& options);

/// Mode of the files that say where jobs run (the job mapping, the FORS schedules): job placement
/// is not for every local user. Their readers get the group (sar-filterd's `mapping_group`, the
/// plugin's `fors_schedule_group`).
inline constexpr int kJobPlacementFileMode = 0640;
/// WriteOptions for such a file: kJobPlacementFileMode, group `group` (-1: the writer's).
WriteOptions JobPlacementFileOptions(gid_t group);
/// The id of the group `name` (a name, or a number of digits); NotFound naming it otherwise.
Status LookUpGroup(const std::string& name, gid_t* out);

}  // namespace sar
