/* The subnet as flat arrays: osmsar_subnet.h. */
#include "osmsar_subnet.h"

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
#include <stdlib.h>
#include <string.h>

static int cmp_node_key(const void* a, const void* b) {
  const node_key_t *x = a, *y = b;
  return x->guid < y->guid ? -1 : x->guid > y->guid;
}

static int find_node(const node_key_t* keys, int n, uint64_t guid) {
  node_key_t k = {.guid = guid};
  const node_key_t* hit = bsearch(&k, keys, (size_t)n, sizeof k, cmp_node_key);
  return hit ? hit->index : -1;
}

void osmsar_flat_free(flat_subnet_t* f) {
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
int osmsar_flat_build(osm_subn_t* subn, flat_subnet_t* f) {
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

uint64_t osmsar_flat_fingerprint(const flat_subnet_t* f) {
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
