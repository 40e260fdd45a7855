#!/usr/bin/env python3
"""`sar-route eval` speed and memory, one binary against another (before/after a change).

Setup (not timed): `sar-route gen` makes the fabric (default: the 45,000-host
PGFT(3;30,30,50;1,30,30;1,1,1), the largest fat-tree one subnet's LIDs hold), `sar-route jobmix`
a job mix, and `build/bench/eval_tables` routes it with a cheap engine (minhop) and writes the
tables without per-line comments (~2 GB instead of ~14 GB at 45k). Then each binary runs
`eval --json` with the jobs and the traffic patterns `--runs` times, alternating, and the script
reports medians of the wall time and of eval's own read/analysis split, and the peak RSS (the
child's ru_maxrss, what `/usr/bin/time -v` prints as "Maximum resident set size"). The two
binaries must print the same JSON (timing aside), else the script fails.

  bench/eval_speed.py --old /work/main/build/router/sar-route --new build/router/sar-route
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run_eval_rss(binary, args):
    """Runs `binary eval args`; returns (report, wall seconds, peak RSS in MB of the child)."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([binary, "eval"] + args, stdout=out, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - start
        out.seek(0)
        err.seek(0)
        text = out.read().decode()
        if p.returncode not in (0, 1):  # 1 = invalid routing, still a report
            sys.exit(f"{binary} eval failed ({p.returncode}): {err.read().decode().strip()}")
    return json.loads(text), wall, usage.ru_maxrss / 1024.0


def analysis_ms(timing):
    """Everything after reading: the new eval has one stage, the old one four."""
    return sum(v for k, v in timing.items() if k != "read_ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", required=True, help="sar-route before the change")
    ap.add_argument("--new", required=True, help="sar-route after the change")
    ap.add_argument("--tables", default=os.path.join(HERE, "..", "build", "bench", "eval_tables"))
    ap.add_argument("--fabric", default="pgft:3;30,30,50;1,30,30;1,1,1")
    ap.add_argument("--engine", default="minhop")
    ap.add_argument("--traffic", action="append", default=None,
                    help="eval --traffic pattern (repeatable; default all-to-all, random:1)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--workdir", help="keep the fabric, jobs and tables here (reused if present)")
    args = ap.parse_args()
    traffic = args.traffic or ["all-to-all", "random:1"]

    work = args.workdir or tempfile.mkdtemp(prefix="sar-eval-speed-")
    os.makedirs(work, exist_ok=True)
    topo, lids = os.path.join(work, "fabric.topo"), os.path.join(work, "fabric.guid2lid")
    jobs, lfts = os.path.join(work, "fabric.jobs"), os.path.join(work, "fabric.lfts")
    try:
        if not os.path.exists(lfts):
            t = time.monotonic()
            subprocess.run([args.new, "gen", "-f", args.fabric, "-o", topo, "--guid2lid", lids],
                           check=True)
            subprocess.run([args.new, "jobmix", "-t", topo, "--lids", lids, "-o", jobs],
                           check=True)
            subprocess.run([args.tables, topo, lids, args.engine, lfts], check=True)
            print(f"setup: {args.fabric}, {args.engine} tables "
                  f"({os.path.getsize(lfts) / 1e9:.1f} GB) in {time.monotonic() - t:.0f} s",
                  flush=True)
        eval_args = ["-t", topo, "--lids", lids, "-l", lfts, "-j", jobs, "--json",
                     "--threads", str(args.threads)]
        for pattern in traffic:
            eval_args += ["--traffic", pattern]

        results = {"old": [], "new": []}
        reports = {}
        for run in range(args.runs):
            for name in ("old", "new"):
                report, wall, rss = run_eval_rss(getattr(args, name), eval_args)
                timing = report.pop("timing_ms")
                if name in reports and reports[name] != report:
                    sys.exit(f"{name}: run {run + 1} printed a different report")
                reports[name] = report
                results[name].append((wall, timing["read_ms"] / 1e3,
                                      analysis_ms(timing) / 1e3, rss))
                print(f"run {run + 1} {name}: wall {wall:.2f} s, read {timing['read_ms'] / 1e3:.2f}"
                      f" s, analysis {analysis_ms(timing) / 1e3:.2f} s, peak RSS {rss:.0f} MB "
                      f"({json.dumps(timing)})", flush=True)
        if reports["old"] != reports["new"]:
            diff = [k for k in reports["old"] if reports["old"][k] != reports["new"].get(k)]
            sys.exit(f"the binaries disagree on: {', '.join(diff)}")

        r = reports["new"]
        print(f"\n{args.fabric}: {r['pairs']} pairs, {len(r['jobs'])} jobs, traffic "
              f"{', '.join(traffic)}; valid={r['valid']}; identical reports")
        print(f"{'binary':8} {'wall s':>8} {'read s':>8} {'analysis s':>11} {'peak RSS MB':>12}"
              f"   (medians of {args.runs})")
        med = {}
        for name in ("old", "new"):
            med[name] = [statistics.median(x[i] for x in results[name]) for i in range(4)]
            w, rd, an, rss = med[name]
            print(f"{name:8} {w:8.2f} {rd:8.2f} {an:11.2f} {rss:12.0f}")
        print(f"analysis: {med['old'][2] / med['new'][2]:.2f}x faster; "
              f"wall: {med['old'][0] / med['new'][0]:.2f}x")
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
