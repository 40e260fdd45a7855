// Running another program with a bound on its time and on the output kept: the one way libsar's
// callers spawn (sar-filterd's squeue, sar-route's sbatch and test bed runs), reached through
// Env::Run (sar/env.h) so that a test can script the replies. The child is found on PATH, gets
// the caller's environment (plus `set_env`), and never sees our descriptors (all are CLOEXEC).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "sar/status.h"

namespace sar {

struct RunRequest {
  /// argv[0] is looked up on PATH (posix_spawnp).
  std::vector<std::string> argv;
  /// Set (or replaced) in the child's environment, in order.
  std::vector<std::pair<std::string, std::string>> set_env;
  /// The whole run, output and exit, must fit in this (infinity: no bound); a child still
  /// running then is killed with SIGKILL (its process group, with own_process_group).
  double timeout_s = 60;
  /// stdout and stderr kept together at most this; at more the child is killed, not read on.
  size_t max_output_bytes = size_t{1} << 20;
  /// Where the child's stderr goes.
  enum class Stderr { kCapture, kToStdout, kDiscard };
  Stderr stderr_to = Stderr::kCapture;
  /// Not empty: stdout and stderr go to this file (created 0600, truncated), nothing is captured.
  std::string output_file;
  /// The child leads a process group of its own, and a kill reaches all of it (a wrapper script's
  /// children too). Off, the child stays in ours and gets the terminal's Ctrl-C with us.
  bool own_process_group = false;
};

struct RunResult {
  /// OK: the child ended (exit or signal) within the bounds. Otherwise what went wrong, worded for
  /// a log (it could not start, the output could not be read, the timeout, too much output).
  Status status;
  bool started = false;
  int start_errno = 0;  // posix_spawnp's error when it could not start
  bool timed_out = false;
  bool output_too_large = false;
  /// stdout and stderr were read to their end (the child closed them) before any kill.
  bool output_complete = false;
  int exit_code = -1;   // the exit status if it exited
  int term_signal = 0;  // the signal that ended it (ours after a timeout too)
  std::string out;
  std::string err;

  bool exited_zero() const { return status.ok() && exit_code == 0; }
};

/// Runs request.argv and waits for it, within request's bounds. Never throws.
RunResult RunProcess(const RunRequest& request);

}  // namespace sar
