#!/usr/bin/env python3
"""A replay split over a SLURM job array against the unsplit run on the same machine (issue 39):
the KTH SP2 log (default a year) on FT(2;20,18) through sar, dfsssp, minhop, dmodc, once
unsplit and once as `--slurm-array N` on the loopback SLURM test bed (scripts/slurm_testbed.py,
N nodes). Prints the wall times (unsplit; split from submission to the merge's report), the
ratio, the shards' sum and slowest, and whether the merged CSV equals the unsplit one (sorted
rows, every column but reroute_ms). Not a CI test: minutes to hours.

  bench/split_replay_slurm.py --sar-route build/router/sar-route [--days 365] [--tasks 8]
      [--delta] [--engines sar,dfsssp,minhop,dmodc]
"""
import argparse
import csv
import glob
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from slurm_testbed import SlurmTestbed  # noqa: E402

DEFAULT_SWF = "/work/shared/data/KTH-SP2-1996-2.1-cln.swf.gz"


def rows(path):
    r = list(csv.reader(open(path)))
    keep = [i for i, n in enumerate(r[0]) if n != "reroute_ms"]
    return sorted([x[i] for i in keep] for x in r[1:])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sar-route", default="build/router/sar-route")
    ap.add_argument("--swf", default=DEFAULT_SWF)
    ap.add_argument("--fabric", default="ft2:20,18")
    ap.add_argument("--engines", default="sar,dfsssp,minhop,dmodc")
    ap.add_argument("--from-days", type=float, default=0)
    ap.add_argument("--days", type=float, default=365)
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1, help="per run and per shard")
    ap.add_argument("--delta", action="store_true")
    a = ap.parse_args()
    sar_route = os.path.abspath(a.sar_route)
    work = tempfile.mkdtemp(prefix="sar-split-bench-")
    try:
        topo = os.path.join(work, "fabric.topo")
        subprocess.run([sar_route, "gen", "-f", a.fabric, "-o", topo], check=True,
                       capture_output=True)
        swf = os.path.join(work, "history.swf")
        with (gzip.open if a.swf.endswith(".gz") else open)(a.swf, "rb") as s, \
                open(swf, "wb") as d:
            shutil.copyfileobj(s, d)
        cmd = [sar_route, "replay", "-t", topo, "--swf", swf, "-e", a.engines, "--from-days",
               str(a.from_days), "--days", str(a.days), "--threads", str(a.threads), "--json"]
        if a.delta:
            cmd.append("--delta")
        load0 = os.getloadavg()[0]
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.monotonic()
        whole = json.loads(subprocess.run(cmd + ["--csv", os.path.join(work, "whole.csv"),
                                                 "--progress", "off"],
                                          check=True, capture_output=True, text=True).stdout)
        unsplit = time.monotonic() - t0
        cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        unsplit_cpu = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
        with SlurmTestbed(os.path.join(work, "slurm"), num_nodes=a.tasks,
                          nodes_per_leaf=a.tasks) as sb:
            wd = os.path.join(work, "split")
            t0 = time.monotonic()
            subprocess.run(cmd + ["--csv", os.path.join(work, "split.csv"), "--slurm-array",
                                  str(a.tasks), "--work-dir", wd],
                           check=True, capture_output=True, text=True, env=sb.env())
            out = os.path.join(work, "split.csv")
            merge_out = os.path.join(wd, "merge.out")
            while not (os.path.exists(out) and os.path.exists(merge_out) and
                       open(merge_out).read().rstrip().endswith("}")):
                time.sleep(0.5)
            split = time.monotonic() - t0
        shards = [json.load(open(p)) for p in glob.glob(os.path.join(wd, "shard-*.json"))]
        walls = [x["wall_s"] for x in shards]
        cpus = [x["cpu_s"] for x in shards]
        equal = rows(os.path.join(work, "whole.csv")) == rows(out)
        print(f"{whole['events']} events x {len(a.engines.split(','))} engines, "
              f"{'--delta' if a.delta else 'full recomputes'}, {a.tasks} array tasks on "
              f"{os.cpu_count()} cores (load average {load0:.1f} at the start, "
              f"{os.getloadavg()[0]:.1f} at the end):")
        print(f"  wall: unsplit {unsplit:.1f} s; split {split:.1f} s (submission to merged "
              f"report); ratio {unsplit / split:.2f}x")
        print(f"  CPU: unsplit {unsplit_cpu:.1f} s; shards {sum(cpus):.1f} s in all "
              f"({sum(cpus) / unsplit_cpu:.2f}x), the largest {max(cpus):.1f} s; shard wall "
              f"slowest {max(walls):.1f} s")
        print(f"  merged CSV equal to the unsplit run's: {equal}")
        return 0 if equal else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
