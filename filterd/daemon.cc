#include "daemon.h"

#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>

#include "event_coalescer.h"
#include "instance_lock.h"
#include "job_set_diff.h"
#include "log_file.h"
#include "sar/fors/fors_job.h"
#include "sar/io/file_util.h"
#include "sar/io/job_file.h"
#include "server/bounded_io.h"
#include "server/control_socket.h"
#include "server/metrics_http.h"
#include "test_stop.h"

#ifdef SAR_HAVE_SYSTEMD
#include <systemd/sd-daemon.h>
#endif

namespace sar::filterd {
namespace {

// UTC, ISO 8601 to the second: what the log and the status line show of a Unix time.
std::string WallClockText(double unix_s) {
  const auto t = static_cast<std::time_t>(unix_s);
  std::tm utc{};
  gmtime_r(&t, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

std::string Describe(const MultiSwitchJob& job) {
  std::string hosts;
  for (size_t i = 0; i < job.hosts.size() && i < 8; ++i) hosts += (i ? "," : "") + job.hosts[i];
  if (job.hosts.size() > 8) hosts += ",...";
  return fmt::format("job {} ({}{}{} hosts: {})", job.id,
                     job.pattern == JobPattern::kDefault ? "" : JobPatternName(job.pattern),
                     job.pattern == JobPattern::kDefault ? "" : ", ", job.hosts.size(), hosts);
}

void Notify([[maybe_unused]] const char* state) {
#ifdef SAR_HAVE_SYSTEMD
  sd_notify(0, state);
#endif
}

}  // namespace

Daemon::Daemon(Config config, DaemonOptions options, LeafMap leaves,
               std::unique_ptr<JobSource> source, std::unique_ptr<Action> action,
               std::shared_ptr<Env> env)
    : env_(env ? std::move(env) : RealEnv()),
      config_(std::move(config)),
      options_(options),
      leaves_(std::move(leaves)),
      source_(std::move(source)),
      gate_(options.once ? 0 : config_.settle_s,
            options.once ? 0 : config_.min_reroute_interval_s) {
  UseAction(action ? std::move(action) : MakeAction(config_, options.dry_run, nullptr));
}

void Daemon::UseAction(std::unique_ptr<Action> action) {
  action->set_env(env_);
  action_ = std::move(action);
}

void Daemon::Start() {
  Status s = LoadState(*env_, config_.state_dir, &state_);
  if (!s.ok()) {
    spdlog::error("state: {} (starting as if nothing had been handed to the router)", s.ToString());
    state_ = PersistentState();
  } else if (state_.has_router_set) {
    spdlog::info("state: the router has {} multi-switch jobs from a previous run",
                 state_.router_set.size());
    // A last reroute in the future (the clock was stepped back, or a damaged file: 1e300)
    // would hold every reroute back until the clock caught up: take it as now.
    const double unix_now = env_->NowUnix();
    if (!(state_.last_reroute_unix_s <= unix_now)) {
      spdlog::warn(
          "state: last reroute at {} is in the future (now {:.0f}; clock stepped "
          "back?); taking it as now",
          state_.last_reroute_unix_s, unix_now);
      state_.last_reroute_unix_s = unix_now;
    }
    // Translate the last reroute's wall time into the monotonic clock the gate uses, so the
    // minimum interval also holds across a restart.
    gate_.MarkRerouted(env_->NowMonotonic() - (env_->NowUnix() - state_.last_reroute_unix_s));
  }
  last_poll_set_ = state_.router_set;
  metrics_.last_reroute_unix_s = state_.last_reroute_unix_s;
  CheckMappingOnDisk();
}

void Daemon::CheckMappingOnDisk() {
  if (!state_.has_router_set || action_->dry_run() || action_->mapping_file().empty()) return;
  JobMapping on_disk;
  const Status s = ReadJobMapping(*env_, action_->mapping_file(), &on_disk);
  if (s.ok() && !DiffJobSets(state_.router_set, FromJobMapping(on_disk)).changed()) return;
  spdlog::warn(
      "mapping: {} does not hold the set the router was last told ({}); the subnet manager may "
      "have routed with it: rewriting it and rerouting",
      action_->mapping_file(), s.ok() ? "it differs" : s.ToString());
  mapping_stale_ = true;
  router_unsure_ = true;
}

void Daemon::RestoreMapping() {
  const Status s = WriteJobMapping(*env_, action_->mapping_file(), ToJobMapping(state_.router_set),
                                   action_->mapping_group());
  if (s.ok()) {
    mapping_stale_ = false;
    spdlog::info("mapping: {} holds the router's {} jobs again", action_->mapping_file(),
                 state_.router_set.size());
    return;
  }
  mapping_stale_ = true;
  ++metrics_.mapping_write_errors;
  spdlog::error("mapping: could not restore the router's set ({}); retrying next cycle",
                s.ToString());
}

bool Daemon::PollWithRetries(std::vector<SourceJob>* jobs) {
  double wait = config_.retry_backoff_s;
  for (int attempt = 0;; ++attempt) {
    const double t0 = env_->NowMonotonic();
    Status s = source_->Poll(jobs);
    metrics_.last_poll_seconds = env_->NowMonotonic() - t0;
    metrics_.poll_seconds.Observe(metrics_.last_poll_seconds);
    if (s.ok()) return true;
    if (attempt >= config_.poll_retries) {
      spdlog::error("poll: {} failed {} times, last: {}; no reroute on partial data",
                    source_->name(), attempt + 1, s.ToString());
      return false;
    }
    spdlog::warn("poll: {}: {}; retry in {:.2f} s", source_->name(), s.ToString(), wait);
    env_->SleepFor(wait);
    wait = std::min(wait * 2, 60.0);  // doubled without bound, it would wait for ever
  }
}

void Daemon::ReportUnknownHosts(const std::vector<std::string>& hosts) {
  std::vector<std::string> fresh;
  for (const std::string& h : hosts) {
    if (reported_unknown_.insert(h).second) fresh.push_back(h);
  }
  if (fresh.empty()) return;
  std::string list;
  for (size_t i = 0; i < fresh.size() && i < 20; ++i) list += (i ? "," : "") + fresh[i];
  if (fresh.size() > 20) list += ",...";
  spdlog::warn("topology: {} host(s) of running jobs are not in the topology (ignored): {}",
               fresh.size(), list);
}

void Daemon::CompareNodeLists() {
  // Once per run, after the scheduler first answered: a host list mismatch is a configuration
  // fact the operator should see once, not a per-cycle error.
  nodes_compared_ = true;
  std::vector<std::string> slurm_nodes;
  if (!source_->ListNodes(&slurm_nodes).ok()) return;
  std::unordered_set<std::string> in_slurm(slurm_nodes.begin(), slurm_nodes.end());
  std::vector<std::string> fabric_only;
  for (const std::string& h : leaves_.Hosts()) {
    if (!in_slurm.count(h)) fabric_only.push_back(h);
  }
  std::vector<std::string> slurm_only;
  for (const std::string& n : slurm_nodes) {
    if (leaves_.LeafOf(n) == LeafMap::kUnknown) slurm_only.push_back(n);
  }
  auto list = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    std::string s;
    for (size_t i = 0; i < v.size() && i < 20; ++i) s += (i ? "," : "") + v[i];
    return v.size() > 20 ? s + ",..." : s;
  };
  if (!fabric_only.empty()) {
    spdlog::warn("topology: {} host(s) in the topology are not SLURM nodes: {}", fabric_only.size(),
                 list(fabric_only));
  }
  if (!slurm_only.empty()) {
    spdlog::warn(
        "topology: {} SLURM node(s) are not in the topology (their jobs' leaf count "
        "leaves them out): {}",
        slurm_only.size(), list(slurm_only));
  }
  for (const std::string& n : slurm_only) reported_unknown_.insert(n);
}

bool Daemon::RunCycle(double now_s) {
  const double t0 = env_->NowMonotonic();
  std::vector<SourceJob> jobs;
  ++metrics_.polls;
  if (!PollWithRetries(&jobs)) {
    ++metrics_.poll_errors;
    WriteMetrics();
    return false;
  }
  TestStopPoint("poll");
  FilterResult filtered = FilterJobs(jobs, leaves_, config_.filter);
  ReportUnknownHosts(filtered.unknown_hosts);
  const JobSetDiff vs_router = DiffJobSets(state_.router_set, filtered.jobs);
  const bool moved = DiffJobSets(last_poll_set_, filtered.jobs).changed();
  last_poll_set_ = filtered.jobs;
  metrics_.running_jobs = static_cast<int64_t>(jobs.size());
  metrics_.multi_switch_jobs = static_cast<int64_t>(filtered.jobs.size());
  metrics_.unknown_hosts = static_cast<int64_t>(reported_unknown_.size());
  metrics_.last_cycle_seconds = env_->NowMonotonic() - t0;
  metrics_.cycle_seconds.Observe(metrics_.last_cycle_seconds);
  if (!vs_router.changed() && !router_unsure_) {
    metrics_.pending_change_since_unix_s = 0;
  } else if (metrics_.pending_change_since_unix_s == 0) {
    metrics_.pending_change_since_unix_s = env_->NowUnix();
  }
  if (!nodes_compared_) {
    CompareNodeLists();  // one extra RPC, kept out of the cycle time
    metrics_.unknown_hosts = static_cast<int64_t>(reported_unknown_.size());
  }

  spdlog::info(
      "cycle: {} running, {} multi-switch; vs router: +{} -{} (poll {:.1f} ms, cycle {:.1f} ms)",
      jobs.size(), filtered.jobs.size(), vs_router.added.size(), vs_router.removed.size(),
      metrics_.last_poll_seconds * 1e3, metrics_.last_cycle_seconds * 1e3);
  for (const MultiSwitchJob& j : vs_router.added) spdlog::info("  + {}", Describe(j));
  for (const MultiSwitchJob& j : vs_router.removed) {
    // A job the router knows under an older id ends under the id SLURM gave it last.
    auto renamed = current_ids_.find(j.id);
    if (renamed == current_ids_.end()) {
      spdlog::info("  - {}", Describe(j));
    } else {
      MultiSwitchJob now = j;
      now.id = renamed->second;
      spdlog::info("  - {} (the router has it as job {})", Describe(now), j.id);
    }
  }
  std::map<std::string, std::string> ids;
  for (const auto& [router_id, slurm_id] : vs_router.renamed) {
    auto before = current_ids_.find(router_id);
    if (before == current_ids_.end() || before->second != slurm_id) {
      spdlog::info(
          "  = job {} now runs as job {} on the same hosts (an id change only: no reroute)",
          before == current_ids_.end() ? router_id : before->second, slurm_id);
      AliasForsSchedule(router_id, slurm_id);
    }
    ids.emplace(router_id, slurm_id);
  }
  current_ids_ = std::move(ids);

  bool rerouted = false;
  const RerouteGate::Decision decision =
      gate_.Decide(vs_router.changed() || router_unsure_, moved, now_s);
  waiting_ = decision == RerouteGate::Decision::kWaitSettle ||
             decision == RerouteGate::Decision::kWaitInterval;
  switch (decision) {
    case RerouteGate::Decision::kNothing:
      spdlog::info("no reroute: the multi-switch host sets are those the router has");
      break;
    case RerouteGate::Decision::kWaitSettle:
      spdlog::info(
          "no reroute yet: waiting for the job set to settle ({} s); next possible in "
          "{:.1f} s",
          config_.settle_s, std::max(0.0, gate_.ReadyAt() - now_s));
      break;
    case RerouteGate::Decision::kWaitInterval:
      spdlog::info(
          "no reroute yet: the last one was under {} s ago; next possible in {:.1f} s "
          "(at {}) if the change still holds then",
          config_.min_reroute_interval_s, std::max(0.0, gate_.ReadyAt() - now_s),
          WallClockText(env_->NowUnix() + std::max(0.0, gate_.ReadyAt() - now_s)));
      break;
    case RerouteGate::Decision::kReroute:
      rerouted = Reroute(filtered.jobs);
      if (!action_->dry_run()) gate_.MarkRerouted(now_s);
      break;
  }
  if (mapping_stale_ && decision != RerouteGate::Decision::kReroute) RestoreMapping();
  WriteMetrics();
  return rerouted;
}

void Daemon::AliasForsSchedule(const std::string& router_id, const std::string& slurm_id) {
  // The job's tasks look for "<mapping>.fors.<their job id>" (SAR_FORS_SCHEDULE); the router
  // published it under the id it routed for. Same hosts, same routes: the same schedule.
  if (action_->dry_run() || action_->mapping_file().empty()) return;
  bool written = false;
  const Status s = sar::AliasForsSchedule(action_->mapping_file(), router_id, slurm_id,
                                          action_->mapping_group(), &written);
  if (s.ok()) {
    spdlog::info("  FORS schedule of job {} published for job {} too{}", router_id, slurm_id,
                 written ? "" : " (already there)");
  } else if (s.code() != Status::Code::kNotFound) {
    spdlog::warn("alltoall job {}: the schedule of job {} could not be published for it: {}",
                 slurm_id, router_id, s.ToString());
  }
}

void Daemon::ReopenLogFile() {
  // logrotate moves the file away, then `systemctl reload` (SIGHUP): write to a new one. If it
  // cannot be opened, the old logger (the moved file) goes on, and says so.
  if (config_.log_file.empty()) return;
  std::shared_ptr<spdlog::logger> logger;
  if (Status s = MakeFileLogger("sar-filterd", config_.log_file, &logger); !s.ok()) {
    spdlog::error("SIGHUP: cannot reopen the log: {} (still writing to the old file)",
                  s.ToString());
    return;
  }
  logger->set_level(spdlog::get_level());
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

void Daemon::WriteMetrics() {
  // A dry run beside the service must not replace the live daemon's figures.
  if (config_.metrics_textfile.empty() || options_.dry_run) return;
  Status s = env_->WriteFileAtomic(config_.metrics_textfile, MetricsText(), WriteOptions{});
  if (!s.ok()) spdlog::error("metrics: {}", s.ToString());
}

bool Daemon::ReadMigration(MigrationStatus* m) const {
  if (config_.migration_status_file.empty()) return false;
  Status s = ReadMigrationStatus(config_.migration_status_file, m);
  if (!s.ok()) {
    // Not there yet (OpenSM not started, migration off) or being replaced: say so, go on.
    spdlog::debug("migration status: {}", s.ToString());
    return false;
  }
  return true;
}

std::string Daemon::MetricsText() const {
  std::string text = FormatPrometheus(metrics_);
  MigrationStatus m;
  if (ReadMigration(&m)) text += FormatMigrationPrometheus(m);
  return text;
}

bool Daemon::SafeCycle(double now_s) {
  try {
    return RunCycle(now_s);
  } catch (const std::exception& e) {
    ++metrics_.cycle_errors;
    spdlog::error("cycle: failed: {}; nothing changed, next cycle as scheduled", e.what());
  } catch (...) {
    ++metrics_.cycle_errors;
    spdlog::error("cycle: failed (unknown exception); nothing changed, next cycle as scheduled");
  }
  WriteMetrics();
  return false;
}

bool Daemon::Reroute(const std::vector<MultiSwitchJob>& set) {
  // Converted once: the mapping file, the state dir and the action all use this one.
  const JobMapping mapping = ToJobMapping(set);
  const uint64_t write_failures = action_->stats().mapping_write_failed;
  const Status s = action_->Apply({set, mapping, state_.router_set});
  metrics_.last_action_seconds = action_->stats().last_seconds;
  metrics_.action_seconds.Observe(metrics_.last_action_seconds);
  if (action_->dry_run()) return true;
  // An atomic write that failed left the old file in place: nothing to put back then.
  const uint64_t new_write_failures = action_->stats().mapping_write_failed - write_failures;
  metrics_.mapping_write_errors += new_write_failures;
  if (!s.ok()) {
    // The router still has the old set: keep it as such, so the next cycle tries again
    // (throttled by the minimum interval). The mapping on disk must say the same, or the
    // subnet manager's next pass (its own sweep, a restart) reads jobs it was never told of,
    // and if the job set returns to the router's no reroute would ever correct it.
    ++metrics_.trigger_errors;
    if (new_write_failures == 0 && !action_->mapping_file().empty()) RestoreMapping();
    return false;
  }
  TestStopPoint("signal");
  mapping_stale_ = false;
  router_unsure_ = false;
  ++metrics_.reroutes;
  state_.router_set = set;
  state_.has_router_set = true;
  state_.last_reroute_unix_s = env_->NowUnix();
  metrics_.last_reroute_unix_s = state_.last_reroute_unix_s;
  metrics_.pending_change_since_unix_s = 0;
  Persist(mapping);
  return true;
}

void Daemon::Persist(const JobMapping& router_mapping) {
  Status s = SaveState(*env_, config_.state_dir, state_, router_mapping);
  if (!s.ok()) {
    ++metrics_.state_write_errors;
    spdlog::error("state: not saved ({}); a restart may reroute once more", s.ToString());
  }
}

int PollTimeoutMs(double wait_s) {
  // Compared as doubles before any conversion: a NaN fails every comparison, so it waits 0.
  const double ms = std::ceil(wait_s * 1e3);
  if (!(ms > 0)) return 0;
  return ms >= 3.6e6 ? 3600000 : static_cast<int>(ms);
}

std::string Daemon::StatusLine() const {
  // One line (sar-notify status, systemctl status via STATUS=): what an operator asks first.
  const std::string last =
      metrics_.last_reroute_unix_s > 0 ? WallClockText(metrics_.last_reroute_unix_s) : "never";
  std::string state = "idle";
  if (waiting_) {
    state = fmt::format("held({:.0f}s)", std::max(0.0, gate_.ReadyAt() - env_->NowMonotonic()));
  }
  std::string line = fmt::format(
      "state={} polls={} poll_errors={} reroutes={} trigger_errors={} running_jobs={} "
      "multi_switch_jobs={} unknown_hosts={} last_reroute={}",
      state, metrics_.polls, metrics_.poll_errors, metrics_.reroutes, metrics_.trigger_errors,
      metrics_.running_jobs, metrics_.multi_switch_jobs, metrics_.unknown_hosts, last);
  MigrationStatus m;
  if (ReadMigration(&m)) line += MigrationStatusLine(m);
  return line;
}

std::string Daemon::MappingText() const {
  // What the router was last told (the state, not the file on disk, which a failed write may
  // have left behind: CheckMappingOnDisk mends that at the next cycle).
  std::string text = fmt::format("# sar-filterd: {} multi-leaf job(s) the router was last told{}\n",
                                 state_.has_router_set ? state_.router_set.size() : 0,
                                 state_.has_router_set ? "" : " (none yet)");
  if (state_.has_router_set) text += FormatJobMapping(ToJobMapping(state_.router_set));
  return text;
}

int Daemon::Run() {
  // One daemon per state dir (issue 19 defect 13), taken before the control socket is opened.
  // A dry run changes nothing and may run beside the service.
  InstanceLock lock;
  if (!options_.dry_run) {
    if (Status s = lock.Acquire(config_.state_dir); s.code() == Status::Code::kFailed) {
      spdlog::critical("{}", s.message());
      if (!config_.log_file.empty()) fmt::print(stderr, "sar-filterd: {}\n", s.message());
      return 1;
    } else if (!s.ok()) {
      spdlog::error("state dir lock: {} (running without it)", s.ToString());
    } else if (!lock.warning().empty()) {
      spdlog::warn("state dir lock: {}", lock.warning());
    }
  }
  // The control socket, before the state dir is read or the mapping touched: a socket another
  // daemon serves (another state_dir, the same path) is refused here, and this one exits
  // before changing anything (issue 34 defect 7). A dry run, which may run beside the service,
  // goes on without it.
  ControlSocket control;
  if (!options_.once && !config_.control_socket.empty()) {
    std::string group = config_.control_socket_group;
    if (!group.empty() && getgrnam(group.c_str()) == nullptr) {
      // The shipped config names Debian's SlurmUser group; a site without it still gets a
      // socket (owner-only) and a warning, rather than none at all.
      spdlog::warn(
          "control socket: group '{}' does not exist: {} is owner-only (0600), so hooks run by "
          "another user (SlurmUser) get EACCES; set control_socket_group to SlurmUser's group",
          group, config_.control_socket);
      group.clear();
    }
    Status s = control.Open(config_.control_socket, group);
    if (s.code() == Status::Code::kFailed && !options_.dry_run) {
      spdlog::critical("{}", s.message());
      if (!config_.log_file.empty()) fmt::print(stderr, "sar-filterd: {}\n", s.message());
      return 1;
    }
    if (!s.ok()) spdlog::error("control socket: {} (hooks cannot ask for a poll)", s.ToString());
  }
  Start();
  if (options_.once) {
    SafeCycle(env_->NowMonotonic());
    // Any failure an operator would want to see fails the run: --once is what scripts check.
    const bool failed = metrics_.poll_errors > 0 || metrics_.trigger_errors > 0 ||
                        metrics_.cycle_errors > 0 || metrics_.mapping_write_errors > 0 ||
                        metrics_.state_write_errors > 0 || mapping_stale_;
    return failed ? 1 : 0;
  }
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGHUP);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  const int sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

  MetricsHttpServer http;
  if (!config_.metrics_listen.empty()) {
    Status s = http.Open(config_.metrics_listen);
    if (!s.ok()) spdlog::error("metrics endpoint: {}", s.ToString());
  }
  Notify("READY=1");
  double watchdog_s = 0;
#ifdef SAR_HAVE_SYSTEMD
  if (uint64_t usec = 0; sd_watchdog_enabled(0, &usec) > 0) watchdog_s = usec / 1e6;
#endif
  spdlog::info("sar-filterd running: source {}, {} hosts on {} leaves, poll every {} s",
               source_->name(), leaves_.num_hosts(), leaves_.num_leaves(), config_.poll_interval_s);

  // Hook requests wait in `events` for their quiet window; the regular schedule is next_poll.
  EventCoalescer events(config_.event_coalesce_ms / 1e3);
  double next_poll = env_->NowMonotonic();
  std::vector<pollfd> fds;
  for (;;) {
    double now = env_->NowMonotonic();
    if (now >= next_poll || now >= events.DueAt()) {
      events.Clear();  // this poll answers every request so far
      SafeCycle(now);
      Notify(("STATUS=" + StatusLine()).c_str());
      next_poll = env_->NowMonotonic() + config_.poll_interval_s;
      // A change held back by the settle delay or the interval is looked at again as soon as
      // it may go through, not a whole poll interval later.
      if (waiting_) next_poll = std::min(next_poll, std::max(gate_.ReadyAt(), now + 0.05));
    }
    // The signalfd, then each server's listening socket and open connections. No client is
    // ever waited on: they are read as their bytes arrive and dropped at their deadline.
    fds.assign(1, {sig_fd, POLLIN, 0});
    control.AddPollFds(&fds);
    http.AddPollFds(&fds);
    // The schedule is on the Env's clock, the clients' deadlines on the real one (they bound
    // real peers): each as a wait from now.
    const double before_wait = env_->NowMonotonic();
    double wait =
        std::min({next_poll - before_wait, events.DueAt() - before_wait,
                  SecondsUntil(control.NextDeadline()), SecondsUntil(http.NextDeadline())});
    if (watchdog_s > 0) {
      // WatchdogSec=: a loop that is alive says so at twice the rate systemd wants; a hung
      // cycle (a libslurm call past its timeout, a stuck disk) stops the pings and is restarted.
      Notify("WATCHDOG=1");
      wait = std::min(wait, watchdog_s / 2);
    }
    if (poll(fds.data(), fds.size(), PollTimeoutMs(wait)) < 0) continue;
    try {
      http.Handle(fds, [this] { return MetricsText(); });
      // A burst of hooks is one batch of requests and, through `events`, one poll.
      const ControlSocket::Queries queries{[this] { return StatusLine(); },
                                           [this] { return MappingText(); }};
      std::vector<std::string> lines;
      if (const int requests = control.Handle(fds, queries, &lines); requests > 0) {
        for (int i = 0; i < requests; ++i) events.Request(env_->NowMonotonic());
        metrics_.control_requests += requests;
        // Each hook by its event and job ("job-start 4712"), so the log tells which job woke us.
        std::string what;
        for (size_t i = 0; i < lines.size() && i < 8; ++i) what += (i ? ", " : "") + lines[i];
        if (lines.size() > 8) what += fmt::format(" and {} more", lines.size() - 8);
        spdlog::info("control socket: {}; polling in {:.0f} ms", what,
                     std::max(0.0, events.DueAt() - env_->NowMonotonic()) * 1e3);
      }
    } catch (const std::exception& e) {
      spdlog::error("control/metrics: {}", e.what());
    }
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo info{};
      if (read(sig_fd, &info, sizeof(info)) == sizeof(info)) {
        if (info.ssi_signo == SIGHUP) {
          ReopenLogFile();
          spdlog::info("SIGHUP: polling now");
          next_poll = 0;
        } else {
          spdlog::info("signal {}: exiting", info.ssi_signo);
          Notify("STOPPING=1");
          close(sig_fd);
          return 0;
        }
      }
    }
  }
}

}  // namespace sar::filterd
