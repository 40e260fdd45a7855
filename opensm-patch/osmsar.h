/* osmsar: the plugin's shared state and the functions its files call across
 * (docs/opensm-plugin.md). Internal to libosmsar.so: only osm_event_plugin (osmsar_plugin.c) is
 * exported.
 *
 *   osmsar_plugin.c     the osm_event_plugin: create/delete, the plugin's thread and SIGUSR2, the
 *                       ready file, report() (LFT changes, routing-done, traps)
 *   osmsar_subnet.c     OpenSM's subnet copied into libsar's flat arrays, and its fingerprint
 *   osmsar_routing.c    the routing engine's callbacks: route, install, keep the previous
 *                       tables on failure, path_sl, SL-to-VL; pass metrics; FORS publishing
 *   osmsar_migration.c  migration mode's driver on the plugin's thread: plan, notices, acks
 *
 * Locking: OpenSM calls ucast_build_fwd_tables with its big lock held exclusively and path_sl
 * from SA threads; `mutex` guards the result pointers so they never race. The plugin's thread
 * takes OpenSM's lock shared only to copy the subnet and to send notices, never while waiting;
 * report() takes only the plugin's mutex. */
#pragma once

#include <complib/cl_qmap.h>
#include <opensm/osm_event_plugin.h>
#include <opensm/osm_inform.h>
#include <opensm/osm_log.h>
#include <opensm/osm_node.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_port.h>
#include <opensm/osm_subnet.h>
#include <opensm/osm_switch.h>
#include <opensm/osm_version.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>

#include "osmsar_config.h"
#include "osmsar_subnet.h"
#include "sar/c.h"
#include "sar/migration/migration_wire.h"

#define OSMSAR_ENGINE_NAME "sar"

/* Test only: a build with -DOSMSAR_TEST_NO_HOLD pushes planned tables at once, without waiting
 * for acks, so the integration test can show that its hold check fails without the hold. */
#ifdef OSMSAR_TEST_NO_HOLD
#define OSMSAR_NO_HOLD 1
#else
#define OSMSAR_NO_HOLD 0
#endif

/* An event for the plugin's thread, queued by report() or the routing callback. Acks do not
 * go here but to the ack inbox (sar_mig_inbox_*): a flood of forged acks must not fill this
 * queue and push out honest acks, routing-done or topology events. */
typedef struct mig_event {
  enum { EV_ROUTING_DONE, EV_TOPOLOGY } kind;
  uint64_t at_ms;
  uint32_t epoch; /* EV_ROUTING_DONE: the epoch whose tables the pass installed (0: none) */
} mig_event_t;

#define MIG_QUEUE 256     /* events beyond wait for nothing: dropped and counted (a trap storm) */
#define MIG_ACK_BATCH 256 /* acks taken from the inbox at a time */

/* One routing pass as the summary line at routing-done tells it (guarded by osmsar_t.mutex):
 * what the routing callback did, and the LFT blocks the switches then acknowledged as changed.
 * The per-block lines are VERBOSE; this one line per pass is INFO. */
typedef struct pass_summary {
  int open; /* the routing callback ran; routing-done not yet reported */
  uint64_t start_ms;
  char engine[32];
  char result[96];
  int switches_routed;
  unsigned long blocks;
  /* GUIDs of the switches with a changed block: open addressing, 0 = empty slot. */
  uint64_t* changed;
  size_t changed_cap, changed_count;
  int changed_lost; /* out of memory: changed_count is a lower bound */
} pass_summary_t;

typedef struct osmsar {
  osm_opensm_t* osm;
  OsmsarConfig config;
  sar_options_t* options; /* made from config */
  /* Kept from pass to pass and set in `options` (sar_options_set_memory): engine dmodc reroutes
   * incrementally. Only the routing callback routes with `options` outside migration mode; in
   * migration mode the plugin's thread plans with them too, so there is none (one pass at a time
   * per memory). */
  sar_memory_t* memory;
  pthread_mutex_t mutex; /* guards everything below up to the thread's own fields */
  sar_result_t* result;  /* tables installed by the last pass, NULL before one */
  uint64_t result_fp;    /* the topology they were routed on (migration mode) */
  /* Migration mode. */
  sar_result_t* planned; /* the plan of planned_epoch, held until released */
  uint64_t planned_fp;
  uint32_t planned_epoch;
  uint32_t released_epoch;  /* the next pass installs `planned` (0: none released) */
  uint32_t installed_epoch; /* whose tables the last pass installed (0: none of ours) */
  /* FORS schedules are published once the tables that carry them are in the switches: set when
   * a pass installs a new table set; at OpenSM's routing-done it becomes fors_pushed (outside
   * migration mode the schedules are published right there). In migration mode the plugin's
   * thread publishes once the epoch that pushed them has ended (its RePath sent and acked or
   * timed out): the job's traffic is back on the base LIDs the schedule is for. */
  int fors_installed;
  int fors_pushed;
  mig_event_t queue[MIG_QUEUE];
  int queued;
  unsigned long dropped_events;
  /* Acks from report(): one slot per participant of the current or last epoch; acks from other
   * ports are only counted (sar_mig_inbox_offer). */
  sar_mig_inbox_t* inbox;
  /* The plugin's thread only. */
  sar_mig_t* mig;
  int pipe_fd[2]; /* self-pipe: SIGUSR2 writes 'r', events 'e', delete writes 'q' */
  pthread_t thread;
  int thread_started;
  struct sigaction old_usr2;
  int handler_installed;
  unsigned long lft_blocks; /* LFT_CHANGE events with a changed block, since load */
  pass_summary_t pass;
  /* The passes' figures for metrics_textfile (guarded by mutex): counted by the routing callback,
   * written at routing-done, when OpenSM holds no lock. */
  unsigned long passes_ok, passes_failed;
  double last_route_ms, last_check_ms;
  int last_layers, last_switches, last_fors_jobs, last_fors_none;
  time_t last_pass_unix;
  /* "<mapping_file>.ready": says this OpenSM (pid) has the plugin and catches SIGUSR2, for a
   * sar-filterd that may not read OpenSM's /proc/<pid>/maps (a system user: docs/operations.md).
   * Guarded by mutex: written at load and retried by routing passes until it succeeds. */
  char ready_file[OSMSAR_PATH_MAX + 8];
  int ready_written;
  uint32_t notice_seq; /* the plugin's thread: sequence number of its notices */
} osmsar_t;

/* --- osmsar_plugin.c ---------------------------------------------------------------------- */

/* Test stop points (tests/integration/test_fault_matrix.py); see the definition. */
void osmsar_test_stop_point(osm_opensm_t* osm, const char* stage);
/* CLOCK_MONOTONIC in milliseconds. */
uint64_t osmsar_now_ms(void);
/* Wakes the plugin's thread (from any thread; never blocks: a full pipe already wakes it). */
void osmsar_wake(osmsar_t* p, char c);
/* Queues an event for the thread. REQUIRES: p->mutex held. */
void osmsar_queue_event_locked(osmsar_t* p, const mig_event_t* e);
/* Writes the ready file if not yet done (see the definition). Caller holds p->mutex or is the
 * only thread. */
void osmsar_write_ready_file_locked(osmsar_t* p, int level);

/* --- osmsar_routing.c ---------------------------------------------------------------------- */

/* The routing engine's callbacks (osm_routing_engine setup). */
int osmsar_routing_setup(struct osm_routing_engine* re, osm_opensm_t* osm);
/* Publishes p->result's FORS schedules. Caller holds p->mutex and not OpenSM's lock. */
void osmsar_publish_fors_locked(osmsar_t* p, const char* when);
/* metrics_textfile, at routing-done without OpenSM's lock. */
void osmsar_write_metrics_textfile(osmsar_t* p);
/* The pass summary: a changed LFT block of switch `guid` (caller holds p->mutex), and the one
 * INFO line at routing-done. */
void osmsar_pass_count_block_locked(osmsar_t* p, uint64_t guid);
void osmsar_pass_log_summary(osmsar_t* p);

/* --- osmsar_migration.c -------------------------------------------------------------------- */

/* The coordinator's loop on the plugin's thread (migration mode), until 'q' on the pipe. */
void osmsar_mig_thread_loop(osmsar_t* p);
/* A trap reached OpenSM: SAR's vendor acks go to the inbox; never sends or waits. */
void osmsar_mig_report_trap(osmsar_t* p, const ib_mad_notice_attr_t* ntc);
