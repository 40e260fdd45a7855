/* sar-migconsumer: the reference consumer of libsarmig (written in C, against sar/migration.h
 * only). It stands for an MPI runtime: it keeps a set of "connections" (destination base LIDs),
 * points them at the highLIDs (base + 1) on MOVE_HIGH and back on MOVE_BACK, and logs every
 * switch with CLOCK_MONOTONIC and CLOCK_REALTIME stamps as one JSON line, so a test can tell
 * which LIDs were in use at every moment. Real QP draining and APM (verbs) cannot run on ibsim:
 * --drain-ms only simulates the time a real drain takes.
 *
 * Exit codes: 0 stopped by SIGTERM/SIGINT, 2 bad arguments, 3 log file cannot be opened. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sar/migration.h"

#define MAX_PEERS 1024

typedef struct consumer_t {
  sar_mig_client_t* client;
  FILE* log;
  const char* name;
  unsigned peers[MAX_PEERS];
  int npeers;
  int high; /* 1: the connections use highLIDs */
  int drain_ms;
  int never_answer; /* test: never answer (the agent's deadline must cover it) */
  uint32_t epoch;
} consumer_t;

static volatile sig_atomic_t g_stop = 0;
static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

static unsigned long long clock_ns(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

/* One JSON line: what the connections use from now on. */
static void log_switch(consumer_t* c, const char* event, uint32_t epoch, uint32_t flags) {
  int i;
  fprintf(c->log,
          "{\"mono_ns\": %llu, \"real_ns\": %llu, \"consumer\": \"%s\", \"event\": \"%s\", "
          "\"epoch\": %u, \"flags\": %u, \"mode\": \"%s\", \"lids\": [",
          clock_ns(CLOCK_MONOTONIC), clock_ns(CLOCK_REALTIME), c->name, event, epoch, flags,
          c->high ? "high" : "base");
  for (i = 0; i < c->npeers; i++)
    fprintf(c->log, "%s%u", i ? ", " : "", c->peers[i] + (c->high ? 1u : 0u));
  fprintf(c->log, "]}\n");
  fflush(c->log);
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !g_stop) {
  }
}

static void on_event(void* user, sar_mig_event_t ev, uint32_t epoch, uint32_t flags,
                     uint32_t deadline_ms) {
  consumer_t* c = (consumer_t*)user;
  char* err = NULL;
  int want_high = ev == SAR_MIG_MOVE_HIGH;
  (void)deadline_ms;
  /* Switch first, then drain: new sends go to the new LIDs at once, the old ones complete. */
  c->high = want_high;
  c->epoch = epoch;
  log_switch(c, want_high ? "move_high" : "move_back", epoch, flags);
  if (c->drain_ms > 0) sleep_ms(c->drain_ms);
  if (c->never_answer) return;
  if (sar_mig_drained(c->client, epoch, ev, &err) != 0) {
    fprintf(stderr, "sar-migconsumer %s: %s\n", c->name, err);
    sar_mig_free(err);
    return;
  }
  log_switch(c, "drained", epoch, flags);
}

static void usage(FILE* out) {
  fprintf(out,
          "usage: sar-migconsumer --peers LID[,LID...] --log FILE [--socket PATH] [--name N]\n"
          "                       [--drain-ms MS] [--never-answer]\n"
          "Reference consumer of sar's migration protocol: keeps 'connections' to the given\n"
          "destination base LIDs, uses base+1 (the highLID) between MOVE_HIGH and MOVE_BACK,\n"
          "and appends one JSON line per switch (monotonic and realtime ns) to FILE.\n"
          "Real QP draining and APM need verbs and cannot run on ibsim; --drain-ms simulates a\n"
          "drain. --never-answer (test only) never says drained.\n"
          "Exit codes: 0 stopped by SIGTERM/SIGINT, 2 bad arguments, 3 cannot open FILE.\n");
}

static int parse_peers(consumer_t* c, const char* s) {
  char* copy = strdup(s);
  char* save = NULL;
  char* tok;
  for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    char* end = NULL;
    unsigned long v = strtoul(tok, &end, 0);
    if (*end != '\0' || v == 0 || v >= 0xC000 || c->npeers >= MAX_PEERS) {
      free(copy);
      return -1;
    }
    c->peers[c->npeers++] = (unsigned)v;
  }
  free(copy);
  return c->npeers > 0 ? 0 : -1;
}

int main(int argc, char** argv) {
  static const struct option opts[] = {
      {"socket", required_argument, 0, 's'},   {"name", required_argument, 0, 'n'},
      {"peers", required_argument, 0, 'p'},    {"log", required_argument, 0, 'l'},
      {"drain-ms", required_argument, 0, 'd'}, {"never-answer", no_argument, 0, 'N'},
      {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
  consumer_t c;
  const char* socket_path = SAR_MIG_DEFAULT_SOCKET;
  const char* log_path = NULL;
  char default_name[32];
  struct sigaction sa;
  int opt;
  memset(&c, 0, sizeof(c));
  snprintf(default_name, sizeof(default_name), "consumer-%d", (int)getpid());
  c.name = default_name;
  while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
    switch (opt) {
      case 's':
        socket_path = optarg;
        break;
      case 'n':
        c.name = optarg;
        break;
      case 'p':
        if (parse_peers(&c, optarg) != 0) {
          fprintf(stderr, "sar-migconsumer: --peers %s: expected LIDs 1..0xBFFF, comma-separated\n",
                  optarg);
          return 2;
        }
        break;
      case 'l':
        log_path = optarg;
        break;
      case 'd':
        c.drain_ms = atoi(optarg);
        break;
      case 'N':
        c.never_answer = 1;
        break;
      case 'h':
        usage(stdout);
        return 0;
      default:
        usage(stderr);
        return 2;
    }
  }
  if (c.npeers == 0 || log_path == NULL || optind != argc || c.drain_ms < 0) {
    usage(stderr);
    return 2;
  }
  c.log = fopen(log_path, "a");
  if (!c.log) {
    fprintf(stderr, "sar-migconsumer: %s: %s\n", log_path, strerror(errno));
    return 3;
  }
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);

  log_switch(&c, "start", 0, 0);
  while (!g_stop) {
    char* err = NULL;
    if (!c.client) {
      c.client = sar_mig_connect(socket_path, c.name, 1000, &err);
      if (!c.client) {
        fprintf(stderr, "sar-migconsumer %s: %s; retrying\n", c.name, err);
        sar_mig_free(err);
        sleep_ms(300);
        continue;
      }
      fprintf(stderr, "sar-migconsumer %s: registered at %s\n", c.name, socket_path);
      log_switch(&c, "registered", c.epoch, 0);
    }
    if (sar_mig_dispatch(c.client, 200, on_event, &c, &err) < 0) {
      fprintf(stderr, "sar-migconsumer %s: %s; reconnecting\n", c.name, err);
      sar_mig_free(err);
      sar_mig_close(c.client);
      c.client = NULL;
    }
  }
  sar_mig_close(c.client);
  log_switch(&c, "stop", c.epoch, 0);
  fclose(c.log);
  return 0;
}
