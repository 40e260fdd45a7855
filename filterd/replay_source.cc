#include "replay_source.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>

#include "admin_comment.h"
#include "hostlist.h"
#include "sar/io/file_util.h"

namespace sar::filterd {
namespace {

bool ParseSeconds(std::string_view s, double* v) {
  if (s == "-") {
    *v = std::numeric_limits<double>::infinity();
    return true;
  }
  // from_chars also takes "nan", "inf" and "infinity": a time must be a finite number ("-" is
  // the one way to say "never ends").
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size() && std::isfinite(*v);
}

}  // namespace

Status ParseJobTrace(std::string_view text, const std::string& source, std::vector<TraceJob>* out) {
  std::istringstream in{std::string(text)};
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const std::string where = source + ":" + std::to_string(line_no) + ": ";
    if (const size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string word; words >> word;) w.push_back(word);
    if (w.empty()) continue;
    if (w.size() < 4 || w.size() > 7) {
      return Status::Corruption(where +
                                "expected <start_s> <end_s> <job_id> <host_list> "
                                "[<partition> [<time_limit_min> [<admin_comment>]]]");
    }
    TraceJob t;
    if (!ParseSeconds(w[0], &t.start_s) || w[0] == "-") {
      return Status::Corruption(where + "bad start time '" + w[0] + "'");
    }
    if (!ParseSeconds(w[1], &t.end_s) || t.end_s < t.start_s) {
      return Status::Corruption(where + "bad end time '" + w[1] + "'");
    }
    t.job.id = w[2];
    Status s = ExpandHostlist(w[3], &t.job.hosts);
    if (!s.ok()) return Status::Corruption(where + s.message());
    if (w.size() >= 5) t.job.partition = w[4];
    if (w.size() >= 6) {
      auto [p, ec] = std::from_chars(w[5].data(), w[5].data() + w[5].size(), t.job.time_limit_min);
      if (ec != std::errc() || p != w[5].data() + w[5].size()) {
        return Status::Corruption(where + "bad time limit '" + w[5] + "'");
      }
    }
    if (w.size() == 7) t.job.pattern = PatternFromAdminComment(w[6]);
    out->push_back(std::move(t));
  }
  return Status::OK();
}

Status ReplaySource::Open(const std::string& path, std::function<double()> clock,
                          std::unique_ptr<JobSource>* out) {
  std::string text;
  SAR_RETURN_IF_ERROR(ReadFileToString(path, &text));
  std::vector<TraceJob> trace;
  SAR_RETURN_IF_ERROR(ParseJobTrace(text, path, &trace));
  *out = std::make_unique<ReplaySource>(std::move(trace), std::move(clock));
  return Status::OK();
}

Status ReplaySource::Poll(std::vector<SourceJob>* out) {
  out->clear();
  const double now = clock_();
  for (const TraceJob& t : trace_) {
    if (t.start_s <= now && now < t.end_s) out->push_back(t.job);
  }
  return Status::OK();
}

}  // namespace sar::filterd
