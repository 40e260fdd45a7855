// Trigger "signal": SIGUSR2 to OpenSM (each listed: master and standbys), whose osmsar plugin then
// rereads the mapping and reroutes (opensm-patch/).
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "actions/action.h"
#include "sar/io/file_util.h"

namespace sar::filterd {

Status ReadPidFile(const std::string& pid_file, pid_t* pid) {
  // A pid file is a line of digits: a FIFO or device at its path is refused without blocking,
  // anything long is not a pid file (the text is quoted below). Symbolic links are followed:
  // sites link pid files.
  ReadOptions options;
  options.max_bytes = 64;
  options.regular_file_only = true;
  std::string text;
  SAR_RETURN_IF_ERROR(ReadFileToString(pid_file, options, &text));
  const size_t start = text.find_first_not_of(" \t\r\n");
  const size_t end = text.find_last_not_of(" \t\r\n");
  if (start == std::string::npos) return Status::Corruption(pid_file + ": empty pid file");
  auto [p, ec] = std::from_chars(text.data() + start, text.data() + end + 1, *pid);
  if (ec != std::errc() || p != text.data() + end + 1 || *pid <= 1) {
    return Status::Corruption(pid_file + ": not a pid: '" + text.substr(start, end - start + 1) +
                              "'");
  }
  return Status::OK();
}

Status SignalPidFile(const std::string& pid_file, int signum, const SmProcessCheck& check) {
  pid_t pid = 0;
  SAR_RETURN_IF_ERROR(ReadPidFile(pid_file, &pid));
  if (check) {
    // Between this check and kill() the pid could be reused; a pid file is only that exact.
    const Status s = check(pid, signum);
    if (!s.ok()) return Status::Failed(pid_file + ": " + s.message());
  }
  if (kill(pid, signum) != 0) {
    return Status::IOError(pid_file + ": kill(" + std::to_string(pid) + "): " + strerror(errno));
  }
  return Status::OK();
}

Status SignalPidFiles(const std::vector<std::string>& pid_files, int signum,
                      const SmProcessCheck& check) {
  std::vector<Status> errors;
  for (const std::string& f : pid_files) {
    Status s = SignalPidFile(f, signum, check);
    if (!s.ok()) errors.push_back(std::move(s));
  }
  if (errors.size() < pid_files.size()) {
    // Whichever subnet manager runs was told; a standby that is down (or a dead master's
    // stale pid file) is worth a warning, not a failed reroute.
    for (const Status& e : errors) spdlog::warn("trigger: {} (another was signalled)", e.message());
    return Status::OK();
  }
  if (errors.size() == 1) return errors.front();
  std::string all;
  for (const Status& e : errors) all += (all.empty() ? "" : "; ") + e.message();
  return Status::Failed("no subnet manager signalled: " + all);
}

namespace {

class SignalAction : public Action {
 public:
  SignalAction(std::string mapping_file, std::vector<std::string> pid_files, SmProcessCheck check)
      : Action(std::move(mapping_file), false),
        pid_files_(std::move(pid_files)),
        check_(std::move(check)) {}
  const char* name() const override { return "signal"; }

 protected:
  Status DoApply(const ActionRequest&) override {
    return SignalPidFiles(pid_files_, SIGUSR2, check_);
  }

 private:
  std::vector<std::string> pid_files_;
  SmProcessCheck check_;
};

}  // namespace

std::unique_ptr<Action> MakeSignalAction(std::string mapping_file,
                                         std::vector<std::string> pid_files, SmProcessCheck check) {
  return std::make_unique<SignalAction>(std::move(mapping_file), std::move(pid_files),
                                        std::move(check));
}

}  // namespace sar::filterd
