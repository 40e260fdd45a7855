#include "state_store.h"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "job_set_diff.h"
#include "sar/io/file_util.h"
#include "sar/io/job_file.h"

namespace sar::filterd {

Status LoadState(const std::string& state_dir, PersistentState* out) {
  *out = PersistentState();
  const std::string jobs_path = state_dir + "/router.jobs";
  struct stat st {};
  if (stat(jobs_path.c_str(), &st) != 0) return Status::OK();
  JobMapping mapping;
  SAR_RETURN_IF_ERROR(ReadJobMapping(jobs_path, &mapping));
  out->router_set = FromJobMapping(mapping);
  out->has_router_set = true;
  std::string text;
  if (ReadFileToString(state_dir + "/last_reroute", &text).ok()) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    auto [p, ec] =
        std::from_chars(text.data(), text.data() + text.size(), out->last_reroute_unix_s);
    if (ec != std::errc() || p != text.data() + text.size()) {
      return Status::Corruption(state_dir + "/last_reroute:1: expected Unix seconds");
    }
  }
  return Status::OK();
}

Status SaveState(const std::string& state_dir, const PersistentState& state) {
  return SaveState(state_dir, state, ToJobMapping(state.router_set));
}

Status SaveState(const std::string& state_dir, const PersistentState& state,
                 const JobMapping& router_mapping) {
  if (mkdir(state_dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return Status::IOError(state_dir + ": mkdir: " + strerror(errno));
  }
  SAR_RETURN_IF_ERROR(WriteJobMapping(state_dir + "/router.jobs", router_mapping));
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), state.last_reroute_unix_s);
  (void)ec;  // 64 bytes hold any double
  return WriteFileAtomic(state_dir + "/last_reroute", std::string(buf, p) + "\n");
}

}  // namespace sar::filterd
