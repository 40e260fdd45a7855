/* libsar's C API: the routing pass (sar/routing_pass.h) for C callers such as the OpenSM plugin.
 *
 * In the style of LevelDB's c.h:
 *  - opaque handles made by *_create and freed by *_destroy;
 *  - inputs and outputs as flat arrays of plain structs, no C++ type crosses;
 *  - a function that can fail takes `char** errptr`. It must point to NULL on entry (or to an
 *    earlier message, which is freed); on failure it is set to a message allocated with malloc
 *    ("path:line: ..." where a file is at fault), to be released with sar_free;
 *  - nothing throws through this interface (out of memory is an error message too), nothing
 *    prints.
 * Thread-safety: calls on distinct handles may run concurrently; a sar_result_t is read-only once
 * made and may be read from several threads. */
#ifndef SAR_C_H_
#define SAR_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sar_fabric_t sar_fabric_t;
typedef struct sar_options_t sar_options_t;
typedef struct sar_result_t sar_result_t;

/* --- The fabric, as flat arrays ----------------------------------------------------------- */

/* A switch or an HCA. Ports are numbered 1..num_ports (plus a switch's port 0). */
typedef struct sar_node_t {
  uint64_t guid;
  int is_switch;
  int num_ports;
  const char* description; /* NodeDescription; its first word is the host name; may be NULL */
} sar_node_t;

/* A port with LIDs: an HCA port, or a switch's port 0. */
typedef struct sar_port_t {
  int node; /* index into the nodes array */
  int port;
  uint64_t guid;
  uint32_t base_lid;
  int lmc;
} sar_port_t;

/* A cable, listed once. */
typedef struct sar_link_t {
  int node_a, port_a, node_b, port_b;
} sar_link_t;

/* Builds the fabric. Node order does not matter: nodes are put in canonical order (switches by
 * node GUID, then HCAs by node GUID), the order `sar-route --canonical-order` uses, because the
 * engines break ties by node order. Every cabled HCA port needs a LID. NULL on error. */
sar_fabric_t* sar_fabric_create(const sar_node_t* nodes, int num_nodes, const sar_port_t* ports,
                                int num_ports, const sar_link_t* links, int num_links,
                                char** errptr);
void sar_fabric_destroy(sar_fabric_t* fabric);

/* --- Options (sar::RoutingOptions) ------------------------------------------------------- */

/* Defaults: engine "sar", no mapping, no class files, 8 virtual lanes, max_layers 0 (= lanes),
 * all hardware threads, disconnected fabrics refused. NULL only when out of memory. */
sar_options_t* sar_options_create(void);
void sar_options_destroy(sar_options_t* options);
/* Strings are copied; NULL or "" clears. */
void sar_options_set_engine(sar_options_t* options, const char* engine);
/* optional != 0: a file that does not exist means "no jobs" instead of an error. */
void sar_options_set_mapping_file(sar_options_t* options, const char* path, int optional);
void sar_options_set_node_class_files(sar_options_t* options, const char* cn_guids,
                                      const char* io_guids);
void sar_options_set_num_vls(sar_options_t* options, int num_vls);
void sar_options_set_max_layers(sar_options_t* options, int max_layers);
void sar_options_set_threads(sar_options_t* options, int threads);
void sar_options_set_allow_disconnected(sar_options_t* options, int allow);

/* --- The routing pass ----------------------------------------------------------------------- */

/* Loads the mapping and class files, runs the engine (engine "sar" without jobs: plain
 * "dfsssp", noted), validates the tables (sar::ValidateRouting). NULL on error. */
sar_result_t* sar_route(const sar_fabric_t* fabric, const sar_options_t* options, char** errptr);
void sar_result_destroy(sar_result_t* result);

/* The engine that made the tables. */
const char* sar_result_engine(const sar_result_t* result);
/* Highest LID of the fabric; every table row has max_lid + 1 entries. */
uint32_t sar_result_max_lid(const sar_result_t* result);
/* The table of input node `node` (output port per LID, 0xFF = none), or NULL for an HCA or an
 * index out of range. */
const uint8_t* sar_result_lft_row(const sar_result_t* result, int node);
/* The virtual layer (= SL) of the route slid -> dlid; 0 for routes without one. */
int sar_result_layer(const sar_result_t* result, uint32_t slid, uint32_t dlid);
int sar_result_num_layers(const sar_result_t* result);
/* Milliseconds in the engine (paths + layers) and in validation. */
double sar_result_route_ms(const sar_result_t* result);
double sar_result_check_ms(const sar_result_t* result);
/* Facts worth logging (fallback to dfsssp, alltoall jobs, unknown hosts, engine notes). */
int sar_result_num_notes(const sar_result_t* result);
const char* sar_result_note(const sar_result_t* result, int i); /* NULL if out of range */

/* --- FORS schedules of alltoall jobs (docs/fors.md, docs/formats.md) ----------------------- */

/* Alltoall jobs the pass gave FORS routes (sar/fors_job.h). */
int sar_result_num_fors_jobs(const sar_result_t* result);
/* Writes each such job's schedule to "<mapping file>.fors.<job id>" atomically, leaves a file that
 * already holds the same generation (same schedule, same routes) as it is, and removes the
 * schedules of jobs no longer planned. `epoch` is recorded in the files it writes. Call once the
 * tables are handed over. Returns the number of schedules now current (0 without a mapping
 * file), -1 on error (*errptr). */
int sar_result_publish_fors_schedules(const sar_result_t* result, uint64_t epoch, char** errptr);

/* --- Checking given tables --------------------------------------------------------------- */

/* A route's virtual layer. */
typedef struct sar_route_layer_t {
  uint32_t slid, dlid;
  int layer;
} sar_route_layer_t;

/* Validates tables made elsewhere with the routing pass's own checks and the options' lanes,
 * max_layers and allow_disconnected. rows[i] is input node i's table (max_lid + 1 entries; NULL
 * for HCAs). layers: num_layer_entries routes with their layer; other routes use layer 0.
 * Returns 1 if valid; 0 and *errptr ("invalid routing: ...") otherwise. */
int sar_check_tables(const sar_fabric_t* fabric, const sar_options_t* options, uint32_t max_lid,
                     const uint8_t* const* rows, const sar_route_layer_t* layers,
                     size_t num_layer_entries, char** errptr);

/* Frees what this API allocated with malloc (error messages). */
void sar_free(void* ptr);

#ifdef __cplusplus
}
#endif

#endif /* SAR_C_H_ */
