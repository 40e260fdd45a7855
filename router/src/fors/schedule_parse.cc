// The FORS schedule file's parser (docs/formats.md, "FORS schedule") and the "none" form's text,
// on their own so that the fuzz target (tests/fuzz/fors_schedule_fuzz.cc) links them without the
// planner and checks that what the parser accepts is written back the same.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sar/fors/fors_job.h"

namespace sar {
namespace {

// Plain decimal digits only (strtoll/strtoul took an empty field, leading blanks, a sign, and
// stopped at a NUL byte inside the line), at most `max`.
bool Digits(std::string_view s, uint64_t max, uint64_t* v) {
  if (s.empty() || s.size() > 19) return false;
  uint64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  if (n > max) return false;
  *v = n;
  return true;
}

}  // namespace

std::string FormatForsNoneFile(const ForsJobNone& none, uint64_t epoch) {
  std::string reason = none.reason.empty() ? std::string("no reason given") : none.reason;
  for (char& c : reason) {
    if (c == '\n' || c == '\r') c = ' ';  // one line: readers take the line as the reason
  }
  std::string out = kForsScheduleMagic;
  out += "\n# job " + none.job_id + " epoch " + std::to_string(epoch) +
         " generation none phases 0 lower_bound 0 hosts " + std::to_string(none.hosts) + "\n";
  out += kForsScheduleNonePrefix + reason + "\n";
  out += kForsScheduleColumns;
  out += '\n';
  return out;
}

Status ParseForsSchedule(std::string_view text, const std::string& source, ForsScheduleFile* out) {
  ForsScheduleFile f;
  size_t pos = 0;
  int line_no = 0;
  bool header = false, columns = false;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string line(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    const std::string where = source + ":" + std::to_string(line_no) + ": ";
    if (line_no == 1) {
      if (line != kForsScheduleMagic) return Status::Corruption(where + "not a sar FORS schedule");
      continue;
    }
    if (line.rfind("# job ", 0) == 0) {
      char job[72], gen[24];
      unsigned long long epoch = 0;
      long long phases = 0, bound = 0, hosts = 0;
      if (std::sscanf(line.c_str(),
                      "# job %71s epoch %llu generation %20s phases %lld lower_bound %lld hosts "
                      "%lld",
                      job, &epoch, gen, &phases, &bound, &hosts) != 6) {
        return Status::Corruption(where + "bad header line");
      }
      f.job_id = job;
      f.epoch = epoch;
      f.none = std::string_view(gen) == "none";
      if (f.none && (phases != 0 || bound != 0)) {
        return Status::Corruption(where + "generation none with phases or a lower bound");
      }
      f.generation = f.none ? 0 : std::strtoull(gen, nullptr, 16);
      f.phases = phases;
      f.lower_bound = bound;
      header = true;
      continue;
    }
    if (line.rfind(kForsScheduleNonePrefix, 0) == 0) {
      if (!header || !f.none || !f.none_reason.empty() || columns) {
        return Status::Corruption(where +
                                  "a '# none:' line belongs after a 'generation none' "
                                  "header, once, before the column line");
      }
      f.none_reason = line.substr(sizeof kForsScheduleNonePrefix - 1);
      if (f.none_reason.empty()) return Status::Corruption(where + "'# none:' without a reason");
      if (f.none_reason.find('\r') != std::string::npos) {
        return Status::Corruption(where + "a carriage return in the reason");
      }
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    if (f.none && columns) {
      return Status::Corruption(where + "a row in a 'generation none' schedule");
    }
    if (!columns) {
      if (line != kForsScheduleColumns) {
        return Status::Corruption(where + "expected '" + kForsScheduleColumns + "'");
      }
      columns = true;
      continue;
    }
    const size_t c1 = line.find(',');
    const size_t c2 = c1 == std::string::npos ? c1 : line.find(',', c1 + 1);
    const size_t c3 = c2 == std::string::npos ? c2 : line.find(',', c2 + 1);
    if (c3 == std::string::npos || line.find(',', c3 + 1) != std::string::npos) {
      return Status::Corruption(where + "expected 'phase,src,dst,dlid'");
    }
    const std::string_view l(line);
    ForsScheduleRow row;
    uint64_t phase = 0, lid = 0;
    if (!Digits(l.substr(0, c1), INT64_MAX, &phase)) {
      return Status::Corruption(where + "bad phase");
    }
    row.phase = static_cast<int64_t>(phase);
    row.src = line.substr(c1 + 1, c2 - c1 - 1);
    row.dst = line.substr(c2 + 1, c3 - c2 - 1);
    if (!Digits(l.substr(c3 + 1), kMaxUnicastLid, &lid) || lid == 0 || row.src.empty() ||
        row.dst.empty()) {
      return Status::Corruption(where + "bad row");
    }
    row.dlid = static_cast<Lid>(lid);
    f.rows.push_back(std::move(row));
  }
  if (!header || !columns) return Status::Corruption(source + ": missing header");
  if (!f.none && !f.none_reason.empty()) {
    return Status::Corruption(source + ": a '# none:' line in a schedule that is not 'none'");
  }
  if (f.none && !f.rows.empty()) {
    return Status::Corruption(source + ": rows in a 'generation none' schedule");
  }
  if (f.none && f.none_reason.empty()) {
    return Status::Corruption(source + ": 'generation none' without a '# none: <reason>' line");
  }
  *out = std::move(f);
  return Status::OK();
}

}  // namespace sar
