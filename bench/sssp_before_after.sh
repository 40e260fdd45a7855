#!/usr/bin/env bash
# Times two builds' sssp_bench alternated, case by case (medians of 3 runs each), on the cases of
# docs/benchmarks.md "The SSSP phase: the job phase's memo": 10k and 45k default mixes, 45k
# fragmented (SSSP + layers only), 10k fragmented, 1k intact and degraded; 2 then 1 threads.
#   bench/sssp_before_after.sh OLD_BUILD_DIR NEW_BUILD_DIR     (e.g. /work/base/build build)
# Prints each binary's summary line (paths, layers, engine CPU, peak RSS, hash). Not a test: tens
# of minutes on 2 shared cores (each 45k case ~1.2-1.7 GB; run nothing else large beside it).
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
K1='pgft:3;16,8,8;1,8,8;1,1,1'
K10='pgft:3;32,16,20;1,16,20;1,1,1'
K45='pgft:3;48,24,40;1,24,40;1,1,1'
run() {
  local tag=$1
  shift
  for b in "$A" "$B"; do echo "$tag $b: $(nice -n 10 "$b" "$@" | tail -1)"; done
}
for t in 2 1; do run "10k t$t" --spec "$K10" --runs 3 --threads $t; done
for t in 2 1; do run "45k t$t" --spec "$K45" --runs 3 --threads $t --hca-pairs-only; done
run "45k-frag-sssp t1" --spec "$K45" --runs 3 --threads 1 --hca-pairs-only --no-refine --run-length 3
for t in 2 1; do run "10k-frag t$t" --spec "$K10" --runs 3 --threads $t --run-length 3; done
for t in 2 1; do
  run "1k t$t" --spec "$K1" --runs 3 --threads $t
  run "1k-frag t$t" --spec "$K1" --runs 3 --threads $t --run-length 3 --fail-links 10
done
