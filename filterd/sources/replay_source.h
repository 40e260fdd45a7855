// A job trace replayed against a clock, for tests, demos and what-if runs. One job per line:
//   <start_s> <end_s> <job_id> <host_list> [<partition> [<time_limit_min> [<admin_comment>]]]
// Times are seconds on the replay clock; a job holds its nodes for start <= t < end; end "-"
// means never ends. '#' starts a comment. The host list is SLURM syntax (hostlist.h). The admin
// comment is one word, read as SLURM's (admin_comment.h: "sar-pattern=alltoall").
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "sources/job_source.h"

namespace sar::filterd {

struct TraceJob {
  double start_s = 0;
  double end_s = 0;  // +infinity when the trace says "-"
  SourceJob job;
};

/// Errors carry "source:line:".
Status ParseJobTrace(std::string_view text, const std::string& source, std::vector<TraceJob>* out);

class ReplaySource : public JobSource {
 public:
  /// `clock` returns the current replay time in seconds.
  ReplaySource(std::vector<TraceJob> trace, std::function<double()> clock)
      : trace_(std::move(trace)), clock_(std::move(clock)) {}
  static Status Open(const std::string& path, std::function<double()> clock,
                     std::unique_ptr<JobSource>* out);

  const char* name() const override { return "replay"; }
  Status Poll(std::vector<SourceJob>* out) override;

 private:
  std::vector<TraceJob> trace_;
  std::function<double()> clock_;
};

}  // namespace sar::filterd
