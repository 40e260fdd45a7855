#!/bin/bash
# Builds the libFuzzer targets with clang in a separate build directory, seeds each from
# tests/data/, and runs each for SECONDS (default 20). Exits non-zero if any fuzzer finds a crash.
# Usage: tests/fuzz/run_fuzzers.sh [SECONDS]     (build dir: $SAR_FUZZ_BUILD or <repo>/build-fuzz)
set -euo pipefail
seconds=${1:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${SAR_FUZZ_BUILD:-$root/build-fuzz}
data=$root/tests/data

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DSAR_FUZZ=ON -DSAR_BENCH=OFF >/dev/null
fuzzers=(topology lft_dump guid2lid job_file layers_file fors_schedule)
make -C "$build" -j2 "${fuzzers[@]/%/_fuzz}" >/dev/null

seeds_for() {
  case $1 in
    topology) ls "$data"/*.topo "$data"/*.ibnetdiscover ;;
    lft_dump) ls "$data"/*.opensm-lfts.dump "$data"/*.dump_fts ;;
    guid2lid) ls "$data"/*.guid2lid ;;
    job_file) ls "$data"/*.jobs ;;
    layers_file) ls "$data"/*.layers ;;
    fors_schedule) ls "$data"/*.fors-schedule ;;
  esac
}

failed=()
for f in "${fuzzers[@]}"; do
  corpus=$build/fuzz-corpus/$f
  mkdir -p "$corpus" "$build/fuzz-artifacts/$f"
  seeds_for "$f" | xargs -r cp -t "$corpus"
  echo "== $f: ${seconds}s"
  if ! "$build/tests/fuzz/${f}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=0 -artifact_prefix="$build/fuzz-artifacts/$f/" "$corpus" \
      >"$build/fuzz-artifacts/$f.log" 2>&1; then
    echo "!! $f failed; see $build/fuzz-artifacts/$f.log"
    tail -30 "$build/fuzz-artifacts/$f.log"
    failed+=("$f")
  else
    grep -E '^#[0-9]+.*(DONE|pulse)' "$build/fuzz-artifacts/$f.log" | tail -1 || true
  fi
done
if ((${#failed[@]})); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all fuzzers ran ${seconds}s without a crash"
