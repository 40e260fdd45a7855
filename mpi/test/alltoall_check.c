/* The MPI program of libsarfors's test (test_sarfors.py): MPI_Alltoall and MPI_Alltoallv over
 * several message sizes, with a derived datatype whose extent differs from its size, zero counts
 * and gaps between blocks. Every rank checks each received element against the formula the
 * sender filled it with (exit 1 on a mismatch) and prints a hash of all it received, with and
 * without the library alike, so the test can compare runs byte for byte.
 *
 * alltoall_check [--sizes 1,100,5000] [--change FILE] [--split]
 *   --change FILE: after the first round, rank 0 renames FILE over $SAR_FORS_SCHEDULE (between
 *                  two barriers) and the round runs again.
 *   --split:       the round also runs on each half of MPI_COMM_WORLD (a communicator that is
 *                  not the job's). */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t g_hash = 14695981039346656037ULL;
static int g_errors = 0;

static void Hash(const void* data, size_t n) {
  const unsigned char* p = data;
  for (size_t i = 0; i < n; ++i) {
    g_hash ^= p[i];
    g_hash *= 1099511628211ULL;
  }
}

/* The value element i of the block from world rank src to world rank dst holds in call `call`. */
static int Value(int call, int src, int dst, int i) {
  return (int)(((unsigned)call * 1000003u) ^ ((unsigned)src << 20) ^ ((unsigned)dst << 10) ^
               (unsigned)(i * 7919));
}

/* MPI_Alltoall: the send side is a vector type (2 ints, stride 2: extent 3 ints), the receive
 * side plain ints. */
static void CheckAlltoall(MPI_Comm comm, int call, int count) {
  int size, me, wme;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &me);
  MPI_Comm_rank(MPI_COMM_WORLD, &wme);
  int* world = malloc(sizeof(int) * (size_t)size);
  MPI_Allgather(&wme, 1, MPI_INT, world, 1, MPI_INT, comm);
  MPI_Datatype pair;
  MPI_Type_vector(2, 1, 2, MPI_INT, &pair);
  MPI_Datatype pair_resized;
  MPI_Type_create_resized(pair, 0, 3 * (MPI_Aint)sizeof(int), &pair_resized);
  MPI_Type_commit(&pair_resized);
  /* count pairs per destination; each pair spans 3 ints, the middle one unsent (-1). */
  const size_t send_ints = (size_t)size * (size_t)count * 3;
  int* sendbuf = malloc(sizeof(int) * (send_ints + 1));
  int* recvbuf = malloc(sizeof(int) * ((size_t)size * (size_t)count * 2 + 1));
  for (int d = 0; d < size; ++d) {
    for (int i = 0; i < 2 * count; ++i) {
      sendbuf[(size_t)d * count * 3 + (size_t)(i / 2) * 3 + (size_t)(i % 2) * 2] =
          Value(call, wme, world[d], i);
    }
    for (int j = 0; j < count; ++j) sendbuf[(size_t)d * count * 3 + (size_t)j * 3 + 1] = -1;
  }
  memset(recvbuf, 0xA5, sizeof(int) * ((size_t)size * (size_t)count * 2 + 1));
  MPI_Alltoall(sendbuf, count, pair_resized, recvbuf, 2 * count, MPI_INT, comm);
  for (int s = 0; s < size; ++s) {
    for (int i = 0; i < 2 * count; ++i) {
      const int got = recvbuf[(size_t)s * count * 2 + (size_t)i];
      if (got != Value(call, world[s], wme, i) && g_errors++ < 5) {
        fprintf(stderr, "rank %d: alltoall call %d: element %d from rank %d is %d, not %d\n", wme,
                call, i, world[s], got, Value(call, world[s], wme, i));
      }
    }
  }
  Hash(recvbuf, sizeof(int) * ((size_t)size * (size_t)count * 2 + 1));
  MPI_Type_free(&pair_resized);
  MPI_Type_free(&pair);
  free(sendbuf);
  free(recvbuf);
  free(world);
}

/* How many elements world rank src sends to world rank dst in MPI_Alltoallv (zero for some). */
static int VCount(int call, int src, int dst, int base) {
  return ((src * 3 + dst * 5 + call) % 4) * base / 2;
}

/* MPI_Alltoallv of doubles, blocks in reverse order with a gap of 3 elements between them. */
static void CheckAlltoallv(MPI_Comm comm, int call, int base) {
  int size, me, wme;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &me);
  MPI_Comm_rank(MPI_COMM_WORLD, &wme);
  int* world = malloc(sizeof(int) * (size_t)size);
  MPI_Allgather(&wme, 1, MPI_INT, world, 1, MPI_INT, comm);
  int *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
  int *rc = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size);
  int stotal = 0, rtotal = 0;
  for (int k = size - 1; k >= 0; --k) {
    sc[k] = VCount(call, wme, world[k], base);
    sd[k] = stotal;
    stotal += sc[k] + 3;
    rc[k] = VCount(call, world[k], wme, base);
    rd[k] = rtotal;
    rtotal += rc[k] + 3;
  }
  double* sendbuf = malloc(sizeof(double) * (size_t)(stotal + 1));
  double* recvbuf = malloc(sizeof(double) * (size_t)(rtotal + 1));
  for (int i = 0; i <= stotal; ++i) sendbuf[i] = -1.0;
  for (int k = 0; k < size; ++k) {
    for (int i = 0; i < sc[k]; ++i) sendbuf[sd[k] + i] = Value(call, wme, world[k], i) / 8.0;
  }
  memset(recvbuf, 0x5A, sizeof(double) * (size_t)(rtotal + 1));
  MPI_Alltoallv(sendbuf, sc, sd, MPI_DOUBLE, recvbuf, rc, rd, MPI_DOUBLE, comm);
  for (int k = 0; k < size; ++k) {
    for (int i = 0; i < rc[k]; ++i) {
      if (recvbuf[rd[k] + i] != Value(call, world[k], wme, i) / 8.0 && g_errors++ < 5) {
        fprintf(stderr, "rank %d: alltoallv call %d: element %d from rank %d wrong\n", wme, call, i,
                world[k]);
      }
    }
  }
  Hash(recvbuf, sizeof(double) * (size_t)(rtotal + 1));
  free(sendbuf);
  free(recvbuf);
  free(sc);
  free(sd);
  free(rc);
  free(rd);
  free(world);
}

static int Round(MPI_Comm comm, int call, const int* sizes, int num_sizes) {
  for (int i = 0; i < num_sizes; ++i) {
    CheckAlltoall(comm, call++, sizes[i]);
    CheckAlltoallv(comm, call++, sizes[i]);
  }
  return call;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int sizes[16], num_sizes = 0, split = 0;
  const char* change = NULL;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
      for (char* tok = strtok(argv[++i], ","); tok != NULL && num_sizes < 16;
           tok = strtok(NULL, ",")) {
        sizes[num_sizes++] = atoi(tok);
      }
    } else if (strcmp(argv[i], "--change") == 0 && i + 1 < argc) {
      change = argv[++i];
    } else if (strcmp(argv[i], "--split") == 0) {
      split = 1;
    } else {
      fprintf(stderr, "alltoall_check: unknown argument %s\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (num_sizes == 0) sizes[num_sizes++] = 1;
  int me, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int call = Round(MPI_COMM_WORLD, 0, sizes, num_sizes);
  if (change != NULL) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
      const char* path = getenv("SAR_FORS_SCHEDULE");
      if (path == NULL || rename(change, path) != 0) {
        perror("alltoall_check: rename");
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    call = Round(MPI_COMM_WORLD, call, sizes, num_sizes);
  }
  if (split) {
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, me < size / 2, me, &half);
    call = Round(half, call, sizes, num_sizes);
    MPI_Comm_free(&half);
  }
  /* Every rank's hash, printed by rank 0 in rank order. */
  unsigned long long mine = g_hash, *all = malloc(sizeof mine * (size_t)size);
  MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  int errors = 0;
  MPI_Reduce(&g_errors, &errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (me == 0) {
    for (int r = 0; r < size; ++r) printf("rank %d received %016llx\n", r, all[r]);
    printf("calls %d errors %d\n", call, errors);
  }
  free(all);
  MPI_Finalize();
  return errors == 0 ? 0 : 1;
}
