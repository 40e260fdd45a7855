// Split runs of `replay` and `study` (issue 39): a work directory holds a manifest (the command,
// its arguments, the hash that ties shards to their inputs), one result file per shard, and the
// scripts a SLURM job array runs. `--shard K/N --work-dir DIR` computes one shard; `merge DIR`
// re-runs the stored command in merge mode, which reads the shards instead of computing and then
// writes the same reports through the same code as an unsplit run.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "sar/status.h"

namespace sarcli {

/// Options every splittable command carries.
struct SplitArgs {
  std::string shard;     // "K/N"
  std::string work_dir;  // where shards and the manifest live
  int slurm_array = 0;   // > 0: submit N array tasks and a merge job
  std::vector<std::string> slurm_opts;
  std::string merge_dir;  // hidden: read the shards of this directory instead of computing
  int shard_index = -1, shard_count = 0;  // parsed from `shard`
};
void AddSplitOptions(CLI::App* cmd, SplitArgs* args);

/// The options of `cmd` as given, as an argument list that parses to the same values (without
/// the split options and --progress): what the shards and the merge run.
std::vector<std::string> GivenArguments(const CLI::App* cmd);

/// What ties shards to the inputs: FNV-1a 64 of the command, the arguments that change results
/// (all but `ignored`, e.g. --csv, --threads) and the bytes of every argument that names a file.
/// Arguments naming something that is not a regular file (a pipe) are refused: a shard could
/// not read them again.
sar::Status InputKey(const std::string& command, const std::vector<std::string>& argv,
                     const std::set<std::string>& ignored, std::string* key);

struct Manifest {
  std::string command;  // "replay" or "study"
  int shards = 0;
  std::vector<std::string> argv;  // GivenArguments
  std::string cwd;                // relative paths in argv are relative to it
  std::string key;                // InputKey
  std::vector<std::string> slurm_opts;
};
sar::Status WriteManifest(const std::string& dir, const Manifest& m);
sar::Status ReadManifest(const std::string& dir, Manifest* m);

/// Shard k's result file in `dir`.
std::string ShardPath(const std::string& dir, int k);
/// Writes shard k's result (the payload gets "key", "shard", "shards").
sar::Status WriteShard(const std::string& dir, const Manifest& m, int k,
                       nlohmann::ordered_json payload);
/// Reads every shard's result; NotFound naming the missing ones, InvalidArgument for a shard of
/// other inputs or another split.
sar::Status ReadShards(const std::string& dir, const Manifest& m,
                       std::vector<nlohmann::ordered_json>* shards);
/// The shards without a readable result of this manifest.
std::vector<int> MissingShards(const std::string& dir, const Manifest& m);

/// Parses --shard K/N into args (and checks --work-dir); InvalidArgument when malformed.
sar::Status ParseShard(SplitArgs* args);

/// The split flow of a command before it reads its inputs (so a pipe is refused before it is
/// read): fills *manifest (arguments, key; nothing for a plain run); with --shard checks or
/// writes the work directory's manifest; with the hidden --merge-shards reads it and checks the
/// key.
sar::Status PrepareSplit(const std::string& command, const CLI::App* cmd, SplitArgs* args,
                         const std::set<std::string>& ignored, Manifest* manifest);
/// --slurm-array, once the command has read its inputs without error: writes the work directory
/// (manifest, shard.sh, merge.sh) and submits every shard and the merge.
sar::Status StartSlurmArray(const std::string& command, const SplitArgs& args, const Manifest& m);

/// Submits array tasks `tasks` of the work directory and a merge job that waits for them
/// (afterok); prints the ids and the directory. `extra` sbatch options go after the stored ones.
sar::Status SubmitToSlurm(const std::string& dir, const Manifest& m, const std::vector<int>& tasks,
                          const std::vector<std::string>& extra);

}  // namespace sarcli
