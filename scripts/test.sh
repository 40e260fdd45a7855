#!/usr/bin/env bash
# Runs every test of sar: installs what is missing, builds twice (plain and with
# AddressSanitizer + UBSan), runs unit and integration tests (real OpenSM on ibsim) in both, then
# runs each fuzz target briefly. Exit status is non-zero if anything fails.
#   scripts/test.sh            everything
#   scripts/test.sh --quick    plain build, unit + integration tests only
# The plain build's unit tests must finish within UNIT_BUDGET (below; SAR_UNIT_BUDGET overrides).
set -euo pipefail
cd "$(dirname "$0")/.."
QUICK=0
case "${1:-}" in
  --quick) QUICK=1 ;;
  -h | --help)
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  "") ;;
  *)
    echo "scripts/test.sh: unknown argument '$1' (--quick, --help)" >&2
    exit 2
    ;;
esac
JOBS=$(nproc)
FUZZ_SECONDS=${SAR_FUZZ_SECONDS:-15}
# The unit suite's time budget (seconds), about 4x its usual time: `ctest -L unit -j2` took 22 s
# (536 tests, the slowest 6.9 s) on 2 cores shared with two other builds (load 5), Nov 2026. A
# suite that takes several times that has a hanging test or a change that made something far
# slower: the run fails instead of waiting. Only the plain build is timed (ASan/UBSan is slower
# by a factor nobody measured yet).
UNIT_BUDGET=${SAR_UNIT_BUDGET:-90}

scripts/install-deps.sh

step() { echo; echo "=== $*"; }

step "build (RelWithDebInfo) in build/"
# Prefix /usr: the Debian packages (install.packages) are made from this build.
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
cmake --build build -j "$JOBS"

step "unit tests in build/ (time budget ${UNIT_BUDGET} s)"
unit_start=$SECONDS
rc=0
# timeout signals its whole process group: ctest and the tests it runs.
(cd build && timeout -k 30 "$UNIT_BUDGET" ctest -L unit --output-on-failure -j "$JOBS") || rc=$?
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
  echo "scripts/test.sh: the unit tests took over their budget of ${UNIT_BUDGET} s (about 4x" \
    "their usual time): a test hangs or got far slower (SAR_UNIT_BUDGET=seconds to change)" >&2
  exit 1
fi
[ "$rc" -eq 0 ] || exit "$rc"
echo "unit tests: $((SECONDS - unit_start)) s of a ${UNIT_BUDGET} s budget"

step "integration (and every other non-unit) test in build/"
# Label bench: tests too slow for CI (minutes on 2 cores), run by hand (`ctest -L bench`).
(cd build && ctest -LE '^(unit|bench)$' --output-on-failure -j "$JOBS")

if [ "$QUICK" -eq 1 ]; then exit 0; fi

step "build with AddressSanitizer + UBSan in build-asan/"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DSAR_SANITIZE=ON -DSAR_BENCH=OFF >/dev/null
cmake --build build-asan -j "$JOBS"

step "tests under ASan/UBSan in build-asan/"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp"
(cd build-asan && ctest -LE '^bench$' --output-on-failure -j "$JOBS")

if [ -x tests/fuzz/run_fuzzers.sh ]; then
  step "fuzz each reader for ${FUZZ_SECONDS}s"
  tests/fuzz/run_fuzzers.sh "$FUZZ_SECONDS"
fi
echo
echo "scripts/test.sh: all tests passed"
