// sar-filterd: the filter daemon between SLURM and the subnet manager (docs/filterd.md).
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "actions/action.h"
#include "actions/route_planner.h"
#include "actions/sm_process.h"
#include "config.h"
#include "daemon.h"
#include "leaf_map.h"
#include "log_file.h"
#include "preflight.h"
#include "sar/env.h"
#include "sar/io/guid2lid.h"
#include "sar/io/lft_dump.h"
#include "sar/io/topology.h"
#include "sources/cli_sources.h"
#include "sources/replay_source.h"
#include "sources/timeout_source.h"
#ifdef SAR_HAVE_SLURM
#include "sources/slurm_source.h"
#endif

namespace {

using sar::Status;
using namespace sar::filterd;

constexpr int kExitConfig = 2;

// The topology is read once. With `fabric`, the leaf map comes from it and, when guid2lid is
// set, the same Fabric (moved) becomes the planner's: *fabric is left filled for that.
Status LoadLeaves(const Config& config, LeafMap* leaves, sar::Fabric* fabric) {
  if (!config.topology_conf.empty()) return ReadTopologyConf(config.topology_conf, leaves);
  std::unordered_map<sar::Guid, std::string> name_map;
  if (!config.node_name_map.empty()) {
    SAR_RETURN_IF_ERROR(ReadNodeNameMap(config.node_name_map, &name_map));
  }
  if (!config.subnet_lst.empty()) return ReadSubnetLst(config.subnet_lst, name_map, leaves);
  SAR_RETURN_IF_ERROR(sar::ReadTopology(config.fabric, fabric));
  *leaves = LeafMapFromFabric(*fabric, name_map);
  return Status::OK();
}

// The planner over the already-read fabric: LIDs from guid2lid, else (the dry run) the LIDs a
// live-form topology file carries, as sar-route takes them; the current tables if given.
Status MakePlanner(const Config& config, sar::Fabric fabric, std::unique_ptr<RoutePlanner>* out) {
  if (!config.guid2lid.empty()) {
    std::vector<sar::Guid2LidEntry> lids;
    SAR_RETURN_IF_ERROR(sar::ReadGuid2Lid(config.guid2lid, &lids));
    SAR_RETURN_IF_ERROR(sar::ApplyGuid2Lid(lids, &fabric));
  } else if (Status s = fabric.CheckEndpointLids(); !s.ok()) {
    return Status::InvalidArgument(config.fabric + ": " + s.message() +
                                   " (set guid2lid to OpenSM's guid2lid file)");
  }
  auto planner =
      std::make_unique<RoutePlanner>(std::move(fabric), nullptr, PlannerOptionsFor(config));
  if (!config.current_lfts.empty()) {
    sar::LftSet tables;
    SAR_RETURN_IF_ERROR(sar::ReadLftDump(config.current_lfts, planner->fabric(), &tables));
    SAR_RETURN_IF_ERROR(planner->SetCurrent(std::move(tables)));
  }
  *out = std::move(planner);
  return Status::OK();
}

Status MakeSource(const Config& config, const std::shared_ptr<sar::Env>& env,
                  std::unique_ptr<JobSource>* out) {
  if (config.source == "replay") {
    const double t0 = env->NowMonotonic();
    const double start = config.replay_start_s, speed = config.replay_speed;
    return ReplaySource::Open(
        config.replay_trace,
        [env, t0, start, speed] { return start + speed * (env->NowMonotonic() - t0); }, out);
  }
  if (config.source == "squeue") {
    *out = MakeSqueueSource(config.squeue_path, config.slurm_conf, config.source_timeout_s, env);
    return Status::OK();
  }
  if (config.source == "slurmrestd") {
    *out = MakeSlurmrestdSource(config.slurmrestd_socket, config.slurmrestd_api,
                                config.source_timeout_s);
    return Status::OK();
  }
#ifdef SAR_HAVE_SLURM
  // libslurm has no per-call timeout of its own; put the configured one around it.
  *out =
      std::make_unique<TimeoutSource>(MakeSlurmSource(config.slurm_conf), config.source_timeout_s);
  return Status::OK();
#else
  return Status::InvalidArgument("source 'slurm': this sar-filterd was built without libslurm");
#endif
}

// --check: the preflight items, then one poll of the job source. 0 if all hold, else 1.
int RunCheck(const Config& config, JobSource* source) {
  int failed = 0;
  auto print = [&failed](const std::string& what, const std::string& detail, const Status& s) {
    if (s.ok()) {
      fmt::print("ok   {}: {}\n", what, detail);
    } else {
      fmt::print("FAIL {}: {}\n", what, s.ToString());
      ++failed;
    }
  };
  for (const PreflightItem& item :
       RunPreflight(config, config.verify_sm_process
                                ? RealSmProcessCheck(config.trigger == Trigger::kSignal,
                                                     PluginReadyFile(config.mapping_file))
                                : SmProcessCheck()))
    print(item.what, item.detail, item.status);
  std::vector<SourceJob> jobs;
  const Status polled = source->Poll(&jobs);
  print(std::string("job source ") + source->name(),
        std::to_string(jobs.size()) + " running job(s) in one poll", polled);
  fmt::print("{}\n", failed == 0 ? "sar-filterd --check: all checks passed"
                                 : fmt::format("sar-filterd --check: {} check(s) failed", failed));
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "sar-filterd: tells the subnet manager which jobs span leaf switches (docs/filterd.md).\n"
      "Exit codes: 0 stopped cleanly (or --check passed), 1 a --once cycle or a --check "
      "failed, or another instance runs, "
      "2 usage or configuration error."};
  std::string config_path = SAR_DEFAULT_CONFIG;  // <sysconfdir>/sar/sar-filterd.yaml
  DaemonOptions options;
  std::string log_level;
  app.set_version_flag("--version", "sar-filterd " SAR_VERSION);
  app.add_option("-c,--config", config_path, "YAML configuration file")->capture_default_str();
  app.add_flag("--once", options.once,
               "run one cycle and exit (1 if the poll or the reroute failed)");
  app.add_flag("--dry-run", options.dry_run, "report what a reroute would change; change nothing");
  bool check_only = false;
  app.add_flag("--check", check_only,
               "check what the daemon will need (OpenSM's pid and plugin or console, the socket "
               "group, the metrics address, writable paths, one poll), print each, exit 0 if "
               "all hold and 1 if not; changes nothing");
  app.add_option("--log-level", log_level, "override the config's log_level")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (109 for an unknown option) say nothing to systemd or a script: help and
    // --version are 0, every usage error 2, like a configuration error.
    return app.exit(e) == 0 ? 0 : kExitConfig;
  }

  Config config;
  if (Status s = LoadConfig(config_path, &config); !s.ok()) {
    fmt::print(stderr, "sar-filterd: {}\n", s.ToString());
    return kExitConfig;
  }
  if (!log_level.empty()) config.log_level = log_level;
  if (!config.log_file.empty()) {
    std::shared_ptr<spdlog::logger> file_logger;
    if (Status s = MakeFileLogger("sar-filterd", config.log_file, &file_logger); !s.ok()) {
      fmt::print(stderr, "sar-filterd: {}: {}\n", config_path, s.ToString());
      return kExitConfig;
    }
    spdlog::set_default_logger(file_logger);
  } else {
    spdlog::set_default_logger(MakeStderrLogger("sar-filterd"));
  }
  spdlog::set_level(spdlog::level::from_str(config.log_level));
  spdlog::flush_on(spdlog::level::info);

  LeafMap leaves;
  sar::Fabric fabric;
  if (Status s = LoadLeaves(config, &leaves, &fabric); !s.ok()) {
    // The shipped config names a fabric file that nothing installs: say how to make one.
    const bool missing_fabric = !config.fabric.empty() && config.subnet_lst.empty() &&
                                config.topology_conf.empty() &&
                                access(config.fabric.c_str(), F_OK) != 0;
    spdlog::critical("topology: {}{}", s.ToString(),
                     missing_fabric ? fmt::format(" (make it with `ibnetdiscover > {}`, or set "
                                                  "subnet_lst or topology_conf and fabric: \"\" "
                                                  "in {})",
                                                  config.fabric, config_path)
                                    : "");
    return kExitConfig;
  }
  if (leaves.num_hosts() == 0) {
    spdlog::critical("topology: no host is cabled to a switch; nothing to filter");
    return kExitConfig;
  }
  if (!options.once) {
    // Block the signals the event loop reads from a signalfd before any thread exists (the
    // libslurm worker), so that no thread can take SIGTERM with its default action.
    sigset_t mask;
    sigemptyset(&mask);
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&mask, sig);
    pthread_sigmask(SIG_BLOCK, &mask, nullptr);
  }
  // The one Env of the process: the replay source's clock and the daemon's.
  const std::shared_ptr<sar::Env> env = sar::RealEnv();
  std::unique_ptr<JobSource> source;
  if (Status s = MakeSource(config, env, &source); !s.ok()) {
    spdlog::critical("job source: {}", s.ToString());
    return kExitConfig;
  }
  if (check_only) return RunCheck(config, source.get());
  std::unique_ptr<RoutePlanner> planner;
  // File mode requires guid2lid (config check): OpenSM's own LIDs, not a dump's. The dry run
  // also takes the LIDs of a live-form fabric file (ibnetdiscover's), as sar-route does.
  if (!config.fabric.empty() && (!config.guid2lid.empty() || fabric.max_lid() > 0)) {
    if (Status s = MakePlanner(config, std::move(fabric), &planner); !s.ok()) {
      // File mode cannot work without it; the dry run only loses its metrics.
      if (config.trigger == Trigger::kFile) {
        spdlog::critical("routing data: {}", s.ToString());
        return kExitConfig;
      }
      spdlog::error("routing data: {} (dry-run metrics off)", s.ToString());
    }
  }
  // The one action for the configured trigger (or the dry run), made once.
  std::unique_ptr<Action> action = MakeAction(config, options.dry_run, std::move(planner));
  Daemon daemon(std::move(config), options, std::move(leaves), std::move(source), std::move(action),
                env);
  return daemon.Run();
}
