#include "server/bounded_io.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sar::filterd {
namespace {

int MillisLeft(IoClock::time_point deadline) {
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - IoClock::now()).count();
  // Round a sub-millisecond rest up, so poll() waits for it rather than spinning.
  return left > 0 ? static_cast<int>(std::min<long long>(left, 1 << 30))
                  : (deadline > IoClock::now() ? 1 : 0);
}

constexpr size_t kReserveAt = size_t{4} << 20;

// One read(): >0 bytes appended, 0 at EOF, -1 with errno (EINTR retried here).
ssize_t ReadOnce(int fd, size_t room, std::string* out) {
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, std::min(room, sizeof(buf)));
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) out->append(buf, static_cast<size_t>(n));
    return n;
  }
}

ssize_t WriteOnce(int fd, std::string_view data) {
  for (;;) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0 && errno == ENOTSOCK) n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    return n;
  }
}

bool Done(const IoComplete& complete, const std::string& text) {
  return complete && complete(text);
}

}  // namespace

IoClock::time_point DeadlineIn(double seconds) {
  // Clamp: a huge timeout must not overflow the clock's representation.
  const double s = seconds < 0 ? 0 : std::min(seconds, 1e7);
  return IoClock::now() +
         std::chrono::duration_cast<IoClock::duration>(std::chrono::duration<double>(s));
}

double SecondsUntil(IoClock::time_point deadline) {
  return std::chrono::duration<double>(deadline - IoClock::now()).count();
}

const char* IoEndName(IoEnd e) {
  switch (e) {
    case IoEnd::kComplete:
      return "complete";
    case IoEnd::kEof:
      return "closed early";
    case IoEnd::kMore:
      return "incomplete";
    case IoEnd::kTimeout:
      return "timed out";
    case IoEnd::kTooLarge:
      return "too large";
    case IoEnd::kError:
      return "read error";
  }
  return "?";
}

IoEnd ReadBounded(int fd, IoClock::time_point deadline, size_t max_bytes, std::string* out,
                  const IoComplete& complete) {
  const size_t start = out->size();
  if (Done(complete, *out)) return IoEnd::kComplete;
  for (;;) {
    pollfd pfd{fd, POLLIN, 0};
    const int left = MillisLeft(deadline);
    if (left == 0) return IoEnd::kTimeout;
    const int ready = poll(&pfd, 1, left);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return IoEnd::kError;
    if (ready == 0) continue;  // the deadline check above decides
    const size_t used = out->size() - start;
    if (used >= max_bytes) return IoEnd::kTooLarge;
    const size_t room = max_bytes - used + 1;
    // Past kReserveAt bytes a reply gets room for all it may still send, at once: reserved, not
    // touched (RSS follows what is read), and never copied again. std::string's own doubling
    // copied a large reply into a buffer twice its size: 512 MiB peak for squeue printing `yes`
    // against the 256 MiB cap (issue 34 defect 11).
    if (used >= kReserveAt && out->capacity() - out->size() < room)
      out->reserve(out->size() + room);
    const ssize_t n = ReadOnce(fd, room, out);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n < 0) return IoEnd::kError;
    if (n == 0) return complete ? IoEnd::kEof : IoEnd::kComplete;
    if (out->size() - start > max_bytes) return IoEnd::kTooLarge;
    if (Done(complete, *out)) return IoEnd::kComplete;
  }
}

IoEnd ReadAvailable(int fd, size_t max_bytes, std::string* out, const IoComplete& complete) {
  for (;;) {
    if (Done(complete, *out)) return IoEnd::kComplete;
    if (out->size() >= max_bytes) return IoEnd::kTooLarge;
    const ssize_t n = [&] {
      for (;;) {
        char buf[4096];
        const ssize_t r =
            recv(fd, buf, std::min(sizeof(buf), max_bytes - out->size()), MSG_DONTWAIT);
        if (r < 0 && errno == EINTR) continue;
        if (r > 0) out->append(buf, static_cast<size_t>(r));
        return r;
      }
    }();
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return IoEnd::kMore;
    if (n < 0) return IoEnd::kError;
    if (n == 0) return Done(complete, *out) ? IoEnd::kComplete : IoEnd::kEof;
  }
}

Status WriteBounded(int fd, IoClock::time_point deadline, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = WriteOnce(fd, data);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      return Status::IOError(std::string("write: ") + strerror(errno));
    }
    pollfd pfd{fd, POLLOUT, 0};
    const int left = MillisLeft(deadline);
    if (left == 0) return Status::IOError("write: timed out");
    if (poll(&pfd, 1, left) < 0 && errno != EINTR) {
      return Status::IOError(std::string("write: poll: ") + strerror(errno));
    }
  }
  return Status::OK();
}

bool WriteAvailable(int fd, std::string* pending, char* last) {
  while (!pending->empty()) {
    const ssize_t n = WriteOnce(fd, *pending);
    if (n > 0) {
      if (last != nullptr) *last = (*pending)[static_cast<size_t>(n) - 1];
      pending->erase(0, static_cast<size_t>(n));
      continue;
    }
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
  return true;
}

}  // namespace sar::filterd
