/* libsar's C API: the routing pass (sar/pass/routing_pass.h) for C callers such as the OpenSM
 * plugin.
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
 * made and may be read from several threads. A sar_memory_t is changed by every pass that uses
 * it: passes whose options carry the same memory must not run concurrently. */
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
typedef struct sar_memory_t sar_memory_t;

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

/* Lane speeds of sar_link_t.speed (PortInfo's LinkSpeedActive / LinkSpeedExtActive by name). */
enum {
  SAR_SPEED_UNKNOWN = 0,
  SAR_SPEED_SDR,
  SAR_SPEED_DDR,
  SAR_SPEED_QDR,
  SAR_SPEED_FDR10,
  SAR_SPEED_FDR,
  SAR_SPEED_EDR,
  SAR_SPEED_HDR,
  SAR_SPEED_NDR,
  SAR_SPEED_XDR
};

/* A cable, listed once. width (active lanes: 1, 2, 4, 8 or 12) and speed (SAR_SPEED_*) are the
 * rate the link trained to; 0 = unknown (the link counts at the fabric's nominal rate, the
 * highest given). dfsssp and sar give a slower link proportionally fewer routes. */
typedef struct sar_link_t {
  int node_a, port_a, node_b, port_b;
  int width, speed;
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
/* The sar engine's refinement (refine != 0, the default) and its all-pairs budget (>= 0; 0 = no
 * cap; default 1.25): sar::RoutingOptions::sar_refine and sar_all_pairs_budget. */
void sar_options_set_sar_refine(sar_options_t* options, int refine, double all_pairs_budget);
/* The sar engine's refinement work limit in search steps (sar::RoutingOptions::sar_refine_work,
 * 1..2^40; default 2^28): fewer steps route faster and balance the all-pairs load less. 0 = the
 * default. */
void sar_options_set_sar_refine_work(sar_options_t* options, uint64_t steps);
/* on != 0 (default 1): the sar engine's no-regret stage (sar::RoutingOptions::sar_no_regret): a
 * multi-switch job whose slowest flow would be slower than under dfsssp keeps dfsssp's routes. */
void sar_options_set_sar_no_regret(sar_options_t* options, int on);
/* on != 0 (default 0): an alltoall job keeps FORS only where its phases are not slower for it
 * than SAR's routes all at once (sar::RoutingOptions::fors_only_where_faster, docs/fors.md). */
void sar_options_set_fors_only_where_faster(sar_options_t* options, int on);
/* all != 0: every HCA port of a job's host talks to every HCA port of its other hosts; 0
 * (default): rail-aligned, HCA i to HCA i (sar::RoutingOptions::job_hca_pairs, docs/formats.md). */
void sar_options_set_job_hca_pairs_all(sar_options_t* options, int all);
/* on != 0: migration mode (sar::RoutingOptions::migration): LMC 1 on every HCA port, base LIDs
 * routed by the engine on layers 0..n-2, highLIDs (base + 1) by Up/Down (updn) on layer n-1, so
 * that no job mapping changes the highLID entries. sar_result_layer then answers both. */
void sar_options_set_migration(sar_options_t* options, int on);
/* on != 0 (the default): sar_route_from keeps what it can of the given tables (minimal-delta
 * update, sar::RoutingOptions::delta); 0: it routes as sar_route does. */
void sar_options_set_delta(sar_options_t* options, int on);

/* --- Memory between passes (sar::RoutingMemory) -------------------------------------------- */

/* What a caller that routes the same fabric again and again (the OpenSM plugin) keeps from one
 * pass to the next. With engine "dmodc" (not in migration mode) a pass with memory recomputes
 * only what switch-to-switch cables that failed or came back since the last pass can change;
 * the tables are those of a pass without memory, entry for entry, and are validated the same
 * way. One of the result's notes says "dmodc: incremental reroute: <what was recomputed>" or
 * "dmodc: full pass (<why>)" (the first pass; other switches, HCA ports or LIDs; a switch whose
 * distance to the leaves changed; a leaf pair without an up-down path). Other engines ignore it.
 * NULL only when out of memory. */
sar_memory_t* sar_memory_create(void);
void sar_memory_destroy(sar_memory_t* memory);
/* Every pass with these options uses and updates `memory` (NULL: none, the default). The options
 * do not own it: destroy it after the last pass that uses it. */
void sar_options_set_memory(sar_options_t* options, sar_memory_t* memory);

/* --- The routing pass ----------------------------------------------------------------------- */

/* Loads the mapping and class files, runs the engine (engine "sar" without jobs: plain
 * "dfsssp", noted), validates the tables (sar::ValidateRouting). NULL on error. */
sar_result_t* sar_route(const sar_fabric_t* fabric, const sar_options_t* options, char** errptr);
/* The same, given the tables the switches hold now: rows[i] is input node i's current LFT
 * (max_lid + 1 entries; NULL for an HCA, or a switch without one). With delta on, engines sar
 * and dfsssp keep every entry of them that costs no quality (equal max effective EFI and max
 * EFI), so the pass changes few entries; notes say how many were kept. NULL on error. */
sar_result_t* sar_route_from(const sar_fabric_t* fabric, const sar_options_t* options,
                             uint32_t max_lid, const uint8_t* const* rows, char** errptr);
/* sar_route_from, also given the result the current tables came from (NULL: unknown). Its job
 * mapping is the previous job set (sar::RoutingInputs::previous_jobs): jobs running across the
 * reroute (same hosts) keep their own routes unless the fabric changed under them or keeping
 * them would cost more than 2% of max effective EFI (docs/dfsssp-sar.md). NULL on error. */
sar_result_t* sar_route_from_previous(const sar_fabric_t* fabric, const sar_options_t* options,
                                      uint32_t max_lid, const uint8_t* const* rows,
                                      const sar_result_t* previous, char** errptr);
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

/* Alltoall jobs the pass gave FORS routes (sar/fors/fors_job.h). */
int sar_result_num_fors_jobs(const sar_result_t* result);
/* Alltoall jobs the pass gave none, and why (one line from the routing pass: e.g. the fabric is
 * not a 2-level fat-tree): worth a WARN line each. NULL if i is out of range. */
int sar_result_num_fors_none(const sar_result_t* result);
const char* sar_result_fors_none_job(const sar_result_t* result, int i);
const char* sar_result_fors_none_reason(const sar_result_t* result, int i);
/* Writes each such job's schedule to "<mapping file>.fors.<job id>" atomically, mode 0640 and
 * group `group` (-1: the caller's), and for each job without FORS the "none" form saying why
 * (docs/formats.md), leaves a file that already holds exactly this as it is, and removes the
 * files of jobs that are no longer alltoall jobs. `epoch` is recorded in the files it
 * writes. Never blocks on what it finds at a schedule's path (a FIFO is refused, a symbolic link
 * replaced; sar/fors/fors_job.h). Call once the tables are in the switches (the plugin: at OpenSM's
 * routing-done; in migration mode when the epoch that pushed them ended). A job whose file cannot
 * be written does not stop the others. Returns the number of schedules now current (0 without a
 * mapping file), -1 on error (*errptr: the first one). */
int sar_result_publish_fors_schedules(const sar_result_t* result, uint64_t epoch, long group,
                                      char** errptr);

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

/* The port GUIDs of the HCA ports that are the source or destination of a base-LID route whose
 * path differs between `before` and `after`, both routed on `fabric` (the "changed" ack scope).
 * Writes at most `max` GUIDs; returns how many there are (may exceed max), -1 and *errptr if the
 * results do not fit the fabric. */
int sar_changed_ports(const sar_fabric_t* fabric, const sar_result_t* before,
                      const sar_result_t* after, uint64_t* port_guids, int max, char** errptr);

/* --- The migration coordinator (sar/migration/migration_coordinator.h)
 * --------------------------------
 *
 * The baseLID/highLID protocol's state machine for the plugin's own thread: feed it events with
 * a monotonic time in milliseconds, pop and carry out its actions, write its status. It does no
 * I/O itself except sar_mig_write_status. One thread per handle. */

typedef struct sar_mig_t sar_mig_t;

typedef struct sar_mig_config_t {
  uint32_t ack_timeout_ms;    /* phase 2 deadline, sent in the UnPath notice */
  uint32_t repath_timeout_ms; /* phase 4 deadline */
  uint32_t push_timeout_ms;   /* phase 3: release -> routing done */
  int exclude_after;          /* missed phase-2 deadlines in a row before a port is excluded */
  uint32_t first_epoch;       /* the first epoch's number (0: 1); a restarted coordinator should
                                 start above its predecessor, or agents take it for a replay */
} sar_mig_config_t;

/* A port GID in host order (IssuerGID of a trap as OpenSM filled it). */
typedef struct sar_mig_gid_t {
  uint64_t prefix, guid;
} sar_mig_gid_t;

enum {
  SAR_MIG_ACT_PLAN = 1, /* compute the new base tables of `epoch`, answer sar_mig_planned */
  SAR_MIG_ACT_UNPATH,   /* send trap 68 for `epoch` with deadline_ms */
  SAR_MIG_ACT_RELEASE,  /* install the planned tables of `epoch`, make OpenSM push them */
  SAR_MIG_ACT_DISCARD,  /* drop the planned tables of `epoch`; the old ones stay */
  SAR_MIG_ACT_REPATH,   /* send trap 69 for `epoch` with flags (SAR_MIG_FLAG_STAY) */
  SAR_MIG_ACT_LOG,      /* text for the operator's log */
  SAR_MIG_ACT_LOG_ERROR /* the same, error level */
};

typedef struct sar_mig_action_t {
  int kind;
  uint32_t epoch;
  uint8_t flags;
  uint32_t deadline_ms;
  char text[512]; /* SAR_MIG_ACT_LOG*: the line, NUL-terminated (cut if longer) */
} sar_mig_action_t;

/* exclude_after < 1 or zero timeouts are refused. */
sar_mig_t* sar_mig_create(const sar_mig_config_t* config, char** errptr);
void sar_mig_destroy(sar_mig_t* mig);
void sar_mig_request(sar_mig_t* mig, uint64_t now_ms);
/* changed = 0: the plan equals the installed tables. participants: the ports asked to ack. */
void sar_mig_planned(sar_mig_t* mig, uint64_t now_ms, uint32_t epoch, int ok, int changed,
                     const sar_mig_gid_t* participants, size_t num_participants, const char* why);
/* An ack trap: issuer from OpenSM, data = the notice's 54-byte DataDetails. Returns 0 if it
 * counted, else a reason (sar_mig_ack_result_name): the protocol ignores it. */
int sar_mig_ack(sar_mig_t* mig, uint64_t now_ms, sar_mig_gid_t issuer, const uint8_t* data);
const char* sar_mig_ack_result_name(int result);
/* OpenSM's UCAST_ROUTING_DONE; installed_epoch: whose tables that pass installed (0: none). */
void sar_mig_routing_done(sar_mig_t* mig, uint64_t now_ms, uint32_t installed_epoch);
void sar_mig_topology_changed(sar_mig_t* mig, uint64_t now_ms);
void sar_mig_tick(sar_mig_t* mig, uint64_t now_ms);
/* Milliseconds to the next deadline; UINT64_MAX: none. */
uint64_t sar_mig_ms_to_deadline(const sar_mig_t* mig, uint64_t now_ms);
/* 1 while planned tables are held (phases 1-2): the routing callback keeps the old ones. */
int sar_mig_holding(const sar_mig_t* mig);
int sar_mig_phase(const sar_mig_t* mig); /* 1..5, 5 = idle */
/* Acks in and expected in the phase being waited for (0/0 when none is). */
void sar_mig_acks(const sar_mig_t* mig, size_t* acked, size_t* expected);
uint32_t sar_mig_epoch(const sar_mig_t* mig);
/* Pops the oldest queued action into *out: 1, or 0 when there is none. */
int sar_mig_pop_action(sar_mig_t* mig, sar_mig_action_t* out);
/* Writes the status (one JSON line, docs/opensm-plugin.md) to `path` atomically (temporary
 * file + rename). 0 on success, else nonzero and *errptr. */
int sar_mig_write_status(const sar_mig_t* mig, uint64_t now_ms, const char* path, char** errptr);

/* Writes `text` to `path` atomically (temporary file in the same directory, fsync, rename;
 * a symbolic link at `path` is replaced, never followed), mode 0644. 0 on success, else nonzero
 * and *errptr. The plugin's metrics textfile. */
int sar_write_file_atomic(const char* path, const char* text, char** errptr);

/* Acks dropped before sar_mig_ack (sar_mig_inbox_take_strays): counted in acks_ignored. */
void sar_mig_count_ignored(sar_mig_t* mig, uint64_t n);

/* The ack inbox (sar::MigAckInbox): where the trap callback (OpenSM's thread) leaves acks for the
 * coordinator's thread. One slot per participant of the current or last epoch (from
 * sar_mig_inbox_sync); an ack from any other port is only counted (a stray: never queued, never
 * displaces a participant's ack); a participant's newer ack replaces its older one not yet taken.
 * Not thread-safe: the caller guards it with its own mutex. */
typedef struct sar_mig_inbox_t sar_mig_inbox_t;
/* NULL: out of memory. */
sar_mig_inbox_t* sar_mig_inbox_create(void);
void sar_mig_inbox_destroy(sar_mig_inbox_t* inbox);
/* Keeps the ack (data: the notice's SAR_MIG_DATA_SIZE-byte DataDetails) if `issuer` is a
 * participant: 1 (wake the coordinator's thread); else counts a stray: 0. Never allocates. */
int sar_mig_inbox_offer(sar_mig_inbox_t* inbox, sar_mig_gid_t issuer, const uint8_t* data);
/* Takes the participants from the coordinator; call after sar_mig_planned, before the UnPath
 * goes out. Cheap when they are unchanged. */
void sar_mig_inbox_sync(sar_mig_inbox_t* inbox, const sar_mig_t* mig);
/* Moves at most `max` kept acks, oldest first, to issuers[i] and data + i * SAR_MIG_DATA_SIZE;
 * returns how many. */
size_t sar_mig_inbox_take(sar_mig_inbox_t* inbox, sar_mig_gid_t* issuers, uint8_t* data,
                          size_t max);
/* Strays since the last call. */
uint64_t sar_mig_inbox_take_strays(sar_mig_inbox_t* inbox);

/* Frees what this API allocated with malloc (error messages). */
void sar_free(void* ptr);

#ifdef __cplusplus
}
#endif

#endif /* SAR_C_H_ */
