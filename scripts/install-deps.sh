#!/usr/bin/env bash
# Installs every Debian package sar needs to build, test and run its test bed. Idempotent: does
# nothing (and needs no network) when all are present. Run as root, or with sudo available.
# Starts no service (see policy-rc.d below) and leaves none it installed enabled: the packages'
# daemons stay stopped, also after a reboot.
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
  openmpi-bin libopenmpi-dev  # libsarfors (mpi/): MPI_Alltoall in FORS phases, its test
  mpich libmpich-dev  # libsarfors-mpich: the same on MPICH (Open MPI stays the default mpirun)
  # man pages (help2man at build time) and the Debian packages' test (cpack -G DEB)
  help2man dpkg-dev lintian file
  # the HTML reports rendered in a real browser (sar_route_report_browser): chromium, not
  # chromium-headless-shell, which saves only ~17 of ~110 MB (both need chromium-common) and is
  # not the one the test was checked with; a font so text renders without recommends
  chromium fonts-dejavu-core
)

# Tools taken out of a package without installing it: Debian's prometheus package would enable
# a Prometheus server at boot; the tests need only its promtool (tests/install/check_monitoring.py),
# unpacked to SAR_TOOLS_DIR with `apt-get download` + `dpkg-deb -x`. No user, unit or service.
TOOLS_DIR="${SAR_TOOLS_DIR:-/var/cache/sar-tools}"
unpack_tool() {  # package, path inside it
  [ -x "$TOOLS_DIR/root$2" ] && return 0
  local tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && apt-get download -qq -o APT::Sandbox::User=root "$1" >/dev/null) &&
    $SUDO mkdir -p "$TOOLS_DIR/root" &&
    $SUDO dpkg-deb -x "$tmp"/"$1"_*.deb "$TOOLS_DIR/root" &&
    echo "install-deps: unpacked $2 from $1 into $TOOLS_DIR/root (not installed)"
  local rc=$?
  rm -rf "$tmp"
  return $rc
}

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
SUDO=""
if [ "$(id -u)" -ne 0 ] && { [ ${#missing[@]} -gt 0 ] || [ ! -x "$TOOLS_DIR/root/usr/bin/promtool" ]; }; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]} promtool" >&2; exit 1; }
  SUDO=sudo
fi
if [ ${#missing[@]} -eq 0 ]; then
  unpack_tool prometheus /usr/bin/promtool ||
    echo "install-deps: promtool not unpacked (the monitoring check will say so)" >&2
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive

# No package may start a service while it is installed: opensm, slurmctld, slurmd and munge
# would otherwise start on this host (which may be a real cluster host, whose SM and SLURM
# must not be touched). Debian's maintainer scripts ask /usr/sbin/policy-rc.d before starting
# anything (invoke-rc.d, deb-systemd-invoke); exit 101 means "not allowed". It is in place only
# while apt-get installs, and removed (or the one that was there put back) on every way out.
# Nothing is stopped or disabled: services that run already keep running. POLICY_RC_D is for
# the test (tests/install/check_install_deps.py).
policy="${POLICY_RC_D:-/usr/sbin/policy-rc.d}"
policy_backup=""
restore_policy() {
  if [ -n "$policy_backup" ]; then
    $SUDO mv -f "$policy_backup" "$policy"
  else
    $SUDO rm -f "$policy"
  fi
}
if [ -e "$policy" ] || [ -L "$policy" ]; then
  policy_backup="$policy.install-deps.$$"
  $SUDO mv "$policy" "$policy_backup"
fi
trap restore_policy EXIT
trap 'exit 130' INT TERM HUP
printf '#!/bin/sh\n# Written by sar scripts/install-deps.sh while it installs packages: start no service.\nexit 101\n' |
  $SUDO tee "$policy" >/dev/null
$SUDO chmod 0755 "$policy"

# Units enabled before, so that those the new packages enable (Debian enables a daemon's unit
# when its package is installed: opensm, slurmctld, slurmd, munge would start at the next boot,
# an SM on every InfiniBand port) can be disabled again, and only those.
enabled_units() {
  command -v systemctl >/dev/null || return 0
  { systemctl list-unit-files --state=enabled --no-legend 2>/dev/null || true; } |
    awk '{print $1}' | sort -u
}
enabled_before=$(enabled_units)

$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
for unit in $(comm -13 <(echo "$enabled_before") <(enabled_units)); do
  if $SUDO systemctl disable --quiet "$unit" 2>/dev/null; then
    echo "install-deps: disabled $unit (its new package enabled it; the test beds start their own)"
  else
    echo "install-deps: could not disable $unit, which its new package enabled" >&2
  fi
done
unpack_tool prometheus /usr/bin/promtool ||
  echo "install-deps: promtool not unpacked (the monitoring check will say so)" >&2
echo "install-deps: done (no service was started or left enabled; see README.md)"
