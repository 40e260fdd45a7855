#include "event_coalescer.h"

#include <algorithm>
#include <limits>

namespace sar::filterd {

void EventCoalescer::Request(double now_s) {
  if (first_s_ < 0) first_s_ = now_s;
  last_s_ = std::max(last_s_, now_s);
}

double EventCoalescer::DueAt() const {
  if (first_s_ < 0) return std::numeric_limits<double>::infinity();
  return std::min(last_s_ + window_s_, first_s_ + max_windows_ * window_s_);
}

}  // namespace sar::filterd
