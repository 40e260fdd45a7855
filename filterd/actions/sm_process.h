// What sar-filterd checks before it signals the pid in OpenSM's pid file (issue 19 defect 21).
// A stale pid file can name any process, and SIGUSR2's default action kills: an OpenSM without
// the osmsar plugin registered (a typo in osmsar.conf) would die of the "reroute" signal. So the
// target must be OpenSM (/proc/<pid>/comm or the basename of /proc/<pid>/exe is "opensm") and,
// for the plugin's SIGUSR2, must have the plugin's shared object mapped (/proc/<pid>/maps); and
// it must catch the signal about to be sent (SigCgt in /proc/<pid>/status), so that nothing
// sar-filterd sends can end it.
// Reading another user's maps needs ptrace-level privilege (CAP_SYS_PTRACE), more than signalling
// it (CAP_KILL). A sar-filterd running as its system user with CAP_KILL only (the packaged unit)
// cannot read it; then the plugin's ready file stands in: the plugin writes "osmsar <pid>" to
// "<mapping_file>.ready" once its SIGUSR2 handler is in place, and removes it when unloaded.
// The maps, where readable, decide; the ready file is consulted only when they are not.
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
/// libosmsar.so must be mapped too (trigger "signal"; trigger "file" signals stock OpenSM), or,
/// where /proc/<pid>/maps cannot be read, `ready_file` must name `pid` ("" = no such file).
Status CheckSmProcess(pid_t pid, int signum, bool need_plugin,
                      const std::string& proc_root = "/proc", const std::string& ready_file = "");

/// The plugin's ready file for a mapping file (opensm-patch/osmsar_plugin.c writes it).
std::string PluginReadyFile(const std::string& mapping_file);

/// CheckSmProcess over /proc, bound to `need_plugin` and the ready file.
SmProcessCheck RealSmProcessCheck(bool need_plugin, std::string ready_file = "");

}  // namespace sar::filterd
