#!/usr/bin/env bash
# The main job, for now: generate a fat-tree, route it with the real OpenSM on a simulated fabric
# (ibsim) using several of OpenSM's engines, read the tables back from the switches, and print
# the metrics of what OpenSM put there. Installs what is missing and builds first.
#   scripts/demo.sh [--fabric ft2:20,18] [--engines ftree,updn,minhop,dfsssp] [--out DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target sar-route >/dev/null
exec python3 scripts/demo.py --sar-route build/router/sar-route "$@"
