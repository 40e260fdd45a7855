#!/usr/bin/env python3
"""Times stock OpenSM's routing engines on a simulated fabric (ibsim).

Default fabric: the 360-host FT(2;20,18) (18 leaves, 20 spines). Each engine routes it R times,
each run a fresh OpenSM process (-o) on one ibsim per engine. The routing time is taken from
OpenSM's own log timestamps ("building routing with '<engine>'" to "<engine> tables configured
on all switches"); "SUBNET UP" is the wall time from starting OpenSM to that log line; RSS is
OpenSM's peak resident set (VmHWM from /proc, sampled until it exits). An engine that fails or makes OpenSM fall
back to another engine is skipped and reported.

    python3 bench/opensm_engines.py --json out.json [--runs 5] [--topology T | --sar-route BIN]
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "scripts"))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))

import sar_testbed  # noqa: E402
from testbed_common import exit_on_signals  # noqa: E402

ENGINES = ("ftree", "updn", "minhop", "dfsssp", "sssp", "nue")


def make_topology(args, workdir):
    if args.topology:
        return os.path.abspath(args.topology), args.guid2lid
    path = os.path.join(workdir, "fabric.topo")
    if args.sar_route:
        lids = os.path.join(workdir, "fabric.guid2lid")
        subprocess.run([args.sar_route, "gen", "--fabric", args.fabric, "-o", path,
                        "--guid2lid", lids], check=True, timeout=60)
        return path, lids
    import fabric_gen  # the tests' tiny generator, same naming as sar-route gen

    m0, m1 = (int(x) for x in args.fabric.split(":")[1].split(","))
    with open(path, "w") as f:
        f.write(fabric_gen.ft2(m0, m1))
    return path, None


def summary(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def bench_engine(engine, topo, lids, workdir, runs, timeout):
    runs_out = []
    with sar_testbed.Testbed(topo, os.path.join(workdir, engine), guid2lid=lids) as tb:
        for _ in range(runs):
            r = tb.route(engine, timeout=timeout, readback=False)
            runs_out.append({"routing_s": r.routing_time_s, "subnet_up_s": r.subnet_up_s,
                             "maxrss_kb": r.opensm_maxrss_kb})
    return {
        "runs": runs_out,
        "routing_s": summary([r["routing_s"] for r in runs_out]),
        "subnet_up_s": summary([r["subnet_up_s"] for r in runs_out]),
        "maxrss_kb": summary([r["maxrss_kb"] for r in runs_out]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", required=True, help="write the results here")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--fabric", default="ft2:20,18", help="ft2:M0,M1 when generating")
    ap.add_argument("--topology", help="route this topology file instead of generating one")
    ap.add_argument("--guid2lid", help="LIDs to seed with --topology")
    ap.add_argument("--sar-route", help="generate the fabric with this sar-route binary")
    ap.add_argument("--timeout", type=float, default=120.0, help="per OpenSM run, seconds")
    ap.add_argument("--workdir", help="scratch directory (default: a temporary one)")
    args = ap.parse_args()
    exit_on_signals()

    with tempfile.TemporaryDirectory(prefix="sar-bench-") as tmp:
        workdir = args.workdir or tmp
        os.makedirs(workdir, exist_ok=True)
        topo, lids = make_topology(args, workdir)
        results, skipped = {}, {}
        for engine in args.engines.split(","):
            try:
                results[engine] = bench_engine(engine, topo, lids, workdir, args.runs,
                                               args.timeout)
            except sar_testbed.TestbedError as e:
                skipped[engine] = str(e).splitlines()[0]
                print(f"skipping {engine}: {skipped[engine]}", file=sys.stderr)

    print(f"OpenSM 3.3.23 on ibsim, {args.topology or args.fabric}, {args.runs} runs per engine "
          f"(routing time from the log)")
    print(f"{'engine':8} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'SUBNET UP s':>12} "
          f"{'RSS MB':>7}")
    for engine, r in results.items():
        rt, up, rss = r["routing_s"], r["subnet_up_s"], r["maxrss_kb"]
        if rt is None:
            print(f"{engine:8} {'(no routing lines in log)':>28}")
            continue
        print(f"{engine:8} {rt['median'] * 1e3:10.2f} {rt['min'] * 1e3:8.2f} "
              f"{rt['max'] * 1e3:8.2f} {up['median']:12.3f} {rss['max'] / 1024:7.1f}")
    for engine, why in skipped.items():
        print(f"{engine:8} skipped: {why}")
    with open(args.json, "w") as f:
        json.dump({"fabric": args.topology or args.fabric, "runs_per_engine": args.runs,
                   "host": platform.node(), "cpus": os.cpu_count(), "engines": results,
                   "skipped": skipped}, f, indent=1)


if __name__ == "__main__":
    main()
