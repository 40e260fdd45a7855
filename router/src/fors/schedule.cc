// The inter-leaf schedule of Sec. 4, as corrected by the errata (shared/papers/README.md):
// Theta~(i) = ceil(i M0 / (M0 - f)), theta = floor((alpha - 1)(M0 - f) / M0) + 1, and the
// floor(N_T / lcm(M1 - 1, M0)) cycle shift added to the destination *leaf*. The unit tests check
// Lemmas 1, 3, 4 and 5 exhaustively for 2 <= M0, M1 <= 8 and every f < M0.
#include <algorithm>
#include <numeric>

#include "sar/fors/fors.h"

namespace sar {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

}  // namespace

std::vector<std::vector<Transfer>> InterLeafSchedule(int m0, int m1, int f) {
  const int64_t p_servers = static_cast<int64_t>(m0) * m1;
  const int64_t per_server = p_servers - m0;  // transfers leaving the leaf, per server
  const int64_t num_phases = InterLeafPhases(m0, m1, f);
  std::vector<std::vector<Transfer>> phases(num_phases);
  if (m1 < 2) return phases;
  const int64_t width = m0 - f;
  const int64_t cycle = std::lcm<int64_t>(m1 - 1, m0);
  for (int alpha = 0; alpha < m0; ++alpha) {
    const int64_t theta = FloorDiv(static_cast<int64_t>(alpha - 1) * width, m0) + 1;
    for (int64_t i = 0; i < per_server; ++i) {
      // Phase of the i-th transmission (so N_T = i there).
      const int64_t n = i + theta;
      const int64_t phase = (n * m0 + width - 1) / width - alpha;
      const int64_t d_server = n % m0;
      const int64_t d_leaf = (n + i / cycle) % (m1 - 1);
      if (phase < 0) continue;  // Lemma 1 says never; the tests would see the missing pair
      if (phase >= static_cast<int64_t>(phases.size())) phases.resize(phase + 1);
      for (int gamma = 0; gamma < m1; ++gamma) {
        const int64_t s = static_cast<int64_t>(gamma) * m0 + alpha;
        const int64_t d =
            (d_leaf * m0 + d_server + (gamma + 1) * static_cast<int64_t>(m0)) % p_servers;
        phases[phase].push_back({static_cast<int32_t>(s), static_cast<int32_t>(d), -1});
      }
    }
  }
  for (auto& ph : phases) {
    std::sort(ph.begin(), ph.end(),
              [](const Transfer& a, const Transfer& b) { return a.src < b.src; });
  }
  return phases;
}

}  // namespace sar
