/* One host's part of a published FORS schedule (docs/formats.md, "FORS schedule"), read by
 * libsarfors in every MPI process. Plain C and libc only: it runs inside the application.
 *
 * The reader trusts nothing in the file: a regular file only (opened O_NONBLOCK | O_NOFOLLOW,
 * so a FIFO or a symbolic link never blocks or redirects it), not writable by every user, at
 * most `max_bytes`, lines of at most 511 bytes, and the host's rows must form a complete
 * exchange (one send and one receive per phase at most, every other host once each way).
 * Memory: the host names and two ints per phase; rows are not kept. */
#ifndef SARFORS_SCHEDULE_H_
#define SARFORS_SCHEDULE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { SARFORS_MAX_NAME = 64, SARFORS_MAX_HOSTS = 1 << 20, SARFORS_MAX_PHASES = 1 << 24 };

typedef struct sarfors_schedule {
  int none; /* "generation none": the router gave the job no FORS */
  char job[SARFORS_MAX_NAME + 1];
  char generation[24];   /* as written ("none" for the none form) */
  char reason[160];      /* the none form's "# none: <reason>" (may be empty) */
  int num_hosts;         /* the header's host count (= distinct hosts in the rows) */
  int num_phases;        /* the header's phase count */
  int my_host;           /* index of the host asked for, -1 if it has no rows */
  int32_t* send_to;      /* [num_phases]: host index the host sends to, or -1 */
  int32_t* recv_from;    /* [num_phases]: host index the host receives from, or -1 */
  char** names;          /* [num_hosts]: host names, in order of first appearance */
  uint64_t content_hash; /* FNV-1a 64 of the file's bytes */
} sarfors_schedule_t;

/* Reads `path` for host `host`. Returns 0 on success; -1 with a one-line message in err
 * ("path:line: what") otherwise, *out then empty. A host absent from a valid schedule is not an
 * error (my_host = -1). Never blocks on a FIFO; reads at most max_bytes + 1 bytes. */
int sarfors_schedule_read(const char* path, const char* host, size_t max_bytes,
                          sarfors_schedule_t* out, char* err, size_t err_len);
void sarfors_schedule_free(sarfors_schedule_t* s);

#ifdef __cplusplus
}
#endif

#endif /* SARFORS_SCHEDULE_H_ */
