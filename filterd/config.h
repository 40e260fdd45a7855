// sar-filterd's configuration, read from YAML. Every option is documented, with its default, in
// config/sar-filterd.yaml; this struct mirrors it one to one.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "filter.h"
#include "sar/pass/routing_pass.h"
#include "sar/status.h"

namespace sar::filterd {

/// How the subnet manager is told to reroute (config `trigger`; one Action each, action.h).
enum class Trigger { kSignal, kConsole, kFile, kNone };
/// "signal", "console", "file", "none".
const char* TriggerName(Trigger t);
/// False if `name` is none of TriggerName's.
bool ParseTrigger(const std::string& name, Trigger* out);

struct Config {
  // job_source
  std::string source = "slurm";  // "slurm" (libslurm), "squeue", "slurmrestd" or "replay"
  std::string slurm_conf;        // slurm.conf for libslurm and squeue; empty = $SLURM_CONF
  std::string squeue_path = "squeue";
  std::string slurmrestd_socket;  // UNIX socket of slurmrestd
  std::string slurmrestd_api = "v0.0.38";
  double source_timeout_s = 10;  // give up on a poll after this long (every source)
  std::string replay_trace;      // trace file for source "replay"
  double replay_start_s = 0;     // replay clock at daemon start
  double replay_speed = 1;       // replay seconds per wall second
  int poll_retries = 3;          // extra attempts after a failed poll
  double retry_backoff_s = 0.5;  // first wait between attempts, doubled each time

  // topology: exactly one of fabric / subnet_lst / topology_conf
  std::string fabric;         // ibnetdiscover / ibsim topology file
  std::string subnet_lst;     // OpenSM's opensm-subnet.lst dump
  std::string node_name_map;  // optional, OpenSM node-name-map format (fabric / subnet_lst)
  std::string topology_conf;  // SLURM topology.conf

  FilterOptions filter;

  // timing
  double poll_interval_s = 10;
  double event_coalesce_ms = 200;  // quiet window before a hook-requested poll (burst -> one)
  double settle_s = 0;
  double min_reroute_interval_s = 30;

  // action
  std::string mapping_file = "/var/lib/sar/jobs.map";
  // The mapping is written 0640 (job placement is private) with this group; empty: the daemon's.
  // Resolved when the config is read (an unknown group is an error naming its line).
  std::string mapping_group;
  gid_t mapping_gid = static_cast<gid_t>(-1);
  Trigger trigger = Trigger::kSignal;  // parsed once here; the daemon holds its Action
  // One pid file, or several (a master and standby OpenSMs on this host): each is signalled,
  // a standby ignores the reroute and reads the mapping when it takes over (docs/operations.md).
  std::vector<std::string> opensm_pid_files = {"/run/opensm.pid"};
  // Before a signal: the pid is OpenSM (and, trigger "signal", has libosmsar.so mapped).
  // Test-only switch: false lets a stand-in that is not OpenSM be signalled.
  bool verify_sm_process = true;
  std::string console_host = "127.0.0.1";
  int console_port = 10000;

  // routing with libsar: file mode, and the metrics --dry-run reports (need `fabric`)
  std::string guid2lid;      // the subnet manager's LIDs (OpenSM's guid2lid file)
  std::string current_lfts;  // the tables in use now (dump_lfts / OpenSM's LFT dump)
  std::string lft_file = "/var/lib/sar/lfts.dump";  // file mode: written for OpenSM's file engine
  std::string engine = "sar";
  int num_vls = 8;
  int routing_threads = 0;
  // SAR's knobs, the OpenSM plugin's keys of the same names (sar_refine, sar_all_pairs_budget,
  // sar_refine_work, sar_no_regret, fors_only_where_faster): the setters write them here, and
  // every routing pass of the daemon starts from these options (PlannerOptionsFor), so file mode
  // and the plugin route alike. Only those five fields are read from the file.
  RoutingOptions routing;

  // operations
  std::string state_dir = "/var/lib/sar-filterd";
  std::string control_socket;        // empty = none
  std::string control_socket_group;  // empty: mode 0600; else that group, mode 0660
  std::string metrics_textfile;      // empty = none
  std::string metrics_listen;        // "127.0.0.1:9733": Prometheus endpoint; empty = none
  // The OpenSM plugin's migration status file (osmsar.conf status_file): shown in the status
  // line and the metrics. Empty = none.
  std::string migration_status_file;
  std::string log_level = "info";
  std::string log_file;  // empty = stderr
};

/// Reads and checks `path`. Unknown keys, wrong types and bad values fail with "path:line:".
Status LoadConfig(const std::string& path, Config* out);
/// Every option name ParseConfig accepts, sorted.
std::vector<std::string> ConfigKeys();
/// The same from text (tests).
Status ParseConfig(const std::string& text, const std::string& source, Config* out);

}  // namespace sar::filterd
