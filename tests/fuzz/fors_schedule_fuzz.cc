// Fuzzes the FORS schedule reader (sar-route fors-schedule; the OpenSM plugin's look at the old
// schedule before it rewrites one): accepted rows keep their invariants, and an accepted schedule
// written back reads back the same.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sar/fors/fors_job.h"

namespace {

std::string Write(const sar::ForsScheduleFile& f) {
  if (f.none) {  // the "none" form (docs/formats.md), as sar::FormatForsNoneFile writes it
    return sar::FormatForsNoneFile({f.job_id, f.none_reason, 0}, f.epoch);
  }
  char gen[24];
  std::snprintf(gen, sizeof gen, "%016" PRIx64, f.generation);
  std::string out = std::string(sar::kForsScheduleMagic) + "\n# job " + f.job_id + " epoch " +
                    std::to_string(f.epoch) + " generation " + gen + " phases " +
                    std::to_string(f.phases) + " lower_bound " + std::to_string(f.lower_bound) +
                    " hosts 0\n" + sar::kForsScheduleColumns + "\n";
  for (const sar::ForsScheduleRow& r : f.rows) {
    out +=
        std::to_string(r.phase) + "," + r.src + "," + r.dst + "," + std::to_string(r.dlid) + "\n";
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sar::ForsScheduleFile f;
  if (!sar::ParseForsSchedule(text, "fuzz", &f).ok()) return 0;
  // "none" only whole: no rows, no phases, a reason of one line.
  if (f.none && (!f.rows.empty() || f.phases != 0 || f.lower_bound != 0 || f.none_reason.empty() ||
                 f.none_reason.find('\n') != std::string::npos)) {
    std::abort();
  }
  if (!f.none && !f.none_reason.empty()) std::abort();
  for (const sar::ForsScheduleRow& r : f.rows) {
    if (r.phase < 0 || r.dlid == 0 || r.dlid > sar::kMaxUnicastLid) std::abort();
    if (r.src.empty() || r.dst.empty()) std::abort();
    if ((r.src + r.dst).find_first_of(",\n") != std::string::npos) std::abort();
  }
  sar::ForsScheduleFile back;
  if (!sar::ParseForsSchedule(Write(f), "written", &back).ok()) std::abort();
  if (back.job_id != f.job_id || back.epoch != f.epoch || back.generation != f.generation ||
      back.phases != f.phases || back.lower_bound != f.lower_bound ||
      back.rows.size() != f.rows.size() || back.none != f.none ||
      back.none_reason != f.none_reason) {
    std::abort();
  }
  for (size_t i = 0; i < f.rows.size(); ++i) {
    const sar::ForsScheduleRow &a = f.rows[i], &b = back.rows[i];
    if (a.phase != b.phase || a.src != b.src || a.dst != b.dst || a.dlid != b.dlid) std::abort();
  }
  return 0;
}
