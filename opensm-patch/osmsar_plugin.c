/* osmsar: an OpenSM event plugin that registers the routing engine "sar".
 *
 * The only file that includes OpenSM's headers (they do not compile as C++). Every routing pass
 * copies the subnet into flat arrays, lets libsar (through its C API, sar/c.h) route it, and copies
 * the tables into the switches' new_lft; OpenSM then sends the blocks that changed. The routes'
 * virtual layers answer path_sl, so SA path records carry the layer as SL; update_sl2vl maps
 * SL i to VL i. SIGUSR2 asks OpenSM for a reroute, which re-reads the job mapping.
 *
 * Locking: OpenSM calls ucast_build_fwd_tables with its big lock held exclusively and path_sl
 * from SA threads; a mutex guards the current result pointer so the two never race. */
#include <complib/cl_qmap.h>
#include <errno.h>
#include <fcntl.h>
#include <opensm/osm_event_plugin.h>
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

#define OSMSAR_ENGINE_NAME "sar"

typedef struct osmsar {
  osm_opensm_t* osm;
  OsmsarConfig config;
  sar_options_t* options; /* made from config */
  pthread_mutex_t mutex;  /* guards result */
  sar_result_t* result;   /* tables of the last good pass, NULL before one */
  int pipe_fd[2];         /* self-pipe: the signal handler writes 'r', delete writes 'q' */
  pthread_t thread;
  int thread_started;
  struct sigaction old_usr2;
  int handler_installed;
  unsigned long lft_blocks; /* LFT_CHANGE events with a changed block, since load */
} osmsar_t;

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

/* Waits for SIGUSR2 (via the pipe) and asks OpenSM for a reroute the way its console's
 * "reroute" command does; OpenSM's state manager thread then runs the routing pass. */
static void* osmsar_thread(void* arg) {
  osmsar_t* p = arg;
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
      f->num_links++;
    }
  }
  f->num_nodes = num_nodes;
  return 0;
}

/* --- The routing engine callbacks --------------------------------------------------------------
 */

/* Leaves every switch's tables as they are: new_lft = the LFT the switch holds now. */
static void keep_old_tables(osm_subn_t* subn) {
  cl_map_item_t* item;
  for (item = cl_qmap_head(&subn->sw_guid_tbl); item != cl_qmap_end(&subn->sw_guid_tbl);
       item = cl_qmap_next(item)) {
    osm_switch_t* sw = (osm_switch_t*)item;
    if (sw->new_lft && sw->lft) memcpy(sw->new_lft, sw->lft, sw->lft_size);
  }
}

static int osmsar_build_fwd_tables(void* context) {
  osmsar_t* p = context;
  osm_subn_t* subn = &p->osm->subn;
  flat_subnet_t flat;
  sar_fabric_t* fabric = NULL;
  sar_result_t* result = NULL;
  char* err = NULL;
  int i, have_old;

  if (flat_build(subn, &flat) == 0) {
    fabric = sar_fabric_create(flat.nodes, flat.num_nodes, flat.ports, flat.num_ports, flat.links,
                               flat.num_links, &err);
    if (fabric) result = sar_route(fabric, p->options, &err);
    sar_fabric_destroy(fabric);
  }
  if (!result) {
    pthread_mutex_lock(&p->mutex);
    have_old = p->result != NULL;
    pthread_mutex_unlock(&p->mutex);
    OSM_LOG(&p->osm->log, OSM_LOG_ERROR, "osmsar: routing failed: %s; %s\n",
            err ? err : "out of memory copying the subnet",
            have_old ? "keeping the previous tables"
                     : "no previous tables: OpenSM falls back to its default engine");
    sar_free(err);
    flat_free(&flat);
    if (!have_old) return -1;
    keep_old_tables(subn);
    return 0;
  }
  for (i = 0; i < sar_result_num_notes(result); i++)
    OSM_LOG(&p->osm->log, OSM_LOG_INFO, "osmsar: %s\n", sar_result_note(result, i));

  {
    const uint32_t max_lid = sar_result_max_lid(result);
    int switches = 0;
    for (i = 0; i < flat.num_nodes; i++) {
      osm_switch_t* sw = flat.osm_nodes[i]->sw;
      const uint8_t* row = sar_result_lft_row(result, i);
      uint32_t top;
      if (!row || !sw || !sw->new_lft) continue;
      top = sw->max_lid_ho < max_lid ? sw->max_lid_ho : max_lid;
      memset(sw->new_lft, OSM_NO_PATH, sw->lft_size);
      memcpy(sw->new_lft, row, top + 1);
      switches++;
    }
    OSM_LOG(&p->osm->log, OSM_LOG_INFO,
            "osmsar: engine %s routed %d switches, %d LIDs max, %d layer(s) in %.1f ms "
            "(validated in %.1f ms)\n",
            sar_result_engine(result), switches, (int)max_lid, sar_result_num_layers(result),
            sar_result_route_ms(result), sar_result_check_ms(result));
  }
  flat_free(&flat);
  /* FORS schedules of the alltoall jobs beside the mapping (docs/fors.md); epoch: time of the
   * pass. A schedule that did not change is left as it is. */
  if (sar_result_publish_fors_schedules(result, (uint64_t)time(NULL), &err) < 0) {
    OSM_LOG(&p->osm->log, OSM_LOG_ERROR, "osmsar: FORS schedules not written: %s\n", err);
    sar_free(err);
    err = NULL;
  }
  pthread_mutex_lock(&p->mutex);
  sar_result_destroy(p->result);
  p->result = result;
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
  OSM_LOG(&osm->log, OSM_LOG_INFO,
          "osmsar: routing engine '%s' registered (config %s: engine %s, mapping_file %s, "
          "num_vls %d, threads %d); SIGUSR2 reroutes\n",
          OSMSAR_ENGINE_NAME, conf && *conf ? conf : "(defaults)", p->config.engine,
          p->config.mapping_file[0] ? p->config.mapping_file : "(none)", p->config.num_vls,
          p->config.threads);
  return p;
}

static void osmsar_delete(void* data) {
  osmsar_t* p = data;
  if (!p) return;
  if (p->handler_installed) sigaction(SIGUSR2, &p->old_usr2, NULL);
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
  sar_options_destroy(p->options);
  pthread_mutex_destroy(&p->mutex);
  free(p);
}

/* LFT_CHANGE fires as a switch acknowledges a changed LFT block (not in the first sweep): one
 * log line per block, so operators and tests can count what a reroute sent. */
static void osmsar_report(void* data, osm_epi_event_id_t id, void* event) {
  osmsar_t* p = data;
  const osm_epi_lft_change_event_t* e = event;
  if (id != OSM_EVENT_ID_LFT_CHANGE || !(e->flags & LFT_CHANGED_BLOCK)) return;
  p->lft_blocks++;
  OSM_LOG(&p->osm->log, OSM_LOG_INFO,
          "osmsar: LFT block %u of switch 0x%016" PRIx64 " changed (%lu since load)\n",
          e->block_num, cl_ntoh64(osm_node_get_node_guid(e->p_sw->p_node)), p->lft_blocks);
}

#if OSM_EVENT_PLUGIN_INTERFACE_VER != 2
#error OpenSM event plugin interface version mismatch
#endif

__attribute__((visibility("default")))
osm_event_plugin_t osm_event_plugin = {OSM_VERSION, osmsar_create, osmsar_delete, osmsar_report};
