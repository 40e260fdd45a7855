// Fuzzes the job mapping reader; accepted mappings must survive a write/read round trip.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sar/io/job_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  sar::JobMapping m;
  if (!sar::ParseJobMapping(text, "fuzz", &m).ok()) return 0;
  sar::JobMapping back;
  if (!sar::ParseJobMapping(sar::FormatJobMapping(m), "written", &back).ok()) std::abort();
  if (back.jobs.size() != m.jobs.size()) std::abort();
  for (size_t i = 0; i < m.jobs.size(); ++i) {
    if (back.jobs[i].id != m.jobs[i].id || back.jobs[i].hosts != m.jobs[i].hosts) std::abort();
    if (m.jobs[i].hosts.empty()) std::abort();
  }
  return 0;
}
