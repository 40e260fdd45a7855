#include "consumer_hub.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "sarmig_proto.h"

namespace sarmig {
ConsumerHub::ConsumerHub(const HubConfig& cfg, Logger* log) : cfg_(cfg), log_(log) {}

ConsumerHub::~ConsumerHub() {
  for (Conn& c : conns_) close(c.fd);
  if (listen_fd_ >= 0) {
    close(listen_fd_);
    unlink(cfg_.path.c_str());
  }
  if (wake_rd_ >= 0) close(wake_rd_);
  if (wake_wr_ >= 0) close(wake_wr_);
}

bool ConsumerHub::Listen(std::string* err) {
  sockaddr_un addr{};
  if (cfg_.path.empty() || cfg_.path.size() >= sizeof(addr.sun_path)) {
    *err = "socket path '" + cfg_.path + "': empty or longer than " +
           std::to_string(sizeof(addr.sun_path) - 1) + " bytes";
    return false;
  }
  int p[2];
  if (pipe2(p, O_NONBLOCK | O_CLOEXEC) != 0) {
    *err = std::string("pipe: ") + strerror(errno);
    return false;
  }
  wake_rd_ = p[0];
  wake_wr_ = p[1];
  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) {
    *err = std::string("socket: ") + strerror(errno);
    return false;
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, cfg_.path.c_str(), cfg_.path.size());
  // A socket file left by a crashed agent: replace it, but never a file of another kind.
  struct stat st {};
  if (lstat(cfg_.path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      *err = cfg_.path + ": exists and is not a socket";
      return false;
    }
    unlink(cfg_.path.c_str());
  }
  // Owner-only from the first moment: bind under a tight umask, then chmod to be sure.
  mode_t old = umask(0077);
  int rc = bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  umask(old);
  if (rc != 0) {
    *err = cfg_.path + ": bind: " + strerror(errno);
    close(listen_fd_);
    listen_fd_ = -1;
    return false;
  }
  if (chmod(cfg_.path.c_str(), 0600) != 0 || listen(listen_fd_, 16) != 0) {
    *err = cfg_.path + ": " + strerror(errno);
    return false;
  }
  return true;
}

void ConsumerHub::StartPhase(const PhaseOrder& order) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    pending_ = order;
  }
  Wake();
}

void ConsumerHub::Wake() {
  if (wake_wr_ < 0) return;
  char b = 1;
  ssize_t n = write(wake_wr_, &b, 1);  // a full pipe already means "wake up"
  (void)n;
}

void ConsumerHub::Queue(Conn& c, const std::string& line) {
  if (c.fd < 0) return;
  if (c.out.size() + line.size() + 1 > cfg_.max_output) {
    Drop(c, "not reading its messages (output cap)");
    return;
  }
  c.out += line;
  c.out += '\n';
  Flush(c);
}

void ConsumerHub::Flush(Conn& c) {
  while (c.fd >= 0 && !c.out.empty()) {
    ssize_t n = send(c.fd, c.out.data(), c.out.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      c.out.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      Drop(c, "write failed");
      return;
    }
  }
}

void ConsumerHub::Drop(Conn& c, const char* reason) {
  if (c.fd < 0) return;
  SARMIG_LOG(log_, kWarn, "consumer %llu (%s) disconnected: %s",
             static_cast<unsigned long long>(c.id), c.name.empty() ? "-" : c.name.c_str(), reason);
  if (c.registered) {
    // Best effort: tell it why. Never waits.
    std::string bye = std::string("BYE ") + reason + "\n";
    ssize_t n = send(c.fd, bye.data(), bye.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    (void)n;
    registered_--;
  }
  close(c.fd);
  c.fd = -1;
  if (phase_ && phase_->waiting.erase(c.id) > 0) phase_->consumers--;
}

void ConsumerHub::Accept(Clock::time_point now) {
  for (;;) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or a transient error: try again next round
    if (conns_.size() >= cfg_.max_consumers) {
      SARMIG_LOG(log_, kWarn, "consumer refused: already %zu connections", conns_.size());
      close(fd);
      continue;
    }
    Conn c;
    c.fd = fd;
    c.id = next_id_++;
    c.accepted = now;
    conns_.push_back(std::move(c));
  }
}

void ConsumerHub::ReadFrom(Conn& c, Clock::time_point now) {
  char buf[512];
  for (int rounds = 0; rounds < 8 && c.fd >= 0; rounds++) {
    ssize_t n = recv(c.fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0) {
      Drop(c, "closed the connection");
      return;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) Drop(c, "read failed");
      return;
    }
    if (c.in.empty()) c.partial_since = now;
    c.in.append(buf, static_cast<size_t>(n));
    size_t pos;
    while (c.fd >= 0 && (pos = c.in.find('\n')) != std::string::npos) {
      std::string line = c.in.substr(0, pos);
      c.in.erase(0, pos + 1);
      c.partial_since = now;
      if (line.size() + 1 > kMaxLine) {
        Drop(c, "line too long");
        return;
      }
      HandleLine(c, line);
    }
    if (c.fd >= 0 && c.in.size() >= kMaxLine) {
      Drop(c, "line too long");
      return;
    }
  }
}

std::string ConsumerHub::PhaseLine() const {
  const PhaseOrder& o = *mode_;
  uint32_t flags = o.stay ? SAR_MIG_FLAG_STAY : 0;
  uint32_t left = 0;
  if (phase_ && phase_->order.epoch == o.epoch && phase_->order.phase == o.phase) {
    auto rem = std::chrono::duration_cast<Ms>(phase_->deadline - Clock::now()).count();
    left = rem > 0 ? static_cast<uint32_t>(rem) : 0;
  }
  return "PHASE " + std::to_string(o.epoch) + " " + std::to_string(o.phase) + " " +
         std::to_string(flags) + " " + std::to_string(left);
}

void ConsumerHub::HandleLine(Conn& c, const std::string& line) {
  if (!c.registered) {
    int version = 0;
    std::string name;
    if (!ParseHelloLine(line, &version, &name)) {
      Drop(c, "expected HELLO <version> <name>");
      return;
    }
    if (version != kProtoVersion) {
      Drop(c, "unsupported protocol version");
      return;
    }
    c.registered = true;
    c.name = name;
    registered_++;
    SARMIG_LOG(log_, kInfo, "consumer %llu (%s) registered; %zu registered",
               static_cast<unsigned long long>(c.id), name.c_str(), registered_);
    Queue(c, "WELCOME " + std::to_string(c.id));
    // A newcomer starts in the node's current mode; it is not waited for in a running phase.
    if (mode_ && mode_->phase == 2) Queue(c, PhaseLine());
    return;
  }
  uint32_t epoch = 0, phase = 0;
  if (!ParseDrainedLine(line, &epoch, &phase)) {
    Drop(c, "expected DRAINED <epoch> <phase>");
    return;
  }
  if (!phase_ || phase_->order.epoch != epoch || phase_->order.phase != phase) {
    SARMIG_LOG(log_, kDebug, "consumer %s: DRAINED %u %u is not the running phase", c.name.c_str(),
               epoch, phase);
    return;
  }
  if (phase_->waiting.erase(c.id) > 0) phase_->drained++;
}

void ConsumerHub::Begin(const PhaseOrder& o, Clock::time_point now) {
  Phase p;
  p.order = o;
  p.started = now;
  p.deadline = now + o.deadline;
  for (const Conn& c : conns_)
    if (c.fd >= 0 && c.registered) p.waiting.insert(c.id);
  p.consumers = static_cast<uint16_t>(std::min<size_t>(p.waiting.size(), 0xFFFF));
  phase_ = p;
  mode_ = o;
  std::string line = PhaseLine();
  for (Conn& c : conns_)
    if (c.fd >= 0 && c.registered) Queue(c, line);
}

void ConsumerHub::Finish(Clock::time_point now, bool late, std::vector<PhaseResult>* out) {
  PhaseResult r;
  r.epoch = phase_->order.epoch;
  r.phase = phase_->order.phase;
  r.consumers = phase_->consumers;
  r.drained = phase_->drained;
  r.late = late;
  if (late) {
    std::string who;
    for (const Conn& c : conns_)
      if (c.fd >= 0 && phase_->waiting.count(c.id)) who += (who.empty() ? "" : ",") + c.name;
    SARMIG_LOG(log_, kWarn, "epoch %u phase %u: deadline passed, late consumers: %s", r.epoch,
               r.phase, who.c_str());
  }
  (void)now;
  out->push_back(r);
  phase_.reset();
}

std::vector<PhaseResult> ConsumerHub::Poll(int timeout_ms) {
  std::vector<PhaseResult> done;
  Clock::time_point now = Clock::now();
  // Shorten the wait to the nearest deadline (phase, HELLO, partial line).
  auto until = now + Ms(timeout_ms);
  if (phase_) until = std::min(until, phase_->deadline);
  for (const Conn& c : conns_) {
    if (!c.registered) until = std::min(until, c.accepted + cfg_.hello_timeout);
    if (!c.in.empty()) until = std::min(until, c.partial_since + cfg_.line_timeout);
  }
  int wait = static_cast<int>(
      std::max<long long>(0, std::chrono::duration_cast<Ms>(until - now).count() + 1));

  std::vector<pollfd> fds;
  fds.push_back({listen_fd_, POLLIN, 0});
  fds.push_back({wake_rd_, POLLIN, 0});
  for (const Conn& c : conns_)
    fds.push_back({c.fd, static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
  int rc = poll(fds.data(), fds.size(), wait);
  now = Clock::now();
  if (rc > 0) {
    if (fds[1].revents & POLLIN) {
      char buf[64];
      while (read(wake_rd_, buf, sizeof(buf)) > 0) {
      }
    }
    for (size_t i = 0; i < conns_.size(); i++) {
      short ev = fds[i + 2].revents;
      if (ev & (POLLIN | POLLHUP | POLLERR)) ReadFrom(conns_[i], now);
      if (conns_[i].fd >= 0 && (ev & POLLOUT)) Flush(conns_[i]);
    }
    if (fds[0].revents & POLLIN) Accept(now);
  }
  // A new order replaces whatever phase was running (its result no longer matters).
  std::optional<PhaseOrder> order;
  {
    std::lock_guard<std::mutex> lock(mu_);
    order.swap(pending_);
  }
  if (order) Begin(*order, now);
  // Deadlines of misbehaving connections.
  for (Conn& c : conns_) {
    if (c.fd < 0) continue;
    if (!c.registered && now - c.accepted > cfg_.hello_timeout) {
      Drop(c, "no HELLO in time");
    } else if (!c.in.empty() && now - c.partial_since > cfg_.line_timeout) {
      Drop(c, "partial line not completed in time");
    }
  }
  conns_.erase(std::remove_if(conns_.begin(), conns_.end(), [](const Conn& c) { return c.fd < 0; }),
               conns_.end());
  if (phase_) {
    if (phase_->waiting.empty()) {
      Finish(now, false, &done);
    } else if (now >= phase_->deadline) {
      Finish(now, true, &done);
    }
  }
  return done;
}

}  // namespace sarmig
