#include "config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <functional>
#include <map>

#include "sar/io/file_util.h"
#include "server/metrics_http.h"

namespace sar::filterd {
namespace {

std::string Where(const std::string& source, const YAML::Mark& mark) {
  return source + ":" + std::to_string(mark.line + 1) + ": ";
}

// yaml-cpp reports errors by throwing; this is the one place they are caught and turned into a
// Status, so nothing else in the daemon sees an exception.
template <typename T>
Status Get(const YAML::Node& node, const std::string& key, const std::string& source, T* out) {
  try {
    *out = node.as<T>();
  } catch (const YAML::Exception&) {
    return Status::Corruption(Where(source, node.Mark()) + "bad value for '" + key + "'");
  }
  return Status::OK();
}

// Every number has an upper bound too: a time of 1e300 s (or .inf, .nan) would overflow where
// it is turned into a timeout, and no site means a poll interval of a month.
Status CheckRange(double v, const std::string& key, const std::string& where, bool allow_zero,
                  double max) {
  if (!std::isfinite(v) || v < 0 || (!allow_zero && v == 0) || v > max) {
    return Status::Corruption(where + "'" + key + "' must be " + (allow_zero ? ">= 0" : "> 0") +
                              " and <= " + fmt::format("{:g}", max));
  }
  return Status::OK();
}

constexpr double kDay = 86400;
// Each poll runs squeue (or asks slurmctld or slurmrestd): 1e-9 s meant about 250 squeue runs a
// second against the controller (issue 34). 0.1 s is already ten a second.
constexpr double kMinPollIntervalS = 0.1;

using Setter = std::function<Status(const YAML::Node&, const std::string&)>;

// One setter per option, bound to *out. The single list of option names (ConfigKeys() too).
std::map<std::string, Setter> Setters(Config* out, const std::string& source) {
  Config& c = *out;
  auto str = [&](std::string* f) {
    return Setter(
        [&source, f](const YAML::Node& n, const std::string& k) { return Get(n, k, source, f); });
  };
  auto num = [&](double* f, bool allow_zero, double max) {
    return Setter([&source, f, allow_zero, max](const YAML::Node& n, const std::string& k) {
      SAR_RETURN_IF_ERROR(Get(n, k, source, f));
      return CheckRange(*f, k, Where(source, n.Mark()), allow_zero, max);
    });
  };
  auto integer = [&](auto* f, int64_t max) {
    return Setter([&source, f, max](const YAML::Node& n, const std::string& k) {
      SAR_RETURN_IF_ERROR(Get(n, k, source, f));
      if (*f < 0 || *f > max) {
        return Status::Corruption(Where(source, n.Mark()) + "'" + k + "' must be 0.." +
                                  std::to_string(max));
      }
      return Status::OK();
    });
  };
  auto flag = [&](bool* f) {
    return Setter(
        [&source, f](const YAML::Node& n, const std::string& k) { return Get(n, k, source, f); });
  };
  auto one_of = [&](std::string* f, std::vector<std::string> allowed) {
    return Setter([&source, f, allowed](const YAML::Node& n, const std::string& k) {
      SAR_RETURN_IF_ERROR(Get(n, k, source, f));
      for (const std::string& a : allowed) {
        if (*f == a) return Status::OK();
      }
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return Status::Corruption(Where(source, n.Mark()) + "'" + k + "' must be one of: " + list);
    });
  };
  return {
      {"source", one_of(&c.source, {"slurm", "squeue", "slurmrestd", "replay"})},
      {"slurm_conf", str(&c.slurm_conf)},
      {"squeue_path", str(&c.squeue_path)},
      {"slurmrestd_socket", str(&c.slurmrestd_socket)},
      {"slurmrestd_api", str(&c.slurmrestd_api)},
      {"source_timeout_s", num(&c.source_timeout_s, false, 3600)},
      {"replay_trace", str(&c.replay_trace)},
      {"replay_start_s", num(&c.replay_start_s, true, 1e12)},
      {"replay_speed", num(&c.replay_speed, false, 1e9)},
      {"poll_retries", integer(&c.poll_retries, 100)},
      {"retry_backoff_s", num(&c.retry_backoff_s, true, 60)},
      {"fabric", str(&c.fabric)},
      {"subnet_lst", str(&c.subnet_lst)},
      {"node_name_map", str(&c.node_name_map)},
      {"topology_conf", str(&c.topology_conf)},
      {"min_leaves", integer(&c.filter.min_leaves, 1 << 20)},
      {"job_hca_pairs", Setter([&source, &c](const YAML::Node& n, const std::string& k) {
         std::string v;
         SAR_RETURN_IF_ERROR(Get(n, k, source, &v));
         if (!ParseJobHcaPairs(v, &c.filter.hca_pairs)) {
           return Status::Corruption(Where(source, n.Mark()) + "'" + k +
                                     "' must be one of: rails, all");
         }
         return Status::OK();
       })},
      {"min_time_limit_min", integer(&c.filter.min_time_limit_min, 1 << 30)},
      {"min_nodes", integer(&c.filter.min_nodes, 1 << 20)},
      {"ignore_partitions",
       Setter([&source, f = &c.filter.ignore_partitions](
                  const YAML::Node& n, const std::string& k) { return Get(n, k, source, f); })},
      {"poll_interval_s",
       Setter([&source, f = &c.poll_interval_s](const YAML::Node& n, const std::string& k) {
         SAR_RETURN_IF_ERROR(Get(n, k, source, f));
         SAR_RETURN_IF_ERROR(CheckRange(*f, k, Where(source, n.Mark()), false, kDay));
         if (*f < kMinPollIntervalS) {
           return Status::Corruption(Where(source, n.Mark()) + "'" + k +
                                     "' must be >= " + fmt::format("{:g}", kMinPollIntervalS) +
                                     " (each poll asks SLURM for every job; not '" +
                                     fmt::format("{:g}", *f) + "')");
         }
         return Status::OK();
       })},
      {"event_coalesce_ms", num(&c.event_coalesce_ms, true, 60000)},
      {"settle_s", num(&c.settle_s, true, kDay)},
      {"min_reroute_interval_s", num(&c.min_reroute_interval_s, true, kDay)},
      {"mapping_file", str(&c.mapping_file)},
      {"mapping_group", Setter([&source, &c](const YAML::Node& n, const std::string& k) {
         SAR_RETURN_IF_ERROR(Get(n, k, source, &c.mapping_group));
         c.mapping_gid = static_cast<gid_t>(-1);
         if (c.mapping_group.empty()) return Status::OK();
         const Status s = LookUpGroup(c.mapping_group, &c.mapping_gid);
         if (!s.ok())
           return Status::Corruption(Where(source, n.Mark()) + "'" + k + "': " + s.message());
         return Status::OK();
       })},
      {"trigger", Setter([&source, f = &c.trigger](const YAML::Node& n, const std::string& k) {
         std::string name;
         SAR_RETURN_IF_ERROR(Get(n, k, source, &name));
         if (ParseTrigger(name, f)) return Status::OK();
         return Status::Corruption(Where(source, n.Mark()) + "'" + k + "' must be one of: " +
                                   "signal, console, file, none (not '" + name + "')");
       })},
      {"opensm_pid_file",
       Setter([&source, f = &c.opensm_pid_files](const YAML::Node& n, const std::string& k) {
         // A path, or a list of them (master and standby subnet managers).
         std::vector<std::string> files;
         if (n.IsScalar()) {
           files.emplace_back();
           SAR_RETURN_IF_ERROR(Get(n, k, source, &files.back()));
         } else {
           SAR_RETURN_IF_ERROR(Get(n, k, source, &files));
         }
         for (const std::string& p : files) {
           if (!p.empty()) continue;
           return Status::Corruption(Where(source, n.Mark()) + "'" + k + "': empty path");
         }
         if (files.empty()) {
           return Status::Corruption(Where(source, n.Mark()) + "'" + k +
                                     "' must name at least one pid file");
         }
         *f = std::move(files);
         return Status::OK();
       })},
      {"verify_sm_process", flag(&c.verify_sm_process)},
      {"console_host", str(&c.console_host)},
      {"console_port", integer(&c.console_port, 65535)},
      {"guid2lid", str(&c.guid2lid)},
      {"current_lfts", str(&c.current_lfts)},
      {"lft_file", str(&c.lft_file)},
      {"engine", str(&c.engine)},
      {"num_vls", integer(&c.num_vls, 15)},
      {"routing_threads", integer(&c.routing_threads, 1024)},
      // The plugin's keys; their limits are libsar's (sar/engines/engine.h), as osmsar.conf's.
      {"sar_refine", flag(&c.routing.sar_refine)},
      {"sar_all_pairs_budget", num(&c.routing.sar_all_pairs_budget, true, kMaxSarAllPairsBudget)},
      {"sar_refine_work",
       Setter([&source, f = &c.routing.sar_refine_work](const YAML::Node& n, const std::string& k) {
         SAR_RETURN_IF_ERROR(Get(n, k, source, f));
         if (*f < 1 || *f > kMaxSarRefineWork) {
           return Status::Corruption(Where(source, n.Mark()) + "'" + k + "' must be 1.." +
                                     std::to_string(kMaxSarRefineWork) + " (search steps)");
         }
         return Status::OK();
       })},
      {"sar_no_regret", flag(&c.routing.sar_no_regret)},
      {"fors_only_where_faster", flag(&c.routing.fors_only_where_faster)},
      {"state_dir", str(&c.state_dir)},
      {"control_socket", str(&c.control_socket)},
      {"control_socket_group", str(&c.control_socket_group)},
      {"metrics_textfile", str(&c.metrics_textfile)},
      {"migration_status_file", str(&c.migration_status_file)},
      {"metrics_listen",
       Setter([&source, f = &c.metrics_listen](const YAML::Node& n, const std::string& k) {
         SAR_RETURN_IF_ERROR(Get(n, k, source, f));
         if (f->empty()) return Status::OK();
         sockaddr_in addr{};
         const Status s = ParseMetricsListen(*f, &addr);
         return s.ok() ? s : Status::Corruption(Where(source, n.Mark()) + s.message());
       })},
      {"log_level",
       one_of(&c.log_level, {"trace", "debug", "info", "warn", "error", "critical", "off"})},
      {"log_file", str(&c.log_file)},
  };
}

}  // namespace

const char* TriggerName(Trigger t) {
  switch (t) {
    case Trigger::kSignal:
      return "signal";
    case Trigger::kConsole:
      return "console";
    case Trigger::kFile:
      return "file";
    case Trigger::kNone:
      return "none";
  }
  return "?";
}

bool ParseTrigger(const std::string& name, Trigger* out) {
  for (Trigger t : {Trigger::kSignal, Trigger::kConsole, Trigger::kFile, Trigger::kNone}) {
    if (name == TriggerName(t)) {
      *out = t;
      return true;
    }
  }
  return false;
}

std::vector<std::string> ConfigKeys() {
  Config dummy;
  const std::string source;
  std::vector<std::string> keys;
  for (const auto& [key, setter] : Setters(&dummy, source)) keys.push_back(key);
  return keys;
}

Status ParseConfig(const std::string& text, const std::string& source, Config* out) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    return Status::Corruption(Where(source, e.mark) + e.msg);
  }
  // An empty file keeps every default (and then fails the checks below: a topology is required).
  if (!root.IsNull() && !root.IsMap())
    return Status::Corruption(source + ":1: expected a mapping of options");

  Config& c = *out;
  const std::map<std::string, Setter> setters = Setters(out, source);
  for (const auto& kv : root.IsNull() ? YAML::Node(YAML::NodeType::Map) : root) {
    const std::string key = kv.first.Scalar();
    auto it = setters.find(key);
    if (it == setters.end()) {
      return Status::Corruption(Where(source, kv.first.Mark()) + "unknown option '" + key + "'");
    }
    SAR_RETURN_IF_ERROR(it->second(kv.second, key));
  }
  if (!c.fabric.empty() + !c.subnet_lst.empty() + !c.topology_conf.empty() != 1) {
    return Status::Corruption(source +
                              ": set exactly one of 'fabric', 'subnet_lst' and 'topology_conf'");
  }
  if (c.source == "slurmrestd" && c.slurmrestd_socket.empty()) {
    return Status::Corruption(source + ": source 'slurmrestd' needs 'slurmrestd_socket'");
  }
  if (c.source == "replay" && c.replay_trace.empty()) {
    return Status::Corruption(source + ": source 'replay' needs 'replay_trace'");
  }
  if (c.trigger == Trigger::kFile &&
      (c.fabric.empty() || c.guid2lid.empty() || c.lft_file.empty())) {
    return Status::Corruption(source +
                              ": trigger 'file' needs 'fabric', 'guid2lid' and 'lft_file'");
  }
  if (c.num_vls < 1 || c.num_vls > 15)
    return Status::Corruption(source + ": 'num_vls' must be 1..15");
  if (c.mapping_file.empty()) return Status::Corruption(source + ": 'mapping_file' is empty");
  if (c.filter.min_leaves < 1) return Status::Corruption(source + ": 'min_leaves' must be >= 1");
  return Status::OK();
}

Status LoadConfig(const std::string& path, Config* out) {
  std::string text;
  SAR_RETURN_IF_ERROR(ReadFileToString(path, &text));
  return ParseConfig(text, path, out);
}

}  // namespace sar::filterd
