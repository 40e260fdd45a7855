// Whole-file reads and atomic writes. Every error names the file.
#pragma once

#include <string>
#include <string_view>

#include "sar/status.h"

namespace sar {

/// Reads all of `path` into *out.
Status ReadFileToString(const std::string& path, std::string* out);
/// Writes `data` to a temporary file beside `path`, fsyncs it, and renames it over `path`, so a
/// reader sees either the old file or the whole new one. On failure `path` is untouched. The new
/// file keeps the mode of the one it replaces (0644 if there was none).
Status WriteFileAtomic(const std::string& path, std::string_view data);

}  // namespace sar
