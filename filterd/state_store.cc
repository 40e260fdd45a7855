#include "state_store.h"

#include <charconv>

#include "job_set_diff.h"
#include "sar/io/file_util.h"
#include "sar/io/job_file.h"

namespace sar::filterd {

namespace {

// "last_reroute" holds one number: a larger file is not ours.
constexpr size_t kMaxLastRerouteBytes = 4096;

}  // namespace

Status LoadState(Env& env, const std::string& state_dir, PersistentState* out) {
  *out = PersistentState();
  const std::string jobs_path = state_dir + "/router.jobs";
  if (!env.FileExists(jobs_path)) return Status::OK();
  JobMapping mapping;
  SAR_RETURN_IF_ERROR(ReadJobMapping(env, jobs_path, &mapping));
  out->router_set = FromJobMapping(mapping);
  out->has_router_set = true;
  std::string text;
  if (env.ReadFileBounded(state_dir + "/last_reroute", kMaxLastRerouteBytes, &text).ok()) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    auto [p, ec] =
        std::from_chars(text.data(), text.data() + text.size(), out->last_reroute_unix_s);
    if (ec != std::errc() || p != text.data() + text.size()) {
      return Status::Corruption(state_dir + "/last_reroute:1: expected Unix seconds");
    }
  }
  return Status::OK();
}

Status SaveState(Env& env, const std::string& state_dir, const PersistentState& state) {
  return SaveState(env, state_dir, state, ToJobMapping(state.router_set));
}

Status SaveState(Env& env, const std::string& state_dir, const PersistentState& state,
                 const JobMapping& router_mapping) {
  SAR_RETURN_IF_ERROR(env.CreateDir(state_dir, 0700));
  SAR_RETURN_IF_ERROR(WriteJobMapping(env, state_dir + "/router.jobs", router_mapping));
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof(buf), state.last_reroute_unix_s);
  (void)ec;  // 64 bytes hold any double
  return env.WriteFileAtomic(state_dir + "/last_reroute", std::string(buf, p) + "\n",
                             WriteOptions{});
}

}  // namespace sar::filterd
