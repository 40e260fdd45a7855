#!/usr/bin/env bash
# Checks that two builds route alike: the sssp_bench hash of every table and virtual layer on
# the 14 cases the SSSP speed work has been held to (10k sar, sar --no-refine, dfsssp, sar with
# 115 failed cables; 1,024 hosts fragmented with 10 failed cables, and with 2 failed switches
# too; each with 1 and 2 threads; then 45k with 1 and 2 threads unless WITH45=0).
#   bench/sssp_identity.sh OLD_BUILD_DIR NEW_BUILD_DIR     (e.g. /work/base/build build)
# Prints one line per case (same/DIFF) and exits 1 if any case differs. Not a test: minutes of
# CPU, for before/after comparisons of performance work that must not change results.
set -uo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 OLD_BUILD_DIR NEW_BUILD_DIR" >&2
  exit 2
fi
A=$1/bench/sssp_bench
B=$2/bench/sssp_bench
for b in "$A" "$B"; do
  [ -x "$b" ] || { echo "$0: no $b (build the sssp_bench target)" >&2; exit 2; }
done
K10='pgft:3;32,16,20;1,16,20;1,1,1'
K1='pgft:3;16,8,8;1,8,8;1,1,1'
K45='pgft:3;48,24,40;1,24,40;1,1,1'
cases=(
  "--spec $K10"
  "--spec $K10 --no-refine"
  "--spec $K10 --engine dfsssp"
  "--spec $K10 --fail-links 115"
  "--spec $K1 --run-length 3 --fail-links 10"
  "--spec $K1 --run-length 3 --fail-links 10 --fail-switches 2"
)
[ "${WITH45:-1}" = 1 ] && cases+=("--spec $K45")
hash_of() { "$@" 2>&1 | grep -o 'hash [0-9a-f]*'; }
fail=0
for c in "${cases[@]}"; do
  for t in 1 2; do
    # shellcheck disable=SC2086  # the case's words are separate arguments
    ha=$(hash_of "$A" --runs 1 --threads $t $c)
    # shellcheck disable=SC2086
    hb=$(hash_of "$B" --runs 1 --threads $t $c)
    if [ -n "$ha" ] && [ "$ha" = "$hb" ]; then r=same; else r=DIFF; fail=1; fi
    echo "$r threads=$t $c: ${ha:-no hash} / ${hb:-no hash}"
  done
done
echo "sssp_identity: $([ $fail = 0 ] && echo 'all cases the same' || echo 'some cases DIFFER')"
exit $fail
