#include "sources/replay_source.h"

#include "sar/io/file_util.h"
#include "sar/study/job_history.h"

namespace sar::filterd {

// One parser for the trace format: libsar's (sar-route replay reads the same files).
Status ParseJobTrace(std::string_view text, const std::string& source, std::vector<TraceJob>* out) {
  JobHistory history;
  SAR_RETURN_IF_ERROR(sar::ParseJobTrace(text, source, &history));
  for (HistoryJob& h : history.jobs) {
    TraceJob t;
    t.start_s = h.start_s;
    t.end_s = h.end_s;
    t.job.id = std::move(h.id);
    t.job.hosts = std::move(h.hosts);
    t.job.partition = std::move(h.partition);
    t.job.time_limit_min = h.time_limit_min;
    t.job.pattern = h.pattern;
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
