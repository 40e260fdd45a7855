/* Migration mode (`migration on`, LMC 1): the five-phase baseLID/highLID update of the SAR paper
 * (Sec. 3.3), driven on the plugin's thread. libsar's coordinator (sar_mig_*, a pure state
 * machine) decides; this file carries out its actions: plan (route a snapshot of the subnet, push
 * nothing), send UnPath/RePath notices, release the planned tables with a forced reroute. Acks
 * arrive as vendor traps in report(), which only queues them (osmsar_mig_report_trap). */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "osmsar.h"

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
  rc = osmsar_flat_build(&p->osm->subn, &flat);
  if (rc == 0) nsubs = collect_subscribers(&p->osm->subn, &subs);
  cl_plock_release(&p->osm->lock);
  if (rc != 0 || nsubs < 0) {
    osmsar_flat_free(&flat);
    sar_mig_planned(p->mig, osmsar_now_ms(), epoch, 0, 0, NULL, 0,
                    "out of memory copying the subnet");
    return;
  }
  fp = osmsar_flat_fingerprint(&flat);
  fabric = sar_fabric_create(flat.nodes, flat.num_nodes, flat.ports, flat.num_ports, flat.links,
                             flat.num_links, &err);
  if (fabric) result = sar_route(fabric, p->options, &err);
  if (!result) {
    sar_mig_planned(p->mig, osmsar_now_ms(), epoch, 0, 0, NULL, 0, err ? err : "out of memory");
    sar_free(err);
    sar_fabric_destroy(fabric);
    osmsar_flat_free(&flat);
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
  sar_mig_planned(p->mig, osmsar_now_ms(), epoch, 1, changed, parts, (size_t)nparts, NULL);
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
  osmsar_flat_free(&flat);
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
        m.sent_ns = osmsar_now_ms() * 1000000u;
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
  if (sar_mig_write_status(p->mig, osmsar_now_ms(), p->config.status_file, &err) != 0) {
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
    osmsar_publish_fors_locked(p, when);
  }
  p->fors_pushed = 0;
  pthread_mutex_unlock(&p->mutex);
}

/* The coordinator's loop: waits for a request, an event or the next deadline, never under
 * OpenSM's lock. */
void osmsar_mig_thread_loop(osmsar_t* p) {
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
    uint64_t wait = sar_mig_ms_to_deadline(p->mig, osmsar_now_ms());
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
      sar_mig_request(p->mig, osmsar_now_ms());
    }
    for (i = 0; i < n; i++) {
      const mig_event_t* e = &batch[i];
      if (e->kind == EV_ROUTING_DONE) {
        sar_mig_routing_done(p->mig, osmsar_now_ms(), e->epoch);
      } else {
        sar_mig_topology_changed(p->mig, osmsar_now_ms());
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
        r = sar_mig_ack(p->mig, osmsar_now_ms(), issuers[k], acks + k * SAR_MIG_DATA_SIZE);
        OSM_LOG(&p->osm->log, r == 0 ? OSM_LOG_INFO : OSM_LOG_VERBOSE,
                "osmsar: migration epoch %u phase %d: ack from port 0x%016" PRIx64
                " %s (acks %zu/%zu)\n",
                epoch, phase, issuers[k].guid, r == 0 ? "counted" : sar_mig_ack_result_name(r),
                acked + (r == 0), expected);
      }
    } while (nacks == MIG_ACK_BATCH);
    sar_mig_tick(p->mig, osmsar_now_ms());
    mig_run_actions(p);
    mig_publish_fors(p); /* before the status: "idle" then means the schedules are out */
    mig_write_status(p);
  }
  free(batch);
  free(issuers);
  free(acks);
}

/* A trap reached OpenSM. Only SAR's vendor acks are queued for the plugin's thread; nothing here
 * sends (osm_report_notice calls report() itself) or waits. */
void osmsar_mig_report_trap(osmsar_t* p, const ib_mad_notice_attr_t* ntc) {
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
  if (kept) osmsar_wake(p, 'e');
}
