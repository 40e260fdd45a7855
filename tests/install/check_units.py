#!/usr/bin/env python3
"""The systemd units sar ships (systemd/*.service, *.service.in) start no subnet manager and no
SLURM daemon: they may order themselves after opensm.service or slurmctld.service (After=) but
not pull them in (Wants=, Requires=, BindsTo=, Requisite=, PartOf=, Upholds=). Issue 34:
sar-filterd's Wants=opensm.service started OpenSM on a host whose SM was stopped on purpose.
Both daemons' units are sandboxed alike (issue 34: sar-agent's was not): each sets every
directive of SANDBOX, and `systemd-analyze security --offline=true` rates each under 3.0 where
systemd-analyze is installed (said, not failed, where it is not). Exit 0 if all hold."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PULLING = ("Wants", "Requires", "BindsTo", "Requisite", "PartOf", "Upholds")
FOREIGN = ("opensm", "slurmctld", "slurmd", "slurmdbd", "slurmrestd", "munge")
# What sar-filterd's unit sets and sar-agent's must too (each unit may set more).
SANDBOX = ("NoNewPrivileges", "CapabilityBoundingSet", "ProtectSystem", "ProtectHome",
           "PrivateTmp", "ProtectKernelTunables", "ProtectKernelModules", "ProtectKernelLogs",
           "ProtectControlGroups", "ProtectClock", "ProtectHostname", "PrivateMounts",
           "RestrictAddressFamilies", "RestrictNamespaces", "RestrictRealtime",
           "RestrictSUIDSGID", "LockPersonality", "MemoryDenyWriteExecute",
           "SystemCallArchitectures", "SystemCallFilter", "UMask")
MAX_EXPOSURE = 3.0
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def check_exposure(path):
    analyze = shutil.which("systemd-analyze")
    name = os.path.basename(path).removesuffix(".in")
    if analyze is None:
        print(f"note {name}: systemd-analyze not installed, exposure not rated")
        return
    with tempfile.TemporaryDirectory() as tmp:
        unit = os.path.join(tmp, name)
        # The template's @...@ paths are the install paths; any absolute path rates the same.
        text = re.sub(r"@[A-Z_]+@", "/usr", open(path).read())
        open(unit, "w").write(text)
        out = subprocess.run([analyze, "security", "--offline=true", "--no-pager", unit],
                             capture_output=True, text=True, timeout=60)
    m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", out.stdout + out.stderr)
    check(m is not None and float(m.group(1)) < MAX_EXPOSURE,
          f"{name}: systemd-analyze security exposure "
          f"{m.group(1) if m else '? (' + (out.stderr.strip()[-200:] or 'no figure') + ')'}"
          f" < {MAX_EXPOSURE}")


def main():
    units = sorted(glob.glob(os.path.join(ROOT, "systemd", "*.service*")))
    check(bool(units), f"units found under systemd/ ({len(units)})")
    for path in units:
        name = os.path.basename(path)
        pulled = []
        for line in open(path):
            key, sep, value = line.strip().partition("=")
            if sep and key in PULLING:
                pulled += [u for u in value.split() if u.split(".")[0].split("@")[0] in FOREIGN]
        check(not pulled, f"{name} pulls in no SM or SLURM unit ({' '.join(pulled) or 'none'})")
    for name in ("sar-filterd.service.in", "sar-agent.service"):
        path = os.path.join(ROOT, "systemd", name)
        keys = {line.split("=", 1)[0].strip() for line in open(path) if "=" in line
                and not line.lstrip().startswith("#")}
        missing = [k for k in SANDBOX if k not in keys]
        check(not missing, f"{name} sets the sandbox directives ({len(SANDBOX)})"
              + (f"; missing {missing}" if missing else ""))
        check_exposure(path)
    print("FAILED: " + "; ".join(failures) if failures else "all ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
