#!/usr/bin/env bash
# Runs every test of sar: installs what is missing, builds twice (plain and with
# AddressSanitizer + UBSan), runs unit and integration tests (real OpenSM on ibsim) in both, then
# runs each fuzz target briefly. Exit status is non-zero if anything fails.
#   scripts/test.sh            everything
#   scripts/test.sh --quick    plain build, unit + integration tests only
set -euo pipefail
cd "$(dirname "$0")/.."
QUICK=0
[ "${1:-}" = "--quick" ] && QUICK=1
JOBS=$(nproc)
FUZZ_SECONDS=${SAR_FUZZ_SECONDS:-15}

scripts/install-deps.sh

step() { echo; echo "=== $*"; }

step "build (RelWithDebInfo) in build/"
# Prefix /usr: the Debian packages (install.packages) are made from this build.
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
cmake --build build -j "$JOBS"

step "tests (unit + integration) in build/"
(cd build && ctest --output-on-failure -j "$JOBS")

if [ "$QUICK" -eq 1 ]; then exit 0; fi

step "build with AddressSanitizer + UBSan in build-asan/"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DSAR_SANITIZE=ON -DSAR_BENCH=OFF >/dev/null
cmake --build build-asan -j "$JOBS"

step "tests under ASan/UBSan in build-asan/"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp"
(cd build-asan && ctest --output-on-failure -j "$JOBS")

if [ -x tests/fuzz/run_fuzzers.sh ]; then
  step "fuzz each reader for ${FUZZ_SECONDS}s"
  tests/fuzz/run_fuzzers.sh "$FUZZ_SECONDS"
fi
echo
echo "scripts/test.sh: all tests passed"
