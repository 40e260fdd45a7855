// sar-route fors-schedule: one rank's view of its job's FORS schedule (docs/fors.md): per phase
// whom it sends to (and the destination LID to use) and whom it receives from.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "sar/fors_job.h"

namespace sarcli {
namespace {

struct ScheduleArgs {
  std::string job;
  std::string mapping;
  std::string schedule;
  std::string host;
};

int Run(const ScheduleArgs& a) {
  std::string path = a.schedule;
  if (path.empty() && !a.mapping.empty()) path = sar::ForsSchedulePath(a.mapping, a.job);
  if (path.empty()) {
    const char* env = std::getenv("SAR_FORS_SCHEDULE");
    if (env != nullptr) path = env;
  }
  if (path.empty()) {
    std::fprintf(stderr,
                 "sar-route fors-schedule: give --schedule FILE or --mapping FILE (or set "
                 "SAR_FORS_SCHEDULE)\n");
    return kUsage;
  }
  sar::ForsScheduleFile file;
  if (const sar::Status s = sar::ReadForsSchedule(path, &file); !s.ok()) return Fail(s);
  if (file.job_id != a.job) {
    return Fail(
        sar::Status::Corruption(path + ": schedule of job " + file.job_id + ", not of " + a.job));
  }
  std::string host = a.host;
  if (host.empty()) {
    char buf[256] = {};
    if (::gethostname(buf, sizeof buf - 1) != 0) {
      return Fail(sar::Status::IOError("gethostname failed; give --host"));
    }
    host = buf;
    if (const size_t dot = host.find('.'); dot != std::string::npos) host.resize(dot);
  }
  struct Slot {
    std::string to, from;
    sar::Lid dlid = 0;
  };
  std::vector<Slot> slots(static_cast<size_t>(file.phases));
  bool member = false;
  for (const sar::ForsScheduleRow& r : file.rows) {
    if (r.phase >= file.phases) slots.resize(static_cast<size_t>(r.phase) + 1);
    if (r.src == host) {
      slots[r.phase].to = r.dst;
      slots[r.phase].dlid = r.dlid;
      member = true;
    }
    if (r.dst == host) {
      slots[r.phase].from = r.src;
      member = true;
    }
  }
  if (!member) {
    return Fail(sar::Status::InvalidArgument("host '" + host + "' is not in job " + a.job +
                                             "'s schedule " + path));
  }
  std::printf("# job %s epoch %llu generation %016llx: %lld phases (lower bound %lld), host %s\n",
              file.job_id.c_str(), static_cast<unsigned long long>(file.epoch),
              static_cast<unsigned long long>(file.generation),
              static_cast<long long>(slots.size()), static_cast<long long>(file.lower_bound),
              host.c_str());
  std::printf("phase send_to dlid recv_from\n");
  for (size_t p = 0; p < slots.size(); ++p) {
    const Slot& s = slots[p];
    std::printf("%zu %s %s %s\n", p, s.to.empty() ? "-" : s.to.c_str(),
                s.to.empty() ? "-" : std::to_string(s.dlid).c_str(),
                s.from.empty() ? "-" : s.from.c_str());
  }
  return kOk;
}

}  // namespace

std::function<int()> SetupForsSchedule(CLI::App* c) {
  auto a = std::make_shared<ScheduleArgs>();
  c->add_option("--job", a->job, "job id")->required();
  c->add_option("--mapping", a->mapping,
                "the router's job mapping file; the schedule is <mapping>.fors.<job>");
  c->add_option("--schedule", a->schedule,
                "the schedule file itself (default: $SAR_FORS_SCHEDULE, set by sar_pattern.so)");
  c->add_option("--host", a->host, "the rank's host name (default: this host)");
  return [a] { return Run(*a); };
}

}  // namespace sarcli
