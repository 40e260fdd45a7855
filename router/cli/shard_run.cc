#include "shard_run.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>

#include "sar/env.h"
#include "sar/io/file_util.h"

namespace sarcli {
namespace {

using Json = nlohmann::ordered_json;

// The split options themselves: never part of what the shards and the merge run.
const std::set<std::string> kSplitOptions = {"--shard",     "--work-dir",     "--slurm-array",
                                             "--slurm-opt", "--merge-shards", "--help",
                                             "--progress"};

uint64_t Fnv1a(std::string_view data, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : data) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string Hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

std::string Dump(const Json& j) {
  // Error messages in shard results may carry any bytes: replace, never throw.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

sar::Status ReadJson(const std::string& path, size_t max_bytes, Json* out) {
  sar::ReadOptions ro;
  ro.regular_file_only = true;
  ro.max_bytes = max_bytes;
  std::string text;
  SAR_RETURN_IF_ERROR(sar::ReadFileToString(path, ro, &text));
  *out = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (out->is_discarded() || !out->is_object()) {
    return sar::Status::Corruption(path + ": not a JSON object (truncated or not written by " +
                                   "sar-route)");
  }
  return sar::Status::OK();
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string Absolute(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char buf[4096];
  if (getcwd(buf, sizeof buf) == nullptr) return path;
  return path == "." ? std::string(buf) : std::string(buf) + "/" + path;
}

std::string SelfExe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, n) : std::string("sar-route");
}

// Runs sbatch (argv, from PATH; at most a minute) and reads the job id it prints.
sar::Status Sbatch(const std::vector<std::string>& argv, std::string* id) {
  sar::RunRequest request;
  request.argv = argv;
  request.timeout_s = 60;
  request.stderr_to = sar::RunRequest::Stderr::kToStdout;
  const sar::RunResult r = sar::RealEnv()->Run(request);
  if (r.start_errno != 0) {
    return sar::Status::IOError(argv[0] + ": " + strerror(r.start_errno) +
                                (r.start_errno == ENOENT ? " (not on PATH: --slurm-array needs "
                                                           "SLURM's client commands)"
                                                         : ""));
  }
  SAR_RETURN_IF_ERROR(r.status);
  const int code = r.term_signal != 0 ? 128 + r.term_signal : r.exit_code;
  std::string out = r.out;
  size_t digits = 0;
  while (digits < out.size() && out[digits] >= '0' && out[digits] <= '9') ++digits;
  if (code != 0 || digits == 0) {
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return sar::Status::IOError("sbatch failed (exit " + std::to_string(code) + "): " + out);
  }
  *id = out.substr(0, digits);
  return sar::Status::OK();
}

sar::Status WriteScripts(const std::string& dir, const Manifest& m) {
  const std::string exe = ShellQuote(SelfExe());
  std::string args;
  for (const std::string& a : m.argv) args += " " + ShellQuote(a);
  const std::string shard =
      "#!/bin/sh\n# One shard of a split `sar-route " + m.command +
      "` (its manifest.json is beside this file). sbatch --array sets SLURM_ARRAY_TASK_ID;\n"
      "# by hand: SLURM_ARRAY_TASK_ID=K sh " +
      dir + "/shard.sh\ncd " + ShellQuote(m.cwd) + " || exit 1\nexec " + exe + " " + m.command +
      args + " --shard \"$SLURM_ARRAY_TASK_ID/" + std::to_string(m.shards) + "\" --work-dir " +
      ShellQuote(dir) + " --progress off\n";
  const std::string merge =
      "#!/bin/sh\n# Merges the shards into the reports the command asked for.\nexec " + exe +
      " merge " + ShellQuote(dir) + "\n";
  SAR_RETURN_IF_ERROR(sar::WriteFileAtomic(dir + "/shard.sh", shard));
  return sar::WriteFileAtomic(dir + "/merge.sh", merge);
}

}  // namespace

void AddSplitOptions(CLI::App* c, SplitArgs* a) {
  c->add_option("--shard", a->shard,
                "compute only shard K of N (K = 0..N-1, contiguous balanced ranges) into "
                "--work-dir; `sar-route merge DIR` joins the shards");
  c->add_option("--work-dir", a->work_dir,
                "work directory of a split run (manifest, shard results, SLURM scripts; default "
                "with --slurm-array: sar-<command>-<date>-<time>)");
  c->add_option("--slurm-array", a->slurm_array,
                "split into N shards: write the work directory, submit one sbatch --array=0-(N-1) "
                "and a merge job that waits for it (afterok); SLURM_CONF is honoured")
      ->check(CLI::Range(1, 100000));
  c->add_option("--slurm-opt", a->slurm_opts,
                "an sbatch option for the array and merge jobs, repeatable: "
                "--slurm-opt=--partition=batch");
  c->add_option("--merge-shards", a->merge_dir, "(used by `sar-route merge`)")->group("");
}

std::vector<std::string> GivenArguments(const CLI::App* c) {
  std::vector<std::string> out;
  for (const CLI::Option* opt : c->get_options()) {
    if (opt->count() == 0) continue;
    const std::string name = opt->get_name();
    if (name.empty() || name[0] != '-' || kSplitOptions.count(name)) continue;
    if (opt->get_expected_min() == 0) {  // a flag
      out.push_back(name);
      continue;
    }
    for (const std::string& v : opt->results()) out.push_back(name + "=" + v);
  }
  return out;
}

sar::Status InputKey(const std::string& command, const std::vector<std::string>& argv,
                     const std::set<std::string>& ignored, std::string* key) {
  uint64_t h = Fnv1a(command);
  for (const std::string& a : argv) {
    const size_t eq = a.find('=');
    const std::string name = a.substr(0, eq);
    if (ignored.count(name)) continue;
    h = Fnv1a(a + '\0', h);
    if (eq == std::string::npos) continue;
    const std::string value = a.substr(eq + 1);
    struct stat st;
    if (value.empty() || stat(value.c_str(), &st) != 0) continue;  // not a file
    if (!S_ISREG(st.st_mode)) {
      return sar::Status::InvalidArgument(
          name + " " + value +
          ": a split run reads its inputs again in every shard; give a regular file, not a "
          "pipe or device");
    }
    sar::ReadOptions ro;
    ro.regular_file_only = true;
    std::string bytes;
    SAR_RETURN_IF_ERROR(sar::ReadFileToString(value, ro, &bytes));
    h = Fnv1a(bytes, h);
  }
  *key = Hex(h);
  return sar::Status::OK();
}

sar::Status WriteManifest(const std::string& dir, const Manifest& m) {
  Json j = {{"sar_split", 1}, {"command", m.command}, {"shards", m.shards},        {"argv", m.argv},
            {"cwd", m.cwd},   {"key", m.key},         {"slurm_opts", m.slurm_opts}};
  return sar::WriteFileAtomic(dir + "/manifest.json", Dump(j));
}

sar::Status ReadManifest(const std::string& dir, Manifest* m) {
  Json j;
  SAR_RETURN_IF_ERROR(ReadJson(dir + "/manifest.json", 16u << 20, &j));
  const std::string path = dir + "/manifest.json";
  try {
    if (j.at("sar_split").get<int>() != 1) {
      return sar::Status::Corruption(path + ": unknown manifest version");
    }
    m->command = j.at("command").get<std::string>();
    m->shards = j.at("shards").get<int>();
    m->argv = j.at("argv").get<std::vector<std::string>>();
    m->cwd = j.at("cwd").get<std::string>();
    m->key = j.at("key").get<std::string>();
    m->slurm_opts = j.at("slurm_opts").get<std::vector<std::string>>();
  } catch (const Json::exception& e) {
    return sar::Status::Corruption(path + ": " + e.what());
  }
  if ((m->command != "replay" && m->command != "study") || m->shards < 1) {
    return sar::Status::Corruption(path + ": not a manifest of a split replay or study");
  }
  return sar::Status::OK();
}

std::string ShardPath(const std::string& dir, int k) {
  return dir + "/shard-" + std::to_string(k) + ".json";
}

sar::Status WriteShard(const std::string& dir, const Manifest& m, int k, Json payload) {
  payload["key"] = m.key;
  payload["shard"] = k;
  payload["shards"] = m.shards;
  return sar::WriteFileAtomic(ShardPath(dir, k), Dump(payload));
}

std::vector<int> MissingShards(const std::string& dir, const Manifest& m) {
  std::vector<int> missing;
  for (int k = 0; k < m.shards; ++k) {
    Json j;
    if (!ReadJson(ShardPath(dir, k), size_t{8} << 30, &j).ok() || j.value("key", "") != m.key ||
        j.value("shard", -1) != k || j.value("shards", 0) != m.shards) {
      missing.push_back(k);
    }
  }
  return missing;
}

sar::Status ReadShards(const std::string& dir, const Manifest& m, std::vector<Json>* shards) {
  shards->assign(m.shards, Json());
  std::string missing;
  for (int k = 0; k < m.shards; ++k) {
    struct stat st;
    if (stat(ShardPath(dir, k).c_str(), &st) != 0) {
      missing += (missing.empty() ? "" : ", ") + std::to_string(k);
      continue;
    }
    SAR_RETURN_IF_ERROR(ReadJson(ShardPath(dir, k), size_t{8} << 30, &(*shards)[k]));
    const Json& j = (*shards)[k];
    if (j.value("key", "") != m.key || j.value("shards", 0) != m.shards ||
        j.value("shard", -1) != k) {
      return sar::Status::InvalidArgument(
          ShardPath(dir, k) + ": a shard of other inputs or options (key " + j.value("key", "?") +
          ", shard " + std::to_string(j.value("shard", -1)) + "/" +
          std::to_string(j.value("shards", 0)) + "; the manifest says key " + m.key + ", " +
          std::to_string(m.shards) + " shards)");
    }
  }
  if (!missing.empty()) {
    return sar::Status::NotFound(dir + ": shards " + missing + " of " + std::to_string(m.shards) +
                                 " have no result yet (still running, failed or cancelled: "
                                 "`sar-route merge --resume " +
                                 dir + "` resubmits them)");
  }
  return sar::Status::OK();
}

sar::Status ParseShard(SplitArgs* a) {
  int k = -1, n = 0, used = 0;
  if (std::sscanf(a->shard.c_str(), "%d/%d%n", &k, &n, &used) != 2 ||
      used != static_cast<int>(a->shard.size()) || n < 1 || k < 0 || k >= n) {
    return sar::Status::InvalidArgument("--shard " + a->shard +
                                        ": give K/N with 0 <= K < N (e.g. --shard 2/8)");
  }
  if (a->work_dir.empty()) {
    return sar::Status::InvalidArgument("--shard needs --work-dir (where the shard's rows go)");
  }
  a->shard_index = k;
  a->shard_count = n;
  return sar::Status::OK();
}

sar::Status PrepareSplit(const std::string& command, const CLI::App* c, SplitArgs* a,
                         const std::set<std::string>& ignored, Manifest* m) {
  const int modes = !a->merge_dir.empty() + !a->shard.empty() + (a->slurm_array > 0);
  if (modes > 1) {
    return sar::Status::InvalidArgument("give at most one of --shard, --slurm-array");
  }
  if (modes == 0 && !a->work_dir.empty()) {
    return sar::Status::InvalidArgument("--work-dir goes with --shard or --slurm-array");
  }
  if (a->slurm_array == 0 && !a->slurm_opts.empty()) {
    return sar::Status::InvalidArgument("--slurm-opt goes with --slurm-array");
  }
  if (modes == 0) return sar::Status::OK();
  m->command = command;
  m->argv = GivenArguments(c);
  m->cwd = Absolute(".");
  m->slurm_opts = a->slurm_opts;
  SAR_RETURN_IF_ERROR(InputKey(command, m->argv, ignored, &m->key));
  if (!a->merge_dir.empty()) {
    Manifest stored;
    SAR_RETURN_IF_ERROR(ReadManifest(a->merge_dir, &stored));
    if (stored.key != m->key) {
      return sar::Status::InvalidArgument(
          a->merge_dir + "/manifest.json: the inputs or options changed since the split (key " +
          stored.key + ", now " + m->key + "): the shards would not add up to this run");
    }
    *m = stored;
    return sar::Status::OK();
  }
  if (a->slurm_array > 0) {
    m->shards = a->slurm_array;
    return sar::Status::OK();  // StartSlurmArray submits once the inputs have been read
  }
  SAR_RETURN_IF_ERROR(ParseShard(a));
  m->shards = a->shard_count;
  if (mkdir(a->work_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return sar::Status::IOError(a->work_dir + ": " + strerror(errno));
  }
  Manifest stored;
  struct stat st;
  if (stat((a->work_dir + "/manifest.json").c_str(), &st) != 0) {
    return WriteManifest(a->work_dir, *m);  // a split by hand: the first shard writes it
  }
  SAR_RETURN_IF_ERROR(ReadManifest(a->work_dir, &stored));
  if (stored.key != m->key || stored.shards != m->shards || stored.command != command) {
    return sar::Status::InvalidArgument(
        a->work_dir + "/manifest.json is of another split (" + stored.command + ", " +
        std::to_string(stored.shards) + " shards, key " + stored.key + "; this shard: " + command +
        ", " + std::to_string(m->shards) + " shards, key " + m->key + ")");
  }
  m->slurm_opts = stored.slurm_opts;
  m->cwd = stored.cwd;
  return sar::Status::OK();
}

sar::Status StartSlurmArray(const std::string& command, const SplitArgs& args, const Manifest& m) {
  std::string dir = args.work_dir;
  if (dir.empty()) {
    char stamp[32];
    const time_t now = time(nullptr);
    struct tm tm;
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", localtime_r(&now, &tm));
    dir = "sar-" + command + "-" + stamp;
  }
  dir = Absolute(dir);
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return sar::Status::IOError(dir + ": " + strerror(errno));
  }
  struct stat st;
  if (stat((dir + "/manifest.json").c_str(), &st) == 0) {
    return sar::Status::InvalidArgument(dir + " already holds a split run; `sar-route merge " +
                                        "--resume " + dir + "` resubmits its missing shards");
  }
  SAR_RETURN_IF_ERROR(WriteManifest(dir, m));
  SAR_RETURN_IF_ERROR(WriteScripts(dir, m));
  std::vector<int> all;
  for (int k = 0; k < m.shards; ++k) all.push_back(k);
  SAR_RETURN_IF_ERROR(SubmitToSlurm(dir, m, all, {}));
  return sar::Status::OK();
}

sar::Status SubmitToSlurm(const std::string& dir, const Manifest& m, const std::vector<int>& tasks,
                          const std::vector<std::string>& extra) {
  std::vector<std::string> opts = m.slurm_opts;
  opts.insert(opts.end(), extra.begin(), extra.end());
  std::string array_id;
  if (!tasks.empty()) {
    std::string spec;
    if (static_cast<int>(tasks.size()) == m.shards) {
      spec = "0-" + std::to_string(m.shards - 1);
    } else {
      for (int k : tasks) spec += (spec.empty() ? "" : ",") + std::to_string(k);
    }
    std::vector<std::string> argv = {"sbatch", "--parsable", "--array=" + spec,
                                     "--job-name=sar-" + m.command,
                                     "--output=" + dir + "/shard-%a.out"};
    argv.insert(argv.end(), opts.begin(), opts.end());
    argv.push_back(dir + "/shard.sh");
    SAR_RETURN_IF_ERROR(Sbatch(argv, &array_id));
    std::printf("submitted shards %s of %d as array job %s\n", spec.c_str(), m.shards,
                array_id.c_str());
  }
  std::vector<std::string> argv = {"sbatch", "--parsable", "--job-name=sar-merge",
                                   "--output=" + dir + "/merge.out"};
  if (!array_id.empty()) argv.push_back("--dependency=afterok:" + array_id);
  argv.insert(argv.end(), opts.begin(), opts.end());
  argv.push_back(dir + "/merge.sh");
  std::string merge_id;
  SAR_RETURN_IF_ERROR(Sbatch(argv, &merge_id));
  std::printf("submitted the merge as job %s\nwork directory %s\n", merge_id.c_str(), dir.c_str());
  std::fflush(stdout);
  return sar::Status::OK();
}

}  // namespace sarcli
