// sar-route fors-schedule: one rank's view of its job's FORS schedule (docs/fors.md): per phase
// whom it sends to (and the destination LID to use) and whom it receives from.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "cli_common.h"
#include "sar/fors/fors_job.h"

namespace sarcli {
namespace {

struct ScheduleArgs {
  std::string job;
  std::string mapping;
  std::string schedule;
  std::string host;
  std::string verify_lfts;
  FabricArgs fabric;
};

// Walks every phase of the schedule through tables (e.g. read back from the switches) with
// libsar's CheckForsJobOnTables: every pair once, delivered, no link twice within a phase.
int Verify(const ScheduleArgs& a, const std::string& path, const sar::ForsScheduleFile& file) {
  if (a.fabric.topology.empty()) {
    std::fprintf(stderr, "sar-route fors-schedule: --verify-lfts needs --topology\n");
    return kUsage;
  }
  sar::Fabric fabric;
  std::vector<sar::LftSet> lfts;
  if (const sar::Status s = LoadFabricAndLfts(a.fabric, {a.verify_lfts}, &fabric, &lfts); !s.ok()) {
    return Fail(s);
  }
  std::unordered_map<std::string, sar::PortRef> by_host;
  for (sar::NodeId n : fabric.hcas()) {
    for (int p = 1; p <= fabric.num_ports(n); ++p) {
      if (fabric.peer({n, p}).valid()) {
        by_host.emplace(std::string(fabric.hostname(n)), sar::PortRef{n, p});
        break;
      }
    }
  }
  std::unordered_map<std::string, int> rank;
  std::vector<sar::PortRef> hosts;
  std::vector<std::vector<sar::ForsJobTransfer>> phases;
  for (const sar::ForsScheduleRow& r : file.rows) {
    int ends[2];
    for (int e = 0; e < 2; ++e) {
      const std::string& h = e == 0 ? r.src : r.dst;
      auto it = rank.find(h);
      if (it == rank.end()) {
        const auto port = by_host.find(h);
        if (port == by_host.end()) {
          return Fail(sar::Status::Corruption(path + ": host '" + h + "' is not in the fabric"));
        }
        it = rank.emplace(h, static_cast<int>(hosts.size())).first;
        hosts.push_back(port->second);
      }
      ends[e] = it->second;
    }
    if (fabric.base_lid(hosts[ends[1]]) != r.dlid) {
      std::printf("verify %s: FAILED: phase %lld: dlid %u is not %s's base LID %u\n",
                  a.verify_lfts.c_str(), static_cast<long long>(r.phase), r.dlid, r.dst.c_str(),
                  fabric.base_lid(hosts[ends[1]]));
      return kCheckFailed;
    }
    if (static_cast<size_t>(r.phase) >= phases.size()) phases.resize(r.phase + 1);
    phases[r.phase].push_back({ends[0], ends[1]});
  }
  if (const sar::Status s = sar::CheckForsJobOnTables(fabric, lfts[0], hosts, phases); !s.ok()) {
    std::printf("verify %s: FAILED: %s\n", a.verify_lfts.c_str(), s.message().c_str());
    return kCheckFailed;
  }
  std::printf(
      "verify %s: job %s, %zu hosts, %zu phases (lower bound %lld): every pair once, "
      "every phase conflict-free through these tables\n",
      a.verify_lfts.c_str(), file.job_id.c_str(), hosts.size(), phases.size(),
      static_cast<long long>(file.lower_bound));
  return kOk;
}

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
  if (file.none) {
    // The router's honest answer: this job gets no FORS (its reason), so there is no order to
    // follow; the job's own algorithm is as good as any.
    std::printf("no FORS schedule: %s\n", file.none_reason.c_str());
    return kNoSchedule;
  }
  if (!a.verify_lfts.empty()) return Verify(a, path, file);
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
  c->add_option("--verify-lfts", a->verify_lfts,
                "instead: walk every phase through these tables (LFT dump, e.g. read back from "
                "the switches) on --topology/--lids; exit 1 on a shared link or a missing pair");
  AddFabricOptions(c, &a->fabric, /*topology_required=*/false);
  return [a] { return Run(*a); };
}

}  // namespace sarcli
