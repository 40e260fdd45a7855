/* The FORS schedule reader of libsarfors (sarfors_schedule.h). The format is docs/formats.md's
 * "FORS schedule"; libsar's reader (router/src/fors/schedule_parse.cc) is C++ and throws, so the
 * MPI side has this C one. The integration test compares what this reader gives each host with
 * `sar-route fors-schedule --host`, which reads the file through libsar. */
#define _GNU_SOURCE
#include "sarfors_schedule.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { kMaxLine = 512, kChunk = 1 << 16, kMaxUnicastLid = 0xBFFF };

static const char kMagic[] = "# sar-fors-schedule 1";
static const char kColumns[] = "phase,src,dst,dlid";

typedef struct parser {
  sarfors_schedule_t* s;
  const char* path;
  const char* host;
  char* err;
  size_t err_len;
  long line_no;
  int have_header, have_columns;
  long long last_phase;
  int32_t* slots; /* open-addressing table of host indices + 1 (0 = empty) */
  size_t slot_mask;
  int distinct; /* host names seen so far */
} parser_t;

static int Fail(parser_t* p, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static int Fail(parser_t* p, const char* fmt, ...) {
  char what[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (p->line_no > 0) {
    snprintf(p->err, p->err_len, "%s:%ld: %s", p->path, p->line_no, what);
  } else {
    snprintf(p->err, p->err_len, "%s: %s", p->path, what);
  }
  return -1;
}

static uint64_t Fnv1a(uint64_t h, const char* data, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    h ^= (unsigned char)data[i];
    h *= 1099511628211ULL;
  }
  return h;
}

/* Plain decimal digits only, at most `max`. */
static int Digits(const char* s, size_t n, unsigned long long max, unsigned long long* v) {
  if (n == 0 || n > 19) return 0;
  unsigned long long x = 0;
  for (size_t i = 0; i < n; ++i) {
    if (s[i] < '0' || s[i] > '9') return 0;
    x = x * 10 + (unsigned long long)(s[i] - '0');
  }
  if (x > max) return 0;
  *v = x;
  return 1;
}

/* The index of host name [s, s+n), added if new. -1 on a bad name or too many hosts. */
static int HostIndex(parser_t* p, const char* s, size_t n) {
  if (n == 0 || n > SARFORS_MAX_NAME) return Fail(p, "bad host name");
  for (size_t i = 0; i < n; ++i) {
    if (s[i] <= ' ' || s[i] > '~') return Fail(p, "bad host name");
  }
  size_t h = (size_t)Fnv1a(14695981039346656037ULL, s, n) & p->slot_mask;
  while (p->slots[h] != 0) {
    const char* name = p->s->names[p->slots[h] - 1];
    if (strlen(name) == n && memcmp(name, s, n) == 0) return p->slots[h] - 1;
    h = (h + 1) & p->slot_mask;
  }
  if (p->distinct >= p->s->num_hosts) {
    return Fail(p, "more host names than the header's %d hosts", p->s->num_hosts);
  }
  char* name = malloc(n + 1);
  if (name == NULL) return Fail(p, "out of memory");
  memcpy(name, s, n);
  name[n] = '\0';
  p->s->names[p->distinct] = name;
  p->slots[h] = p->distinct + 1;
  if (strcmp(name, p->host) == 0) p->s->my_host = p->distinct;
  return p->distinct++;
}

static int ParseHeader(parser_t* p, const char* line) {
  char job[SARFORS_MAX_NAME + 8], gen[24];
  unsigned long long epoch = 0;
  long long phases = 0, bound = 0, hosts = 0;
  int used = 0;
  if (sscanf(line,
             "# job %71s epoch %llu generation %23s phases %lld lower_bound %lld hosts %lld%n", job,
             &epoch, gen, &phases, &bound, &hosts, &used) != 6 ||
      line[used] != '\0') {
    return Fail(p, "bad header line");
  }
  if (strlen(job) > SARFORS_MAX_NAME) return Fail(p, "job id too long");
  if (phases < 0 || phases > SARFORS_MAX_PHASES) return Fail(p, "bad phase count");
  if (hosts < 0 || hosts > SARFORS_MAX_HOSTS) return Fail(p, "bad host count");
  sarfors_schedule_t* s = p->s;
  snprintf(s->job, sizeof s->job, "%.*s", SARFORS_MAX_NAME, job);
  snprintf(s->generation, sizeof s->generation, "%s", gen);
  s->none = strcmp(gen, "none") == 0;
  s->num_phases = (int)phases;
  s->num_hosts = (int)hosts;
  s->send_to = malloc(sizeof(int32_t) * (size_t)(phases > 0 ? phases : 1));
  s->recv_from = malloc(sizeof(int32_t) * (size_t)(phases > 0 ? phases : 1));
  s->names = calloc((size_t)(hosts > 0 ? hosts : 1), sizeof(char*));
  size_t slots = 4;
  while (slots < 2 * (size_t)hosts + 2) slots *= 2;
  p->slots = calloc(slots, sizeof(int32_t));
  p->slot_mask = slots - 1;
  if (s->send_to == NULL || s->recv_from == NULL || s->names == NULL || p->slots == NULL) {
    return Fail(p, "out of memory");
  }
  for (long long i = 0; i < phases; ++i) s->send_to[i] = s->recv_from[i] = -1;
  p->have_header = 1;
  return 0;
}

static int ParseRow(parser_t* p, const char* line, size_t len) {
  const char* c1 = memchr(line, ',', len);
  const char* c2 = c1 ? memchr(c1 + 1, ',', (size_t)(line + len - c1 - 1)) : NULL;
  const char* c3 = c2 ? memchr(c2 + 1, ',', (size_t)(line + len - c2 - 1)) : NULL;
  if (c3 == NULL || memchr(c3 + 1, ',', (size_t)(line + len - c3 - 1)) != NULL) {
    return Fail(p, "expected 'phase,src,dst,dlid'");
  }
  sarfors_schedule_t* s = p->s;
  if (s->none) return Fail(p, "a row in a schedule of generation none");
  unsigned long long phase = 0, lid = 0;
  if (!Digits(line, (size_t)(c1 - line), (unsigned long long)SARFORS_MAX_PHASES, &phase) ||
      (long long)phase >= s->num_phases) {
    return Fail(p, "bad phase (the header says %d phases)", s->num_phases);
  }
  if ((long long)phase < p->last_phase) return Fail(p, "phases out of order");
  p->last_phase = (long long)phase;
  if (!Digits(c3 + 1, (size_t)(line + len - c3 - 1), kMaxUnicastLid, &lid) || lid == 0) {
    return Fail(p, "bad dlid");
  }
  const int src = HostIndex(p, c1 + 1, (size_t)(c2 - c1 - 1));
  if (src < 0) return -1;
  const int dst = HostIndex(p, c2 + 1, (size_t)(c3 - c2 - 1));
  if (dst < 0) return -1;
  if (src == dst) return Fail(p, "a host sends to itself");
  if (src == s->my_host) {
    if (s->send_to[phase] >= 0) return Fail(p, "host %s sends twice in phase %llu", p->host, phase);
    s->send_to[phase] = dst;
  }
  if (dst == s->my_host) {
    if (s->recv_from[phase] >= 0) {
      return Fail(p, "host %s receives twice in phase %llu", p->host, phase);
    }
    s->recv_from[phase] = src;
  }
  return 0;
}

static int ParseLine(parser_t* p, const char* line, size_t len) {
  ++p->line_no;
  if (memchr(line, '\0', len) != NULL) return Fail(p, "NUL byte");
  if (p->line_no == 1) {
    if (len != sizeof kMagic - 1 || memcmp(line, kMagic, len) != 0) {
      return Fail(p, "not a sar FORS schedule");
    }
    return 0;
  }
  if (len >= 6 && memcmp(line, "# job ", 6) == 0) {
    if (p->have_header) return Fail(p, "a second header line");
    return ParseHeader(p, line);
  }
  if (len >= 8 && memcmp(line, "# none: ", 8) == 0) {
    snprintf(p->s->reason, sizeof p->s->reason, "%.*s", (int)(len - 8), line + 8);
    return 0;
  }
  if (len == 0 || line[0] == '#') return 0;
  if (!p->have_header) return Fail(p, "missing header line");
  if (!p->have_columns) {
    if (len != sizeof kColumns - 1 || memcmp(line, kColumns, len) != 0) {
      return Fail(p, "expected '%s'", kColumns);
    }
    p->have_columns = 1;
    return 0;
  }
  return ParseRow(p, line, len);
}

/* After the last row: the rows of the host asked for must make a complete exchange. */
static int CheckHost(parser_t* p) {
  sarfors_schedule_t* s = p->s;
  p->line_no = 0;
  if (!p->have_header || !p->have_columns) return Fail(p, "missing header");
  if (s->none) return 0;
  if (p->distinct != s->num_hosts) {
    return Fail(p, "%d hosts in the rows, the header says %d", p->distinct, s->num_hosts);
  }
  if (s->my_host < 0) return 0;
  char* seen = calloc((size_t)s->num_hosts, 2);
  if (seen == NULL) return Fail(p, "out of memory");
  int sends = 0, recvs = 0, dup = 0;
  for (int ph = 0; ph < s->num_phases; ++ph) {
    if (s->send_to[ph] >= 0) {
      dup |= seen[2 * s->send_to[ph]]++ != 0;
      ++sends;
    }
    if (s->recv_from[ph] >= 0) {
      dup |= seen[2 * s->recv_from[ph] + 1]++ != 0;
      ++recvs;
    }
  }
  free(seen);
  if (dup || sends != s->num_hosts - 1 || recvs != s->num_hosts - 1) {
    return Fail(p, "host %s: %d sends and %d receives%s, not one with each of the %d other hosts",
                p->host, sends, recvs, dup ? " (a partner twice)" : "", s->num_hosts - 1);
  }
  return 0;
}

void sarfors_schedule_free(sarfors_schedule_t* s) {
  if (s->names != NULL) {
    for (int i = 0; i < s->num_hosts; ++i) free(s->names[i]);
  }
  free(s->names);
  free(s->send_to);
  free(s->recv_from);
  memset(s, 0, sizeof *s);
  s->my_host = -1;
}

static int ReadAll(parser_t* p, int fd, size_t max_bytes) {
  char* chunk = malloc(kChunk);
  char line[kMaxLine];
  size_t line_len = 0, total = 0;
  int rc = 0;
  if (chunk == NULL) return Fail(p, "out of memory");
  uint64_t hash = 14695981039346656037ULL;
  for (;;) {
    const ssize_t n = read(fd, chunk, kChunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      rc = Fail(p, "read: %s", strerror(errno));
      break;
    }
    if (n == 0) break;
    total += (size_t)n;
    if (total > max_bytes) {
      p->line_no = 0;
      rc = Fail(p, "more than %zu bytes (refused)", max_bytes);
      break;
    }
    hash = Fnv1a(hash, chunk, (size_t)n);
    for (ssize_t i = 0; i < n && rc == 0; ++i) {
      if (chunk[i] == '\n') {
        line[line_len] = '\0';
        rc = ParseLine(p, line, line_len);
        line_len = 0;
      } else if (line_len + 1 >= sizeof line) {
        ++p->line_no;
        rc = Fail(p, "line longer than %d bytes", kMaxLine - 1);
      } else {
        line[line_len++] = chunk[i];
      }
    }
    if (rc != 0) break;
  }
  if (rc == 0 && line_len > 0) {
    line[line_len] = '\0';
    rc = ParseLine(p, line, line_len);
  }
  free(chunk);
  p->s->content_hash = hash;
  return rc;
}

int sarfors_schedule_read(const char* path, const char* host, size_t max_bytes,
                          sarfors_schedule_t* out, char* err, size_t err_len) {
  parser_t p;
  memset(&p, 0, sizeof p);
  memset(out, 0, sizeof *out);
  out->my_host = -1;
  p.s = out;
  p.path = path;
  p.host = host;
  p.err = err;
  p.err_len = err_len;
  p.last_phase = 0;
  /* O_NONBLOCK: opening a FIFO for reading would wait for a writer; O_NOFOLLOW: name the file. */
  const int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP) return Fail(&p, "a symbolic link (refused: name the file itself)");
    return Fail(&p, "%s", strerror(errno));
  }
  struct stat st;
  int rc = 0;
  if (fstat(fd, &st) != 0) {
    rc = Fail(&p, "%s", strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    rc = Fail(&p, "not a regular file (refused)");
  } else if ((st.st_mode & S_IWOTH) != 0) {
    rc = Fail(&p, "writable by every user (refused)");
  } else if ((unsigned long long)st.st_size > max_bytes) {
    rc = Fail(&p, "%lld bytes, more than %zu (refused)", (long long)st.st_size, max_bytes);
  } else {
    rc = ReadAll(&p, fd, max_bytes);
    if (rc == 0) rc = CheckHost(&p);
  }
  close(fd);
  free(p.slots);
  if (rc != 0) {
    /* names[] holds p.distinct names; num_hosts may be larger: free what is there. */
    sarfors_schedule_free(out);
  }
  return rc;
}
