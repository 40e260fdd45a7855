#!/usr/bin/env python3
"""The fault matrix (tests/integration/test_fault_matrix.py) on the day demo's fabric, once (a
benchmark, not CI: issue 34 asked for it on 256 hosts with a real SLURM): ibsim with ft2:16,16
(256 hosts), OpenSM with the plugin and the shipped config/osmsar.conf (delta true), a real
SLURM (slurmctld + 256 slurmd on loopback) and sar-filterd; slurmctld, OpenSM and sar-filterd
each killed and stopped at every stage of a reroute, plus OpenSM's restart, a link down during
a pass, and the unsent mapping. Every case must converge to `sar-route route`'s tables (given
the tables before, as the plugin's delta passes start from them) within the test's bound.
Prints each case's convergence time and, per target, the median and the slowest.

  bench/fault_matrix_day.py [--build build] [--fabric ft2:16,16] [--targets ...] [--out DIR]"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--fabric", default="ft2:16,16")
    ap.add_argument("--targets", default="slurmctld,opensm,filterd")
    ap.add_argument("--out", help="work directory (default: a temporary one, removed)")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    work = args.out or tempfile.mkdtemp(prefix="sar-fault-matrix-day-")
    rows, code = [], 0
    t0 = time.monotonic()
    for target in args.targets.split(","):
        cmd = [sys.executable, os.path.join(REPO, "tests", "integration", "test_fault_matrix.py"),
               "--targets", target, "--fabric", args.fabric,
               "--sar-route", os.path.join(build, "router", "sar-route"),
               "--sar-filterd", os.path.join(build, "filterd", "sar-filterd"),
               "--workdir", os.path.join(work, target)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        times = [(m.group(1), float(m.group(2))) for m in
                 re.finditer(r"^(.+?): converged ([0-9.]+) s", p.stdout, re.M)]
        for what, s in times:
            print(f"{args.fabric} {what}: converged {s:.1f} s")
        status = "PASSED" if p.returncode == 0 else f"FAILED (exit {p.returncode})"
        if p.returncode != 0:
            code = 1
            out = p.stdout + p.stderr
            failed = [ln for ln in out.splitlines() if ln.startswith("FAILED")]
            print("\n".join(failed) if failed else out[-3000:])
        vals = [s for _, s in times]
        rows.append((target, len(vals), statistics.median(vals) if vals else None,
                     max(vals, default=None), status))
    print(f"\nfault matrix on {args.fabric} ({time.monotonic() - t0:.0f} s in all):")
    for target, n, med, worst, status in rows:
        print(f"  {target:10s} {n:2d} cases, convergence median "
              f"{'-' if med is None else f'{med:.1f}'} s, slowest "
              f"{'-' if worst is None else f'{worst:.1f}'} s: {status}")
    return code


if __name__ == "__main__":
    sys.exit(main())
