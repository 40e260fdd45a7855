// The FORS schedule file's parser (docs/formats.md, "FORS schedule"), on its own so that the
// fuzz target (tests/fuzz/fors_schedule_fuzz.cc) links it without the planner.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sar/fors_job.h"

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
      f.generation = std::strtoull(gen, nullptr, 16);
      f.phases = phases;
      f.lower_bound = bound;
      header = true;
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
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
  *out = std::move(f);
  return Status::OK();
}

}  // namespace sar
