#include "sar/io/job_file.h"

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "io/text_util.h"
#include "sar/env.h"
#include "sar/io/file_util.h"

namespace sar {

namespace {

// Host names and job ids end up in logs (OpenSM's is world-readable) and in the plugin's notes,
// so they must be short printable words: an IB node description, whose first word is the host
// name, is 64 bytes, and SLURM job ids ("4711", "4711_3", "4711+1") are far shorter.
constexpr size_t kMaxWord = 64;
bool IsPrintableWord(std::string_view w) {
  if (w.size() > kMaxWord) return false;
  for (char c : w) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x21 || u > 0x7e) return false;
  }
  return true;
}

// Up to 4 whitespace-separated words of `s` into words[]; returns how many (4 = four or more).
// A fixed array, not io::SplitWords's vector: this runs for each of up to a million lines
// under OpenSM's lock.
size_t SplitUpTo4(std::string_view s, std::string_view words[4]) {
  size_t n = 0, i = 0;
  while (n < 4) {
    while (i < s.size() && io::IsSpace(s[i])) ++i;
    if (i == s.size()) break;
    const size_t start = i;
    while (i < s.size() && !io::IsSpace(s[i])) ++i;
    words[n++] = s.substr(start, i - start);
  }
  return n;
}

Status Parse(std::string_view text, const std::string& source, io::Echo echo, JobMapping* out) {
  JobMapping result;
  // Job id (a view into `text`) -> position in result.jobs; lines of one job usually come
  // together, so the last one is checked first.
  std::unordered_map<std::string_view, size_t> job_index;
  std::string_view last_id;
  size_t last_index = SIZE_MAX;
  // The hosts of each job seen so far (views into `text`, which outlives the parse), so that a
  // duplicate costs one hash lookup: one job on 100k lines must not take n^2/2 compares under
  // OpenSM's lock (issue 19 defect 20).
  std::vector<std::unordered_set<std::string_view>> seen;
  io::LineReader lines(text);
  std::string_view line;
  while (lines.Next(&line)) {
    std::string_view words[4];
    const size_t num_words = SplitUpTo4(io::StripComment(line), words);
    if (num_words == 0) continue;
    if (num_words != 2 && num_words != 3) {
      return io::ExpectedAt(source, lines.line_number(), "'<hostname> <jobid> [<pattern>]'",
                            io::Trim(line), echo);
    }
    const std::string_view host = words[0];
    for (int i = 0; i < 2; ++i) {
      if (!IsPrintableWord(words[i])) {
        return io::ExpectedAt(source, lines.line_number(),
                              std::string(i == 0 ? "a host name" : "a job id") +
                                  " of at most 64 printable ASCII characters",
                              words[i], echo);
      }
    }
    const std::string_view job_id = words[1];
    JobPattern pattern = JobPattern::kDefault;
    if (num_words == 3 && !ParseJobPattern(words[2], &pattern)) {
      return io::ExpectedAt(source, lines.line_number(), "pattern 'default' or 'alltoall'",
                            words[2], echo);
    }
    if (last_index == SIZE_MAX || job_id != last_id) {
      auto [it, inserted] = job_index.emplace(job_id, result.jobs.size());
      if (inserted) {
        result.jobs.push_back(Job{std::string(job_id), {}, pattern});
        seen.emplace_back();
      }
      last_id = job_id;
      last_index = it->second;
    }
    Job& job = result.jobs[last_index];
    // A job's pattern is a property of the job, so lines that disagree mean a broken writer.
    if (job.pattern != pattern) {
      return io::ExpectedAt(source, lines.line_number(),
                            std::string("pattern '") + JobPatternName(job.pattern) +
                                "' as on the job's earlier lines",
                            num_words == 3 ? words[2] : std::string_view("no pattern"),
                            num_words == 3 ? echo : io::Echo::kQuote);
    }
    // Hosts keep their first-appearance order; a host listed twice for one job counts once.
    if (seen[last_index].insert(host).second) job.hosts.emplace_back(host);
  }
  *out = std::move(result);
  return Status::OK();
}

}  // namespace

Status ParseJobMapping(std::string_view text, const std::string& source, JobMapping* out) {
  return Parse(text, source, io::Echo::kQuote, out);
}

Status ReadJobMapping(const std::string& path, JobMapping* out, size_t max_bytes) {
  return ReadJobMapping(*RealEnv(), path, out, max_bytes);
}

Status ReadJobMapping(Env& env, const std::string& path, JobMapping* out, size_t max_bytes) {
  std::string text;
  FileInfo info;
  SAR_RETURN_IF_ERROR(env.ReadFileBounded(path, max_bytes, &text, &info));
  return Parse(text, path, info.may_quote() ? io::Echo::kQuote : io::Echo::kHide, out);
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

Status WriteJobMapping(const std::string& path, const JobMapping& mapping, gid_t group) {
  return WriteJobMapping(*RealEnv(), path, mapping, group);
}

Status WriteJobMapping(Env& env, const std::string& path, const JobMapping& mapping, gid_t group) {
  return env.WriteFileAtomic(path, FormatJobMapping(mapping), JobPlacementFileOptions(group));
}

}  // namespace sar
