/*
 * sar-notify: tells sar-filterd that a job started or ended, so it polls SLURM now instead of at
 * its next interval. Meant for PrologSlurmctld / EpilogSlurmctld, which run a program without
 * arguments: the event comes from SLURM_SCRIPT_CONTEXT and the job from SLURM_JOB_ID. Explicit
 * arguments (`sar-notify job-start 42`) are for tests and manual use.
 *
 * It must never delay or fail a job: libc only, a hard deadline (500 ms by default) on the whole
 * exchange, and exit status 0 whatever happens. Failures are logged to syslog and stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_SOCKET "/run/sar-filterd/control.sock"
#ifndef DEFAULT_CONFIG /* CMake sets it from the install prefix */
#define DEFAULT_CONFIG "/etc/sar/sar-notify.conf"
#endif
#define SOCKET_ENV "SAR_FILTERD_SOCKET"

static void Log(int priority, const char* fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  syslog(priority, "%s", msg);
  fprintf(stderr, "sar-notify: %s\n", msg);
}

static void Usage(FILE* out) {
  fprintf(out,
          "usage: sar-notify [--socket PATH] [--config FILE] [--timeout-ms N] "
          "[job-start JOBID|job-end JOBID|poll|status|mapping]\n"
          "Tells sar-filterd (its control socket) that a job started or ended. Without "
          "arguments\n"
          "the event comes from SLURM_SCRIPT_CONTEXT (prolog_slurmctld -> job-start,\n"
          "epilog_slurmctld -> job-end) and the job from SLURM_JOB_ID. `status` prints the\n"
          "daemon's status line; `mapping` the job mapping the router was last told (the\n"
          "mapping file's format).\n"
          "Socket: --socket, else $" SOCKET_ENV
          ", else 'socket=PATH' in the config file\n"
          "(--config, default " DEFAULT_CONFIG "), else " DEFAULT_SOCKET
          ".\n"
          "--timeout-ms: deadline of the whole exchange, 1..60000 (default 500).\n"
          "Exit codes: 0 sent, or any failure while running as a SLURM hook (a job never fails\n"
          "because of sar; failures go to syslog); outside a hook 1 if `status` or `mapping`\n"
          "got no reply\n"
          "(or `mapping` a cut one: an 'error: reply cut' last line, or no final newline),\n"
          "2 for a usage error (nothing is sent).\n");
}

/* A usage error: said on stderr and syslog, nothing sent. Inside a SLURM hook the exit status
 * is still 0 (a typo in slurm.conf must not hold every job); by hand it is 2. */
static int UsageError(const char* fmt, const char* what) {
  char msg[256];
  snprintf(msg, sizeof(msg), fmt, what);
  openlog("sar-notify", LOG_PID, LOG_DAEMON);
  syslog(LOG_ERR, "usage error: %s; nothing sent", msg);
  closelog();
  fprintf(stderr, "sar-notify: %s; nothing sent (see --help)\n", msg);
  return getenv("SLURM_SCRIPT_CONTEXT") != NULL ? 0 : 2;
}

static double Now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int MsLeft(double deadline) {
  const double left = deadline - Now();
  return left > 0 ? (int)(left * 1000) + 1 : 0;
}

/* Reads 'socket=PATH' from a config file into out (size n). '#' lines are comments. Returns 1 if
 * found. */
static int SocketFromConfig(const char* path, char* out, size_t n) {
  FILE* f = fopen(path, "r");
  if (f == NULL) return 0;
  char line[1024];
  int found = 0;
  while (!found && fgets(line, sizeof(line), f) != NULL) {
    char* p = line;
    while (*p == ' ' || *p == '\t') ++p;
    if (strncmp(p, "socket", 6) != 0) continue;
    p += 6;
    while (*p == ' ' || *p == '\t') ++p;
    if (*p != '=') continue;
    ++p;
    while (*p == ' ' || *p == '\t') ++p;
    size_t len = strcspn(p, " \t\r\n#");
    if (len == 0 || len >= n) continue;
    memcpy(out, p, len);
    out[len] = '\0';
    found = 1;
  }
  fclose(f);
  return found;
}

/* Copies what the daemon sends on `fd` to `out` until it closes the connection, within the
 * deadline; closes fd. An "error: ..." first line (an older daemon without the command) is not
 * copied but returned in `reply`. A reply the daemon cut (a slow reader, past its deadline) ends
 * with an "error: reply cut ..." line, or, from an older daemon, without a newline: both are
 * failures, with that line or "cut mid-line" in `reply` (what came before is already copied). */
static int Stream(int fd, double deadline, char* reply, size_t reply_size, FILE* out) {
  char buf[65536];
  size_t total = 0;
  char line[256]; /* the start of the line under way, and of the last whole one */
  char last[256];
  size_t line_len = 0;
  last[0] = '\0';
  for (;;) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, MsLeft(deadline)) != 1) {
      snprintf(reply, reply_size, "timed out after %zu bytes of the reply", total);
      close(fd);
      return -1;
    }
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      snprintf(reply, reply_size, "read: %s", strerror(errno));
      close(fd);
      return -1;
    }
    if (total == 0 && n >= 6 && memcmp(buf, "error:", 6) == 0) {
      const char* eol = memchr(buf, '\n', (size_t)n);
      snprintf(reply, reply_size, "%.*s", (int)(eol != NULL ? eol - buf : n), buf);
      close(fd);
      return -1;
    }
    fwrite(buf, 1, (size_t)n, out);
    total += (size_t)n;
    for (ssize_t i = 0; i < n; ++i) {
      if (buf[i] == '\n') {
        memcpy(last, line, line_len);
        last[line_len] = '\0';
        line_len = 0;
      } else if (line_len + 1 < sizeof(line)) {
        line[line_len++] = buf[i];
      }
    }
  }
  close(fd);
  if (total == 0) {
    snprintf(reply, reply_size, "connection closed without a reply");
    return -1;
  }
  if (line_len > 0) {
    snprintf(reply, reply_size, "the reply was cut mid-line after %zu bytes", total);
    return -1;
  }
  if (strncmp(last, "error:", 6) == 0) {
    snprintf(reply, reply_size, "%s", last);
    return -1;
  }
  return 0;
}

/* One request, one reply line, all within the deadline. Returns 0 with the reply line in
 * `reply`, or -1 with what went wrong. With `stream` set, the whole reply (every line until the
 * daemon closes) goes there instead and `reply` only says what went wrong. */
static int Send(const char* path, const char* request, double deadline, char* reply,
                size_t reply_size, FILE* stream) {
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof(addr));
  addr.sun_family = AF_UNIX;
  if (strlen(path) >= sizeof(addr.sun_path)) {
    snprintf(reply, reply_size, "socket path too long");
    return -1;
  }
  strcpy(addr.sun_path, path);
  int fd = -1;
  /* A full listen backlog (a burst of job starts) gives EAGAIN on a non-blocking UNIX connect:
   * retry briefly until the deadline rather than give up at once. */
  for (;;) {
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      snprintf(reply, reply_size, "socket: %s", strerror(errno));
      return -1;
    }
    if (connect(fd, (struct sockaddr*)&addr, sizeof(addr)) == 0) break;
    const int err = errno;
    close(fd);
    if (err != EAGAIN || MsLeft(deadline) == 0) {
      snprintf(reply, reply_size, "connect %s: %s", path, strerror(err));
      return -1;
    }
    usleep(5000);
  }
  size_t sent = 0;
  const size_t len = strlen(request);
  while (sent < len) {
    struct pollfd p = {fd, POLLOUT, 0};
    if (poll(&p, 1, MsLeft(deadline)) != 1) {
      snprintf(reply, reply_size, "timed out sending");
      close(fd);
      return -1;
    }
    const ssize_t n = send(fd, request + sent, len - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      snprintf(reply, reply_size, "send: %s", strerror(errno));
      close(fd);
      return -1;
    }
    if (n > 0) sent += (size_t)n;
  }
  if (stream != NULL) return Stream(fd, deadline, reply, reply_size, stream);
  size_t got = 0;
  while (got + 1 < reply_size && memchr(reply, '\n', got) == NULL) {
    struct pollfd p = {fd, POLLIN, 0};
    if (poll(&p, 1, MsLeft(deadline)) != 1) {
      snprintf(reply, reply_size, "timed out waiting for the reply");
      close(fd);
      return -1;
    }
    const ssize_t n = read(fd, reply + got, reply_size - 1 - got);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      snprintf(reply, reply_size, "read: %s", strerror(errno));
      close(fd);
      return -1;
    }
    got += (size_t)n;
  }
  close(fd);
  reply[got] = '\0';
  reply[strcspn(reply, "\n")] = '\0';
  if (got == 0) {
    snprintf(reply, reply_size, "connection closed without a reply");
    return -1;
  }
  return 0;
}

int main(int argc, char** argv) {
  const char* socket_flag = NULL;
  const char* config = DEFAULT_CONFIG;
  int timeout_ms = 500;
  const char* event = NULL;
  const char* job = NULL;
  int config_given = 0;
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; ++i) {
    const char* a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      Usage(stdout);
      return 0;
    }
    if (strcmp(a, "--socket") != 0 && strcmp(a, "--config") != 0 && strcmp(a, "--timeout-ms") != 0)
      return UsageError("unknown option '%s'", a);
    if (i + 1 >= argc) return UsageError("option %s needs a value", a);
    if (strcmp(a, "--socket") == 0) {
      socket_flag = argv[++i];
    } else if (strcmp(a, "--config") == 0) {
      config = argv[++i];
      config_given = 1;
    } else {
      char* end = NULL;
      errno = 0;
      const long v = strtol(argv[++i], &end, 10);
      if (errno != 0 || end == argv[i] || *end != '\0' || v < 1 || v > 60000)
        return UsageError("--timeout-ms '%s' is not a number of milliseconds in 1..60000", argv[i]);
      timeout_ms = (int)v;
    }
  }
  if (config_given && access(config, R_OK) != 0)
    return UsageError("cannot read the --config file '%s'", config);
  openlog("sar-notify", LOG_PID, LOG_DAEMON);
  if (i < argc) event = argv[i++];
  if (i < argc) job = argv[i++];
  if (event == NULL) {
    const char* ctx = getenv("SLURM_SCRIPT_CONTEXT");
    if (ctx != NULL && strcmp(ctx, "prolog_slurmctld") == 0) {
      event = "job-start";
    } else if (ctx != NULL && strcmp(ctx, "epilog_slurmctld") == 0) {
      event = "job-end";
    } else {
      event = "poll"; /* unknown context: still worth a look */
    }
  }
  if (job == NULL) job = getenv("SLURM_JOB_ID");
  if (strcmp(event, "job-start") != 0 && strcmp(event, "job-end") != 0 &&
      strcmp(event, "poll") != 0 && strcmp(event, "status") != 0 && strcmp(event, "mapping") != 0) {
    closelog();
    return UsageError("unknown event '%s' (expected job-start, job-end, poll, status or mapping)",
                      event);
  }
  if (i < argc) {
    closelog();
    return UsageError("unexpected argument '%s'", argv[i]);
  }

  char path[sizeof(((struct sockaddr_un*)0)->sun_path) + 1];
  const char* env_socket = getenv(SOCKET_ENV);
  if (socket_flag != NULL) {
    snprintf(path, sizeof(path), "%s", socket_flag);
  } else if (env_socket != NULL && env_socket[0] != '\0') {
    snprintf(path, sizeof(path), "%s", env_socket);
  } else if (!SocketFromConfig(config, path, sizeof(path))) {
    snprintf(path, sizeof(path), "%s", DEFAULT_SOCKET);
  }

  char request[128];
  /* The read-only queries: one status line, or the whole mapping streamed to stdout. */
  if (strcmp(event, "status") == 0 || strcmp(event, "mapping") == 0) {
    const int whole = strcmp(event, "mapping") == 0;
    char query[16], reply[1024];
    snprintf(query, sizeof(query), "%s\n", event);
    const int sent =
        Send(path, query, Now() + timeout_ms / 1000.0, reply, sizeof(reply), whole ? stdout : NULL);
    closelog();
    if (sent != 0) {
      fprintf(stderr, "sar-notify: %s: sar-filterd at %s did not answer (%s)\n", event, path,
              reply);
      return getenv("SLURM_SCRIPT_CONTEXT") != NULL ? 0 : 1;
    }
    if (!whole) printf("%s\n", reply);
    return fflush(stdout) == 0 ? 0 : 1;
  }
  if (strcmp(event, "poll") == 0 || job == NULL) {
    snprintf(request, sizeof(request), "poll\n");
  } else {
    snprintf(request, sizeof(request), "%s %.64s\n", event, job);
  }
  char reply[256];
  const double deadline = Now() + timeout_ms / 1000.0;
  if (Send(path, request, deadline, reply, sizeof(reply), NULL) != 0 || strcmp(reply, "ok") != 0) {
    Log(LOG_WARNING, "%s job %s: sar-filterd not told (%s); it will see the job at its next poll",
        event, job ? job : "?", reply);
  }
  closelog();
  return 0;
}
