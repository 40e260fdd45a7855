// Shared pieces of the sar-route subcommands: exit codes, error printing, loading a fabric
// with its LIDs, and the Subcommand table entry every command file provides.
//
// Exit codes: 0 success, 1 a check failed (invalid routing, tables differ), 2 bad usage,
// 3 malformed input file, 4 I/O or system error.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "sar/engines/engine.h"
#include "sar/env.h"
#include "sar/model/fabric.h"
#include "sar/model/jobs.h"
#include "sar/model/lft.h"
#include "sar/pass/routing_pass.h"
#include "sar/status.h"

namespace sarcli {

// kNoSchedule: `fors-schedule` read a "none" schedule (the job has no FORS; it says why).
enum ExitCode {
  kOk = 0,
  kCheckFailed = 1,
  kUsage = 2,
  kBadInput = 3,
  kIoError = 4,
  kNoSchedule = 5
};

int ExitCodeFor(const sar::Status& s);
/// Prints "sar-route: <error>" to stderr and returns its exit code.
int Fail(const sar::Status& s);

// A one-line progress bar with ETA on stderr, redrawn at most five times a second.
class ProgressBar {
 public:
  void Update(size_t done, size_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (done < total && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double frac = total ? static_cast<double>(done) / total : 1;
    const int width = 30, filled = static_cast<int>(frac * width);
    const double eta = done ? elapsed * (total - done) / done : 0;
    std::fprintf(stderr, "\r[%.*s%.*s] %3d%% %zu/%zu  %dm%02ds elapsed, ETA %dm%02ds ", filled,
                 "##############################", width - filled, "..............................",
                 static_cast<int>(100 * frac), done, total, static_cast<int>(elapsed) / 60,
                 static_cast<int>(elapsed) % 60, static_cast<int>(eta) / 60,
                 static_cast<int>(eta) % 60);
    if (done == total) std::fprintf(stderr, "\n");
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_{};
};

// What a long command is doing: one line per step on stderr with the time since it started
// ("sar-route eval: [   12.3 s] per-job flows"), so `route` or `eval` on a 45k-host fabric is
// not silent for half a minute. Off unless StepsWanted says so.
class StepLog {
 public:
  StepLog(const char* command, bool on) : command_(command), on_(on) {}
  void Step(const std::string& what) const;

 private:
  const char* command_;
  bool on_;
  sar::Stopwatch start_;
};

/// --progress auto|on|off (auto: on when stderr is a terminal and the output is not JSON).
void AddProgressOption(CLI::App* cmd, std::string* mode);
bool StepsWanted(const std::string& mode, bool json_output);

struct FabricArgs {
  std::string topology;
  std::string lids;  // guid2lid file
  int lmc = 0;
  bool canonical_order = false;  // renumber nodes as the OpenSM plugin does (fabric_order.h)
};

/// --topology, --lids, --lmc, and the node order. A command that can run without a topology
/// (`route --engine list`) passes topology_required = false and checks it itself. Commands that
/// route (route, compare) pass canonical_default = true: they put nodes in the OpenSM plugin's
/// order unless --file-order is given, so what is measured offline is what the plugin delivers;
/// the others keep file order unless --canonical-order is given.
void AddFabricOptions(CLI::App* cmd, FabricArgs* args, bool topology_required = true,
                      bool canonical_default = false);

/// SAR's knobs (RoutingInput::sar_refine, sar_all_pairs_budget, sar_refine_work).
struct SarKnobs {
  bool refine = true;
  double all_pairs_budget = 1.25;
  uint64_t refine_work = sar::kDefaultSarRefineWork;
  bool no_regret = true;  // RoutingOptions::sar_no_regret
  bool fors_only_where_faster = false;
};
/// --no-sar-refine, --sar-all-pairs-budget, --sar-refine-work, --[no-]sar-no-regret.
void AddSarOptions(CLI::App* cmd, SarKnobs* knobs);

/// The routing flags of the commands that route (route, compare, study, replay, eval
/// --source-lids); each command registers those it offers, bound to these fields.
struct RoutingArgs {
  std::string jobs;  // job mapping file; "" = none
  std::string cn_guids, io_guids;
  std::vector<std::string> roots;
  int vls = 8;
  int threads = 0;
  bool allow_disconnected = false;
  bool migration = false;
  bool hca_pairs_only = false;
  SarKnobs sar;
  sar::JobHcaPairs hca_pairs = sar::JobHcaPairs::kRails;
};
/// The one mapping from the command line to the routing pass's options (sar/pass/routing_pass.h).
sar::RoutingOptions RoutingOptionsFrom(const RoutingArgs& args, const std::string& engine);

/// Reads the topology and settles its LIDs: a guid2lid file wins, then LIDs carried by the
/// topology (live ibnetdiscover output), then the deterministic assignment with args.lmc.
sar::Status LoadFabric(const FabricArgs& args, sar::Fabric* fabric);

/// LoadFabric, then each LFT dump in `lft_paths` into the matching `lfts` entry.
sar::Status LoadFabricAndLfts(const FabricArgs& args, const std::vector<std::string>& lft_paths,
                              sar::Fabric* fabric, std::vector<sar::LftSet>* lfts);

/// --job-hca-pairs rails|all (sar/model/jobs.h JobHcaPairs): which HCA ports of a job's hosts talk.
void AddJobHcaPairsOption(CLI::App* cmd, sar::JobHcaPairs* pairs);

/// Reads the job mapping file at `path` (none if empty) and ties its hosts to the fabric's
/// HCAs; hosts the fabric lacks are noted on stderr once each, not fatal.
sar::Status LoadJobs(const sar::Fabric& fabric, const std::string& path,
                     std::vector<sar::ResolvedJob>* jobs,
                     sar::JobHcaPairs pairs = sar::JobHcaPairs::kRails);

/// A node's description, else its name.
std::string Describe(const sar::Fabric& f, sar::NodeId n);

/// One subcommand. `setup` adds its options to `cmd`, binding them to state it owns, and
/// returns the function main() calls once the command line parsed.
struct Subcommand {
  const char* name;
  const char* help;
  std::function<int()> (*setup)(CLI::App* cmd);
};

}  // namespace sarcli
