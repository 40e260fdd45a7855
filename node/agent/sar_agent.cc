// sar-agent: the node agent of the baseLID/highLID migration protocol (docs/migration.md).
//
// Two threads. The MAD thread only receives MADs (with a short poll timeout) and runs the
// agent's timers; it never waits on anything else, so Reports and SMInfo requests are answered
// at once. The main thread runs the consumers' socket (ConsumerHub) and feeds their answers to
// the agent. One mutex serialises the Agent; the hub and the transport take no agent lock.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include "agent.h"
#include "consumer_hub.h"
#include "sarmig_proto.h"
#include "umad_transport.h"

namespace {

enum ExitCode { kExitOk = 0, kExitUsage = 2, kExitSetup = 3, kExitRuntime = 4 };

std::atomic<bool> g_stop{false};  // set by SIGTERM/SIGINT; only signal handlers need a global

void OnSignal(int) { g_stop = true; }

// Writes the agent's status as one JSON object, atomically (temp file + rename).
bool WriteStatus(const std::string& path, const sarmig::AgentStatus& s, size_t consumers) {
  std::string tmp = path + ".tmp";
  FILE* f = fopen(tmp.c_str(), "w");
  if (!f) return false;
  fprintf(f,
          "{\"lid\": %u, \"sm_lid\": %u, \"sm_guid\": \"0x%016llx\", \"subscribed\": %s, "
          "\"epoch\": %u, \"state\": \"%s\", "
          "\"reports\": %llu, \"duplicate_reports\": %llu, \"ignored\": %llu, "
          "\"acks_sent\": %llu, \"acks_repressed\": %llu, \"subscriptions\": %llu, "
          "\"sminfo_answers\": %llu, \"consumers_registered\": %zu, \"last_consumers\": %u, "
          "\"last_drained\": %u, \"last_late\": %s}\n",
          s.lid, s.sm_lid, (unsigned long long)s.sm_guid, s.subscribed ? "true" : "false", s.epoch,
          s.state.c_str(), (unsigned long long)s.reports, (unsigned long long)s.duplicate_reports,
          (unsigned long long)s.ignored_notices, (unsigned long long)s.acks_sent,
          (unsigned long long)s.acks_repressed, (unsigned long long)s.subscriptions,
          (unsigned long long)s.sminfo_answers, consumers, s.last_consumers, s.last_drained,
          s.last_late ? "true" : "false");
  bool ok = fclose(f) == 0;
  return ok && rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "sar-agent: node agent of sar's baseLID/highLID migration protocol.\n"
      "Subscribes to the SA for traps 68 (UnPath) and 69 (RePath), hands each phase to the\n"
      "node's consumers (libsarmig, over a UNIX socket) and acknowledges it to the subnet\n"
      "manager with a vendor trap. See docs/migration.md.\n"
      "Exit codes: 0 stopped by SIGTERM/SIGINT, 2 bad arguments, 3 setup failed (port,\n"
      "socket), 4 runtime failure."};
  std::string ca, socket_path = sarmig::kDefaultSocket, status_file, log_file;
  int port = 0;
  bool verbose = false, test_issm = false;
  sarmig::AgentConfig cfg;
  int resubscribe_ms = 10000, consumer_deadline_ms = 2000, ack_resend_ms = 200, max_high_ms = 60000,
      portinfo_ms = 1000;
  app.add_option("--ca", ca, "HCA name (default: the first)");
  app.add_option("--port", port, "HCA port number (default: the first active)");
  app.add_option("--socket", socket_path, "consumers' UNIX socket (created 0600)")
      ->capture_default_str();
  app.add_option("--status-file", status_file, "write the agent's state here as JSON");
  app.add_option("--log-file", log_file, "append the log here instead of stderr");
  app.add_option("--resubscribe-ms", resubscribe_ms, "renew the SA subscriptions this often")
      ->capture_default_str()
      ->check(CLI::Range(100, 3600000));
  app.add_option("--portinfo-ms", portinfo_ms, "look for a new SM LID this often")
      ->capture_default_str()
      ->check(CLI::Range(50, 600000));
  app.add_option("--consumer-deadline-ms", consumer_deadline_ms,
                 "consumers' time per phase (capped at 3/4 of the UnPath's deadline)")
      ->capture_default_str()
      ->check(CLI::Range(1, 600000));
  app.add_option("--ack-resend-ms", ack_resend_ms, "resend the phase-2 ack this often")
      ->capture_default_str()
      ->check(CLI::Range(10, 60000));
  app.add_option("--max-high-ms", max_high_ms,
                 "no RePath this long after UnPath: move back on our own")
      ->capture_default_str()
      ->check(CLI::Range(100, 3600000));
  app.add_flag("--test-ibsim-issm", test_issm,
               "TEST ONLY (ibsim): open the issm device and answer SMInfo as a NOT-ACTIVE SM, "
               "because ibsim forwards Reports only to issm clients. Never on real hardware: "
               "it sets the port's IsSM capability.");
  app.add_flag("-v,--verbose", verbose, "debug logging");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }

  FILE* log_out = stderr;
  if (!log_file.empty()) {
    log_out = fopen(log_file.c_str(), "a");
    if (!log_out) {
      fprintf(stderr, "sar-agent: %s: cannot open log file\n", log_file.c_str());
      return kExitSetup;
    }
  }
  sarmig::Logger log(log_out, verbose ? sarmig::LogLevel::kDebug : sarmig::LogLevel::kInfo);

  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::string err;
  sarmig::UmadOptions uo;
  uo.ca = ca;
  uo.port = port;
  uo.ibsim_issm = test_issm;
  auto mad = sarmig::UmadTransport::Open(uo, &err);
  if (!mad) {
    SARMIG_LOG(&log, kError, "setup: %s", err.c_str());
    return kExitSetup;
  }
  sarmig::HubConfig hc;
  hc.path = socket_path;
  sarmig::ConsumerHub hub(hc, &log);
  if (!hub.Listen(&err)) {
    SARMIG_LOG(&log, kError, "setup: %s", err.c_str());
    return kExitSetup;
  }
  cfg.port_num = static_cast<uint8_t>(mad->port_num());
  cfg.port_guid = mad->port_guid();
  cfg.test_mode = test_issm;
  cfg.resubscribe = sarmig::Ms(resubscribe_ms);
  cfg.portinfo_poll = sarmig::Ms(portinfo_ms);
  cfg.consumer_deadline = sarmig::Ms(consumer_deadline_ms);
  cfg.ack_resend = sarmig::Ms(ack_resend_ms);
  cfg.max_high = sarmig::Ms(max_high_ms);
  sarmig::Agent agent(cfg, mad.get(), &hub, &log);
  std::mutex agent_mu;
  SARMIG_LOG(&log, kInfo, "sar-agent on %s port %d (GUID 0x%016llx), consumers at %s%s",
             mad->ca_name().c_str(), mad->port_num(), (unsigned long long)mad->port_guid(),
             socket_path.c_str(), test_issm ? ", TEST MODE: ibsim issm" : "");

  std::thread mad_thread([&] {
    sarmig::MadPacket pkt;
    int errors = 0;
    while (!g_stop) {
      int rc = mad->Recv(&pkt, 20);
      auto now = sarmig::Clock::now();
      std::lock_guard<std::mutex> lock(agent_mu);
      if (rc > 0) agent.OnMad(pkt, now);
      agent.Tick(now);
      if (rc < 0 && ++errors % 1000 == 1)
        SARMIG_LOG(&log, kDebug, "MAD receive error (%d so far)", errors);
    }
    hub.Wake();
  });

  std::string last_status;
  while (!g_stop) {
    auto results = hub.Poll(100);
    sarmig::AgentStatus st;
    {
      std::lock_guard<std::mutex> lock(agent_mu);
      for (const auto& r : results) agent.OnPhaseDone(r, sarmig::Clock::now());
      st = agent.status();
    }
    if (!status_file.empty()) {
      std::string key = std::to_string(st.epoch) + st.state + std::to_string(st.acks_sent) +
                        std::to_string(st.subscribed) + std::to_string(st.reports) +
                        std::to_string(hub.registered()) + std::to_string(st.sminfo_answers) +
                        std::to_string(st.ignored_notices) + std::to_string(st.subscriptions) +
                        std::to_string(st.sm_guid);
      if (key != last_status && WriteStatus(status_file, st, hub.registered())) last_status = key;
    }
  }
  mad_thread.join();
  SARMIG_LOG(&log, kInfo, "stopped");
  return kExitOk;
}
