// Trigger "signal": SIGUSR2 to OpenSM, whose osmsar plugin then rereads the mapping and
// reroutes (opensm-patch/).
#include <signal.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "action.h"
#include "sar/io/file_util.h"

namespace sar::filterd {

Status ReadPidFile(const std::string& pid_file, pid_t* pid) {
  std::string text;
  SAR_RETURN_IF_ERROR(ReadFileToString(pid_file, &text));
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

namespace {

class SignalAction : public Action {
 public:
  SignalAction(std::string mapping_file, std::string pid_file, SmProcessCheck check)
      : Action(std::move(mapping_file), false),
        pid_file_(std::move(pid_file)),
        check_(std::move(check)) {}
  const char* name() const override { return "signal"; }

 protected:
  Status DoApply(const ActionRequest&) override {
    return SignalPidFile(pid_file_, SIGUSR2, check_);
  }

 private:
  std::string pid_file_;
  SmProcessCheck check_;
};

}  // namespace

std::unique_ptr<Action> MakeSignalAction(std::string mapping_file, std::string pid_file,
                                         SmProcessCheck check) {
  return std::make_unique<SignalAction>(std::move(mapping_file), std::move(pid_file),
                                        std::move(check));
}

}  // namespace sar::filterd
