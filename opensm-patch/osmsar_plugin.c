/* osmsar: an OpenSM event plugin that registers the routing engine "sar" (docs/opensm-plugin.md).
 *
 * This file is the osm_event_plugin OpenSM loads: create (config, the plugin's thread, engine
 * registration, SIGUSR2), delete, and report (LFT changes, routing-done, traps). SIGUSR2 asks
 * OpenSM for a reroute, which re-reads the job mapping. The engine's callbacks are in
 * osmsar_routing.c, the subnet copy in osmsar_subnet.c, migration mode's driver in
 * osmsar_migration.c; osmsar.h has the shared state and the locking rules. Only these files
 * include OpenSM's headers (they do not compile as C++); routing goes through libsar's C API. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "osmsar.h"

/* Test only (tests/integration/test_fault_matrix.py): a routing pass lasts milliseconds, too
 * short to SIGSTOP or SIGKILL OpenSM in a chosen stage from outside. If $OSMSAR_TEST_STOP_FILE
 * names a file holding `stage` ("signal": SIGUSR2 taken, before the reroute is asked for;
 * "routing": in the routing callback, before routing; "push": at the first acknowledged LFT
 * block), the file is removed and OpenSM stops itself (SIGSTOP), exactly as a SIGSTOP from
 * outside at that point would; the test then sends SIGCONT or SIGKILL. One-shot per arming.
 * Unset (any production OpenSM), it costs one getenv() per stage. */
void osmsar_test_stop_point(osm_opensm_t* osm, const char* stage) {
  const char* path = getenv("OSMSAR_TEST_STOP_FILE");
  char buf[16] = {0};
  FILE* f;
  if (!path || !*path || !(f = fopen(path, "re"))) return;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) buf[--n] = 0;
  if (strcmp(buf, stage) != 0 || unlink(path) != 0) return;
  OSM_LOG(&osm->log, OSM_LOG_INFO, "osmsar: test stop point '%s': SIGSTOP\n", stage);
  raise(SIGSTOP);
}

/* Writes p->ready_file ("osmsar <pid>\n", 0644, atomically) if not yet done; logs a failure once
 * per attempt at level `level`. Caller holds p->mutex or is the only thread. */
void osmsar_write_ready_file_locked(osmsar_t* p, int level) {
  char tmp[sizeof p->ready_file + 16], text[64];
  int fd, len, ok;
  if (p->ready_written || !p->ready_file[0] || !p->handler_installed) return;
  snprintf(tmp, sizeof tmp, "%s.tmp", p->ready_file);
  len = snprintf(text, sizeof text, "osmsar %ld\n", (long)getpid());
  /* The directory belongs to sar-filterd's user, and OpenSM runs as root: never follow or reuse
   * what is at the temporary name (a planted symbolic link would have root truncate its
   * target). O_EXCL after the unlink creates a new file or fails. */
  unlink(tmp);
  fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  ok = fd >= 0 && write(fd, text, (size_t)len) == len;
  if (fd >= 0 && close(fd) != 0) ok = 0;
  if (ok && rename(tmp, p->ready_file) == 0) {
    p->ready_written = 1;
    OSM_LOG(&p->osm->log, OSM_LOG_INFO, "osmsar: ready file %s written\n", p->ready_file);
    return;
  }
  OSM_LOG(&p->osm->log, level,
          "osmsar: cannot write the ready file %s: %s (a sar-filterd that cannot read "
          "/proc/%ld/maps will not signal this OpenSM; retried at each routing pass)\n",
          p->ready_file, strerror(errno), (long)getpid());
  if (fd >= 0) unlink(tmp);
}

/* The write end of the self-pipe, for the signal handler (which gets no context argument). */
static volatile sig_atomic_t osmsar_signal_fd = -1;

static void osmsar_on_sigusr2(int signum) {
  int saved = errno;
  (void)signum;
  if (osmsar_signal_fd >= 0) {
    const char c = 'r';
    ssize_t n = write(osmsar_signal_fd, &c, 1); /* async-signal-safe; a full pipe is fine */
    (void)n;
  }
  errno = saved;
}

uint64_t osmsar_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Wakes the plugin's thread (from any thread; never blocks: a full pipe already wakes it). */
void osmsar_wake(osmsar_t* p, char c) {
  ssize_t n = write(p->pipe_fd[1], &c, 1);
  (void)n;
}

/* Queues an event for the thread. REQUIRES: p->mutex held. */
void osmsar_queue_event_locked(osmsar_t* p, const mig_event_t* e) {
  if (p->queued >= MIG_QUEUE) {
    p->dropped_events++;
    return;
  }
  p->queue[p->queued++] = *e;
}

/* Waits for SIGUSR2 (via the pipe) and asks OpenSM for a reroute the way its console's
 * "reroute" command does; OpenSM's state manager thread then runs the routing pass. In
 * migration mode the coordinator's loop runs instead. */
static void* osmsar_thread(void* arg) {
  osmsar_t* p = arg;
  if (p->mig) {
    osmsar_mig_thread_loop(p);
    return NULL;
  }
  for (;;) {
    char buf[64];
    struct pollfd pfd = {.fd = p->pipe_fd[0], .events = POLLIN};
    if (poll(&pfd, 1, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    ssize_t n = read(p->pipe_fd[0], buf, sizeof buf);
    if (n <= 0) continue;
    if (memchr(buf, 'q', (size_t)n)) break;
    OSM_LOG(&p->osm->log, OSM_LOG_INFO,
            "osmsar: SIGUSR2: rerouting with the current job mapping\n");
    osmsar_test_stop_point(p->osm, "signal");
    p->osm->subn.force_reroute = TRUE;
    osm_opensm_sweep(p->osm);
  }
  return NULL;
}

static void osmsar_delete(void* data);

static void* osmsar_create(osm_opensm_t* osm) {
  osmsar_t* p = calloc(1, sizeof *p);
  const char* conf = osm->subn.opt.event_plugin_options;
  char* err = NULL;
  struct sigaction sa;
  if (!p) return NULL;
  p->osm = osm;
  p->pipe_fd[0] = p->pipe_fd[1] = -1;
  pthread_mutex_init(&p->mutex, NULL);
  OsmsarConfigInit(&p->config);
  if (conf && *conf) {
    if (OsmsarReadConfig(conf, &p->config, &err) != 0) {
      OSM_LOG(&osm->log, OSM_LOG_ERROR,
              "osmsar: config error: %s; routing engine '" OSMSAR_ENGINE_NAME "' not registered\n",
              err ? err : "out of memory");
      sar_free(err);
      osmsar_delete(p);
      return NULL;
    }
  } else {
    OSM_LOG(&osm->log, OSM_LOG_INFO,
            "osmsar: no event_plugin_options: built-in defaults (no job mapping, dfsssp)\n");
  }
  p->options = OsmsarOptions(&p->config);
  if (!p->options) {
    OSM_LOG(&osm->log, OSM_LOG_ERROR, "osmsar: out of memory\n");
    osmsar_delete(p);
    return NULL;
  }
  if (!p->config.migration) {
    p->memory = sar_memory_create();
    if (!p->memory) {
      OSM_LOG(&osm->log, OSM_LOG_ERROR, "osmsar: out of memory\n");
      osmsar_delete(p);
      return NULL;
    }
    sar_options_set_memory(p->options, p->memory);
  } else {
    sar_mig_config_t mc = {(uint32_t)p->config.ack_timeout_ms,
                           (uint32_t)p->config.repath_timeout_ms, 30000, p->config.exclude_after,
                           0};
    /* Epochs start at wall-clock seconds since 2023-11-14 (> 0): after an OpenSM restart they
     * continue above the old ones, which agents would otherwise ignore as replays. */
    const time_t now_s = time(NULL);
    mc.first_epoch = now_s > 1700000000 ? (uint32_t)(now_s - 1700000000) : 1;
    /* highLIDs need LMC 1: without it no route could move off the base LIDs. */
    if (osm->subn.opt.lmc != 1) {
      OSM_LOG(&osm->log, OSM_LOG_ERROR,
              "osmsar: config error: %s: migration on needs 'lmc 1' in opensm.conf (it is %u); "
              "routing engine '" OSMSAR_ENGINE_NAME "' not registered\n",
              conf, (unsigned)osm->subn.opt.lmc);
      osmsar_delete(p);
      return NULL;
    }
    p->mig = sar_mig_create(&mc, &err);
    if (p->mig) p->inbox = sar_mig_inbox_create();
    if (!p->mig || !p->inbox) {
      OSM_LOG(&osm->log, OSM_LOG_ERROR, "osmsar: migration: %s\n", err ? err : "out of memory");
      sar_free(err);
      osmsar_delete(p);
      return NULL;
    }
  }
  if (pipe(p->pipe_fd) != 0 || fcntl(p->pipe_fd[1], F_SETFL, O_NONBLOCK) != 0 ||
      fcntl(p->pipe_fd[0], F_SETFD, FD_CLOEXEC) != 0 ||
      fcntl(p->pipe_fd[1], F_SETFD, FD_CLOEXEC) != 0) {
    OSM_LOG(&osm->log, OSM_LOG_ERROR, "osmsar: pipe: %s\n", strerror(errno));
    osmsar_delete(p);
    return NULL;
  }
  if (pthread_create(&p->thread, NULL, osmsar_thread, p) != 0) {
    OSM_LOG(&osm->log, OSM_LOG_ERROR, "osmsar: cannot start its thread\n");
    osmsar_delete(p);
    return NULL;
  }
  p->thread_started = 1;
  {
    external_routing_engine_module_t module = {OSMSAR_ENGINE_NAME, osmsar_routing_setup, p};
    if (osm_register_external_routing_engine(osm, &module, p) != CL_SUCCESS) {
      OSM_LOG(&osm->log, OSM_LOG_ERROR, "osmsar: cannot register routing engine '%s'\n",
              OSMSAR_ENGINE_NAME);
      osmsar_delete(p);
      return NULL;
    }
  }
  osmsar_signal_fd = p->pipe_fd[1];
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = osmsar_on_sigusr2;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  if (sigaction(SIGUSR2, &sa, &p->old_usr2) == 0)
    p->handler_installed = 1;
  else
    OSM_LOG(&osm->log, OSM_LOG_ERROR, "osmsar: sigaction(SIGUSR2): %s\n", strerror(errno));
  if (p->config.mapping_file[0]) {
    snprintf(p->ready_file, sizeof p->ready_file, "%s.ready", p->config.mapping_file);
    pthread_mutex_lock(&p->mutex);
    osmsar_write_ready_file_locked(p, OSM_LOG_ERROR);
    pthread_mutex_unlock(&p->mutex);
  }
  OSM_LOG(&osm->log, OSM_LOG_INFO,
          "osmsar: routing engine '%s' registered (config %s: engine %s, mapping_file %s, "
          "num_vls %d, threads %d); SIGUSR2 reroutes\n",
          OSMSAR_ENGINE_NAME, conf && *conf ? conf : "(defaults)", p->config.engine,
          p->config.mapping_file[0] ? p->config.mapping_file : "(none)", p->config.num_vls,
          p->config.threads);
  if (p->mig)
    OSM_LOG(&osm->log, OSM_LOG_INFO,
            "osmsar: migration on: base LIDs by %s on SLs 0..%d, highLIDs by updn on SL %d; ack "
            "timeout %d ms, RePath timeout %d ms, exclusion after %d missed epochs, ack scope %s, "
            "status file %s\n",
            p->config.engine, p->config.num_vls - 2, p->config.num_vls - 1,
            p->config.ack_timeout_ms, p->config.repath_timeout_ms, p->config.exclude_after,
            p->config.ack_scope_changed ? "changed" : "all",
            p->config.status_file[0] ? p->config.status_file : "(none)");
  return p;
}

static void osmsar_delete(void* data) {
  osmsar_t* p = data;
  if (!p) return;
  if (p->handler_installed) sigaction(SIGUSR2, &p->old_usr2, NULL);
  /* This OpenSM no longer catches SIGUSR2 for sar. */
  if (p->ready_written) unlink(p->ready_file);
  osmsar_signal_fd = -1;
  if (p->thread_started) {
    const char c = 'q';
    while (write(p->pipe_fd[1], &c, 1) < 0 && errno == EINTR)
      ;
    pthread_join(p->thread, NULL);
  }
  if (p->pipe_fd[0] >= 0) close(p->pipe_fd[0]);
  if (p->pipe_fd[1] >= 0) close(p->pipe_fd[1]);
  sar_result_destroy(p->result);
  sar_result_destroy(p->planned);
  sar_mig_inbox_destroy(p->inbox);
  sar_mig_destroy(p->mig);
  sar_options_destroy(p->options);
  sar_memory_destroy(p->memory);
  pthread_mutex_destroy(&p->mutex);
  free(p->pass.changed);
  free(p);
}

/* LFT_CHANGE fires as a switch acknowledges a changed LFT block (not in the first sweep): one
 * line per block below INFO, at VERBOSE (OpenSM's -D 0x04; not DEBUG 0x08, which brings
 * OpenSM's own debug lines too: 1.4 million in test_osmsar_plugin's FT(2;20,18)), so tests and
 * operators can see what a reroute sent; and a count for the pass's INFO summary. */
static void osmsar_report(void* data, osm_epi_event_id_t id, void* event) {
  osmsar_t* p = data;
  const osm_epi_lft_change_event_t* e = event;
  unsigned long blocks;
  if (p->mig && id == OSM_EVENT_ID_TRAP) {
    osmsar_mig_report_trap(p, event);
    return;
  }
  if (id == OSM_EVENT_ID_UCAST_ROUTING_DONE) {
    osmsar_write_metrics_textfile(p);
    osmsar_pass_log_summary(p);
  }
  if (p->mig && id == OSM_EVENT_ID_UCAST_ROUTING_DONE) {
    mig_event_t done = {.kind = EV_ROUTING_DONE, .at_ms = osmsar_now_ms()};
    pthread_mutex_lock(&p->mutex);
    done.epoch = p->installed_epoch;
    p->installed_epoch = 0;
    p->fors_pushed |= p->fors_installed; /* the plugin's thread publishes when the epoch ends */
    p->fors_installed = 0;
    osmsar_queue_event_locked(p, &done);
    pthread_mutex_unlock(&p->mutex);
    osmsar_wake(p, 'e');
    return;
  }
  /* OpenSM reports routing-done once every switch acknowledged its LFT blocks (after
   * wait_for_pending_transactions), without its lock: the tables are in the switches. */
  if (id == OSM_EVENT_ID_UCAST_ROUTING_DONE) {
    pthread_mutex_lock(&p->mutex);
    if (p->fors_installed) osmsar_publish_fors_locked(p, "tables in the switches");
    p->fors_installed = 0;
    pthread_mutex_unlock(&p->mutex);
    return;
  }
  if (id != OSM_EVENT_ID_LFT_CHANGE || !(e->flags & LFT_CHANGED_BLOCK)) return;
  pthread_mutex_lock(&p->mutex); /* read by write_metrics_textfile */
  blocks = ++p->lft_blocks;
  osmsar_pass_count_block_locked(p, cl_ntoh64(osm_node_get_node_guid(e->p_sw->p_node)));
  pthread_mutex_unlock(&p->mutex);
  OSM_LOG(&p->osm->log, OSM_LOG_VERBOSE,
          "osmsar: LFT block %u of switch 0x%016" PRIx64 " changed (%lu since load)\n",
          e->block_num, cl_ntoh64(osm_node_get_node_guid(e->p_sw->p_node)), blocks);
  osmsar_test_stop_point(p->osm, "push");
}

#if OSM_EVENT_PLUGIN_INTERFACE_VER != 2
#error OpenSM event plugin interface version mismatch
#endif

__attribute__((visibility("default")))
osm_event_plugin_t osm_event_plugin = {OSM_VERSION, osmsar_create, osmsar_delete, osmsar_report};
