// The `log_file` logger (issue 19 defect 14): spdlog's file sink throws spdlog_ex when the file
// cannot be opened (sar-filterd aborted) and silently creates missing parent directories (as
// root). Here the parent must exist and the file must open for appending, or the caller gets a
// Status naming the path and the reason (sar-filterd exits 2, a config error).
#pragma once

#include <spdlog/logger.h>

#include <memory>
#include <string>

#include "sar/status.h"

namespace sar::filterd {

/// A logger named `name` appending to `path`. Creates no directory; never throws.
Status MakeFileLogger(const std::string& name, const std::string& path,
                      std::shared_ptr<spdlog::logger>* out);

/// True if stderr is a journald stream: $JOURNAL_STREAM ("<dev>:<inode>", set by systemd for
/// units whose output goes to the journal) names the file stderr is open on.
bool StderrIsJournal();

/// The stderr logger. Under journald each line starts with its syslog priority ("<3>" for
/// error, sd-daemon(3)), which journald strips and keeps as PRIORITY, so `journalctl -p err`
/// finds the errors; journald stamps the time itself. Elsewhere: spdlog's usual colour lines.
std::shared_ptr<spdlog::logger> MakeStderrLogger(const std::string& name);

}  // namespace sar::filterd
