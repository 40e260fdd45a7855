// Turns a burst of hook requests ("job-start 17", "job-end 12", ...) into one poll. SLURM runs
// PrologSlurmctld once per job, so 200 jobs starting together ask 200 times within a second or
// two; one poll after the burst sees them all. A poll runs once no request has come for
// `window_s` (a quiet window, restarted by each request), and at the latest `max_windows`
// windows after the first request, so a steady stream of requests cannot postpone it for ever.
#pragma once

namespace sar::filterd {

class EventCoalescer {
 public:
  explicit EventCoalescer(double window_s, int max_windows = 5)
      : window_s_(window_s), max_windows_(max_windows) {}

  /// A hook asked for a poll at monotonic time `now_s`.
  void Request(double now_s);
  bool pending() const { return first_s_ >= 0; }
  /// When the requested poll is due; +infinity if none is pending.
  double DueAt() const;
  /// The poll ran: requests before it are answered.
  void Clear() { first_s_ = last_s_ = -1; }

 private:
  double window_s_;
  int max_windows_;
  double first_s_ = -1;  // first request not yet answered by a poll (-1: none)
  double last_s_ = -1;   // latest such request
};

}  // namespace sar::filterd
