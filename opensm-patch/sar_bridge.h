/* sar_bridge: the plain C interface between OpenSM (C, osmsar_plugin.c) and libsar (C++).
 *
 * OpenSM's headers do not compile as C++ and libsar's do not compile as C, so the plugin hands
 * the subnet over as flat arrays (no OpenSM types) and gets tables and layers back. Everything
 * here is implemented in sar_bridge.cc; nothing throws and nothing prints. Errors come back as
 * a nonzero return and a message ("path:line: ..." where a file is at fault).
 * Thread-safety: calls on distinct objects may run concurrently; a SarBridgeResult is read-only
 * once made and may be read from several threads. */
#ifndef SAR_OPENSM_PATCH_SAR_BRIDGE_H_
#define SAR_OPENSM_PATCH_SAR_BRIDGE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A switch or an HCA. Ports are numbered 1..num_ports (plus a switch's port 0). */
typedef struct SarBridgeNode {
  uint64_t guid;
  int is_switch;
  int num_ports;
  const char* description; /* NodeDescription; the first word is the host name */
} SarBridgeNode;

/* A port with LIDs: an HCA port, or a switch's port 0. */
typedef struct SarBridgePort {
  int node; /* index into SarBridgeFabric.nodes */
  int port;
  uint64_t guid;
  uint32_t base_lid;
  int lmc;
} SarBridgePort;

/* A cable; each cable once. */
typedef struct SarBridgeLink {
  int node_a, port_a, node_b, port_b;
} SarBridgeLink;

/* The subnet. Node order does not matter: the bridge orders nodes canonically (switches by
 * node GUID, then HCAs by node GUID), as sar-route does for a topology file given in any order
 * after the same canonical sort, because the engines break ties by node order. */
typedef struct SarBridgeFabric {
  const SarBridgeNode* nodes;
  int num_nodes;
  const SarBridgePort* ports;
  int num_ports;
  const SarBridgeLink* links;
  int num_links;
} SarBridgeFabric;

#define SAR_BRIDGE_PATH_MAX 1024

/* The plugin's configuration file (config/osmsar.conf documents every key). */
typedef struct SarBridgeConfig {
  char engine[32];                        /* "sar" (default) or "dfsssp" */
  char mapping_file[SAR_BRIDGE_PATH_MAX]; /* job mapping; "" = none */
  char cn_guid_file[SAR_BRIDGE_PATH_MAX]; /* compute node GUIDs; "" = every HCA */
  char io_guid_file[SAR_BRIDGE_PATH_MAX]; /* storage node GUIDs; "" = none */
  int num_vls;                            /* virtual lanes usable as layers, 1..15 (8) */
  int threads;                            /* worker threads, 0 = all cores (0) */
  int allow_disconnected;                 /* route a partly disconnected fabric (0) */
} SarBridgeConfig;

/* The defaults. */
void SarBridgeConfigInit(SarBridgeConfig* config);
/* Reads "key value" lines ('#' comments, blank lines ignored) over the defaults. An unknown key,
 * a missing or bad value fails with "path:line: ...". Returns 0 on success. */
int SarBridgeReadConfig(const char* path, SarBridgeConfig* config, char* err, size_t err_size);

typedef struct SarBridgeResult SarBridgeResult;

/* One routing pass: builds the fabric, reads the mapping (a missing or empty file gives plain
 * dfsssp, noted), runs the engine, and validates the tables (every route delivered unless
 * allow_disconnected, every virtual layer deadlock-free). Returns 0 and *out (free with
 * SarBridgeFree) on success; nonzero, *out NULL and a message in err otherwise. */
int SarBridgeRoute(const SarBridgeFabric* fabric, const SarBridgeConfig* config,
                   SarBridgeResult** out, char* err, size_t err_size);
void SarBridgeFree(SarBridgeResult* result);

/* The engine that made the tables: config->engine, or "dfsssp" without a mapping. */
const char* SarBridgeEngineUsed(const SarBridgeResult* result);
/* Highest LID of the fabric; every table row has max_lid + 1 entries. */
uint32_t SarBridgeMaxLid(const SarBridgeResult* result);
/* The table of input node `node` (output port per LID, 0xFF = none), or NULL for an HCA. */
const uint8_t* SarBridgeLftRow(const SarBridgeResult* result, int node);
/* The virtual layer (= SL) of the route slid -> dlid; 0 for routes without one. */
int SarBridgeLayer(const SarBridgeResult* result, uint32_t slid, uint32_t dlid);
int SarBridgeNumLayers(const SarBridgeResult* result);
/* Milliseconds spent in the engine (paths + layers) and in validation. */
double SarBridgeRouteMs(const SarBridgeResult* result);
double SarBridgeCheckMs(const SarBridgeResult* result);
/* Facts worth logging (fallback to dfsssp, alltoall jobs, unknown hosts, engine notes). */
int SarBridgeNumNotes(const SarBridgeResult* result);
const char* SarBridgeNote(const SarBridgeResult* result, int i);

#ifdef __cplusplus
}
#endif

#endif /* SAR_OPENSM_PATCH_SAR_BRIDGE_H_ */
