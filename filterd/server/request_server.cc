#include "server/request_server.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

namespace sar::filterd {

RequestServer::RequestServer(RequestServerOptions options, IoComplete complete)
    : options_(options), complete_(std::move(complete)) {}

RequestServer::~RequestServer() {
  for (const Conn& c : conns_) close(c.fd);
}

void RequestServer::AddPollFds(int listen_fd, std::vector<pollfd>* fds) const {
  // At the cap with every connection being answered, further clients wait in the kernel's
  // listen backlog until a slot frees; not polling the listener then keeps the loop from
  // spinning on it. A connection still reading its request can be evicted for a new one.
  const bool evictable =
      std::any_of(conns_.begin(), conns_.end(), [](const Conn& c) { return !c.answered; });
  if (listen_fd >= 0 && (conns_.size() < options_.max_clients || evictable)) {
    fds->push_back({listen_fd, POLLIN, 0});
  }
  for (const Conn& c : conns_) {
    fds->push_back({c.fd, static_cast<short>(c.answered ? POLLOUT : POLLIN), 0});
  }
}

IoClock::time_point RequestServer::NextDeadline() const {
  IoClock::time_point t = IoClock::time_point::max();
  for (const Conn& c : conns_) t = std::min(t, c.deadline);
  return t;
}

size_t RequestServer::OldestReader() const {
  size_t oldest = conns_.size();
  for (size_t i = 0; i < conns_.size(); ++i) {
    const Conn& c = conns_[i];
    // Unanswered connections all have their accept-time deadline: the earliest is the oldest.
    if (!c.answered && !c.this_turn &&
        (oldest == conns_.size() || c.deadline < conns_[oldest].deadline)) {
      oldest = i;
    }
  }
  return oldest;
}

void RequestServer::Close(size_t i) {
  close(conns_[i].fd);
  conns_[i] = std::move(conns_.back());
  conns_.pop_back();
}

// Reads what `c` has sent; answers once the request is whole (or the client half-closed after
// sending something, as a plain `echo poll | nc -U` does). False: close it, unanswered.
bool RequestServer::Progress(Conn* c, const Answer& answer, int* answered) {
  const IoEnd end = ReadAvailable(c->fd, options_.max_request, &c->in, complete_);
  if (end == IoEnd::kMore) return true;
  if (end == IoEnd::kComplete || (end == IoEnd::kEof && !c->in.empty())) {
    c->out = answer(c->in);
    c->answered = true;
    ++*answered;
    return true;
  }
  if (end == IoEnd::kTooLarge) ++dropped_;
  return false;
}

bool RequestServer::StartCut(Conn* c) {
  if (!c->answered || c->cut || c->out.empty() || cut_notice_.empty()) return false;
  c->cut = true;
  // The rest of the line the client holds part of, so that it never sees half a line as a
  // whole one ("h00012 47" of "h00012 4711"); a line longer than this is ended with a bare
  // newline instead.
  constexpr size_t kMaxLineRest = 4096;
  std::string rest;
  if (c->last_sent != '\n') {
    const size_t eol = c->out.find('\n');
    rest = eol < kMaxLineRest ? c->out.substr(0, eol + 1) : "\n";
  }
  c->out = rest + cut_notice_;
  c->deadline = DeadlineIn(cut_grace_s_);
  return true;
}

int RequestServer::Handle(int listen_fd, const std::vector<pollfd>& fds, const Answer& answer) {
  // Which of our connections poll() found ready (errors and hang-ups count: the read or write
  // below then sees them).
  auto ready = [&fds](int fd) {
    for (const pollfd& p : fds) {
      if (p.fd == fd) return p.revents != 0;
    }
    return false;
  };
  // A connection is done once its answer is out; it is dropped at its deadline, whatever state.
  auto step = [&](Conn* c, bool readable, int* answered) {
    if (readable && !c->answered && !Progress(c, answer, answered)) return false;
    if (c->answered && !(WriteAvailable(c->fd, &c->out, &c->last_sent) && !c->out.empty())) {
      return false;
    }
    // Still reading, or an answer the client does not take: the deadline ends both (an answer
    // under way first gets its cut notice, if the server has one, and a short grace for it).
    if (IoClock::now() >= c->deadline) {
      if (StartCut(c)) {
        ++dropped_;
        return WriteAvailable(c->fd, &c->out, &c->last_sent) && !c->out.empty();
      }
      if (!c->cut) ++dropped_;
      return false;
    }
    return true;
  };
  int answered = 0;
  for (Conn& c : conns_) c.this_turn = false;
  for (size_t i = 0; i < conns_.size();) {
    if (step(&conns_[i], ready(conns_[i].fd), &answered)) {
      ++i;
    } else {
      Close(i);
    }
  }
  if (listen_fd >= 0 && ready(listen_fd)) {
    // Accept what is queued (the listening socket is non-blocking), up to max_clients open at
    // once: a burst of hooks becomes one batch, and a flood of idle connections cannot grow
    // our state without bound. At the cap the oldest connection still sending its request
    // makes room; the ones accepted in this turn are kept, so the loop ends (the rest wait in
    // the backlog for the next turn, which comes at once: the listener stays readable).
    for (;;) {
      size_t evict = conns_.size();
      if (conns_.size() >= options_.max_clients) {
        evict = OldestReader();
        if (evict == conns_.size()) break;
      }
      const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd < 0) break;
      if (evict < conns_.size()) {
        ++dropped_;
        ++evicted_;
        Close(evict);
      }
      conns_.push_back({fd, DeadlineIn(options_.deadline_s), {}, {}, false});
      // Most clients have sent their request by now: answer it in this same turn.
      if (!step(&conns_.back(), true, &answered)) Close(conns_.size() - 1);
    }
  }
  return answered;
}

}  // namespace sar::filterd
