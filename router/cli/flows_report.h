// The per-job max-min fair throughput (sar/analysis/flows.h) as sar-route's commands show it: the
// jobs' traffic (all-to-all, or a published FORS schedule's phases), one JSON shape and one text
// table for eval, compare and replay.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sar/analysis/flows.h"
#include "sar/model/fabric.h"
#include "sar/model/jobs.h"
#include "sar/status.h"

namespace sarcli {

/// All-to-all for every job; with `schedules`, an alltoall job whose published schedule
/// (<mapping_path>.fors.<job>, as the plugin and sar-filterd write it) exists exchanges in its
/// phases. A schedule that cannot be read or does not fit the job is noted in *notes and the job
/// stays all-to-all.
std::vector<sar::FlowJob> FlowJobsFor(const sar::Fabric& fabric,
                                      const std::vector<sar::ResolvedJob>& jobs,
                                      const std::string& mapping_path, bool schedules,
                                      std::vector<std::string>* notes);

/// {"summary": ..., "jobs": [...], "vs_baseline": ...}; vs may be null.
nlohmann::ordered_json FlowsJson(const sar::FlowReport& report, const sar::FlowComparison* vs,
                                 const std::string& baseline);

/// The per-job table and summary lines on stdout.
void PrintFlows(const sar::FlowReport& report, const sar::FlowComparison* vs,
                const std::string& baseline);

/// One line when two figures disagree: `name`'s max effective EFI is at or below the
/// baseline's yet some jobs are slower, or above it yet no job is slower; "" when they agree.
std::string FlowsVersusEfiNote(const std::string& name, uint64_t efi, const std::string& baseline,
                               uint64_t baseline_efi, const sar::FlowComparison& vs);

}  // namespace sarcli
