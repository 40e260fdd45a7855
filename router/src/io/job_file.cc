#include "sar/io/job_file.h"

#include <algorithm>
#include <unordered_map>

#include "io/text_util.h"
#include "sar/io/file_util.h"

namespace sar {

Status ParseJobMapping(std::string_view text, const std::string& source, JobMapping* out) {
  JobMapping result;
  std::unordered_map<std::string, size_t> job_index;  // job id -> position in result.jobs
  io::LineReader lines(text);
  std::string_view line;
  while (lines.Next(&line)) {
    const std::vector<std::string_view> words = io::SplitWords(io::StripComment(line));
    if (words.empty()) continue;
    if (words.size() != 2 && words.size() != 3) {
      return io::ExpectedAt(source, lines.line_number(), "'<hostname> <jobid> [<pattern>]'",
                            io::Trim(line));
    }
    const std::string host(words[0]);
    const std::string job_id(words[1]);
    JobPattern pattern = JobPattern::kDefault;
    if (words.size() == 3 && !ParseJobPattern(words[2], &pattern)) {
      return io::ExpectedAt(source, lines.line_number(), "pattern 'default' or 'alltoall'",
                            words[2]);
    }
    auto [it, inserted] = job_index.emplace(job_id, result.jobs.size());
    if (inserted) result.jobs.push_back(Job{job_id, {}, pattern});
    // A job's pattern is a property of the job, so lines that disagree mean a broken writer.
    if (result.jobs[it->second].pattern != pattern) {
      return io::ExpectedAt(source, lines.line_number(),
                            std::string("pattern '") +
                                JobPatternName(result.jobs[it->second].pattern) +
                                "' as on the job's earlier lines",
                            words.size() == 3 ? words[2] : std::string_view("no pattern"));
    }
    std::vector<std::string>& hosts = result.jobs[it->second].hosts;
    // Jobs are small (hundreds of hosts); a linear scan keeps first-appearance order simply.
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
  }
  *out = std::move(result);
  return Status::OK();
}

Status ReadJobMapping(const std::string& path, JobMapping* out) {
  std::string text;
  SAR_RETURN_IF_ERROR(ReadFileToString(path, &text));
  return ParseJobMapping(text, path, out);
}

std::string FormatJobMapping(const JobMapping& mapping) {
  std::string out = "# <hostname> <jobid> [<pattern>]\n";
  for (const Job& job : mapping.jobs) {
    // The default pattern is left out so files stay readable by older two-column readers.
    const std::string suffix = job.pattern == JobPattern::kDefault
                                   ? "\n"
                                   : std::string(" ") + JobPatternName(job.pattern) + "\n";
    for (const std::string& host : job.hosts) out += host + " " + job.id + suffix;
  }
  return out;
}

Status WriteJobMapping(const std::string& path, const JobMapping& mapping) {
  return WriteFileAtomic(path, FormatJobMapping(mapping));
}

}  // namespace sar
