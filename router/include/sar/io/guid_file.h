// GUID list files: OpenSM's cn_guid_file / io_guid_file format, one GUID per line (port or node
// GUID, hex with or without 0x; '#' starts a comment; blank lines are ignored). The lists become
// node classes with MakeNodeClasses (sar/model/node_classes.h).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/status.h"

namespace sar {

/// The largest GUID file ReadGuidFile reads: a subnet has at most 49,151 LIDs, so a list of all
/// its port GUIDs ("0x" + 16 hex digits a line) is under 1 MB; 16 MiB leaves room for comments.
inline constexpr size_t kMaxGuidFileBytes = size_t{16} << 20;

/// Reads a GUID list file. Malformed lines fail with "file:line: expected ...". The file is
/// opened as ReadJobMapping opens a mapping: a regular file, not a symlink, at most `max_bytes`,
/// quoted in errors only if FileInfo::may_quote() (sar/io/file_util.h).
Status ReadGuidFile(const std::string& path, std::vector<Guid>* guids,
                    size_t max_bytes = kMaxGuidFileBytes);

}  // namespace sar
