#include "preflight.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "actions/action.h"
#include "server/metrics_http.h"

namespace sar::filterd {
namespace {

std::string DirOf(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// The pid file names a live subnet manager that will take `signum`.
Status CheckOneSm(const std::string& pid_file, int signum, const SmProcessCheck& check,
                  std::string* detail) {
  pid_t pid = 0;
  SAR_RETURN_IF_ERROR(ReadPidFile(pid_file, &pid));
  // kill(pid, 0) does what the first reroute's kill() does, without the signal: EPERM here is
  // the reroute failing later (issue 34: it passed, and showed at the first job).
  if (kill(pid, 0) != 0) {
    const int err = errno;
    const std::string head = pid_file + ": pid " + std::to_string(pid);
    if (err == ESRCH)
      return Status::Failed(head + " is not running (a stale pid file: is OpenSM up?)");
    if (err == EPERM) {
      return Status::Failed(
          head +
          ": no permission to signal it (kill: EPERM): sar-filterd needs "
          "CAP_KILL to signal root's OpenSM (the unit's "
          "AmbientCapabilities=CAP_KILL; run --check with it, docs/operations.md)");
    }
    return Status::Failed(head + ": kill(pid, 0): " + strerror(err));
  }
  if (check) {
    const Status s = check(pid, signum);
    if (!s.ok()) return Status::Failed(pid_file + ": " + s.message());
  }
  *detail = "pid " + std::to_string(pid) + " from " + pid_file +
            (signum == SIGUSR2 ? " is OpenSM with libosmsar.so" : " is OpenSM");
  return Status::OK();
}

// Every listed pid file (master and standbys) names such a subnet manager: preflight is run
// when the deployment is set up, so a standby that is down is reported too.
Status CheckSm(const Config& config, int signum, const SmProcessCheck& check, std::string* detail) {
  for (const std::string& f : config.opensm_pid_files) {
    std::string one;
    SAR_RETURN_IF_ERROR(CheckOneSm(f, signum, check, &one));
    *detail += (detail->empty() ? "" : "; ") + one;
  }
  return Status::OK();
}

// OpenSM's console (loopback mode) accepts a TCP connection within 2 s. Nothing is sent.
Status CheckConsole(const Config& config, std::string* detail) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(config.console_port));
  if (inet_pton(AF_INET, config.console_host.c_str(), &addr.sin_addr) != 1) {
    return Status::InvalidArgument("console_host '" + config.console_host +
                                   "' is not an IPv4 address");
  }
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Status::IOError(std::string("socket: ") + strerror(errno));
  int rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  int err = rc == 0 ? 0 : errno;
  if (rc != 0 && err == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    if (poll(&p, 1, 2000) == 1) {
      socklen_t len = sizeof(err);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
    } else {
      err = ETIMEDOUT;
    }
  }
  close(fd);
  const std::string where = config.console_host + ":" + std::to_string(config.console_port);
  if (err != 0) {
    return Status::IOError("OpenSM console at " + where + ": " + strerror(err) +
                           " (console loopback on, console_port as in opensm.conf?)");
  }
  *detail = "OpenSM console at " + where + " accepts connections";
  return Status::OK();
}

}  // namespace

Status CheckWritableDirOf(const std::string& file_path) {
  const std::string dir = DirOf(file_path);
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) {
    return Status::IOError(dir + ": " + strerror(errno) + " (create it; sar-filterd does not)");
  }
  if (!S_ISDIR(st.st_mode)) return Status::IOError(dir + ": not a directory");
  std::string probe = dir + "/.sar-filterd-check-XXXXXX";
  const int fd = mkstemp(probe.data());
  if (fd < 0) return Status::IOError(dir + ": cannot create a file: " + strerror(errno));
  close(fd);
  unlink(probe.c_str());
  return Status::OK();
}

bool MayChownToGroup(uid_t euid, gid_t egid, const std::vector<gid_t>& groups, gid_t gid) {
  return euid == 0 || egid == gid || std::find(groups.begin(), groups.end(), gid) != groups.end();
}

namespace {

// This process's supplementary groups.
std::vector<gid_t> OurGroups() {
  std::vector<gid_t> groups(static_cast<size_t>(std::max(getgroups(0, nullptr), 0)));
  if (!groups.empty())
    groups.resize(static_cast<size_t>(
        std::max(getgroups(static_cast<int>(groups.size()), groups.data()), 0)));
  return groups;
}

}  // namespace

std::vector<PreflightItem> RunPreflight(const Config& config, const SmProcessCheck& check) {
  std::vector<PreflightItem> items;
  auto add = [&](std::string what, std::string detail, Status s) {
    items.push_back({std::move(what), std::move(detail), std::move(s)});
  };
  {
    std::string detail;
    Status s;
    switch (config.trigger) {
      case Trigger::kSignal:
        s = CheckSm(config, SIGUSR2, check, &detail);
        break;
      case Trigger::kFile:
        s = CheckSm(config, SIGHUP, check, &detail);
        break;
      case Trigger::kConsole:
        s = CheckConsole(config, &detail);
        break;
      case Trigger::kNone:
        detail = "trigger none: nothing to reach";
        break;
    }
    add(std::string("trigger ") + TriggerName(config.trigger), detail, s);
  }
  add("mapping_file", config.mapping_file + " can be written",
      CheckWritableDirOf(config.mapping_file));
  if (!config.mapping_group.empty()) {
    // The mapping is written 0640 with this group (resolved when the config was read): only
    // root or a member may give a file that group, else every mapping write fails.
    Status s;
    if (!MayChownToGroup(geteuid(), getegid(), OurGroups(), config.mapping_gid)) {
      s = Status::InvalidArgument("mapping_group '" + config.mapping_group +
                                  "': this user is not a member, so it cannot give the mapping "
                                  "that group (adduser <sar-filterd's user> " +
                                  config.mapping_group + ")");
    }
    add("mapping_group", "the mapping can be given group " + config.mapping_group, s);
  }
  if (config.trigger == Trigger::kFile) {
    add("lft_file", config.lft_file + " can be written", CheckWritableDirOf(config.lft_file));
  }
  {
    // The daemon creates state_dir itself (0700), so its parent must be writable if it is
    // missing.
    std::error_code ec;
    const bool exists = std::filesystem::is_directory(config.state_dir, ec);
    add("state_dir", config.state_dir + (exists ? " can be written" : " can be created"),
        CheckWritableDirOf(exists ? config.state_dir + "/x" : config.state_dir));
  }
  if (!config.control_socket.empty()) {
    Status s = CheckWritableDirOf(config.control_socket);
    std::string detail = "socket directory " + DirOf(config.control_socket) + " is writable";
    if (s.ok() && !config.control_socket_group.empty()) {
      const group* gr = getgrnam(config.control_socket_group.c_str());
      const std::vector<gid_t> groups = OurGroups();
      if (gr == nullptr) {
        s = Status::InvalidArgument("control_socket_group '" + config.control_socket_group +
                                    "' does not exist (hooks run by SlurmUser would get EACCES)");
      } else if (!MayChownToGroup(geteuid(), getegid(), groups, gr->gr_gid)) {
        s = Status::InvalidArgument(
            "control_socket_group '" + config.control_socket_group +
            "': this user is not a member, so it cannot hand the socket to that group (adduser " +
            "<sar-filterd's user> " + config.control_socket_group + ")");
      } else {
        detail += ", group " + config.control_socket_group + " exists";
      }
    }
    add("control_socket", detail, s);
  }
  if (!config.metrics_listen.empty()) {
    MetricsHttpServer probe;  // bound and closed again
    add("metrics_listen", config.metrics_listen + " can be bound",
        probe.Open(config.metrics_listen));
  }
  if (!config.metrics_textfile.empty()) {
    add("metrics_textfile", config.metrics_textfile + " can be written",
        CheckWritableDirOf(config.metrics_textfile));
  }
  return items;
}

}  // namespace sar::filterd
