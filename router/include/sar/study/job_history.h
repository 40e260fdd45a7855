// Job histories for trace replay (sar-route replay): which jobs ran when, on how many or on which
// hosts. Three readers, one result:
//
//   ParseJobTrace  the replay trace sar-filterd also replays (docs/formats.md):
//                  "<start_s> <end_s|-> <job_id> <host_list> [<partition> [<limit_min>
//                  [<admin_comment>]]]"; real host lists.
//   ParseSacct     `sacct --parsable2` output ('|'-separated, a header line naming the fields;
//                  JobID, Start, End and NodeList are needed, AdminComment is read if present);
//                  job steps ("123.batch") are skipped; real host lists.
//   ParseSwf       the Parallel Workloads Archive's Standard Workload Format: sizes only (field
//                  5, allocated processors, else field 8, requested), start = submit + wait,
//                  end = start + run time; "; MaxNodes:" (else "; MaxProcs:") gives the machine.
//
// Jobs that never ran (no start, run time < 0, size < 1) are skipped and counted. Errors carry
// "source:line: ". Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sar/model/jobs.h"
#include "sar/status.h"

namespace sar {

struct HistoryJob {
  std::string id;
  double start_s = 0;
  double end_s = 0;  // +infinity: never ends
  /// Hosts the job ran on; empty when the history gives sizes only (SWF).
  std::vector<std::string> hosts;
  int size = 0;  // hosts.size() when hosts are given
  std::string partition;
  int64_t time_limit_min = -1;
  JobPattern pattern = JobPattern::kDefault;
};

struct JobHistory {
  std::vector<HistoryJob> jobs;  // in file order
  /// Nodes of the machine the history was recorded on (SWF header), 0 = not stated.
  int machine_nodes = 0;
  int skipped = 0;  // records of jobs that never ran
};

Status ParseJobTrace(std::string_view text, const std::string& source, JobHistory* out);
Status ParseSacct(std::string_view text, const std::string& source, JobHistory* out);
Status ParseSwf(std::string_view text, const std::string& source, JobHistory* out);

enum class HistoryFormat { kTrace, kSacct, kSwf };
/// "trace", "sacct", "swf".
bool ParseHistoryFormat(std::string_view name, HistoryFormat* out);
/// Reads a file (pipes too: `<(zcat x.swf.gz)`) with the reader for `format`.
Status ReadJobHistory(const std::string& path, HistoryFormat format, JobHistory* out);

}  // namespace sar
