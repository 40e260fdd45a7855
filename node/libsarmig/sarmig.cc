// libsarmig: the consumer side of the agent's socket (sar/migration.h, sarmig_proto.h).
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "sar/migration.h"
#include "sarmig_proto.h"

struct sar_mig_client_t {
  int fd = -1;
  std::string in;
};

namespace {

void SetError(char** errptr, const std::string& msg) {
  if (errptr == nullptr) return;
  free(*errptr);
  *errptr = strdup(msg.c_str());
}

long long NowMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

bool SendAll(int fd, const std::string& s, std::string* err) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      *err = std::string("send to sar-agent: ") + strerror(errno);
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return true;
}

// Reads what is there (waiting at most timeout_ms for the first byte). -1 on EOF or error.
int ReadSome(sar_mig_client_t* c, int timeout_ms, std::string* err) {
  pollfd p{c->fd, POLLIN, 0};
  int rc = poll(&p, 1, timeout_ms);
  if (rc < 0 && errno != EINTR) {
    *err = std::string("poll: ") + strerror(errno);
    return -1;
  }
  if (rc <= 0) return 0;
  char buf[512];
  ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
  if (n == 0) {
    *err = "sar-agent closed the connection";
    return -1;
  }
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return 0;
    *err = std::string("recv from sar-agent: ") + strerror(errno);
    return -1;
  }
  c->in.append(buf, static_cast<size_t>(n));
  if (c->in.size() > 64 * sarmig::kMaxLine) {
    *err = "sar-agent sent an over-long line";
    return -1;
  }
  return 1;
}

bool TakeLine(sar_mig_client_t* c, std::string* line) {
  size_t pos = c->in.find('\n');
  if (pos == std::string::npos) return false;
  *line = c->in.substr(0, pos);
  c->in.erase(0, pos + 1);
  return true;
}

sar_mig_client_t* Connect(const char* socket_path, const char* name, int timeout_ms,
                          std::string* err) {
  std::string path = socket_path ? socket_path : SAR_MIG_DEFAULT_SOCKET;
  if (name == nullptr || !sarmig::ValidName(name)) {
    *err = "consumer name must be 1..32 characters of [A-Za-z0-9._-]";
    return nullptr;
  }
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) {
    *err = path + ": socket path too long";
    return nullptr;
  }
  auto* c = new (std::nothrow) sar_mig_client_t();
  if (c == nullptr) {
    *err = "out of memory";
    return nullptr;
  }
  c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size());
  if (c->fd < 0 || connect(c->fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    *err = path + ": connect: " + strerror(errno);
    sar_mig_close(c);
    return nullptr;
  }
  if (!SendAll(c->fd, "HELLO " + std::to_string(sarmig::kProtoVersion) + " " + name + "\n", err)) {
    sar_mig_close(c);
    return nullptr;
  }
  long long end = NowMs() + timeout_ms;
  std::string line;
  for (;;) {
    if (TakeLine(c, &line)) {
      if (line.rfind("WELCOME ", 0) == 0) return c;
      *err = "sar-agent refused: " + line;
      sar_mig_close(c);
      return nullptr;
    }
    long long left = end - NowMs();
    if (left <= 0) {
      *err = path + ": no answer from sar-agent in time";
      sar_mig_close(c);
      return nullptr;
    }
    if (ReadSome(c, static_cast<int>(left), err) < 0) {
      sar_mig_close(c);
      return nullptr;
    }
  }
}

}  // namespace

extern "C" {

sar_mig_client_t* sar_mig_connect(const char* socket_path, const char* name, int timeout_ms,
                                  char** errptr) {
  try {
    std::string err;
    sar_mig_client_t* c = Connect(socket_path, name, timeout_ms, &err);
    if (c == nullptr) SetError(errptr, err);
    return c;
  } catch (...) {
    SetError(errptr, "internal error");
    return nullptr;
  }
}

int sar_mig_fd(const sar_mig_client_t* client) { return client ? client->fd : -1; }

int sar_mig_dispatch(sar_mig_client_t* c, int timeout_ms, sar_mig_callback_t cb, void* user,
                     char** errptr) {
  try {
    if (c == nullptr || c->fd < 0) {
      SetError(errptr, "not connected");
      return -1;
    }
    std::string err, line;
    int dispatched = 0;
    // Lines already buffered first; then one wait for more.
    if (c->in.find('\n') == std::string::npos && ReadSome(c, timeout_ms, &err) < 0) {
      SetError(errptr, err);
      return -1;
    }
    while (ReadSome(c, 0, &err) > 0) {
    }
    if (!err.empty()) {
      // Deliver what arrived before the error, then report it on the next call.
      if (c->in.find('\n') == std::string::npos) {
        SetError(errptr, err);
        return -1;
      }
    }
    while (TakeLine(c, &line)) {
      uint32_t epoch, phase, flags, deadline;
      if (sarmig::ParsePhaseLine(line, &epoch, &phase, &flags, &deadline)) {
        if (cb) cb(user, static_cast<sar_mig_event_t>(phase), epoch, flags, deadline);
        dispatched++;
      } else if (line.rfind("BYE", 0) == 0) {
        SetError(errptr, "sar-agent dropped this consumer: " + line);
        return -1;
      }
      // Unknown lines from a newer agent are skipped.
    }
    return dispatched;
  } catch (...) {
    SetError(errptr, "internal error");
    return -1;
  }
}

int sar_mig_drained(sar_mig_client_t* c, uint32_t epoch, sar_mig_event_t event, char** errptr) {
  try {
    if (c == nullptr || c->fd < 0) {
      SetError(errptr, "not connected");
      return -1;
    }
    std::string err;
    if (!SendAll(c->fd,
                 "DRAINED " + std::to_string(epoch) + " " +
                     std::to_string(static_cast<int>(event)) + "\n",
                 &err)) {
      SetError(errptr, err);
      return -1;
    }
    return 0;
  } catch (...) {
    SetError(errptr, "internal error");
    return -1;
  }
}

void sar_mig_close(sar_mig_client_t* c) {
  if (c == nullptr) return;
  if (c->fd >= 0) close(c->fd);
  delete c;
}

void sar_mig_free(void* p) { free(p); }

}  // extern "C"
