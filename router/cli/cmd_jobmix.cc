// sar-route jobmix: a synthetic job mix of a busy machine (see sar/study/job_mix.h) as a job
// mapping file, for compare, eval and the quality benchmark.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "cli_common.h"
#include "sar/io/job_file.h"
#include "sar/model/jobs.h"
#include "sar/study/job_mix.h"

namespace sarcli {
namespace {

struct JobMixArgs {
  FabricArgs fabric;
  sar::JobMixOptions mix;
  std::string out;
  sar::JobHcaPairs hca_pairs = sar::JobHcaPairs::kRails;
};

int RunJobMix(const JobMixArgs& a) {
  sar::Fabric f;
  sar::Status s = LoadFabric(a.fabric, &f);
  if (!s.ok()) return Fail(s);
  sar::JobMapping mapping;
  s = sar::GenerateJobMix(f, a.mix, &mapping);
  if (!s.ok()) return Fail(s);
  s = sar::WriteJobMapping(a.out, mapping);
  if (!s.ok()) return Fail(s);
  size_t hosts = 0;
  int multi = 0;
  for (const sar::Job& j : mapping.jobs) hosts += j.hosts.size();
  for (const sar::ResolvedJob& j : sar::ResolveJobs(f, mapping, nullptr, a.hca_pairs)) {
    multi += j.num_leaf_switches >= 2;
  }
  std::fprintf(stderr, "sar-route: wrote %s: %zu jobs on %zu hosts, %d span two or more leaves\n",
               a.out.c_str(), mapping.jobs.size(), hosts, multi);
  return kOk;
}

}  // namespace

std::function<int()> SetupJobMix(CLI::App* c) {
  auto a = std::make_shared<JobMixArgs>();
  AddFabricOptions(c, &a->fabric);
  c->add_option("--seed", a->mix.seed, "random seed");
  c->add_option("--min-size", a->mix.min_size, "smallest job (hosts)")->check(CLI::PositiveNumber);
  c->add_option("--max-size", a->mix.max_size, "largest job (hosts)")->check(CLI::PositiveNumber);
  c->add_option("--utilization", a->mix.utilization, "share of hosts busy")
      ->check(CLI::Range(0.0, 1.0));
  c->add_option("--departures", a->mix.departures, "share of jobs ending between rounds")
      ->check(CLI::Range(0.0, 1.0));
  c->add_option("--rounds", a->mix.rounds, "arrival/departure rounds (more = more holes)")
      ->check(CLI::PositiveNumber);
  c->add_option("--run-length", a->mix.run_length,
                "fragmented placement: each job in runs of at most N hosts per leaf on random "
                "leaves (0 = SLURM's topology-aware best fit, the default)")
      ->check(CLI::NonNegativeNumber);
  c->add_option("-o,--out", a->out, "job mapping file to write")->required();
  AddJobHcaPairsOption(c, &a->hca_pairs);
  return [a] { return RunJobMix(*a); };
}

}  // namespace sarcli
