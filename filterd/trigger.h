// Telling the subnet manager to reroute, after the mapping file is complete on disk.
#pragma once

#include <string>

#include "sar/status.h"

namespace sar::filterd {

/// Reads a pid from `pid_file` (OpenSM's, or a test's stand-in) and sends it `signum`
/// (SIGUSR2 makes OpenSM re-sweep and reroute). Fails, naming the file, if the file is missing
/// or malformed or the process is gone.
Status SignalPidFile(const std::string& pid_file, int signum);

/// Connects to OpenSM's console on host:port (console "loopback" mode) and sends "reroute".
Status ConsoleReroute(const std::string& host, int port, double timeout_s);

}  // namespace sar::filterd
