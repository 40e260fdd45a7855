// The job mapping file: one "<hostname> <jobid> [<pattern>]" per line; '#' starts a comment; blank
// lines are ignored. A host may appear in several jobs. The optional pattern ("default" or
// "alltoall") must be the same on every line of a job. See docs/formats.md.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "sar/model/jobs.h"
#include "sar/status.h"

namespace sar {

class Env;

Status ParseJobMapping(std::string_view text, const std::string& source, JobMapping* out);
/// The largest mapping file ReadJobMapping reads. A subnet has at most 0xBFFF (49,151) unicast
/// LIDs, so at most that many hosts, and a line is "<hostname> <jobid> [<pattern>]", well under
/// 100 bytes: a real mapping is a few MB, and 64 MiB holds every host of a full subnet in ~28
/// jobs at once. The cap bounds what a broken or hostile file costs under OpenSM's lock: a
/// 64 MiB file (1.34M lines) parses in ~1 s of CPU and ~250 MB peak RSS (bench/io_bench.cc,
/// docs/formats.md), where an unbounded one (/dev/zero) ran OpenSM out of memory.
inline constexpr size_t kMaxJobMappingBytes = size_t{64} << 20;
/// Reads a mapping file. The file must be a regular file (a FIFO, device, directory or socket is
/// refused without blocking), not a symbolic link, and at most `max_bytes` long; errors quote
/// its content only if FileInfo::may_quote() (see sar/io/file_util.h).
Status ReadJobMapping(const std::string& path, JobMapping* out,
                      size_t max_bytes = kMaxJobMappingBytes);
std::string FormatJobMapping(const JobMapping& mapping);
/// Writes the mapping atomically, mode kJobPlacementFileMode (0640: where jobs run is not for
/// every user; sar/io/file_util.h), group `group` (-1: the writer's).
Status WriteJobMapping(const std::string& path, const JobMapping& mapping,
                       gid_t group = static_cast<gid_t>(-1));
/// The same two through `env`'s file operations (sar/env.h; the checks are the same), so a test
/// Env can make them fail.
Status ReadJobMapping(Env& env, const std::string& path, JobMapping* out,
                      size_t max_bytes = kMaxJobMappingBytes);
Status WriteJobMapping(Env& env, const std::string& path, const JobMapping& mapping,
                       gid_t group = static_cast<gid_t>(-1));

}  // namespace sar
