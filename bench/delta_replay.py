#!/usr/bin/env python3
"""Minimal-delta updates and stable running jobs against full recomputes on a trace replay
(issue 18, goals 3 and 4).

Runs `sar-route replay` three times on the same history and fabric: every reroute a full
recompute; `--delta --no-stable-jobs` (each reroute keeps what it can of the previous event's
tables: "before" the stability rule); `--delta` (also given the previous event's job set, so jobs
running across the event keep their own routes: "after"). Compares them event by event (every
event after the first is a job start or end that changed the multi-leaf job set):
  - LFT entries and 64-LID LFT blocks changed against the previous event's tables;
  - max effective EFI (delta / full, goal: within 2% on every event) and all-pairs max EFI;
  - stability: the share of jobs running across the event whose own routes changed (median,
    mean, p95 over events with running jobs).
The full recompute at an event does not depend on earlier tables, so all runs see the same
full-recompute quality.

  bench/delta_replay.py --sar-route build/router/sar-route [--from-days 30 --days 10]
      [--engines sar,dfsssp] [--fabric ft2:20,18]
"""
import argparse
import csv
import gzip
import os
import shutil
import statistics
import subprocess
import tempfile
import time

DEFAULT_SWF = "/work/shared/data/KTH-SP2-1996-2.1-cln.swf.gz"


def replay(a, topo, swf, mode, out_csv):
    cmd = [a.sar_route, "replay", "-t", topo, "--swf", swf, "-e", a.engines,
           "--from-days", str(a.from_days), "--days", str(a.days), "--json",
           "--threads", str(a.threads), "--progress", "off", "--csv", out_csv]
    if mode != "full":
        cmd.append("--delta")
    if mode == "plain":
        cmd.append("--no-stable-jobs")
    start = time.monotonic()
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.monotonic() - start
    rows = {}
    with open(out_csv) as f:
        for r in csv.DictReader(f):
            rows[(r["engine"], int(r["event"]))] = r
    return rows, wall


def med(v):
    return statistics.median(v) if v else float("nan")


def mean(v):
    return statistics.fmean(v) if v else float("nan")


def p95(v):
    if not v:
        return float("nan")
    v = sorted(v)
    return v[max(1, -(-95 * len(v) // 100)) - 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sar-route", default="build/router/sar-route")
    ap.add_argument("--swf", default=DEFAULT_SWF)
    ap.add_argument("--fabric", default="ft2:20,18")
    ap.add_argument("--from-days", type=float, default=30)
    ap.add_argument("--days", type=float, default=10)
    ap.add_argument("--engines", default="sar,dfsssp")
    ap.add_argument("--threads", type=int, default=0)
    a = ap.parse_args()

    work = tempfile.mkdtemp(prefix="sar-delta-bench-")
    try:
        topo = os.path.join(work, "fabric.topo")
        subprocess.run([a.sar_route, "gen", "-f", a.fabric, "-o", topo], check=True,
                       capture_output=True)
        swf = os.path.join(work, "history.swf")
        opener = gzip.open if a.swf.endswith(".gz") else open
        with opener(a.swf, "rb") as src, open(swf, "wb") as dst:
            shutil.copyfileobj(src, dst)
        runs = {}
        for mode in ("full", "plain", "stable"):
            runs[mode] = replay(a, topo, swf, mode, os.path.join(work, mode + ".csv"))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    full = runs["full"][0]
    events = max(k for _, k in full) + 1
    print(f"{a.fabric}, KTH SP2 days {a.from_days:g}-{a.from_days + a.days:g}: {events} events; "
          f"wall full {runs['full'][1]:.1f} s, delta before {runs['plain'][1]:.1f} s, "
          f"after {runs['stable'][1]:.1f} s")
    print("| engine | run | blocks changed median | entries changed median "
          "| events with blocks >= 5x fewer than full | max eff. EFI / full: median, max "
          "| all-pairs EFI / full max | running jobs rerouted: median, mean, p95 |")
    print("|---|---|---|---|---|---|---|---|")
    for engine in a.engines.split(","):
        for mode, label in (("full", "full recompute"), ("plain", "delta, before (no job set)"),
                            ("stable", "delta, after (stability rule)")):
            rows = runs[mode][0]
            blocks, entries, q, qa, jobs = [], [], [], [], []
            five = n = 0
            for k in range(1, events):
                f, d = full[(engine, k)], rows[(engine, k)]
                if f["rerouted"] != "1":
                    continue
                n += 1
                fb, db = int(f["lft_blocks_changed"]), int(d["lft_blocks_changed"])
                blocks.append(db)
                entries.append(int(d["lft_changed"]))
                five += fb >= 5 * db
                fe, de = int(f["effective_efi_max"]), int(d["effective_efi_max"])
                q.append(de / fe if fe else 1.0)
                fa, da = int(f["efi_max"]), int(d["efi_max"])
                qa.append(da / fa if fa else 1.0)
                if int(d["jobs_continuing"]) > 0:
                    jobs.append(int(d["jobs_rerouted"]) / int(d["jobs_continuing"]))
            if n == 0:
                print(f"| {engine} | {label} | not rerouted per event |")
                continue
            print(f"| {engine} | {label} | {med(blocks):.0f} | {med(entries):.0f} | {five}/{n} "
                  f"| {med(q):.3f}, {max(q):.3f} | {max(qa):.3f} "
                  f"| {100 * med(jobs):.0f}%, {100 * mean(jobs):.0f}%, {100 * p95(jobs):.0f}% |")


if __name__ == "__main__":
    main()
