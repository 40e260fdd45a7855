// Hysteresis between "the job set changed" and "reroute": a settle delay (wait until the set has
// been stable for a while, so a burst of job starts costs one reroute) and a minimum interval
// between reroutes (OpenSM rerouting a large fabric takes seconds; do not queue them).
#pragma once

namespace sar::filterd {

class RerouteGate {
 public:
  /// Times in seconds on any monotonic clock.
  RerouteGate(double settle_s, double min_interval_s)
      : settle_s_(settle_s), min_interval_s_(min_interval_s) {}

  enum class Decision { kNothing, kWaitSettle, kWaitInterval, kReroute };

  /// Called once per poll. `changed`: the set differs from the one last handed to the router.
  /// `set_moved`: it differs from the previous poll's set (restarts the settle timer).
  Decision Decide(bool changed, bool set_moved, double now);
  /// Records that a reroute happened at `now` (also after a restart, from the state dir).
  void MarkRerouted(double now) {
    last_reroute_ = now;
    has_rerouted_ = true;
  }
  /// After kWaitSettle / kWaitInterval: the earliest time a reroute could be allowed, so the
  /// daemon can look again then instead of a whole poll interval later.
  double ReadyAt() const {
    const double settled = stable_since_ + settle_s_;
    const double spaced = has_rerouted_ ? last_reroute_ + min_interval_s_ : settled;
    return settled > spaced ? settled : spaced;
  }

 private:
  double settle_s_;
  double min_interval_s_;
  double stable_since_ = 0;
  bool pending_ = false;
  double last_reroute_ = 0;
  bool has_rerouted_ = false;
};

}  // namespace sar::filterd
