// Bounded reads and writes: every byte sar-filterd takes from or gives to another process (the
// control socket, the metrics endpoint, squeue's pipe, slurmrestd's socket) goes through here,
// with a deadline and a byte cap, so a slow, silent or endless peer costs a bounded time and
// memory. EINTR and EAGAIN are retried; the fd may be blocking or not (poll() decides when to
// read). Two forms: ReadBounded waits up to its deadline (a client of SLURM, inside a poll);
// ReadAvailable never waits (a server in the event loop, see RequestServer).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "sar/status.h"

namespace sar::filterd {

using IoClock = std::chrono::steady_clock;

/// Now plus `seconds` (fractions allowed; negative = now).
IoClock::time_point DeadlineIn(double seconds);
/// Seconds from now until `deadline` (negative once passed; about 9e9 for max()).
double SecondsUntil(IoClock::time_point deadline);

enum class IoEnd {
  kComplete,  // `complete` said so (or EOF when no `complete` was given)
  kEof,       // the peer closed before `complete` said so
  kMore,      // ReadAvailable only: nothing more to read now, not complete yet
  kTimeout,
  kTooLarge,  // max_bytes reached before completion
  kError,     // errno holds the cause
};
const char* IoEndName(IoEnd e);

/// Is the request read so far whole? (e.g. ends a line, ends an HTTP head). Empty = read to EOF.
using IoComplete = std::function<bool(std::string_view)>;

/// Appends what `fd` delivers to *out until `complete`, EOF, the deadline or `max_bytes`.
IoEnd ReadBounded(int fd, IoClock::time_point deadline, size_t max_bytes, std::string* out,
                  const IoComplete& complete = {});

/// Appends what `fd` has now, without waiting. kMore if it would block before completion.
IoEnd ReadAvailable(int fd, size_t max_bytes, std::string* out, const IoComplete& complete);

/// Writes `data` whole before the deadline (MSG_NOSIGNAL on sockets: a gone peer is an error,
/// not SIGPIPE). Falls back to write() on non-sockets.
Status WriteBounded(int fd, IoClock::time_point deadline, std::string_view data);

/// Writes what `fd` takes now from the front of *pending and erases it; never waits. False on
/// an error (the peer left). *last, if given, gets the last byte written (unchanged if none).
bool WriteAvailable(int fd, std::string* pending, char* last = nullptr);

}  // namespace sar::filterd
