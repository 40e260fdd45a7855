#include "reroute_gate.h"

namespace sar::filterd {

RerouteGate::Decision RerouteGate::Decide(bool changed, bool set_moved, double now) {
  if (!changed) {
    pending_ = false;  // the set went back to what the router already has
    return Decision::kNothing;
  }
  if (!pending_ || set_moved) {
    pending_ = true;
    stable_since_ = now;
  }
  if (now - stable_since_ < settle_s_) return Decision::kWaitSettle;
  if (has_rerouted_ && now - last_reroute_ < min_interval_s_) return Decision::kWaitInterval;
  pending_ = false;
  return Decision::kReroute;
}

}  // namespace sar::filterd
