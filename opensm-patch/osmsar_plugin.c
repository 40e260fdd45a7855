/* osmsar: an OpenSM event plugin that registers the routing engine "sar".
 *
 * The only file that includes OpenSM's headers (they do not compile as C++). Every routing pass
 * copies the subnet into flat arrays, lets libsar (through its C API, sar/c.h) route it, and copies
 * the tables into the switches' new_lft; OpenSM then sends the blocks that changed. The routes'
 * virtual layers answer path_sl, so SA path records carry the layer as SL; update_sl2vl maps
 * SL i to VL i. SIGUSR2 asks OpenSM for a reroute, which re-reads the job mapping. Outside
 * migration mode one libsar memory handle (sar_memory_t) lives as long as the plugin and goes
 * with every pass: engine dmodc then recomputes only what the cables that changed since the last
 * pass can reach (the same tables as a full pass); the pass's notes in the log say which.
 *
 * Migration mode (`migration on`, LMC 1): the five-phase baseLID/highLID update of the SAR paper
 * (Sec. 3.3). libsar's coordinator (sar_mig_*, a pure state machine) decides; this file carries
 * out its actions on the plugin's own thread: plan (route a snapshot of the subnet, push
 * nothing), send UnPath/RePath notices, release the planned tables with a forced reroute. The
 * routing callback never waits and never plans: it installs the table set that is current
 * (the old one while held, the planned one once released) and routes afresh only when the
 * topology changed (a fault is routed around at once; the coordinator then aborts and
 * re-plans). Acks arrive as vendor traps in report(), which only queues them.
 *
 * Locking: OpenSM calls ucast_build_fwd_tables with its big lock held exclusively and path_sl
 * from SA threads; a mutex guards the result pointers so they never race. The plugin's thread
 * takes OpenSM's lock shared only to copy the subnet and to send notices, never while waiting;
 * report() takes only the plugin's mutex. */
#include <complib/cl_qmap.h>
#include <errno.h>
#include <fcntl.h>
#include <opensm/osm_event_plugin.h>
#include <opensm/osm_inform.h>
#include <opensm/osm_log.h>
#include <opensm/osm_node.h>
#include <opensm/osm_opensm.h>
#include <opensm/osm_port.h>
#include <opensm/osm_subnet.h>
#include <opensm/osm_switch.h>
#include <opensm/osm_version.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "osmsar_config.h"
#include "sar/c.h"
#include "sar/migration_wire.h"

#define OSMSAR_ENGINE_NAME "sar"

/* Test only: a build with -DOSMSAR_TEST_NO_HOLD pushes planned tables at once, without waiting
 * for acks, so the integration test can show that its hold check fails without the hold. */
#ifdef OSMSAR_TEST_NO_HOLD
#define OSMSAR_NO_HOLD 1
#else
#define OSMSAR_NO_HOLD 0
#endif

/* Test only (tests/integration/test_fault_matrix.py): a routing pass lasts milliseconds, too
 * short to SIGSTOP or SIGKILL OpenSM in a chosen stage from outside. If $OSMSAR_TEST_STOP_FILE
 * names a file holding `stage` ("signal": SIGUSR2 taken, before the reroute is asked for;
 * "routing": in the routing callback, before routing; "push": at the first acknowledged LFT
 * block), the file is removed and OpenSM stops itself (SIGSTOP), exactly as a SIGSTOP from
 * outside at that point would; the test then sends SIGCONT or SIGKILL. One-shot per arming.
 * Unset (any production OpenSM), it costs one getenv() per stage. */
static void test_stop_point(osm_opensm_t* osm, const char* stage) {
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

/* Writes p->ready_file ("osmsar <pid>\n", 0644, atomically) if not yet done; logs a failure once
 * per attempt at level `level`. Caller holds p->mutex or is the only thread. */
static void write_ready_file_locked(osmsar_t* p, int level) {
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

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Wakes the plugin's thread (from any thread; never blocks: a full pipe already wakes it). */
static void wake(osmsar_t* p, char c) {
  ssize_t n = write(p->pipe_fd[1], &c, 1);
  (void)n;
}

/* Queues an event for the thread. REQUIRES: p->mutex held. */
static void queue_event_locked(osmsar_t* p, const mig_event_t* e) {
  if (p->queued >= MIG_QUEUE) {
    p->dropped_events++;
    return;
  }
  p->queue[p->queued++] = *e;
}

static void mig_thread_loop(osmsar_t* p);

/* Waits for SIGUSR2 (via the pipe) and asks OpenSM for a reroute the way its console's
 * "reroute" command does; OpenSM's state manager thread then runs the routing pass. In
 * migration mode the coordinator's loop runs instead. */
static void* osmsar_thread(void* arg) {
  osmsar_t* p = arg;
  if (p->mig) {
    mig_thread_loop(p);
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
    test_stop_point(p->osm, "signal");
    p->osm->subn.force_reroute = TRUE;
    osm_opensm_sweep(p->osm);
  }
  return NULL;
}

/* --- The subnet as flat arrays -------------------------------------------------------------- */

typedef struct node_key {
  uint64_t guid;
  int index;
} node_key_t;

static int cmp_node_key(const void* a, const void* b) {
  const node_key_t *x = a, *y = b;
  return x->guid < y->guid ? -1 : x->guid > y->guid;
}

static int find_node(const node_key_t* keys, int n, uint64_t guid) {
  node_key_t k = {.guid = guid};
  const node_key_t* hit = bsearch(&k, keys, (size_t)n, sizeof k, cmp_node_key);
  return hit ? hit->index : -1;
}

typedef struct flat_subnet {
  int num_nodes, num_ports, num_links;
  sar_node_t* nodes;
  sar_port_t* ports;
  sar_link_t* links;
  char (*desc)[IB_NODE_DESCRIPTION_SIZE + 1];
  osm_node_t** osm_nodes;
  node_key_t* keys;
} flat_subnet_t;

static void flat_free(flat_subnet_t* f) {
  free(f->nodes);
  free(f->ports);
  free(f->links);
  free(f->desc);
  free(f->osm_nodes);
  free(f->keys);
}

static int lmc_of_range(uint16_t min_lid, uint16_t max_lid) {
  int lmc = 0;
  while ((1u << lmc) < (unsigned)(max_lid - min_lid + 1)) lmc++;
  return lmc;
}

static void flat_add_port(flat_subnet_t* f, osm_subn_t* subn, int node, osm_physp_t* physp) {
  uint64_t guid = cl_ntoh64(osm_physp_get_port_guid(physp));
  osm_port_t* port = osm_get_port_by_guid(subn, osm_physp_get_port_guid(physp));
  uint16_t min_lid = 0, max_lid = 0;
  sar_port_t* bp = &f->ports[f->num_ports++];
  if (port) osm_port_get_lid_range_ho(port, &min_lid, &max_lid);
  bp->node = node;
  bp->port = osm_physp_get_port_num(physp);
  bp->guid = guid;
  bp->base_lid = min_lid;
  bp->lmc = min_lid ? lmc_of_range(min_lid, max_lid) : 0;
}

/* The rate the link trained to, from the port's PortInfo as OpenSM last read it: active lanes
 * and speed (extended speeds first: a link at FDR or above reports its base speed as QDR or
 * "extended"). FDR10 lives in a vendor attribute OpenSM keeps elsewhere; such links count as
 * QDR. Unknown values leave the link undeclared (it then counts at the nominal rate). */
static void link_rate(const ib_port_info_t* pi, sar_link_t* l) {
  switch (pi->link_width_active) {
    case IB_LINK_WIDTH_ACTIVE_1X:
      l->width = 1;
      break;
    case IB_LINK_WIDTH_ACTIVE_2X:
      l->width = 2;
      break;
    case IB_LINK_WIDTH_ACTIVE_4X:
      l->width = 4;
      break;
    case IB_LINK_WIDTH_ACTIVE_8X:
      l->width = 8;
      break;
    case IB_LINK_WIDTH_ACTIVE_12X:
      l->width = 12;
      break;
    default:
      l->width = 0;
      break;
  }
  switch (ib_port_info_get_link_speed_ext_active(pi)) {
    case IB_LINK_SPEED_EXT_ACTIVE_14:
      l->speed = SAR_SPEED_FDR;
      break;
    case IB_LINK_SPEED_EXT_ACTIVE_25:
      l->speed = SAR_SPEED_EDR;
      break;
    case IB_LINK_SPEED_EXT_ACTIVE_50:
      l->speed = SAR_SPEED_HDR;
      break;
    default:
      switch (ib_port_info_get_link_speed_active(pi)) {
        case IB_LINK_SPEED_ACTIVE_2_5:
          l->speed = SAR_SPEED_SDR;
          break;
        case IB_LINK_SPEED_ACTIVE_5:
          l->speed = SAR_SPEED_DDR;
          break;
        case IB_LINK_SPEED_ACTIVE_10:
          l->speed = SAR_SPEED_QDR;
          break;
        default:
          l->speed = SAR_SPEED_UNKNOWN;
          break;
      }
  }
  if (l->width == 0 || l->speed == SAR_SPEED_UNKNOWN) l->width = l->speed = 0;
}

/* Copies OpenSM's subnet: nodes, their LIDs (from the LID manager's port objects) and the cables
 * between valid ports, each once. Returns 0 or -1 on allocation failure. */
static int flat_build(osm_subn_t* subn, flat_subnet_t* f) {
  int num_nodes = (int)cl_qmap_count(&subn->node_guid_tbl), i = 0, max_ports = 0;
  cl_map_item_t* item;
  memset(f, 0, sizeof *f);
  f->nodes = calloc((size_t)num_nodes + 1, sizeof *f->nodes);
  f->desc = calloc((size_t)num_nodes + 1, sizeof *f->desc);
  f->osm_nodes = calloc((size_t)num_nodes + 1, sizeof *f->osm_nodes);
  f->keys = calloc((size_t)num_nodes + 1, sizeof *f->keys);
  if (!f->nodes || !f->desc || !f->osm_nodes || !f->keys) return -1;
  for (item = cl_qmap_head(&subn->node_guid_tbl); item != cl_qmap_end(&subn->node_guid_tbl);
       item = cl_qmap_next(item)) {
    osm_node_t* n = (osm_node_t*)item;
    uint8_t type = osm_node_get_type(n);
    if (type != IB_NODE_TYPE_SWITCH && type != IB_NODE_TYPE_CA)
      continue; /* routers are not part of a fat-tree */
    f->osm_nodes[i] = n;
    f->nodes[i].guid = cl_ntoh64(osm_node_get_node_guid(n));
    f->nodes[i].is_switch = type == IB_NODE_TYPE_SWITCH;
    f->nodes[i].num_ports = (int)osm_node_get_num_physp(n) - 1;
    memcpy(f->desc[i], n->node_desc.description, IB_NODE_DESCRIPTION_SIZE);
    f->desc[i][IB_NODE_DESCRIPTION_SIZE] = '\0';
    f->nodes[i].description = f->desc[i];
    f->keys[i].guid = f->nodes[i].guid;
    f->keys[i].index = i;
    max_ports += f->nodes[i].num_ports + 1;
    i++;
  }
  num_nodes = i;
  qsort(f->keys, (size_t)num_nodes, sizeof *f->keys, cmp_node_key);
  f->ports = calloc((size_t)max_ports + 1, sizeof *f->ports);
  f->links = calloc((size_t)max_ports + 1, sizeof *f->links);
  if (!f->ports || !f->links) return -1;
  for (i = 0; i < num_nodes; i++) {
    osm_node_t* n = f->osm_nodes[i];
    int p;
    if (f->nodes[i].is_switch) {
      osm_physp_t* p0 = osm_node_get_physp_ptr(n, 0);
      if (p0 && osm_physp_is_valid(p0)) flat_add_port(f, subn, i, p0);
    }
    for (p = 1; p <= f->nodes[i].num_ports; p++) {
      osm_physp_t* physp = osm_node_get_physp_ptr(n, (uint32_t)p);
      osm_physp_t* remote;
      int peer;
      uint8_t peer_port;
      if (!physp || !osm_physp_is_valid(physp)) continue;
      if (!f->nodes[i].is_switch) flat_add_port(f, subn, i, physp);
      remote = osm_physp_get_remote(physp);
      if (!remote || !osm_physp_is_valid(remote)) continue;
      peer = find_node(f->keys, num_nodes,
                       cl_ntoh64(osm_node_get_node_guid(osm_physp_get_node_ptr(remote))));
      peer_port = osm_physp_get_port_num(remote);
      if (peer < 0 || peer > i || (peer == i && peer_port <= p))
        continue; /* each cable once, from the end seen second */
      f->links[f->num_links].node_a = peer;
      f->links[f->num_links].port_a = peer_port;
      f->links[f->num_links].node_b = i;
      f->links[f->num_links].port_b = p;
      link_rate(&physp->port_info, &f->links[f->num_links]);
      f->num_links++;
    }
  }
  f->num_nodes = num_nodes;
  return 0;
}

/* --- The routing engine callbacks --------------------------------------------------------------
 */

/* FNV-1a over what routing depends on: nodes, their LIDs and the cables with their rates. Equal
 * fingerprints: the same topology (and the same flat node order, which follows OpenSM's
 * GUID-ordered map). */
static uint64_t fp_mix(uint64_t h, uint64_t v) {
  int i;
  for (i = 0; i < 8; i++) {
    h ^= (v >> (8 * i)) & 0xFFu;
    h *= 0x100000001b3ull;
  }
  return h;
}

static uint64_t flat_fingerprint(const flat_subnet_t* f) {
  uint64_t h = 0xcbf29ce484222325ull;
  int i;
  for (i = 0; i < f->num_nodes; i++) {
    h = fp_mix(h, f->nodes[i].guid);
    h = fp_mix(h, (uint64_t)f->nodes[i].num_ports << 1 | (uint64_t)f->nodes[i].is_switch);
  }
  for (i = 0; i < f->num_ports; i++) {
    h = fp_mix(h, (uint64_t)f->ports[i].node << 32 | (uint64_t)f->ports[i].port);
    h = fp_mix(h, (uint64_t)f->ports[i].base_lid << 8 | (uint64_t)f->ports[i].lmc);
  }
  for (i = 0; i < f->num_links; i++) {
    h = fp_mix(h, (uint64_t)f->links[i].node_a << 32 | (uint64_t)f->links[i].port_a);
    h = fp_mix(h, (uint64_t)f->links[i].node_b << 32 | (uint64_t)f->links[i].port_b);
    h = fp_mix(h, (uint64_t)f->links[i].width << 32 | (uint64_t)f->links[i].speed);
  }
  return h;
}

/* Leaves every switch's tables as they are: new_lft = the LFT the switch holds now. */
static void keep_old_tables(osm_subn_t* subn) {
  cl_map_item_t* item;
  for (item = cl_qmap_head(&subn->sw_guid_tbl); item != cl_qmap_end(&subn->sw_guid_tbl);
       item = cl_qmap_next(item)) {
    osm_switch_t* sw = (osm_switch_t*)item;
    if (sw->new_lft && sw->lft) memcpy(sw->new_lft, sw->lft, sw->lft_size);
  }
}

/* Copies `result`'s rows into the switches' new_lft (OpenSM then sends the blocks that differ).
 * Returns the number of switches. */
static int install_tables(const flat_subnet_t* flat, const sar_result_t* result) {
  const uint32_t max_lid = sar_result_max_lid(result);
  int i, switches = 0;
  for (i = 0; i < flat->num_nodes; i++) {
    osm_switch_t* sw = flat->osm_nodes[i]->sw;
    const uint8_t* row = sar_result_lft_row(result, i);
    uint32_t top;
    if (!row || !sw || !sw->new_lft) continue;
    top = sw->max_lid_ho < max_lid ? sw->max_lid_ho : max_lid;
    memset(sw->new_lft, OSM_NO_PATH, sw->lft_size);
    memcpy(sw->new_lft, row, top + 1);
    switches++;
  }
  return switches;
}

/* Routes the flat subnet; NULL and *err on failure. */
static sar_result_t* route_flat(osmsar_t* p, const flat_subnet_t* flat, char** err) {
  sar_result_t* result = NULL;
  sar_fabric_t* fabric = sar_fabric_create(flat->nodes, flat->num_nodes, flat->ports,
                                           flat->num_ports, flat->links, flat->num_links, err);
  if (fabric) result = sar_route(fabric, p->options, err);
  sar_fabric_destroy(fabric);
  return result;
}

/* Routes the flat subnet given the tables its switches hold now (sw->lft, what OpenSM last set
 * and will diff new_lft against) and the job set of the last result, so libsar keeps what costs
 * no quality and running jobs' routes (config `delta`).
 * REQUIRES: OpenSM's lock held (the routing callback holds it); nothing here waits. */
static sar_result_t* route_flat_delta(osmsar_t* p, const flat_subnet_t* flat, char** err) {
  sar_result_t* result = NULL;
  const sar_result_t* last = NULL;
  sar_fabric_t* fabric = NULL;
  const uint8_t** rows = calloc((size_t)flat->num_nodes + 1, sizeof *rows);
  uint8_t* buf = NULL;
  uint32_t max_lid = 0, width;
  int i, switches = 0;
  for (i = 0; i < flat->num_ports; i++) {
    const sar_port_t* bp = &flat->ports[i];
    uint32_t top = bp->base_lid ? bp->base_lid + (1u << bp->lmc) - 1 : 0;
    if (top > max_lid) max_lid = top;
  }
  width = max_lid + 1;
  for (i = 0; i < flat->num_nodes; i++) switches += flat->nodes[i].is_switch;
  buf = malloc((size_t)switches * width + 1);
  if (!rows || !buf) {
    free(rows);
    free(buf);
    return route_flat(p, flat, err); /* out of memory: a full recompute still routes */
  }
  switches = 0;
  for (i = 0; i < flat->num_nodes; i++) {
    const osm_switch_t* sw = flat->osm_nodes[i]->sw;
    uint8_t* row;
    if (!flat->nodes[i].is_switch || !sw || !sw->lft) continue;
    row = buf + (size_t)switches++ * width;
    memset(row, OSM_NO_PATH, width);
    memcpy(row, sw->lft, sw->lft_size < width ? sw->lft_size : width);
    rows[i] = row;
  }
  fabric = sar_fabric_create(flat->nodes, flat->num_nodes, flat->ports, flat->num_ports,
                             flat->links, flat->num_links, err);
  /* The last result installed gives the job set the switches' tables were routed for, so jobs
   * running across this reroute keep their own routes (docs/dfsssp-sar.md). Only this routing
   * thread replaces or frees p->result, so the pointer stays valid after the lock. */
  pthread_mutex_lock(&p->mutex);
  last = p->result;
  pthread_mutex_unlock(&p->mutex);
  if (fabric) result = sar_route_from_previous(fabric, p->options, max_lid, rows, last, err);
  sar_fabric_destroy(fabric);
  free(rows);
  free(buf);
  return result;
}

/* Caller holds p->mutex or is the routing callback before the result is shared. */
static void count_pass_locked(osmsar_t* p, const sar_result_t* result, int switches) {
  p->passes_ok++;
  p->last_route_ms = sar_result_route_ms(result);
  p->last_check_ms = sar_result_check_ms(result);
  p->last_layers = sar_result_num_layers(result);
  p->last_switches = switches;
  p->last_fors_jobs = sar_result_num_fors_jobs(result);
  p->last_fors_none = sar_result_num_fors_none(result);
  p->last_pass_unix = time(NULL);
}

static void count_failed_pass(osmsar_t* p) {
  pthread_mutex_lock(&p->mutex);
  p->passes_failed++;
  p->last_pass_unix = time(NULL);
  pthread_mutex_unlock(&p->mutex);
}

/* A routing pass begins: the summary starts afresh (a pass whose routing-done never came is
 * dropped; its failure was logged where it happened). */
static void pass_begin(osmsar_t* p) {
  pthread_mutex_lock(&p->mutex);
  p->pass.open = 1;
  p->pass.start_ms = now_ms();
  snprintf(p->pass.engine, sizeof p->pass.engine, "(none)");
  snprintf(p->pass.result, sizeof p->pass.result, "(unknown)");
  p->pass.switches_routed = 0;
  p->pass.blocks = 0;
  if (p->pass.changed) memset(p->pass.changed, 0, p->pass.changed_cap * sizeof *p->pass.changed);
  p->pass.changed_count = 0;
  p->pass.changed_lost = 0;
  pthread_mutex_unlock(&p->mutex);
}

/* What the routing callback ended with: `result` (NULL after a failure) and its outcome. */
static void pass_outcome(osmsar_t* p, const sar_result_t* result, int switches,
                         const char* outcome) {
  pthread_mutex_lock(&p->mutex);
  if (result) snprintf(p->pass.engine, sizeof p->pass.engine, "%s", sar_result_engine(result));
  snprintf(p->pass.result, sizeof p->pass.result, "%s", outcome);
  p->pass.switches_routed = switches;
  pthread_mutex_unlock(&p->mutex);
}

/* Adds `guid` to the pass's set of switches with a changed block. Caller holds p->mutex. */
static void pass_add_switch_locked(pass_summary_t* s, uint64_t guid) {
  size_t i;
  if (guid == 0) return;
  if (2 * (s->changed_count + 1) > s->changed_cap) {
    const size_t cap = s->changed_cap ? 2 * s->changed_cap : 64;
    uint64_t* grown = calloc(cap, sizeof *grown);
    if (!grown) {
      s->changed_lost = 1;
      return;
    }
    for (i = 0; i < s->changed_cap; i++) {
      size_t j;
      if (!s->changed[i]) continue;
      for (j = (size_t)(s->changed[i] % cap); grown[j]; j = (j + 1) % cap)
        ;
      grown[j] = s->changed[i];
    }
    free(s->changed);
    s->changed = grown;
    s->changed_cap = cap;
  }
  for (i = (size_t)(guid % s->changed_cap); s->changed[i]; i = (i + 1) % s->changed_cap)
    if (s->changed[i] == guid) return;
  s->changed[i] = guid;
  s->changed_count++;
}

/* Routing-done: the pass's one INFO line (the tables are in the switches). */
static void pass_log_summary(osmsar_t* p) {
  pass_summary_t s;
  pthread_mutex_lock(&p->mutex);
  s = p->pass;
  p->pass.open = 0;
  pthread_mutex_unlock(&p->mutex);
  if (!s.open) return;
  OSM_LOG(&p->osm->log, OSM_LOG_INFO,
          "osmsar: pass summary: result %s; engine %s, %d switches routed; %lu LFT blocks "
          "changed on %s%zu switches; tables in the switches %.1f ms after routing began\n",
          s.result, s.engine, s.switches_routed, s.blocks, s.changed_lost ? "at least " : "",
          s.changed_count, (double)(now_ms() - s.start_ms));
}

/* metrics_textfile: the passes in Prometheus' text format, for node_exporter's textfile
 * collector (a file, not an endpoint: no socket or thread inside OpenSM). Called at routing-done
 * without OpenSM's lock; the file is written outside p->mutex too. */
static void write_metrics_textfile(osmsar_t* p) {
  char text[2048], *err = NULL;
  int n;
  if (!p->config.metrics_textfile[0]) return;
  pthread_mutex_lock(&p->mutex);
  n = snprintf(
      text, sizeof text,
      "# HELP sar_osmsar_passes_total Routing passes of the sar plugin, by result (failed: the "
      "previous tables kept, or OpenSM's fallback engine).\n"
      "# TYPE sar_osmsar_passes_total counter\n"
      "sar_osmsar_passes_total{result=\"ok\"} %lu\nsar_osmsar_passes_total{result=\"failed\"} %lu\n"
      "# HELP sar_osmsar_lft_blocks_changed_total LFT blocks the switches acknowledged as "
      "changed.\n"
      "# TYPE sar_osmsar_lft_blocks_changed_total counter\nsar_osmsar_lft_blocks_changed_total "
      "%lu\n"
      "# HELP sar_osmsar_last_pass_seconds The last successful pass, by stage.\n"
      "# TYPE sar_osmsar_last_pass_seconds gauge\n"
      "sar_osmsar_last_pass_seconds{stage=\"route\"} %.6f\n"
      "sar_osmsar_last_pass_seconds{stage=\"validate\"} %.6f\n"
      "# HELP sar_osmsar_last_pass_layers Virtual layers (SLs) of the last successful pass.\n"
      "# TYPE sar_osmsar_last_pass_layers gauge\nsar_osmsar_last_pass_layers %d\n"
      "# HELP sar_osmsar_last_pass_switches Switches routed by the last successful pass.\n"
      "# TYPE sar_osmsar_last_pass_switches gauge\nsar_osmsar_last_pass_switches %d\n"
      "# HELP sar_osmsar_fors_jobs Alltoall jobs of the last pass, with FORS routes or without.\n"
      "# TYPE sar_osmsar_fors_jobs gauge\n"
      "sar_osmsar_fors_jobs{fors=\"yes\"} %d\nsar_osmsar_fors_jobs{fors=\"none\"} %d\n"
      "# HELP sar_osmsar_last_pass_timestamp_seconds Unix time of the last pass.\n"
      "# TYPE sar_osmsar_last_pass_timestamp_seconds gauge\n"
      "sar_osmsar_last_pass_timestamp_seconds %ld\n",
      p->passes_ok, p->passes_failed, p->lft_blocks, p->last_route_ms / 1e3, p->last_check_ms / 1e3,
      p->last_layers, p->last_switches, p->last_fors_jobs, p->last_fors_none,
      (long)p->last_pass_unix);
  pthread_mutex_unlock(&p->mutex);
  if (n < 0 || (size_t)n >= sizeof text) return;
  if (sar_write_file_atomic(p->config.metrics_textfile, text, &err) != 0) {
    OSM_LOG(&p->osm->log, OSM_LOG_ERROR, "osmsar: metrics textfile not written: %s\n",
            err ? err : "out of memory");
    sar_free(err);
  }
}

static void log_result(osmsar_t* p, const sar_result_t* result, int switches, const char* what) {
  int i;
  for (i = 0; i < sar_result_num_notes(result); i++)
    OSM_LOG(&p->osm->log, OSM_LOG_INFO, "osmsar: %s\n", sar_result_note(result, i));
  OSM_LOG(&p->osm->log, OSM_LOG_INFO,
          "osmsar: engine %s routed %d switches, %d LIDs max, %d layer(s) in %.1f ms "
          "(validated in %.1f ms)%s\n",
          sar_result_engine(result), switches, (int)sar_result_max_lid(result),
          sar_result_num_layers(result), sar_result_route_ms(result), sar_result_check_ms(result),
          what);
}

/* Publishes the FORS schedules of p->result beside the mapping (docs/fors.md): a schedule per
 * alltoall job with FORS, the "none" file (and a WARN line) per alltoall job without, saying why.
 * Epoch: now. Files that did not change are left as they are. Caller holds p->mutex (path_sl
 * waits for the writes; they never block on what they find) and not OpenSM's lock. */
static void publish_fors_locked(osmsar_t* p, const char* when) {
  char* err = NULL;
  int i, current;
  if (!p->result || !p->config.mapping_file[0]) return;
  for (i = 0; i < sar_result_num_fors_none(p->result); i++)
    OSM_LOG(&p->osm->log, OSM_LOG_INFO,
            "osmsar: WARN: alltoall job %s gets no FORS schedule: %s (its schedule file says "
            "so)\n",
            sar_result_fors_none_job(p->result, i), sar_result_fors_none_reason(p->result, i));
  current = sar_result_publish_fors_schedules(p->result, (uint64_t)time(NULL),
                                              p->config.fors_schedule_gid, &err);
  if (current < 0) {
    OSM_LOG(&p->osm->log, OSM_LOG_ERROR, "osmsar: FORS schedules not written: %s\n", err);
    sar_free(err);
  } else if (sar_result_num_fors_jobs(p->result) + sar_result_num_fors_none(p->result) > 0) {
    OSM_LOG(&p->osm->log, OSM_LOG_INFO,
            "osmsar: FORS schedules published (%s): %d FORS, %d none, %d file(s) current\n", when,
            sar_result_num_fors_jobs(p->result), sar_result_num_fors_none(p->result), current);
  }
}

/* Migration mode's routing callback: installs the current table set, never waits, never plans.
 * Released plan of the same topology -> install it; same topology -> keep the installed set
 * (held or idle: job mapping changes go through an epoch); first pass or a topology change ->
 * route now (a fault beats a withheld migration) and tell the coordinator. */
static int osmsar_build_fwd_tables_mig(osmsar_t* p, flat_subnet_t* flat) {
  const uint64_t fp = flat_fingerprint(flat);
  sar_result_t* fresh = NULL;
  char* err = NULL;
  int switches, topology_changed = 0, routed_now = 0;
  uint32_t installed = 0;

  pthread_mutex_lock(&p->mutex);
  if (p->released_epoch && p->planned && p->planned_fp == fp) {
    installed = p->released_epoch;
    sar_result_destroy(p->result);
    p->result = p->planned;
    p->result_fp = fp;
    p->planned = NULL;
    p->released_epoch = 0;
  } else if (!p->result || p->result_fp != fp || p->released_epoch || OSMSAR_NO_HOLD) {
    routed_now = 1; /* (a release whose plan no longer fits the topology: route it now) */
  }
  pthread_mutex_unlock(&p->mutex);

  if (routed_now) {
    fresh = route_flat(p, flat, &err);
    if (!fresh) {
      int have_old;
      pthread_mutex_lock(&p->mutex);
      have_old = p->result != NULL;
      pthread_mutex_unlock(&p->mutex);
      count_failed_pass(p);
      OSM_LOG(&p->osm->log, OSM_LOG_ERROR, "osmsar: routing failed: %s; %s\n",
              err ? err : "out of memory",
              have_old ? "keeping the previous tables"
                       : "no previous tables: OpenSM falls back to its default engine");
      sar_free(err);
      pass_outcome(p, NULL, 0,
                   have_old ? "failed, previous tables kept" : "failed, OpenSM's default engine");
      if (!have_old) return -1;
      keep_old_tables(&p->osm->subn);
      return 0;
    }
    pthread_mutex_lock(&p->mutex);
    topology_changed = p->result != NULL && p->result_fp != fp;
    /* A released plan of the old topology is superseded: these tables carry the current job
     * mapping on the new topology, which is what the release asked for. */
    if (p->released_epoch) {
      installed = p->released_epoch;
      p->released_epoch = 0;
    }
    sar_result_destroy(p->result);
    p->result = fresh;
    p->result_fp = fp;
    pthread_mutex_unlock(&p->mutex);
  }

  pthread_mutex_lock(&p->mutex);
  switches = install_tables(flat, p->result);
  p->installed_epoch = installed;
  if (routed_now || installed) {
    p->fors_installed = 1;
    p->fors_pushed = 0; /* superseded before it was published */
  }
  if (topology_changed) {
    mig_event_t e = {.kind = EV_TOPOLOGY, .at_ms = now_ms()};
    queue_event_locked(p, &e);
  }
  if (routed_now || installed) {
    count_pass_locked(p, p->result, switches);
    log_result(p, p->result, switches,
               installed          ? " (released plan installed)"
               : topology_changed ? " (topology changed: routed at once, not held)"
                                  : "");
  } else {
    OSM_LOG(&p->osm->log, OSM_LOG_VERBOSE, "osmsar: migration: kept the installed tables (%s)\n",
            p->planned ? "a plan is held until its acks are in" : "no epoch released");
  }
  pthread_mutex_unlock(&p->mutex);
  pass_outcome(p, p->result, switches,
               installed          ? "ok, released plan installed"
               : topology_changed ? "ok, topology changed: routed at once, not held"
               : routed_now       ? "ok"
                                  : "installed tables kept (migration)");
  if (topology_changed) wake(p, 'e');
  return 0;
}

static int osmsar_build_fwd_tables(void* context) {
  osmsar_t* p = context;
  osm_subn_t* subn = &p->osm->subn;
  flat_subnet_t flat;
  sar_result_t* result = NULL;
  char* err = NULL;
  int have_old, switches;

  test_stop_point(p->osm, "routing");
  pass_begin(p);

  /* The mapping's directory may have appeared since load (sar-filterd's unit makes it). */
  pthread_mutex_lock(&p->mutex);
  write_ready_file_locked(p, OSM_LOG_VERBOSE);
  pthread_mutex_unlock(&p->mutex);

  if (flat_build(subn, &flat) != 0) {
    flat_free(&flat);
    count_failed_pass(p);
    OSM_LOG(&p->osm->log, OSM_LOG_ERROR, "osmsar: out of memory copying the subnet\n");
    pthread_mutex_lock(&p->mutex);
    have_old = p->result != NULL;
    pthread_mutex_unlock(&p->mutex);
    pass_outcome(p, NULL, 0,
                 have_old ? "failed, previous tables kept" : "failed, OpenSM's default engine");
    if (!have_old) return -1;
    keep_old_tables(subn);
    return 0;
  }
  if (p->mig) {
    int rc = osmsar_build_fwd_tables_mig(p, &flat);
    flat_free(&flat);
    return rc;
  }
  result = p->config.delta ? route_flat_delta(p, &flat, &err) : route_flat(p, &flat, &err);
  if (!result) {
    pthread_mutex_lock(&p->mutex);
    have_old = p->result != NULL;
    pthread_mutex_unlock(&p->mutex);
    count_failed_pass(p);
    OSM_LOG(&p->osm->log, OSM_LOG_ERROR, "osmsar: routing failed: %s; %s\n",
            err ? err : "out of memory",
            have_old ? "keeping the previous tables"
                     : "no previous tables: OpenSM falls back to its default engine");
    sar_free(err);
    flat_free(&flat);
    pass_outcome(p, NULL, 0,
                 have_old ? "failed, previous tables kept" : "failed, OpenSM's default engine");
    if (!have_old) return -1;
    keep_old_tables(subn);
    return 0;
  }
  switches = install_tables(&flat, result);
  log_result(p, result, switches, "");
  pass_outcome(p, result, switches, "ok");
  flat_free(&flat);
  pthread_mutex_lock(&p->mutex);
  count_pass_locked(p, result, switches);
  sar_result_destroy(p->result);
  p->result = result;
  p->fors_installed = 1; /* its FORS schedules go out at routing-done, once the tables are in */
  pthread_mutex_unlock(&p->mutex);
  return 0;
}

static uint8_t osmsar_path_sl(void* context, uint8_t hint, const ib_net16_t slid,
                              const ib_net16_t dlid) {
  osmsar_t* p = context;
  uint8_t sl = hint;
  pthread_mutex_lock(&p->mutex);
  if (p->result) sl = (uint8_t)sar_result_layer(p->result, cl_ntoh16(slid), cl_ntoh16(dlid));
  pthread_mutex_unlock(&p->mutex);
  return sl;
}

/* SL i -> VL i on every port (with qos TRUE OpenSM asks the engine); SLs beyond the port's
 * operational VLs wrap around, which never happens when num_vls <= the fabric's VLs. */
static void osmsar_update_sl2vl(void* context, osm_physp_t* port, uint8_t in_port, uint8_t out_port,
                                ib_slvl_table_t* t) {
  uint8_t op_vls = ib_port_info_get_op_vls(&port->port_info);
  int vls = op_vls >= 5 ? 15 : op_vls >= 1 ? 1 << (op_vls - 1) : 1;
  int sl;
  (void)context;
  (void)in_port;
  (void)out_port;
  for (sl = 0; sl < IB_MAX_NUM_VLS; sl++)
    ib_slvl_table_set(t, (uint8_t)sl, (uint8_t)(sl == 15 ? 15 : sl % vls));
}

static int osmsar_setup(struct osm_routing_engine* re, osm_opensm_t* osm) {
  (void)osm;
  /* build_lid_matrices stays NULL: OpenSM's own hop matrices serve multicast and SA. */
  re->ucast_build_fwd_tables = osmsar_build_fwd_tables;
  re->path_sl = osmsar_path_sl;
  re->update_sl2vl = osmsar_update_sl2vl;
  return 0;
}

/* --- Migration: the plugin's thread ------------------------------------------------------------
 */

/* The ports subscribed to UnPath or RePath (InformInfo for generic trap 68, 69 or all), once
 * each, by port GID. -1 when out of memory. REQUIRES: OpenSM's lock held (shared). */
static int collect_subscribers(osm_subn_t* subn, sar_mig_gid_t** out) {
  cl_list_item_t* item;
  int n = 0, cap = 0, j, dup;
  sar_mig_gid_t* v = NULL;
  *out = NULL;
  for (item = cl_qlist_head(&subn->sa_infr_list); item != cl_qlist_end(&subn->sa_infr_list);
       item = cl_qlist_next(item)) {
    const osm_infr_t* infr = (const osm_infr_t*)item;
    const ib_inform_info_t* ii = &infr->inform_record.inform_info;
    const uint16_t trap = cl_ntoh16(ii->g_or_v.generic.trap_num);
    sar_mig_gid_t g;
    if (!ii->is_generic ||
        (trap != SAR_MIG_TRAP_UNPATH && trap != SAR_MIG_TRAP_REPATH && trap != 0xFFFF))
      continue;
    g.prefix = cl_ntoh64(infr->inform_record.subscriber_gid.unicast.prefix);
    g.guid = cl_ntoh64(infr->inform_record.subscriber_gid.unicast.interface_id);
    for (j = 0, dup = 0; j < n && !dup; j++) dup = v[j].prefix == g.prefix && v[j].guid == g.guid;
    if (dup) continue;
    if (n == cap) {
      sar_mig_gid_t* bigger = realloc(v, (size_t)(cap ? 2 * cap : 16) * sizeof *v);
      if (!bigger) {
        free(v);
        return -1;
      }
      v = bigger;
      cap = cap ? 2 * cap : 16;
    }
    v[n++] = g;
  }
  *out = v;
  return n;
}

/* Whether two results of the same topology (same flat order) have different tables. */
static int tables_differ(const flat_subnet_t* flat, const sar_result_t* a, const sar_result_t* b) {
  int i;
  if (sar_result_max_lid(a) != sar_result_max_lid(b)) return 1;
  for (i = 0; i < flat->num_nodes; i++) {
    const uint8_t *ra = sar_result_lft_row(a, i), *rb = sar_result_lft_row(b, i);
    if ((ra == NULL) != (rb == NULL)) return 1;
    if (ra && memcmp(ra, rb, sar_result_max_lid(a) + 1) != 0) return 1;
  }
  return 0;
}

/* Phase 1: routes a snapshot of the subnet with the current job mapping and holds the result.
 * OpenSM's lock is held (shared) only while copying the subnet and its subscriptions. */
static void mig_plan(osmsar_t* p, uint32_t epoch) {
  flat_subnet_t flat;
  sar_mig_gid_t *subs = NULL, *parts = NULL;
  int nsubs = -1, nparts = 0, changed = 1, rc, i, j;
  sar_fabric_t* fabric = NULL;
  sar_result_t* result = NULL;
  char* err = NULL;
  uint64_t fp;
  const char* scope = "all subscribers";

  cl_plock_acquire(&p->osm->lock);
  rc = flat_build(&p->osm->subn, &flat);
  if (rc == 0) nsubs = collect_subscribers(&p->osm->subn, &subs);
  cl_plock_release(&p->osm->lock);
  if (rc != 0 || nsubs < 0) {
    flat_free(&flat);
    sar_mig_planned(p->mig, now_ms(), epoch, 0, 0, NULL, 0, "out of memory copying the subnet");
    return;
  }
  fp = flat_fingerprint(&flat);
  fabric = sar_fabric_create(flat.nodes, flat.num_nodes, flat.ports, flat.num_ports, flat.links,
                             flat.num_links, &err);
  if (fabric) result = sar_route(fabric, p->options, &err);
  if (!result) {
    sar_mig_planned(p->mig, now_ms(), epoch, 0, 0, NULL, 0, err ? err : "out of memory");
    sar_free(err);
    sar_fabric_destroy(fabric);
    flat_free(&flat);
    free(subs);
    return;
  }
  parts = subs;
  nparts = nsubs;
  pthread_mutex_lock(&p->mutex);
  if (p->result && p->result_fp == fp) {
    changed = tables_differ(&flat, p->result, result);
    if (changed && p->config.ack_scope_changed && nsubs > 0) {
      /* Only the ports that are an end of a route whose path changes. */
      int max = flat.num_ports, count;
      uint64_t* guids = calloc((size_t)max + 1, sizeof *guids);
      parts = guids ? calloc((size_t)nsubs, sizeof *parts) : NULL;
      count = parts ? sar_changed_ports(fabric, p->result, result, guids, max, &err) : -1;
      if (count < 0) {
        free(parts);
        parts = subs; /* fall back to everyone: safe */
        nparts = nsubs;
      } else {
        nparts = 0;
        for (i = 0; i < nsubs; i++)
          for (j = 0; j < count && j < max; j++)
            if (guids[j] == subs[i].guid) {
              parts[nparts++] = subs[i];
              break;
            }
        scope = "subscribers on changed routes";
      }
      free(guids);
      sar_free(err);
      err = NULL;
    }
  }
  sar_result_destroy(p->planned);
  p->planned = result;
  p->planned_fp = fp;
  p->planned_epoch = epoch;
  pthread_mutex_unlock(&p->mutex);
  OSM_LOG(&p->osm->log, OSM_LOG_INFO,
          "osmsar: migration epoch %u: planned with engine %s in %.1f ms (validated in %.1f ms); "
          "tables %s; %d subscriber(s), %d asked to ack (%s)\n",
          epoch, sar_result_engine(result), sar_result_route_ms(result),
          sar_result_check_ms(result), changed ? "change" : "unchanged", nsubs, nparts, scope);
  sar_mig_planned(p->mig, now_ms(), epoch, 1, changed, parts, (size_t)nparts, NULL);
  /* Before the UnPath goes out: the inbox keeps this epoch's participants' acks. */
  pthread_mutex_lock(&p->mutex);
  sar_mig_inbox_sync(p->inbox, p->mig);
  pthread_mutex_unlock(&p->mutex);
  if (OSMSAR_NO_HOLD) { /* the test build without the hold: push at once, acks or not */
    p->osm->subn.force_reroute = TRUE;
    osm_opensm_sweep(p->osm);
  }
  if (parts != subs) free(parts);
  free(subs);
  sar_fabric_destroy(fabric);
  flat_free(&flat);
}

/* Sends trap `trap` (68 UnPath / 69 RePath) to its subscribers. Called on the plugin's thread
 * with OpenSM's lock held shared, as osm_report_notice needs; never from report(). */
static void mig_notice(osmsar_t* p, int trap, const sar_mig_msg_t* m) {
  ib_mad_notice_attr_t ntc;
  ib_api_status_t status;
  memset(&ntc, 0, sizeof ntc);
  ntc.generic_type = 0x83;             /* generic, type 3: subnet management */
  ib_notice_set_prod_type_ho(&ntc, 4); /* producer: class manager */
  ntc.g_or_v.generic.trap_num = cl_hton16((uint16_t)trap);
  sar_mig_encode(m, ntc.data_details.raw_data.details);
  cl_plock_acquire(&p->osm->lock);
  ntc.issuer_lid = p->osm->subn.sm_base_lid;
  /* Without the SM's port GID as issuer OpenSM delivers nothing. */
  ntc.issuer_gid.unicast.prefix = p->osm->subn.opt.subnet_prefix;
  ntc.issuer_gid.unicast.interface_id = p->osm->subn.sm_port_guid;
  status = osm_report_notice(&p->osm->log, &p->osm->subn, &ntc);
  cl_plock_release(&p->osm->lock);
  OSM_LOG(&p->osm->log, status == IB_SUCCESS ? OSM_LOG_INFO : OSM_LOG_ERROR,
          "osmsar: migration epoch %u: %s notice (trap %d%s) %s\n", m->epoch,
          trap == SAR_MIG_TRAP_UNPATH ? "UnPath" : "RePath", trap,
          m->flags & SAR_MIG_FLAG_STAY ? ", stay" : "",
          status == IB_SUCCESS ? "sent to the subscribers" : ib_get_err_str(status));
}

/* Carries out the coordinator's actions (planning may queue more). */
static void mig_run_actions(osmsar_t* p) {
  sar_mig_action_t a;
  while (sar_mig_pop_action(p->mig, &a)) {
    sar_mig_msg_t m;
    memset(&m, 0, sizeof m);
    m.epoch = a.epoch;
    m.seq = ++p->notice_seq;
    switch (a.kind) {
      case SAR_MIG_ACT_PLAN:
        mig_plan(p, a.epoch);
        break;
      case SAR_MIG_ACT_UNPATH:
      case SAR_MIG_ACT_REPATH: {
        /* UnPath starts phase 1 with the agents' deadline; RePath starts phase 4 (flags:
         * "stay" after an abort). */
        const int unpath = a.kind == SAR_MIG_ACT_UNPATH;
        m.kind = unpath ? SAR_MIG_UNPATH : SAR_MIG_REPATH;
        m.phase = unpath ? 1 : 4;
        m.deadline_ms = unpath ? a.deadline_ms : 0;
        m.flags = unpath ? 0 : a.flags;
        m.sent_ns = now_ms() * 1000000u;
        mig_notice(p, unpath ? SAR_MIG_TRAP_UNPATH : SAR_MIG_TRAP_REPATH, &m);
        break;
      }
      case SAR_MIG_ACT_RELEASE:
        pthread_mutex_lock(&p->mutex);
        p->released_epoch = a.epoch;
        pthread_mutex_unlock(&p->mutex);
        /* As the console's "reroute": the routing callback installs the released plan. */
        p->osm->subn.force_reroute = TRUE;
        osm_opensm_sweep(p->osm);
        break;
      case SAR_MIG_ACT_DISCARD:
        pthread_mutex_lock(&p->mutex);
        if (p->planned_epoch == a.epoch) {
          sar_result_destroy(p->planned);
          p->planned = NULL;
        }
        pthread_mutex_unlock(&p->mutex);
        break;
      case SAR_MIG_ACT_LOG:
      case SAR_MIG_ACT_LOG_ERROR:
        OSM_LOG(&p->osm->log, a.kind == SAR_MIG_ACT_LOG ? OSM_LOG_INFO : OSM_LOG_ERROR,
                "osmsar: migration %s\n", a.text);
        break;
    }
  }
}

static void mig_write_status(osmsar_t* p) {
  char* err = NULL;
  if (!p->config.status_file[0]) return;
  if (sar_mig_write_status(p->mig, now_ms(), p->config.status_file, &err) != 0) {
    OSM_LOG(&p->osm->log, OSM_LOG_ERROR, "osmsar: migration status: %s\n",
            err ? err : "out of memory");
    sar_free(err);
  }
}

/* Publishes the FORS schedules of tables OpenSM has pushed, unless an epoch is between its push
 * and the end of its RePath (phases 3-4): the job's traffic returns to the base LIDs the schedule
 * is for only then. A table set routed at once (first pass, topology change) goes out at its
 * routing-done when no epoch is in those phases. */
static void mig_publish_fors(osmsar_t* p) {
  const int phase = sar_mig_phase(p->mig);
  if (phase == 3 || phase == 4) return;
  pthread_mutex_lock(&p->mutex);
  if (p->fors_pushed) {
    char when[64];
    snprintf(when, sizeof when, "tables in the switches, migration epoch %u phase %d",
             sar_mig_epoch(p->mig), phase);
    publish_fors_locked(p, when);
  }
  p->fors_pushed = 0;
  pthread_mutex_unlock(&p->mutex);
}

/* The coordinator's loop: waits for a request, an event or the next deadline, never under
 * OpenSM's lock. */
static void mig_thread_loop(osmsar_t* p) {
  mig_event_t* batch = calloc(MIG_QUEUE, sizeof *batch);
  sar_mig_gid_t* issuers = calloc(MIG_ACK_BATCH, sizeof *issuers);
  uint8_t* acks = calloc(MIG_ACK_BATCH, SAR_MIG_DATA_SIZE);
  unsigned long dropped_seen = 0;
  if (!batch || !issuers || !acks) {
    free(batch);
    free(issuers);
    free(acks);
    OSM_LOG(&p->osm->log, OSM_LOG_ERROR, "osmsar: migration: out of memory, thread stops\n");
    return;
  }
  mig_write_status(p);
  for (;;) {
    char buf[256];
    uint64_t wait = sar_mig_ms_to_deadline(p->mig, now_ms());
    int timeout = wait == UINT64_MAX ? -1 : wait > 60000 ? 60000 : (int)wait;
    struct pollfd pfd = {.fd = p->pipe_fd[0], .events = POLLIN};
    int n = 0, i, requests = 0;
    size_t nacks, k;
    uint64_t strays;
    unsigned long dropped;
    if (poll(&pfd, 1, timeout) < 0 && errno != EINTR) break;
    if (pfd.revents & POLLIN) {
      ssize_t got = read(p->pipe_fd[0], buf, sizeof buf);
      for (i = 0; i < got; i++) requests += buf[i] == 'r';
      if (got > 0 && memchr(buf, 'q', (size_t)got)) break;
    }
    pthread_mutex_lock(&p->mutex);
    n = p->queued;
    memcpy(batch, p->queue, (size_t)n * sizeof *batch);
    p->queued = 0;
    dropped = p->dropped_events;
    pthread_mutex_unlock(&p->mutex);
    if (dropped != dropped_seen) {
      OSM_LOG(&p->osm->log, OSM_LOG_ERROR,
              "osmsar: migration: %lu event(s) dropped since load (queue full: a trap storm)\n",
              dropped);
      dropped_seen = dropped;
    }
    if (requests) {
      OSM_LOG(&p->osm->log, OSM_LOG_INFO,
              "osmsar: SIGUSR2: reroute request (%d signal(s)) for the migration coordinator\n",
              requests);
      sar_mig_request(p->mig, now_ms());
    }
    for (i = 0; i < n; i++) {
      const mig_event_t* e = &batch[i];
      if (e->kind == EV_ROUTING_DONE) {
        sar_mig_routing_done(p->mig, now_ms(), e->epoch);
      } else {
        sar_mig_topology_changed(p->mig, now_ms());
      }
    }
    do {
      pthread_mutex_lock(&p->mutex);
      nacks = sar_mig_inbox_take(p->inbox, issuers, acks, MIG_ACK_BATCH);
      strays = sar_mig_inbox_take_strays(p->inbox);
      pthread_mutex_unlock(&p->mutex);
      if (strays) {
        sar_mig_count_ignored(p->mig, strays);
        OSM_LOG(&p->osm->log, OSM_LOG_VERBOSE,
                "osmsar: migration: %" PRIu64 " ack(s) from ports not asked to ack ignored\n",
                strays);
      }
      for (k = 0; k < nacks; k++) {
        /* Phase and counts as the ack found them: a counted ack may end the phase. */
        const uint32_t epoch = sar_mig_epoch(p->mig);
        const int phase = sar_mig_phase(p->mig);
        size_t acked = 0, expected = 0;
        int r;
        sar_mig_acks(p->mig, &acked, &expected);
        r = sar_mig_ack(p->mig, now_ms(), issuers[k], acks + k * SAR_MIG_DATA_SIZE);
        OSM_LOG(&p->osm->log, r == 0 ? OSM_LOG_INFO : OSM_LOG_VERBOSE,
                "osmsar: migration epoch %u phase %d: ack from port 0x%016" PRIx64
                " %s (acks %zu/%zu)\n",
                epoch, phase, issuers[k].guid, r == 0 ? "counted" : sar_mig_ack_result_name(r),
                acked + (r == 0), expected);
      }
    } while (nacks == MIG_ACK_BATCH);
    sar_mig_tick(p->mig, now_ms());
    mig_run_actions(p);
    mig_publish_fors(p); /* before the status: "idle" then means the schedules are out */
    mig_write_status(p);
  }
  free(batch);
  free(issuers);
  free(acks);
}

/* --- Plugin life cycle -------------------------------------------------------------------------
 */

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
    external_routing_engine_module_t module = {OSMSAR_ENGINE_NAME, osmsar_setup, p};
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
    write_ready_file_locked(p, OSM_LOG_ERROR);
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

/* Migration mode: a trap reached OpenSM. Only SAR's vendor acks are queued for the plugin's
 * thread; nothing here sends (osm_report_notice calls report() itself) or waits. */
static void report_trap(osmsar_t* p, const ib_mad_notice_attr_t* ntc) {
  sar_mig_gid_t issuer;
  int kept;
  if (ib_notice_is_generic(ntc) || cl_ntoh32(ib_notice_get_vend_id(ntc)) != SAR_MIG_VENDOR_ID ||
      cl_ntoh16(ntc->g_or_v.vend.dev_id) != SAR_MIG_DEVICE_ID)
    return;
  /* Who acked is the port OpenSM saw the trap come from, never what the payload says. Acks from
   * ports not asked to ack are only counted: a flood of them costs a lookup each, wakes nobody
   * and cannot push out a participant's ack. */
  issuer.prefix = cl_ntoh64(ntc->issuer_gid.unicast.prefix);
  issuer.guid = cl_ntoh64(ntc->issuer_gid.unicast.interface_id);
  pthread_mutex_lock(&p->mutex);
  kept = sar_mig_inbox_offer(p->inbox, issuer, ntc->data_details.raw_data.details);
  pthread_mutex_unlock(&p->mutex);
  if (kept) wake(p, 'e');
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
    report_trap(p, event);
    return;
  }
  if (id == OSM_EVENT_ID_UCAST_ROUTING_DONE) {
    write_metrics_textfile(p);
    pass_log_summary(p);
  }
  if (p->mig && id == OSM_EVENT_ID_UCAST_ROUTING_DONE) {
    mig_event_t done = {.kind = EV_ROUTING_DONE, .at_ms = now_ms()};
    pthread_mutex_lock(&p->mutex);
    done.epoch = p->installed_epoch;
    p->installed_epoch = 0;
    p->fors_pushed |= p->fors_installed; /* the plugin's thread publishes when the epoch ends */
    p->fors_installed = 0;
    queue_event_locked(p, &done);
    pthread_mutex_unlock(&p->mutex);
    wake(p, 'e');
    return;
  }
  /* OpenSM reports routing-done once every switch acknowledged its LFT blocks (after
   * wait_for_pending_transactions), without its lock: the tables are in the switches. */
  if (id == OSM_EVENT_ID_UCAST_ROUTING_DONE) {
    pthread_mutex_lock(&p->mutex);
    if (p->fors_installed) publish_fors_locked(p, "tables in the switches");
    p->fors_installed = 0;
    pthread_mutex_unlock(&p->mutex);
    return;
  }
  if (id != OSM_EVENT_ID_LFT_CHANGE || !(e->flags & LFT_CHANGED_BLOCK)) return;
  pthread_mutex_lock(&p->mutex); /* read by write_metrics_textfile */
  blocks = ++p->lft_blocks;
  p->pass.blocks++;
  pass_add_switch_locked(&p->pass, cl_ntoh64(osm_node_get_node_guid(e->p_sw->p_node)));
  pthread_mutex_unlock(&p->mutex);
  OSM_LOG(&p->osm->log, OSM_LOG_VERBOSE,
          "osmsar: LFT block %u of switch 0x%016" PRIx64 " changed (%lu since load)\n",
          e->block_num, cl_ntoh64(osm_node_get_node_guid(e->p_sw->p_node)), blocks);
  test_stop_point(p->osm, "push");
}

#if OSM_EVENT_PLUGIN_INTERFACE_VER != 2
#error OpenSM event plugin interface version mismatch
#endif

__attribute__((visibility("default")))
osm_event_plugin_t osm_event_plugin = {OSM_VERSION, osmsar_create, osmsar_delete, osmsar_report};
