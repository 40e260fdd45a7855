#!/usr/bin/env bash
# Installs every Debian package sar needs to build, test and run its test bed. Idempotent: does
# nothing (and needs no network) when all are present. Run as root, or with sudo available.
set -euo pipefail

PACKAGES=(
  # build
  build-essential cmake pkg-config clang-format
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libyaml-cpp-dev libspdlog-dev libfmt-dev
  # fuzzing (clang + libFuzzer runtime)
  clang libclang-rt-14-dev
  # test bed: real OpenSM on a simulated fabric
  opensm libopensm-dev ibsim-utils libumad2sim0 infiniband-diags
  libibumad-dev
  # sar-filterd and its SLURM test bed
  slurmctld slurmd slurm-client libslurm-dev slurmrestd libsystemd-dev
  python3
  libcadical-dev  # FORS: SAT solver for the exact spine assignment
  # the HTML reports rendered in a real browser (sar_route_report_browser): chromium, not
  # chromium-headless-shell, which saves only ~17 of ~110 MB (both need chromium-common) and is
  # not the one the test was checked with; a font so text renders without recommends
  chromium fonts-dejavu-core
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
