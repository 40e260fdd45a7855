/* libsarmig: the C API for the consumers of sar's baseLID/highLID migration on one node (an MPI
 * runtime, a job launcher). The node's sar-agent tells every registered consumer when to move its
 * traffic to the highLIDs (the subnet manager is about to change the base routes) and when to
 * move back; the consumer answers "drained" once it has switched. The agent acknowledges a phase
 * to the subnet manager only when every registered consumer answered or the phase's deadline
 * passed (docs/migration.md).
 *
 * Conventions: opaque handle; functions return 0 on success and -1 on failure, with a malloc'ed
 * message in *errptr (free it with sar_mig_free) when errptr is not NULL. No function blocks
 * longer than its timeout argument; nothing is thread-safe on one handle (use one thread per
 * handle). No C++ exception leaves this library.
 *
 * Typical loop:
 *   sar_mig_client_t* c = sar_mig_connect(NULL, "mpirun-1234", 2000, &err);
 *   for (;;) {  // or poll sar_mig_fd(c) with the application's own fds
 *     sar_mig_dispatch(c, 1000, on_event, ctx, &err);   // calls on_event per order
 *   }
 *   on_event(ctx, SAR_MIG_MOVE_HIGH, epoch, flags, deadline_ms):
 *     switch connections to highLIDs (drain QPs, APM...), then sar_mig_drained(c, epoch, phase)
 */
#ifndef SAR_MIGRATION_H_
#define SAR_MIGRATION_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The agent's default socket (sar-agent --socket). */
#define SAR_MIG_DEFAULT_SOCKET "/run/sar-agent/migration.sock"

typedef struct sar_mig_client_t sar_mig_client_t;

typedef enum sar_mig_event_t {
  SAR_MIG_MOVE_HIGH = 2, /* phase 2: move to highLIDs, then answer drained */
  SAR_MIG_MOVE_BACK = 4  /* phase 4: move back to baseLIDs, then answer drained */
} sar_mig_event_t;

/* flags: SAR_MIG_FLAG_STAY (0x01) on MOVE_BACK means the epoch was aborted (old base routes). */

/* One order from the agent. `deadline_ms` is how long the consumer has (0: already late).
 * Answer with sar_mig_drained(client, epoch, event), from the callback or later. */
typedef void (*sar_mig_callback_t)(void* user, sar_mig_event_t event, uint32_t epoch,
                                   uint32_t flags, uint32_t deadline_ms);

/* Connects to the agent at `socket_path` (NULL: SAR_MIG_DEFAULT_SOCKET) and registers as `name`
 * ([A-Za-z0-9._-], 1..32 characters). Waits at most `timeout_ms` for the agent's welcome.
 * NULL on failure. */
sar_mig_client_t* sar_mig_connect(const char* socket_path, const char* name, int timeout_ms,
                                  char** errptr);

/* The socket, for the application's own poll loop (readable: call sar_mig_dispatch). */
int sar_mig_fd(const sar_mig_client_t* client);

/* Waits at most `timeout_ms` (0: do not wait) for orders and calls `cb` once per order received.
 * Returns the number of orders dispatched (>= 0), or -1 if the connection failed (the agent
 * went away or dropped us: reconnect with sar_mig_connect). */
int sar_mig_dispatch(sar_mig_client_t* client, int timeout_ms, sar_mig_callback_t cb, void* user,
                     char** errptr);

/* Tells the agent this consumer finished phase `event` of `epoch`. */
int sar_mig_drained(sar_mig_client_t* client, uint32_t epoch, sar_mig_event_t event, char** errptr);

/* Closes the connection (the agent stops waiting for this consumer) and frees the handle. */
void sar_mig_close(sar_mig_client_t* client);

/* Frees an error message. */
void sar_mig_free(void* p);

#ifdef __cplusplus
}
#endif

#endif /* SAR_MIGRATION_H_ */
