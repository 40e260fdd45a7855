#include "actions/sm_process.h"

#include <limits.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "sar/io/file_util.h"

namespace sar::filterd {
namespace {

constexpr const char* kSmName = "opensm";
// /proc/<pid>/maps of a large OpenSM is a few hundred lines; this bounds a hostile one.
constexpr int kMaxMapsLines = 1 << 20;

std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Quoted for a log line: at most 32 printable bytes (a comm is at most 15).
std::string Quote(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 32)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return "'" + out + (s.size() > 32 ? "...'" : "'");
}

// True if a line of maps names the plugin's file as its path ("... /x/libosmsar.so", also with
// " (deleted)" after it: a plugin rebuilt under a running OpenSM is still the one loaded).
bool MapsPlugin(std::string line) {
  const std::string deleted = " (deleted)";
  if (line.size() > deleted.size() &&
      line.compare(line.size() - deleted.size(), deleted.size(), deleted) == 0) {
    line.resize(line.size() - deleted.size());
  }
  const size_t path = line.find('/');
  return path != std::string::npos && Basename(line.substr(path)) == kPluginFileName;
}

// Whether status's "SigCgt:" mask (hex, bit n-1 for signal n) has `signum`.
bool Catches(const std::string& status_path, int signum, bool* readable) {
  std::ifstream in(status_path);
  std::string line;
  for (int i = 0; i < 200 && std::getline(in, line); ++i) {
    if (line.rfind("SigCgt:", 0) != 0) continue;
    *readable = true;
    const size_t at = line.find_first_not_of(" \t", 7);
    if (at == std::string::npos) return false;
    const std::string hex = line.substr(at);
    // The mask is 16 hex digits (64 signals); the digit holding `signum` counted from the end.
    const size_t bit = static_cast<size_t>(signum - 1), digit = bit / 4;
    if (digit >= hex.size()) return false;
    const char c = hex[hex.size() - 1 - digit];
    const int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    return v >= 0 && ((v >> (bit % 4)) & 1);
  }
  return false;
}

// The plugin's ready file names `pid`: "osmsar <pid>" (any trailing whitespace). Read as any
// outside file: a regular file, no symbolic link, a few bytes (file_util.h), so nothing planted
// at its path (a FIFO, /dev/zero) can hold the daemon.
Status CheckReadyFile(pid_t pid, const std::string& maps_path, const std::string& ready_file) {
  const std::string head = "pid " + std::to_string(pid) + ": " + maps_path +
                           " unreadable (sar-filterd is not root: fine)";
  if (ready_file.empty()) {
    return Status::Failed(head +
                          " and no ready file to tell whether the osmsar plugin is loaded; "
                          "refusing to signal it");
  }
  std::string text;
  std::string word;
  long named = 0;
  if (!ReadFileToString(ready_file, UntrustedInputOptions(256), &text).ok() ||
      !(std::istringstream(text) >> word >> named)) {
    return Status::Failed(head + ", and the plugin's ready file " + ready_file +
                          " is missing or unreadable (OpenSM without libosmsar.so, or "
                          "/var/lib/sar missing when it started?): refusing to signal it");
  }
  if (word != "osmsar" || named != static_cast<long>(pid)) {
    return Status::Failed(head + ", and the plugin's ready file " + ready_file + " names " +
                          Quote(word) + " pid " + std::to_string(named) +
                          " (another OpenSM's, or a stale one): refusing to signal it");
  }
  return Status::OK();
}

Status CheckPluginMapped(pid_t pid, const std::string& dir, const std::string& ready_file) {
  std::ifstream maps(dir + "/maps");
  std::string line;
  int lines = 0;
  for (; maps && lines < kMaxMapsLines && std::getline(maps, line); ++lines) {
    if (MapsPlugin(line)) return Status::OK();
  }
  // Unreadable (EACCES without ptrace rights, at open or at the first read): every live
  // process has mappings, so none read means none could be.
  if (lines == 0) return CheckReadyFile(pid, dir + "/maps", ready_file);
  return Status::Failed("pid " + std::to_string(pid) + " is opensm without " + kPluginFileName +
                        " loaded (plugin not registered in osmsar.conf / event_plugin_name?): "
                        "SIGUSR2 would kill it; refusing to signal it");
}

}  // namespace

Status CheckSmProcess(pid_t pid, int signum, bool need_plugin, const std::string& proc_root,
                      const std::string& ready_file) {
  const std::string dir = proc_root + "/" + std::to_string(pid);
  std::string comm;
  {
    std::ifstream in(dir + "/comm");
    if (!in || !std::getline(in, comm)) {
      return Status::NotFound("pid " + std::to_string(pid) + ": no such process (" + dir +
                              "/comm unreadable)");
    }
  }
  std::string exe;
  char buf[PATH_MAX];
  const ssize_t n = readlink((dir + "/exe").c_str(), buf, sizeof(buf) - 1);
  if (n > 0) exe = Basename(std::string(buf, static_cast<size_t>(n)));
  if (comm != kSmName && exe != kSmName) {
    return Status::Failed("pid " + std::to_string(pid) + " is " + Quote(comm) +
                          ", not opensm: refusing to signal it (stale pid file?)");
  }
  if (need_plugin) SAR_RETURN_IF_ERROR(CheckPluginMapped(pid, dir, ready_file));
  bool readable = false;
  if (!Catches(dir + "/status", signum, &readable)) {
    return Status::Failed("pid " + std::to_string(pid) + " (opensm) " +
                          (readable ? "does not catch" : "has no readable SigCgt for") +
                          " signal " + std::to_string(signum) +
                          ": it would die of it; refusing to signal it");
  }
  return Status::OK();
}

std::string PluginReadyFile(const std::string& mapping_file) {
  return mapping_file.empty() ? "" : mapping_file + ".ready";
}

SmProcessCheck RealSmProcessCheck(bool need_plugin, std::string ready_file) {
  return [need_plugin, ready_file = std::move(ready_file)](pid_t pid, int signum) {
    return CheckSmProcess(pid, signum, need_plugin, "/proc", ready_file);
  };
}

}  // namespace sar::filterd
