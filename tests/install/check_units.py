#!/usr/bin/env python3
"""The systemd units sar ships (systemd/*.service, *.service.in) start no subnet manager and no
SLURM daemon: they may order themselves after opensm.service or slurmctld.service (After=) but
not pull them in (Wants=, Requires=, BindsTo=, Requisite=, PartOf=, Upholds=). Issue 34:
sar-filterd's Wants=opensm.service started OpenSM on a host whose SM was stopped on purpose.
Exit 0 if all hold."""
import glob
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
PULLING = ("Wants", "Requires", "BindsTo", "Requisite", "PartOf", "Upholds")
FOREIGN = ("opensm", "slurmctld", "slurmd", "slurmdbd", "slurmrestd", "munge")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


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
    print("FAILED: " + "; ".join(failures) if failures else "all ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
