// sar-route merge DIR: the reports of a split replay or study (shard_run.h). Runs the command the
// manifest stores, in its directory, in merge mode: the shards' rows instead of the computation,
// then the same report writers as an unsplit run. --resume submits the missing shards again.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "shard_run.h"

namespace sarcli {
namespace {

struct MergeArgs {
  std::string dir;
  bool resume = false;
  std::vector<std::string> slurm_opts;
};

int RunMerge(const MergeArgs& a) {
  std::string dir = a.dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir.empty() || dir[0] != '/') {
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd) == nullptr) {
      return Fail(sar::Status::IOError(std::string("getcwd: ") + strerror(errno)));
    }
    dir = std::string(cwd) + "/" + dir;
  }
  Manifest m;
  sar::Status s = ReadManifest(dir, &m);
  if (!s.ok()) return Fail(s);
  if (a.resume) {
    const std::vector<int> missing = MissingShards(dir, m);
    std::printf("%zu of %d shards missing or failed\n", missing.size(), m.shards);
    s = SubmitToSlurm(dir, m, missing, a.slurm_opts);
    return s.ok() ? kOk : Fail(s);
  }
  if (chdir(m.cwd.c_str()) != 0) {
    return Fail(sar::Status::IOError(m.cwd + " (the split run's directory): " + strerror(errno)));
  }
  CLI::App app;
  CLI::App* cmd = app.add_subcommand(m.command);
  const std::function<int()> run = m.command == "replay" ? SetupReplay(cmd) : SetupStudy(cmd);
  std::vector<std::string> args = {m.command};
  args.insert(args.end(), m.argv.begin(), m.argv.end());
  args.push_back("--merge-shards=" + dir);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return Fail(
        sar::Status::Corruption(dir + "/manifest.json: its arguments do not parse: " + e.what()));
  }
  return run();
}

}  // namespace

std::function<int()> SetupMerge(CLI::App* c) {
  auto a = std::make_shared<MergeArgs>();
  c->add_option("dir", a->dir,
                "work directory of a split run (replay/study --slurm-array or --shard)")
      ->required();
  c->add_flag("--resume", a->resume,
              "submit the shards that have no result (failed, cancelled, never run) as a new "
              "array job and a merge job that waits for it, instead of merging now");
  c->add_option("--slurm-opt", a->slurm_opts,
                "with --resume: an extra sbatch option, repeatable (--slurm-opt=--time=10)");
  return [a] { return RunMerge(*a); };
}

}  // namespace sarcli
