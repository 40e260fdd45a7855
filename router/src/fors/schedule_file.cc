// The per-job FORS schedule file (docs/formats.md, "FORS schedule"): written beside the mapping,
// read by the job (sar-route fors-schedule).
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sar/fors/fors_job.h"
#include "sar/io/file_util.h"

namespace sar {
namespace {

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

// The file at `path` holds exactly what format(its own epoch) gives, for job `job_id`.
template <class Format>
bool ScheduleIsCurrent(const std::string& path, const std::string& job_id, const Format& format,
                       size_t new_size, gid_t group);

// Writes format(epoch) unless the file already holds format(its epoch): one rule for FORS
// schedules and "none" files.
template <class Format>
Status WriteScheduleText(const std::string& path, const std::string& job_id, const Format& format,
                         uint64_t epoch, bool* written, gid_t group) {
  *written = false;
  const std::string text = format(epoch);
  if (ScheduleIsCurrent(path, job_id, format, text.size(), group)) {
    return Status::OK();  // same routes, same schedule: the job keeps reading what it has
  }
  // Never the mode of a file someone else put there.
  SAR_RETURN_IF_ERROR(WriteFileAtomic(path, text, JobPlacementFileOptions(group)));
  *written = true;
  return Status::OK();
}

}  // namespace

std::string ForsSchedulePath(const std::string& mapping_path, const std::string& job_id) {
  return mapping_path + ".fors." + job_id;
}

bool ForsJobIdIsFileSafe(const std::string& job_id) {
  if (job_id.empty() || job_id.size() > 64 || job_id[0] == '.') return false;
  for (char c : job_id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string FormatForsScheduleRows(const Fabric& fabric, const ForsJobPlan& plan) {
  std::string out;
  std::vector<std::string> names;
  std::vector<Lid> lids;
  for (const PortRef& h : plan.hosts) {
    names.emplace_back(fabric.hostname(h.node));
    lids.push_back(fabric.base_lid(h));
  }
  for (size_t p = 0; p < plan.phases.size(); ++p) {
    for (const ForsJobTransfer& t : plan.phases[p]) {
      out += std::to_string(p);
      out += ',';
      out += names[t.src];
      out += ',';
      out += names[t.dst];
      out += ',';
      out += std::to_string(lids[t.dst]);
      out += '\n';
    }
  }
  return out;
}

std::string FormatForsScheduleFile(const ForsJobPlan& plan, const std::string& rows,
                                   uint64_t epoch) {
  std::string out = kForsScheduleMagic;
  out += "\n# job " + plan.job_id + " epoch " + std::to_string(epoch) + " generation " +
         Hex(ForsScheduleGenerationOf(plan, rows)) + " phases " +
         std::to_string(plan.stats.phases) + " lower_bound " +
         std::to_string(plan.stats.lower_bound) + " hosts " + std::to_string(plan.hosts.size()) +
         "\n";
  out += kForsScheduleColumns;
  out += '\n';
  out += rows;
  return out;
}

Status WriteForsSchedule(const std::string& path, const ForsJobPlan& plan, const std::string& rows,
                         uint64_t epoch, bool* written, gid_t group) {
  return WriteScheduleText(
      path, plan.job_id, [&](uint64_t e) { return FormatForsScheduleFile(plan, rows, e); }, epoch,
      written, group);
}

Status WriteForsNoneSchedule(const std::string& path, const ForsJobNone& none, uint64_t epoch,
                             bool* written, gid_t group) {
  return WriteScheduleText(
      path, none.job_id, [&](uint64_t e) { return FormatForsNoneFile(none, e); }, epoch, written,
      group);
}

Status RemoveStaleForsSchedules(const std::string& mapping_path,
                                const std::vector<std::string>& keep) {
  const size_t slash = mapping_path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : mapping_path.substr(0, slash);
  const std::string base =
      slash == std::string::npos ? mapping_path : mapping_path.substr(slash + 1);
  const std::string prefix = base + ".fors.";
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    return errno == ENOENT ? Status::OK() : Status::IOError(dir + ": " + std::strerror(errno));
  }
  std::vector<std::string> stale;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string job = name.substr(prefix.size());
    // Leftover temporaries of WriteFileAtomic are "<path>.tmp.XXXXXX": not a job's schedule.
    if (!ForsJobIdIsFileSafe(job) || job.find(".tmp.") != std::string::npos) continue;
    bool kept = false;
    for (const std::string& k : keep) kept = kept || k == job;
    if (!kept) stale.push_back(dir + "/" + name);
  }
  ::closedir(d);
  for (const std::string& path : stale) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
      return Status::IOError(path + ": " + std::strerror(errno));
    }
  }
  return Status::OK();
}

Status PublishForsSchedules(const std::string& mapping_path, const std::vector<ForsJobPlan>& plans,
                            const std::vector<std::string>& rows,
                            const std::vector<ForsJobNone>& none, uint64_t epoch, gid_t group,
                            int* current) {
  *current = 0;
  if (mapping_path.empty()) return Status::OK();
  if (rows.size() != plans.size()) {
    return Status::InvalidArgument("PublishForsSchedules: one rows text per plan");
  }
  std::vector<std::string> keep;
  Status first_error;
  // One job's path that cannot be written (a FIFO put there) does not cost the others theirs.
  auto count = [&](const Status& s) {
    if (s.ok()) {
      ++*current;
    } else if (first_error.ok()) {
      first_error = s;
    }
  };
  for (size_t i = 0; i < plans.size(); ++i) {
    // A job id that cannot name a file gets no schedule (the mapping allows more than files).
    if (!ForsJobIdIsFileSafe(plans[i].job_id)) continue;
    keep.push_back(plans[i].job_id);
    bool written = false;
    count(WriteForsSchedule(ForsSchedulePath(mapping_path, plans[i].job_id), plans[i], rows[i],
                            epoch, &written, group));
  }
  for (const ForsJobNone& n : none) {
    if (!ForsJobIdIsFileSafe(n.job_id)) continue;
    keep.push_back(n.job_id);
    bool written = false;
    count(
        WriteForsNoneSchedule(ForsSchedulePath(mapping_path, n.job_id), n, epoch, &written, group));
  }
  const Status removed = RemoveStaleForsSchedules(mapping_path, keep);
  return first_error.ok() ? removed : first_error;
}

Status AliasForsSchedule(const std::string& mapping_path, const std::string& from_id,
                         const std::string& to_id, gid_t group, bool* written) {
  *written = false;
  if (!ForsJobIdIsFileSafe(from_id) || !ForsJobIdIsFileSafe(to_id)) {
    return Status::InvalidArgument("job ids '" + from_id + "', '" + to_id +
                                   "': not both usable in a file name");
  }
  const std::string from = ForsSchedulePath(mapping_path, from_id);
  std::string text;
  FileInfo info;
  const Status r =
      ReadFileToString(from, UntrustedInputOptions(kMaxForsScheduleBytes), &text, &info);
  if (!r.ok()) {
    struct stat st;
    if (::lstat(from.c_str(), &st) != 0 && errno == ENOENT) {
      return Status::NotFound(from + ": no schedule published for job " + from_id);
    }
    return r;
  }
  if ((info.mode & S_IWOTH) != 0) {
    return Status::IOError("cannot alias '" + from + "': writable by every user");
  }
  ForsScheduleFile parsed;
  SAR_RETURN_IF_ERROR(ParseForsSchedule(text, from, &parsed));
  if (parsed.job_id != from_id) {
    return Status::InvalidArgument(from + ":2: names job " + parsed.job_id + ", not " + from_id);
  }
  // Line 2 starts "# job <id> epoch ": only the id changes.
  const std::string old_head = "# job " + from_id + " epoch ";
  const size_t at = text.find('\n') + 1;
  if (text.compare(at, old_head.size(), old_head) != 0) {
    return Status::InvalidArgument(from + ":2: not '" + old_head + "...'");
  }
  text.replace(at, old_head.size(), "# job " + to_id + " epoch ");
  const auto same = [&](uint64_t) { return text; };
  const std::string to = ForsSchedulePath(mapping_path, to_id);
  if (WriteScheduleText(to, to_id, same, parsed.epoch, written, info.group).ok()) {
    return Status::OK();
  }
  return WriteScheduleText(to, to_id, same, parsed.epoch, written, group);
}

Status ReadForsSchedule(const std::string& path, ForsScheduleFile* out) {
  std::string text;
  FileInfo info;
  SAR_RETURN_IF_ERROR(
      ReadFileToString(path, UntrustedInputOptions(kMaxForsScheduleBytes), &text, &info));
  if ((info.mode & S_IWOTH) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.mode & 07777));
    return Status::IOError("cannot read '" + path + "': mode " + mode +
                           ", writable by every user (refused: anyone could have changed its "
                           "rows)");
  }
  return ParseForsSchedule(text, path, out);
}

namespace {

template <class Format>
bool ScheduleIsCurrent(const std::string& path, const std::string& job_id, const Format& format,
                       size_t new_size, gid_t group) {
  // The OpenSM plugin calls this as root with the SM lock held, on every pass: it must never
  // block or read without end (issue 34: a FIFO here blocked the sweep thread in open(), a link
  // to /dev/zero read for 10 s into unbounded memory). So: a regular file, not a symbolic link,
  // no longer than the file we would write (only the epoch's digits may differ), or it is
  // replaced.
  std::string text;
  FileInfo info;
  if (!ReadFileToString(path, UntrustedInputOptions(new_size + 20), &text, &info).ok()) {
    return false;
  }
  // Ours, with the rights we would give it (so writable by no one else, or someone else may have
  // changed it since; and a changed group or an older file's 0644 is put right).
  if (info.owner != ::geteuid() || (info.mode & 07777) != kJobPlacementFileMode ||
      (group != static_cast<gid_t>(-1) && info.group != group)) {
    return false;
  }
  ForsScheduleFile old;
  if (!ParseForsSchedule(text, path, &old).ok() || old.job_id != job_id) return false;
  // Byte for byte what we would write with its epoch: a matching generation line alone does
  // not prove that the rows below it are ours.
  return text == format(old.epoch);
}

}  // namespace
}  // namespace sar
