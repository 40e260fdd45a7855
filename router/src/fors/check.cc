// CheckPlan: an independent judge of a FORS plan, by plain counting. It shares no code with the
// planner so that a bug there cannot hide itself here.
#include <string>

#include "sar/fors/fors.h"

namespace sar {

Status CheckPlan(int m0, int m1, const std::vector<FailedLink>& failed,
                 const std::vector<std::vector<Transfer>>& phases) {
  const int64_t n = static_cast<int64_t>(m0) * m1;
  std::vector<uint8_t> broken(static_cast<size_t>(m0) * m1, 0);
  for (const FailedLink& l : failed) broken[static_cast<size_t>(l.leaf) * m0 + l.spine] = 1;
  std::vector<bool> done(static_cast<size_t>(n * n), false);  // bits: P^2 can be large
  // Stamps (phase + 1) avoid clearing per phase.
  std::vector<int64_t> sent(n, 0), received(n, 0);
  std::vector<int64_t> up(static_cast<size_t>(m0) * m1, 0), down(static_cast<size_t>(m0) * m1, 0);
  for (size_t p = 0; p < phases.size(); ++p) {
    const int64_t stamp = static_cast<int64_t>(p) + 1;
    const std::string at = "phase " + std::to_string(p) + ": ";
    for (const Transfer& t : phases[p]) {
      const std::string what = at + std::to_string(t.src) + "->" + std::to_string(t.dst) + " ";
      if (t.src < 0 || t.src >= n || t.dst < 0 || t.dst >= n || t.src == t.dst) {
        return Status::Failed(what + "is not a pair of distinct servers");
      }
      const size_t pair = static_cast<size_t>(t.src) * n + t.dst;
      if (done[pair]) return Status::Failed(what + "is scheduled a second time");
      done[pair] = true;
      if (sent[t.src] == stamp) return Status::Failed(what + ": source sends twice in the phase");
      if (received[t.dst] == stamp) {
        return Status::Failed(what + ": destination receives twice in the phase");
      }
      sent[t.src] = received[t.dst] = stamp;
      const int ls = t.src / m0, ld = t.dst / m0;
      if (ls == ld) {
        if (t.spine != -1) return Status::Failed(what + "is intra-leaf but names a spine");
        continue;
      }
      if (t.spine < 0 || t.spine >= m0) return Status::Failed(what + "has no valid spine");
      if (broken[static_cast<size_t>(ls) * m0 + t.spine] ||
          broken[static_cast<size_t>(ld) * m0 + t.spine]) {
        return Status::Failed(what + "uses a failed link via spine " + std::to_string(t.spine));
      }
      int64_t& u = up[static_cast<size_t>(ls) * m0 + t.spine];
      if (u == stamp) {
        return Status::Failed(what + "shares link leaf " + std::to_string(ls) + " -> spine " +
                              std::to_string(t.spine));
      }
      u = stamp;
      int64_t& w = down[static_cast<size_t>(ld) * m0 + t.spine];
      if (w == stamp) {
        return Status::Failed(what + "shares link spine " + std::to_string(t.spine) + " -> leaf " +
                              std::to_string(ld));
      }
      w = stamp;
    }
  }
  for (int64_t s = 0; s < n; ++s) {
    for (int64_t d = 0; d < n; ++d) {
      if (s != d && !done[static_cast<size_t>(s * n + d)]) {
        return Status::Failed("pair " + std::to_string(s) + "->" + std::to_string(d) +
                              " is never scheduled");
      }
    }
  }
  return Status::OK();
}

}  // namespace sar
