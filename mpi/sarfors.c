/* libsarfors: MPI_Alltoall and MPI_Alltoallv in the phases of the job's published FORS schedule
 * (docs/fors.md, "Following the schedule in MPI"), through the MPI profiling interface: loaded
 * with LD_PRELOAD (or linked before libmpi), it defines MPI_Alltoall/MPI_Alltoallv and calls
 * the library's PMPI_* functions.
 *
 * Per call, on an intracommunicator without MPI_IN_PLACE:
 *  1. Between calls (the safe point), the file named by $SAR_FORS_SCHEDULE is read again when
 *     its identity (device, inode, size, mtime, ctime) changed since the last read.
 *  2. One PMPI_Allreduce (MIN over 4 int64) decides for every rank at once: the schedule is used
 *     only if every rank read a usable schedule (not "none", its host in it) with the same
 *     content hash. Otherwise every rank calls PMPI_Alltoall(v): the library's own algorithm.
 *     So ranks never disagree on the path, which would deadlock.
 *  3. The first time a schedule is used on a communicator, PMPI_Allgather gives every rank each
 *     rank's host; if some host of the schedule has no rank in the communicator (not the job's
 *     communicator) the schedule is not used there. The result is cached on the communicator
 *     (an attribute) until the schedule changes.
 *  4. The exchange, on a duplicate of the communicator (so no user message can match ours):
 *     first the pairs within each host (self included), then phase by phase: in phase p host A
 *     sends to host B and receives from host C (the schedule's rows); every rank of A sends its
 *     block to every rank of B and receives from every rank of C, non-blocking, then
 *     MPI_Waitall. The k-th rank of a host (by rank in the communicator) starts with the k-th
 *     rank of the partner host and walks them cyclically, so the partner's ranks are not all
 *     hit by the same sender at once. Each ordered rank pair is exchanged exactly once: pairs
 *     on one host in the first step, pairs on hosts A != B in the one phase where A sends to B.
 *
 * No error of the schedule (missing, corrupt, a FIFO, too large, "none") aborts the application
 * or fails the call: it only means the library's own algorithm. MPI errors of the exchange are
 * returned as the MPI library would return them. Under MPI_THREAD_MULTIPLE the library's own
 * algorithm is always used (the schedule state is per process). */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sarfors_schedule.h"

enum { kTag = 4712 };
/* The same cap as `sar-route fors-schedule` (docs/formats.md). */
static const size_t kMaxScheduleBytes = (size_t)1 << 30;

/* What the process knows of the schedule file. One per process: MPI_Alltoall has no handle to
 * hang it on, and every communicator of the process follows the same file. */
typedef struct file_state {
  int looked; /* the path and host below are set */
  char path[4096];
  char host[SARFORS_MAX_NAME + 1];
  int have_stat; /* st below is the identity of what `sched` was read from */
  struct stat st;
  int loaded; /* sched holds a parsed schedule */
  sarfors_schedule_t sched;
  char why_not[512]; /* why no usable schedule (for the trace) */
  unsigned long calls;
} file_state_t;

static file_state_t g_file = {.sched = {.my_host = -1}};

/* Cached per communicator (attribute). */
typedef struct comm_state {
  MPI_Comm dup;
  uint64_t hash; /* the schedule content this was built for */
  int usable;    /* every host of the schedule has a rank here */
  int size;      /* communicator size */
  int num_hosts;
  int* host_start;   /* [num_hosts + 1] */
  int* host_ranks;   /* [size]: the ranks of host h at host_start[h]..host_start[h+1]-1 */
  int* host_of_rank; /* [size] */
  MPI_Request* reqs; /* [2 * size]: a phase posts at most 2 * (ranks of one host) */
  char missing[SARFORS_MAX_NAME + 1]; /* a host without a rank (when not usable) */
} comm_state_t;

static int g_keyval = MPI_KEYVAL_INVALID;

static void FreeCommState(comm_state_t* c) {
  if (c == NULL) return;
  if (c->dup != MPI_COMM_NULL) PMPI_Comm_free(&c->dup);
  free(c->host_start);
  free(c->host_ranks);
  free(c->host_of_rank);
  free(c->reqs);
  free(c);
}

static int DeleteCommState(MPI_Comm comm, int keyval, void* attr, void* extra) {
  (void)comm;
  (void)keyval;
  (void)extra;
  FreeCommState((comm_state_t*)attr);
  return MPI_SUCCESS;
}

/* This process's host: $SAR_FORS_HOSTS_BY_RANK (tests: comma-separated names by world rank),
 * else $SAR_FORS_HOST, else MPI_Get_processor_name up to the first dot (the schedule names
 * hosts by the first word of their node description, normally the short host name). */
static void FindHost(char* host, size_t len) {
  host[0] = '\0';
  const char* by_rank = getenv("SAR_FORS_HOSTS_BY_RANK");
  if (by_rank != NULL && by_rank[0] != '\0') {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char* p = by_rank;
    for (int i = 0; i < rank && p != NULL; ++i) {
      p = strchr(p, ',');
      if (p != NULL) ++p;
    }
    if (p != NULL) {
      const size_t n = strcspn(p, ",");
      snprintf(host, len, "%.*s", (int)(n < len ? n : len - 1), p);
    }
    return;
  }
  const char* env = getenv("SAR_FORS_HOST");
  if (env != NULL && env[0] != '\0') {
    snprintf(host, len, "%s", env);
    return;
  }
  char name[MPI_MAX_PROCESSOR_NAME + 1];
  int n = 0;
  if (PMPI_Get_processor_name(name, &n) != MPI_SUCCESS) return;
  name[n < 0 ? 0 : (n > MPI_MAX_PROCESSOR_NAME ? MPI_MAX_PROCESSOR_NAME : n)] = '\0';
  name[strcspn(name, ".")] = '\0';
  snprintf(host, len, "%.*s", (int)(len - 1), name);
}

static int SameFile(const struct stat* a, const struct stat* b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
         a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
         a->st_ctim.tv_sec == b->st_ctim.tv_sec && a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* The safe point: called at the start of a collective, before anything is exchanged. Returns
 * the schedule if this process can follow it, else NULL with g_file.why_not set. */
static const sarfors_schedule_t* RefreshSchedule(void) {
  file_state_t* f = &g_file;
  const char* path = getenv("SAR_FORS_SCHEDULE");
  if (path == NULL || path[0] == '\0') {
    snprintf(f->why_not, sizeof f->why_not, "SAR_FORS_SCHEDULE not set");
    return NULL;
  }
  if (!f->looked || strcmp(path, f->path) != 0) {
    if (f->loaded) sarfors_schedule_free(&f->sched);
    f->loaded = f->have_stat = 0;
    snprintf(f->path, sizeof f->path, "%s", path);
    FindHost(f->host, sizeof f->host);
    f->looked = 1;
  }
  struct stat st;
  if (lstat(f->path, &st) != 0) {
    if (f->loaded) sarfors_schedule_free(&f->sched);
    f->loaded = f->have_stat = 0;
    snprintf(f->why_not, sizeof f->why_not, "%.256s: no schedule file", f->path);
    return NULL;
  }
  if (!f->have_stat || !SameFile(&st, &f->st)) {
    if (f->loaded) sarfors_schedule_free(&f->sched);
    f->loaded = 0;
    f->st = st;
    f->have_stat = 1;
    char err[256];
    if (f->host[0] == '\0') {
      snprintf(f->why_not, sizeof f->why_not, "host name unknown");
    } else if (sarfors_schedule_read(f->path, f->host, kMaxScheduleBytes, &f->sched, err,
                                     sizeof err) != 0) {
      snprintf(f->why_not, sizeof f->why_not, "%s", err);
    } else {
      f->loaded = 1;
      if (f->sched.none) {
        snprintf(f->why_not, sizeof f->why_not, "job %.64s: no FORS schedule: %.159s", f->sched.job,
                 f->sched.reason[0] != '\0' ? f->sched.reason : "(no reason given)");
      } else if (f->sched.my_host < 0) {
        snprintf(f->why_not, sizeof f->why_not, "host %.64s is not in the schedule of job %.64s",
                 f->host, f->sched.job);
      }
    }
  }
  if (!f->loaded || f->sched.none || f->sched.my_host < 0) return NULL;
  return &f->sched;
}

/* Builds the rank-to-host map of `comm` for schedule `s` (collective: every rank calls it when
 * the decision says the cache is stale). */
static int BuildCommState(MPI_Comm comm, const sarfors_schedule_t* s, comm_state_t* c) {
  const int size = c->size;
  int rc = PMPI_Allgather(&s->my_host, 1, MPI_INT, c->host_of_rank, 1, MPI_INT, comm);
  if (rc != MPI_SUCCESS) return rc;
  free(c->host_start);
  c->host_start = calloc((size_t)s->num_hosts + 1, sizeof(int));
  c->num_hosts = s->num_hosts;
  c->usable = 0;
  c->hash = s->content_hash;
  int* fill = calloc((size_t)s->num_hosts, sizeof(int));
  int usable = c->host_start != NULL && fill != NULL;
  c->missing[0] = '\0';
  if (usable) {
    for (int r = 0; r < size; ++r) c->host_start[c->host_of_rank[r] + 1]++;
    for (int h = 0; h < s->num_hosts; ++h) {
      const int k = c->host_start[h + 1];
      if (k == 0 && c->missing[0] == '\0') {
        snprintf(c->missing, sizeof c->missing, "%s", s->names[h]);
      }
      c->host_start[h + 1] += c->host_start[h];
    }
    for (int r = 0; r < size; ++r) {
      const int h = c->host_of_rank[r];
      c->host_ranks[c->host_start[h] + fill[h]++] = r;
    }
    usable = c->missing[0] == '\0';
  } else {
    snprintf(c->missing, sizeof c->missing, "(out of memory)");
  }
  free(fill);
  /* Every rank computed the same from the same data, unless memory ran out on one: agree. */
  rc = PMPI_Allreduce(&usable, &c->usable, 1, MPI_INT, MPI_MIN, comm);
  if (rc != MPI_SUCCESS) {
    c->usable = 0;
    return rc;
  }
  if (c->usable && c->dup == MPI_COMM_NULL) {
    rc = PMPI_Comm_dup(comm, &c->dup);
    if (rc != MPI_SUCCESS) {
      c->usable = 0;
      return rc;
    }
    PMPI_Comm_set_errhandler(c->dup, MPI_ERRORS_RETURN);
  }
  return MPI_SUCCESS;
}

/* A growing text buffer for the trace; allocation failure only loses the trace. */
typedef struct text {
  char* data;
  size_t len, cap;
  int failed;
} text_t;

static void Append(text_t* t, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void Append(text_t* t, const char* fmt, ...) {
  if (t->failed) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    const int n =
        vsnprintf(t->data ? t->data + t->len : NULL, t->data ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
      t->failed = 1;
      return;
    }
    if (t->data != NULL && t->len + (size_t)n < t->cap) {
      t->len += (size_t)n;
      return;
    }
    const size_t cap = (t->cap + (size_t)n + 1) * 2;
    char* d = realloc(t->data, cap);
    if (d == NULL) {
      t->failed = 1;
      return;
    }
    t->data = d;
    t->cap = cap;
  }
}

/* Appends the text to "<$SAR_FORS_TRACE>.<world rank>"; errors lose the trace only. */
static void WriteTrace(text_t* t) {
  const char* prefix = getenv("SAR_FORS_TRACE");
  if (prefix != NULL && prefix[0] != '\0' && !t->failed && t->len > 0) {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char path[4200];
    snprintf(path, sizeof path, "%s.%d", prefix, rank);
    FILE* out = fopen(path, "ae");
    if (out != NULL) {
      fwrite(t->data, 1, t->len, out);
      fclose(out);
    }
  }
  free(t->data);
}

static int Tracing(void) {
  const char* prefix = getenv("SAR_FORS_TRACE");
  return prefix != NULL && prefix[0] != '\0';
}

/* Where rank r's block starts in a buffer and how many elements it has. */
typedef struct layout {
  const char* sendbuf;
  char* recvbuf;
  MPI_Datatype sendtype, recvtype;
  MPI_Aint send_extent, recv_extent;
  int sendcount, recvcount;        /* MPI_Alltoall */
  const int *sendcounts, *sdispls; /* MPI_Alltoallv (NULL for Alltoall) */
  const int *recvcounts, *rdispls;
} layout_t;

static int PostRecv(const layout_t* l, int from, MPI_Comm comm, MPI_Request* req) {
  char* buf = l->recvcounts ? l->recvbuf + (MPI_Aint)l->rdispls[from] * l->recv_extent
                            : l->recvbuf + (MPI_Aint)from * l->recvcount * l->recv_extent;
  const int count = l->recvcounts ? l->recvcounts[from] : l->recvcount;
  return PMPI_Irecv(buf, count, l->recvtype, from, kTag, comm, req);
}

static int PostSend(const layout_t* l, int to, MPI_Comm comm, MPI_Request* req) {
  const char* buf = l->sendcounts ? l->sendbuf + (MPI_Aint)l->sdispls[to] * l->send_extent
                                  : l->sendbuf + (MPI_Aint)to * l->sendcount * l->send_extent;
  const int count = l->sendcounts ? l->sendcounts[to] : l->sendcount;
  return PMPI_Isend(buf, count, l->sendtype, to, kTag, comm, req);
}

/* Ranks of host h in the order the k-th rank of its partner host meets them. */
static int RankOf(const comm_state_t* c, int h, int k, int t) {
  const int n = c->host_start[h + 1] - c->host_start[h];
  return c->host_ranks[c->host_start[h] + (k + t) % n];
}

static int Exchange(const comm_state_t* c, const sarfors_schedule_t* s, const layout_t* l, int me,
                    text_t* trace) {
  const int a = s->my_host;
  const int na = c->host_start[a + 1] - c->host_start[a];
  int k = 0; /* my index among my host's ranks */
  while (c->host_ranks[c->host_start[a] + k] != me) ++k;
  MPI_Request* reqs = c->reqs;
  int rc = MPI_SUCCESS;
  /* Step 0: the pairs within the host, self included. */
  int n = 0;
  for (int t = 0; t < na && rc == MPI_SUCCESS; ++t)
    rc = PostRecv(l, RankOf(c, a, k, na - t), c->dup, &reqs[n++]);
  for (int t = 0; t < na && rc == MPI_SUCCESS; ++t)
    rc = PostSend(l, RankOf(c, a, k, t), c->dup, &reqs[n++]);
  if (rc == MPI_SUCCESS) rc = PMPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
  if (trace != NULL) {
    Append(trace, "local send");
    for (int t = 0; t < na; ++t) Append(trace, " %d", RankOf(c, a, k, t));
    Append(trace, "\n");
  }
  for (int p = 0; p < s->num_phases && rc == MPI_SUCCESS; ++p) {
    const int to = s->send_to[p], from = s->recv_from[p];
    if (to < 0 && from < 0) continue;
    n = 0;
    const int nfrom = from < 0 ? 0 : c->host_start[from + 1] - c->host_start[from];
    const int nto = to < 0 ? 0 : c->host_start[to + 1] - c->host_start[to];
    for (int t = 0; t < nfrom && rc == MPI_SUCCESS; ++t)
      rc = PostRecv(l, RankOf(c, from, k, t), c->dup, &reqs[n++]);
    for (int t = 0; t < nto && rc == MPI_SUCCESS; ++t)
      rc = PostSend(l, RankOf(c, to, k, t), c->dup, &reqs[n++]);
    if (rc == MPI_SUCCESS) rc = PMPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    if (trace != NULL) {
      Append(trace, "phase %d send_to %s recv_from %s send", p, to < 0 ? "-" : s->names[to],
             from < 0 ? "-" : s->names[from]);
      for (int t = 0; t < nto; ++t) Append(trace, " %d", RankOf(c, to, k, t));
      Append(trace, " recv");
      for (int t = 0; t < nfrom; ++t) Append(trace, " %d", RankOf(c, from, k, t));
      Append(trace, "\n");
    }
  }
  return rc;
}

/* The state cached on `comm`, made (not yet built) if absent. NULL when out of memory. */
static comm_state_t* CommState(MPI_Comm comm, int size) {
  if (g_keyval == MPI_KEYVAL_INVALID &&
      PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, DeleteCommState, &g_keyval, NULL) !=
          MPI_SUCCESS) {
    return NULL;
  }
  comm_state_t* c = NULL;
  int found = 0;
  if (PMPI_Comm_get_attr(comm, g_keyval, &c, &found) != MPI_SUCCESS) return NULL;
  if (found && c != NULL) return c;
  c = calloc(1, sizeof *c);
  if (c == NULL) return NULL;
  c->dup = MPI_COMM_NULL;
  c->size = size;
  c->host_ranks = malloc(sizeof(int) * (size_t)size);
  c->host_of_rank = malloc(sizeof(int) * (size_t)size);
  c->reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)size);
  if (c->host_ranks == NULL || c->host_of_rank == NULL || c->reqs == NULL ||
      PMPI_Comm_set_attr(comm, g_keyval, c) != MPI_SUCCESS) {
    FreeCommState(c);
    return NULL;
  }
  return c;
}

/* Decides (collectively) whether this call follows the schedule. Returns the communicator state
 * to use, or NULL for the library's own algorithm. *rc is set if an MPI call failed. */
static comm_state_t* Decide(MPI_Comm comm, const void* sendbuf, const char* what, text_t* trace,
                            const sarfors_schedule_t** sched, int* rc) {
  *rc = MPI_SUCCESS;
  *sched = NULL;
  int inter = 0, size = 0, provided = MPI_THREAD_SINGLE;
  const char* local = NULL; /* a reason every rank sees alike: no collective needed */
  PMPI_Query_thread(&provided);
  if (comm == MPI_COMM_NULL) {
    local = "MPI_COMM_NULL";
  } else if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) {
    local = "an intercommunicator";
  } else if (sendbuf == MPI_IN_PLACE) {
    local = "MPI_IN_PLACE";
  } else if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS || size < 2) {
    local = "a communicator of one rank";
  } else if (provided == MPI_THREAD_MULTIPLE) {
    local = "MPI_THREAD_MULTIPLE";
  }
  file_state_t* f = &g_file;
  ++f->calls;
  if (local != NULL) {
    if (trace) Append(trace, "call %lu %s fallback: %s\n", f->calls, what, local);
    return NULL;
  }
  const sarfors_schedule_t* s = RefreshSchedule();
  comm_state_t* c = CommState(comm, size);
  const int64_t h = s != NULL ? (int64_t)(s->content_hash >> 2) : 0;
  const int ok = s != NULL && c != NULL;
  int64_t mine[4] = {ok, ok ? h : INT64_MAX, ok ? -h : INT64_MAX,
                     ok && c->hash == s->content_hash && c->host_start != NULL};
  int64_t all[4];
  *rc = PMPI_Allreduce(mine, all, 4, MPI_INT64_T, MPI_MIN, comm);
  if (*rc != MPI_SUCCESS) return NULL;
  if (all[0] != 1 || all[1] != -all[2]) {
    if (trace) {
      Append(trace, "call %lu %s ranks %d fallback: %s\n", f->calls, what, size,
             !ok ? (c == NULL ? "out of memory" : f->why_not)
                 : "the ranks do not all have this schedule");
    }
    return NULL;
  }
  if (all[3] == 0) {
    *rc = BuildCommState(comm, s, c);
    if (*rc != MPI_SUCCESS) return NULL;
  }
  if (!c->usable) {
    if (trace) {
      Append(
          trace,
          "call %lu %s ranks %d fallback: not the job's communicator (host %s has no rank in it)\n",
          f->calls, what, size, c->missing[0] ? c->missing : "?");
    }
    return NULL;
  }
  if (trace) {
    Append(trace, "call %lu %s ranks %d fors job %s generation %s phases %d host %s\n", f->calls,
           what, size, s->job, s->generation, s->num_phases, s->names[s->my_host]);
  }
  *sched = s;
  return c;
}

/* The only symbols the library exports (it is built with hidden visibility). */
#define SARFORS_EXPORT __attribute__((visibility("default")))

/* The part both collectives share once their layout is filled in: the types' extents, this
 * rank, then the phased exchange. */
static int ExchangeLaidOut(comm_state_t* c, const sarfors_schedule_t* s, layout_t* l, MPI_Comm comm,
                           text_t* t) {
  MPI_Aint lb;
  int me = 0;
  PMPI_Type_get_extent(l->sendtype, &lb, &l->send_extent);
  PMPI_Type_get_extent(l->recvtype, &lb, &l->recv_extent);
  PMPI_Comm_rank(comm, &me);
  return Exchange(c, s, l, me, t);
}

SARFORS_EXPORT int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                MPI_Comm comm) {
  text_t trace = {0};
  text_t* t = Tracing() ? &trace : NULL;
  const sarfors_schedule_t* s = NULL;
  int rc = MPI_SUCCESS;
  comm_state_t* c = Decide(comm, sendbuf, "alltoall", t, &s, &rc);
  if (rc == MPI_SUCCESS) {
    if (c == NULL) {
      rc = PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    } else {
      layout_t l = {.sendbuf = sendbuf,
                    .recvbuf = recvbuf,
                    .sendtype = sendtype,
                    .recvtype = recvtype,
                    .sendcount = sendcount,
                    .recvcount = recvcount};
      rc = ExchangeLaidOut(c, s, &l, comm, t);
    }
  }
  if (t) WriteTrace(t);
  return rc;
}

SARFORS_EXPORT int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                 MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                 const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  text_t trace = {0};
  text_t* t = Tracing() ? &trace : NULL;
  const sarfors_schedule_t* s = NULL;
  int rc = MPI_SUCCESS;
  comm_state_t* c = Decide(comm, sendbuf, "alltoallv", t, &s, &rc);
  if (rc == MPI_SUCCESS) {
    if (c == NULL) {
      rc = PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                          recvtype, comm);
    } else {
      layout_t l = {.sendbuf = sendbuf,
                    .recvbuf = recvbuf,
                    .sendtype = sendtype,
                    .recvtype = recvtype,
                    .sendcounts = sendcounts,
                    .sdispls = sdispls,
                    .recvcounts = recvcounts,
                    .rdispls = rdispls};
      rc = ExchangeLaidOut(c, s, &l, comm, t);
    }
  }
  if (t) WriteTrace(t);
  return rc;
}
