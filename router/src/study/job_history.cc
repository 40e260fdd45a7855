#include "sar/study/job_history.h"

#include <charconv>
#include <cmath>
#include <ctime>
#include <limits>
#include <string>
#include <vector>

#include "io/text_util.h"
#include "sar/io/admin_comment.h"
#include "sar/io/file_util.h"
#include "sar/io/hostlist.h"

namespace sar {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// Calls f(line_no, line) for every line; stops at the first error f returns.
template <class F>
Status ForEachLine(std::string_view text, F&& f) {
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = end + 1;
    SAR_RETURN_IF_ERROR(f(++line_no, line));
  }
  return Status::OK();
}

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> w;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) w.push_back(line.substr(start, i - start));
  }
  return w;
}

std::vector<std::string_view> Split(std::string_view line, char sep) {
  std::vector<std::string_view> f;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == sep) {
      f.push_back(line.substr(start, i - start));
      start = i + 1;
    }
  }
  return f;
}

// A finite number; "-" (never) when allow_never.
bool ParseSeconds(std::string_view s, bool allow_never, double* v) {
  if (s == "-") {
    *v = kNever;
    return allow_never;
  }
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size() && std::isfinite(*v);
}

bool ParseInt(std::string_view s, int64_t* v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

std::string Where(const std::string& source, int line) {
  return source + ":" + std::to_string(line) + ": ";
}

// sacct's "2024-03-01T10:00:00" as seconds (UTC; only differences matter to a replay). Exactly
// that shape, digits only, and a real calendar time: timegm would turn 2026-13-45T99:99:99 into
// some day of 2027 without a word (issue 34).
bool ParseSlurmTime(std::string_view s, double* v) {
  static constexpr char kShape[] = "dddd-dd-ddTdd:dd:dd";
  if (s.size() != sizeof kShape - 1) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool digit = s[i] >= '0' && s[i] <= '9';
    if (kShape[i] == 'd' ? !digit : s[i] != kShape[i]) return false;
  }
  auto num = [&](size_t pos, size_t len) {
    int n = 0;
    for (size_t i = pos; i < pos + len; ++i) n = n * 10 + (s[i] - '0');
    return n;
  };
  const int year = num(0, 4), month = num(5, 2), day = num(8, 2);
  const int hour = num(11, 2), minute = num(14, 2), second = num(17, 2);
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (year < 1970 || month < 1 || month > 12 || day < 1 ||
      day > kDays[month - 1] + (month == 2 && leap) || hour > 23 || minute > 59 || second > 59) {
    return false;
  }
  std::tm tm{};
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  *v = static_cast<double>(timegm(&tm));
  return true;
}

// sacct's words for a time that did not happen (not started, not ended).
bool NoSlurmTime(std::string_view s) { return s == "Unknown" || s == "None"; }

constexpr char kSlurmTimeShape[] = " (expected YYYY-MM-DDTHH:MM:SS, a real UTC time)";

}  // namespace

Status ParseJobTrace(std::string_view text, const std::string& source, JobHistory* out) {
  return ForEachLine(text, [&](int line_no, std::string_view line) -> Status {
    if (const size_t hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);
    const std::vector<std::string_view> w = Words(line);
    if (w.empty()) return Status::OK();
    const std::string where = Where(source, line_no);
    if (w.size() < 4 || w.size() > 7) {
      return Status::Corruption(where +
                                "expected <start_s> <end_s> <job_id> <host_list> "
                                "[<partition> [<time_limit_min> [<admin_comment>]]]");
    }
    HistoryJob j;
    if (!ParseSeconds(w[0], false, &j.start_s)) {
      return Status::Corruption(where + "bad start time " + io::Quote(w[0]));
    }
    if (!ParseSeconds(w[1], true, &j.end_s) || j.end_s < j.start_s) {
      return Status::Corruption(where + "bad end time " + io::Quote(w[1]));
    }
    j.id = std::string(w[2]);
    const Status s = ExpandHostlist(w[3], &j.hosts);
    if (!s.ok()) return Status::Corruption(where + s.message());
    j.size = static_cast<int>(j.hosts.size());
    if (w.size() >= 5) j.partition = std::string(w[4]);
    if (w.size() >= 6 && !ParseInt(w[5], &j.time_limit_min)) {
      return Status::Corruption(where + "bad time limit " + io::Quote(w[5]));
    }
    if (w.size() == 7) j.pattern = PatternFromAdminComment(w[6]);
    out->jobs.push_back(std::move(j));
    return Status::OK();
  });
}

Status ParseSacct(std::string_view text, const std::string& source, JobHistory* out) {
  int id_f = -1, start_f = -1, end_f = -1, nodes_f = -1, comment_f = -1, part_f = -1;
  size_t num_fields = 0;
  return ForEachLine(text, [&](int line_no, std::string_view line) -> Status {
    if (line.empty()) return Status::OK();
    const std::vector<std::string_view> f = Split(line, '|');
    const std::string where = Where(source, line_no);
    if (id_f < 0) {  // the header
      num_fields = f.size();
      for (size_t i = 0; i < f.size(); ++i) {
        const int k = static_cast<int>(i);
        if (f[i] == "JobID") id_f = k;
        if (f[i] == "Start") start_f = k;
        if (f[i] == "End") end_f = k;
        if (f[i] == "NodeList") nodes_f = k;
        if (f[i] == "AdminComment") comment_f = k;
        if (f[i] == "Partition") part_f = k;
      }
      if (id_f < 0 || start_f < 0 || end_f < 0 || nodes_f < 0) {
        return Status::Corruption(where +
                                  "expected a sacct --parsable2 header naming JobID, Start, End "
                                  "and NodeList (sacct -P -o JobID,Start,End,NodeList)");
      }
      return Status::OK();
    }
    if (f.size() != num_fields) {
      return io::ExpectedAt(source, line_no, std::to_string(num_fields) + " '|'-separated fields",
                            line);
    }
    if (f[id_f].find('.') != std::string_view::npos) return Status::OK();  // a job step
    HistoryJob j;
    j.id = std::string(f[id_f]);
    // Pending, cancelled before start: "Unknown" / "None" start, or no nodes.
    if (NoSlurmTime(f[start_f]) || f[nodes_f].empty() || f[nodes_f] == "None assigned") {
      ++out->skipped;
      return Status::OK();
    }
    if (!ParseSlurmTime(f[start_f], &j.start_s)) {
      return Status::Corruption(where + "bad Start " + io::Quote(f[start_f]) + kSlurmTimeShape);
    }
    if (NoSlurmTime(f[end_f])) {
      j.end_s = kNever;  // still running
    } else if (!ParseSlurmTime(f[end_f], &j.end_s)) {
      return Status::Corruption(where + "bad End " + io::Quote(f[end_f]) + kSlurmTimeShape);
    } else if (j.end_s < j.start_s) {
      return Status::Corruption(where + "End " + io::Quote(f[end_f]) + " before Start " +
                                io::Quote(f[start_f]));
    }
    const Status s = ExpandHostlist(f[nodes_f], &j.hosts);
    if (!s.ok()) return Status::Corruption(where + s.message());
    j.size = static_cast<int>(j.hosts.size());
    if (part_f >= 0) j.partition = std::string(f[part_f]);
    if (comment_f >= 0) j.pattern = PatternFromAdminComment(f[comment_f]);
    out->jobs.push_back(std::move(j));
    return Status::OK();
  });
}

Status ParseSwf(std::string_view text, const std::string& source, JobHistory* out) {
  int max_procs = 0;
  return ForEachLine(text, [&](int line_no, std::string_view line) -> Status {
    const std::string where = Where(source, line_no);
    if (!line.empty() && line[0] == ';') {
      const std::vector<std::string_view> w = Words(line.substr(1));
      int64_t v = 0;
      if (w.size() == 2 && ParseInt(w[1], &v) && v > 0 && v < (1 << 30)) {
        if (w[0] == "MaxNodes:") out->machine_nodes = static_cast<int>(v);
        if (w[0] == "MaxProcs:") max_procs = static_cast<int>(v);
        if (out->machine_nodes == 0) out->machine_nodes = max_procs;
      }
      return Status::OK();
    }
    const std::vector<std::string_view> w = Words(line);
    if (w.empty()) return Status::OK();
    if (w.size() < 8) {
      return io::ExpectedAt(source, line_no, "an SWF record (18 numbers)", line);
    }
    int64_t v[8];
    for (int i = 0; i < 8; ++i) {
      double d = 0;
      if (!ParseSeconds(w[i], false, &d)) {
        return io::ExpectedAt(source, line_no, "a number in field " + std::to_string(i + 1), w[i]);
      }
      v[i] = static_cast<int64_t>(d);
    }
    const int64_t size = v[4] > 0 ? v[4] : v[7];
    if (v[3] < 0 || v[2] < 0 || size < 1 || size > (1 << 30)) {
      ++out->skipped;
      return Status::OK();
    }
    HistoryJob j;
    j.id = std::string(w[0]);
    j.start_s = static_cast<double>(v[1] + v[2]);
    j.end_s = j.start_s + static_cast<double>(v[3]);
    j.size = static_cast<int>(size);
    out->jobs.push_back(std::move(j));
    return Status::OK();
  });
}

bool ParseHistoryFormat(std::string_view name, HistoryFormat* out) {
  if (name == "trace")
    *out = HistoryFormat::kTrace;
  else if (name == "sacct")
    *out = HistoryFormat::kSacct;
  else if (name == "swf")
    *out = HistoryFormat::kSwf;
  else
    return false;
  return true;
}

Status ReadJobHistory(const std::string& path, HistoryFormat format, JobHistory* out) {
  std::string text;
  SAR_RETURN_IF_ERROR(ReadFileToString(path, &text));
  switch (format) {
    case HistoryFormat::kTrace:
      return ParseJobTrace(text, path, out);
    case HistoryFormat::kSacct:
      return ParseSacct(text, path, out);
    case HistoryFormat::kSwf:
      return ParseSwf(text, path, out);
  }
  return Status::InvalidArgument("unknown history format");
}

}  // namespace sar
