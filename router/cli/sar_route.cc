// sar-route: generate fabrics, compute routing tables and judge them.
//
// One table of subcommands (kSubcommands), one file per subcommand (cmd_<name>.cc). Each
// handler parses nothing itself (CLI11 does), loads what it needs through libsar and returns an
// exit code (cli_common.h):
//   0 success, 1 a check failed (invalid routing, tables differ), 2 bad usage,
//   3 malformed input file, 4 I/O or system error.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cli_common.h"
#include "commands.h"

namespace {

using sarcli::Subcommand;

const Subcommand kSubcommands[] = {
    {"gen", "generate a fat-tree topology (ibsim form) and its LIDs", sarcli::SetupGen},
    {"info", "summarise a topology", sarcli::SetupInfo},
    {"eval", "validate routing tables and print their metrics (exit 1 if invalid)",
     sarcli::SetupEval},
    {"convert-lfts", "rewrite any LFT dump in the form OpenSM's file engine loads",
     sarcli::SetupConvertLfts},
    {"diff-lfts", "compare two LFT dumps entry for entry (exit 1 if they differ)",
     sarcli::SetupDiffLfts},
    {"jobmix", "write a synthetic job mix of a busy machine (job mapping file)",
     sarcli::SetupJobMix},
    {"compare", "our engines and OpenSM's real ones on one fabric and job mix, side by side",
     sarcli::SetupCompare},
    {"route", "compute and check routing tables with an engine", sarcli::SetupRoute},
    {"fors", "FORS all-to-all schedule, spine routing and LMC tables for FT(2;M0,M1)",
     sarcli::SetupFors},
    {"replay",
     "replay a job history (SWF, trace, sacct) and reroute at every job change, per engine",
     sarcli::SetupReplay},
    {"study",
     "fail-in-place study: growing seeded cable/switch failures, per engine disconnected pairs, "
     "routability, max-min fair throughput and its regression",
     sarcli::SetupStudy},
    {"fors-schedule", "one host's send/receive order in its alltoall job's FORS schedule",
     sarcli::SetupForsSchedule},
    {"merge",
     "join the shards of a split replay or study (--shard, --slurm-array) into its reports; "
     "--resume resubmits missing shards",
     sarcli::SetupMerge},
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "sar-route: fat-tree generation, routing and routing table checks and metrics for "
      "InfiniBand fabrics.\nExit codes: 0 ok, 1 check failed (invalid routing / tables differ), "
      "2 usage, 3 malformed input file, 4 I/O error."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "sar-route " SAR_VERSION);
  std::vector<std::pair<CLI::App*, std::function<int()>>> registered;
  for (const Subcommand& sc : kSubcommands) {
    CLI::App* cmd = app.add_subcommand(sc.name, sc.help);
    registered.emplace_back(cmd, sc.setup(cmd));
  }
  // CLI11 says only "A subcommand is required" for a misspelt one (and `frobnicate --help`
  // prints the top-level help with exit 0): name the word and the choices instead.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const Subcommand& sc : kSubcommands) {
      known = known || std::strcmp(argv[1], sc.name) == 0;
      names += (names.empty() ? "" : ", ") + std::string(sc.name);
    }
    if (!known) {
      std::fprintf(stderr, "sar-route: unknown subcommand '%s'; subcommands: %s (see --help)\n",
                   argv[1], names.c_str());
      return sarcli::kUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? sarcli::kOk : sarcli::kUsage;
  }
  for (const auto& [cmd, run] : registered) {
    if (cmd->parsed()) return run();
  }
  return sarcli::kUsage;
}
