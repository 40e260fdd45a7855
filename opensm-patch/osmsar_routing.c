/* The routing engine "sar": OpenSM's callbacks (osmsar.h). Every pass copies the subnet
 * (osmsar_subnet.c), lets libsar route it through its C API, and copies the tables into the
 * switches' new_lft; OpenSM then sends the blocks that changed. The routes' virtual layers answer
 * path_sl, so SA path records carry the layer as SL; update_sl2vl maps SL i to VL i. Outside
 * migration mode one libsar memory handle goes with every pass (engine dmodc then recomputes only
 * what changed). In migration mode the callback installs the table set that is current and never
 * waits or plans (osmsar_migration.c plans). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osmsar.h"

/* Leaves every switch's tables as they are: new_lft = the LFT the switch holds now. */
static void keep_old_tables(osm_subn_t* subn) {
  cl_map_item_t* item;
  for (item = cl_qmap_head(&subn->sw_guid_tbl); item != cl_qmap_end(&subn->sw_guid_tbl);
       item = cl_qmap_next(item)) {
    osm_switch_t* sw = (osm_switch_t*)item;
    if (sw->new_lft && sw->lft) memcpy(sw->new_lft, sw->lft, sw->lft_size);
  }
}

/* A routing pass begins: the summary starts afresh (a pass whose routing-done never came is
 * dropped; its failure was logged where it happened). */
static void pass_begin(osmsar_t* p) {
  pthread_mutex_lock(&p->mutex);
  p->pass.open = 1;
  p->pass.start_ms = osmsar_now_ms();
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

void osmsar_pass_count_block_locked(osmsar_t* p, uint64_t guid) {
  pass_summary_t* s = &p->pass;
  size_t i;
  s->blocks++;
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

void osmsar_pass_log_summary(osmsar_t* p) {
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
          s.changed_count, (double)(osmsar_now_ms() - s.start_ms));
}

/* The one way a pass ends without new tables: counted, logged as "osmsar: <what>: <err>" with
 * what happens next, and the switches keep the tables they hold (new_lft = lft) if a pass ever
 * succeeded; before that, -1 makes OpenSM fall back to its default engine. Frees err. Called by
 * the routing callback (OpenSM's lock held; nothing here waits but for the plugin's mutex). */
static int fail_pass(osmsar_t* p, const char* what, char* err) {
  int have_old;
  pthread_mutex_lock(&p->mutex);
  have_old = p->result != NULL;
  p->passes_failed++;
  p->last_pass_unix = time(NULL);
  pthread_mutex_unlock(&p->mutex);
  OSM_LOG(&p->osm->log, OSM_LOG_ERROR, "osmsar: %s%s%s; %s\n", what, err ? ": " : "",
          err ? err : "",
          have_old ? "keeping the previous tables"
                   : "no previous tables: OpenSM falls back to its default engine");
  sar_free(err);
  pass_outcome(p, NULL, 0,
               have_old ? "failed, previous tables kept" : "failed, OpenSM's default engine");
  if (!have_old) return -1;
  keep_old_tables(&p->osm->subn);
  return 0;
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

/* metrics_textfile: the passes in Prometheus' text format, for node_exporter's textfile
 * collector (a file, not an endpoint: no socket or thread inside OpenSM). Called at routing-done
 * without OpenSM's lock; the file is written outside p->mutex too. */
void osmsar_write_metrics_textfile(osmsar_t* p) {
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
void osmsar_publish_fors_locked(osmsar_t* p, const char* when) {
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
  const uint64_t fp = osmsar_flat_fingerprint(flat);
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
    if (!fresh) return fail_pass(p, err ? "routing failed" : "routing failed: out of memory", err);
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
    mig_event_t e = {.kind = EV_TOPOLOGY, .at_ms = osmsar_now_ms()};
    osmsar_queue_event_locked(p, &e);
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
  if (topology_changed) osmsar_wake(p, 'e');
  return 0;
}

static int osmsar_build_fwd_tables(void* context) {
  osmsar_t* p = context;
  osm_subn_t* subn = &p->osm->subn;
  flat_subnet_t flat;
  sar_result_t* result = NULL;
  char* err = NULL;
  int switches;

  osmsar_test_stop_point(p->osm, "routing");
  pass_begin(p);

  /* The mapping's directory may have appeared since load (sar-filterd's unit makes it). */
  pthread_mutex_lock(&p->mutex);
  osmsar_write_ready_file_locked(p, OSM_LOG_VERBOSE);
  pthread_mutex_unlock(&p->mutex);

  if (osmsar_flat_build(subn, &flat) != 0) {
    osmsar_flat_free(&flat);
    return fail_pass(p, "out of memory copying the subnet", NULL);
  }
  if (p->mig) {
    int rc = osmsar_build_fwd_tables_mig(p, &flat);
    osmsar_flat_free(&flat);
    return rc;
  }
  result = p->config.delta ? route_flat_delta(p, &flat, &err) : route_flat(p, &flat, &err);
  if (!result) {
    osmsar_flat_free(&flat);
    return fail_pass(p, err ? "routing failed" : "routing failed: out of memory", err);
  }
  switches = install_tables(&flat, result);
  log_result(p, result, switches, "");
  pass_outcome(p, result, switches, "ok");
  osmsar_flat_free(&flat);
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

int osmsar_routing_setup(struct osm_routing_engine* re, osm_opensm_t* osm) {
  (void)osm;
  /* build_lid_matrices stays NULL: OpenSM's own hop matrices serve multicast and SA. */
  re->ucast_build_fwd_tables = osmsar_build_fwd_tables;
  re->path_sl = osmsar_path_sl;
  re->update_sl2vl = osmsar_update_sl2vl;
  return 0;
}
