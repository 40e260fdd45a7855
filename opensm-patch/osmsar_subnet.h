/* OpenSM's subnet as libsar's flat arrays (sar/c.h), copied at each routing pass or plan. */
#pragma once

#include <opensm/osm_node.h>
#include <opensm/osm_subnet.h>
#include <stdint.h>

#include "sar/c.h"

typedef struct node_key {
  uint64_t guid;
  int index;
} node_key_t;

typedef struct flat_subnet {
  int num_nodes, num_ports, num_links;
  sar_node_t* nodes;
  sar_port_t* ports;
  sar_link_t* links;
  char (*desc)[IB_NODE_DESCRIPTION_SIZE + 1];
  osm_node_t** osm_nodes;
  node_key_t* keys;
} flat_subnet_t;

/* Copies OpenSM's subnet: nodes, their LIDs (from the LID manager's port objects) and the cables
 * between valid ports, each once. Returns 0, or -1 on allocation failure (free it anyway).
 * REQUIRES: OpenSM's lock held. */
int osmsar_flat_build(osm_subn_t* subn, flat_subnet_t* f);
void osmsar_flat_free(flat_subnet_t* f);
/* FNV-1a over what routing depends on: equal fingerprints, the same topology. */
uint64_t osmsar_flat_fingerprint(const flat_subnet_t* f);
