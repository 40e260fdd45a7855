#!/usr/bin/env bash
# The main command: the whole service on one machine (scripts/day_demo.py). A simulated fat-tree
# (ibsim) with a long-running stock OpenSM routing it with sar, a real SLURM on loopback and
# sar-filterd between them; a scripted day of jobs; per event the metrics read back from the
# switches, sar against OpenSM's minhop; a summary table; nothing left running.
#   scripts/demo.sh [--fabric ft2:16,16] [--sm file|plugin] [--hooks auto|on|off] [--seed N]
#                   [--short] [--poll-interval S] [--migration on|off] [--out DIR]  (--help)
#                   [--bin-root DIR]  (programs from an installed/unpacked tree, not build/)
# The engine comparison (one job mix, every engine through real OpenSM, scripts/demo.py):
#   scripts/demo.sh engines [--fabric ft2:20,18] [--engines ftree,updn,minhop,dfsssp] [--out DIR]
# Installs what is missing and builds first (not for --help, which answers at once).
set -euo pipefail
cd "$(dirname "$0")/.."
for arg in "$@"; do
  if [[ "$arg" == -h || "$arg" == --help ]]; then
    if [[ "${1:-}" == engines ]]; then
      # demo.py's --sar-route is filled in by this script.
      python3 scripts/demo.py --help | sed 's/ --sar-route SAR_ROUTE//'
    else
      echo "scripts/demo.sh: the day demo (scripts/day_demo.py; 'scripts/demo.sh engines --help' for the"
      echo "engine comparison). It installs what is missing and builds first; --build is set by this script."
      echo
      python3 scripts/day_demo.py --help
    fi
    exit 0
  fi
done
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr >/dev/null  # the same flags as scripts/test.sh: one build/, one prefix
if [[ "${1:-}" == engines ]]; then
  shift
  cmake --build build -j "$(nproc)" --target sar-route >/dev/null
  exec python3 scripts/demo.py --sar-route build/router/sar-route "$@"
fi
# The OpenSM plugin, the SLURM side and libsarfors exist where their headers are installed
# (install-deps.sh installs them); the day uses them when built, else OpenSM's file engine and
# polling alone, and no alltoall job runs its MPI exchange.
targets=(sar-route sar-filterd)
available=$(cmake --build build --target help)
for t in osmsar sar_pattern sar-notify sar-agent sar-migconsumer sarfors alltoall_check; do
  if grep -qx "\.\.\. $t" <<<"$available"; then targets+=("$t"); fi
done
cmake --build build -j "$(nproc)" --target "${targets[@]}" >/dev/null
exec python3 scripts/day_demo.py --build build "$@"
