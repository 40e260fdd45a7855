// What sar-filterd checks before it signals the pid in OpenSM's pid file (issue 19 defect 21).
// A stale pid file can name any process, and SIGUSR2's default action kills: an OpenSM without
// the osmsar plugin registered (a typo in osmsar.conf) would die of the "reroute" signal. So the
// target must be OpenSM (/proc/<pid>/comm or the basename of /proc/<pid>/exe is "opensm") and,
// for the plugin's SIGUSR2, must have the plugin's shared object mapped (/proc/<pid>/maps); and
// it must catch the signal about to be sent (SigCgt in /proc/<pid>/status), so that nothing
// sar-filterd sends can end it.
// Reading another user's maps needs the same privilege as signalling it, so a sar-filterd that
// may signal OpenSM may also check it.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

#include "sar/status.h"

namespace sar::filterd {

/// The plugin's file name (opensm-patch/CMakeLists.txt: PREFIX "lib", OUTPUT_NAME osmsar).
inline constexpr const char* kPluginFileName = "libosmsar.so";

/// Checks, before `signum` is sent, that `pid` is the subnet manager: OK, or why it is not.
using SmProcessCheck = std::function<Status(pid_t pid, int signum)>;

/// The real check over `proc_root` ("/proc"; tests pass a tree of their own). `need_plugin`:
/// libosmsar.so must be mapped too (trigger "signal"; trigger "file" signals stock OpenSM).
Status CheckSmProcess(pid_t pid, int signum, bool need_plugin,
                      const std::string& proc_root = "/proc");

/// CheckSmProcess over /proc, bound to `need_plugin`.
SmProcessCheck RealSmProcessCheck(bool need_plugin);

}  // namespace sar::filterd
