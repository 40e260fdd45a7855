#!/usr/bin/env python3
"""Minimal-delta updates against full recomputes on a trace replay (issue 18, goals 3 and 4).

Runs `sar-route replay` twice on the same history and fabric, once with every reroute a full
recompute and once with `--delta` (each reroute keeps what it can of the previous event's tables),
and compares them event by event (every event after the first is a job start or end that changed
the multi-leaf job set):
  - LFT entries and 64-LID LFT blocks changed against the previous event's tables;
  - max effective EFI (delta / full, goal: within 2%) and all-pairs max EFI;
  - stability: the share of jobs running across the event whose own routes changed.
Prints medians (and means) per engine; the full recompute at an event does not depend on earlier
tables, so both runs see the same full-recompute quality.

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


def replay(a, topo, swf, delta, out_csv):
    cmd = [a.sar_route, "replay", "-t", topo, "--swf", swf, "-e", a.engines,
           "--from-days", str(a.from_days), "--days", str(a.days), "--json",
           "--threads", str(a.threads), "--progress", "off", "--csv", out_csv]
    if delta:
        cmd.append("--delta")
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
        full, wall_full = replay(a, topo, swf, False, os.path.join(work, "full.csv"))
        delta, wall_delta = replay(a, topo, swf, True, os.path.join(work, "delta.csv"))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    events = max(k for _, k in full) + 1
    print(f"{a.fabric}, KTH SP2 days {a.from_days:g}-{a.from_days + a.days:g}: {events} events; "
          f"wall full {wall_full:.1f} s, delta {wall_delta:.1f} s")
    print("| engine | entries changed median full / delta | blocks changed median full / delta "
          "| block ratio (median of per-event full/delta) | events with delta blocks >= 5x fewer "
          "| max eff. EFI delta/full median, max | all-pairs EFI delta/full max "
          "| jobs rerouted median full / delta | mean full / delta |")
    print("|---|---|---|---|---|---|---|---|---|")
    for engine in a.engines.split(","):
        ef, ed, bf, bd, ratio, q, qa, jf, jd = [], [], [], [], [], [], [], [], []
        five = 0
        n = 0
        for k in range(1, events):
            f, d = full[(engine, k)], delta[(engine, k)]
            if f["rerouted"] != "1":
                continue
            n += 1
            ef.append(int(f["lft_changed"]))
            ed.append(int(d["lft_changed"]))
            fb, db = int(f["lft_blocks_changed"]), int(d["lft_blocks_changed"])
            bf.append(fb)
            bd.append(db)
            ratio.append(fb / max(db, 1))
            five += fb >= 5 * db
            fe, de = int(f["effective_efi_max"]), int(d["effective_efi_max"])
            q.append(de / fe if fe else 1.0)
            fa, da = int(f["efi_max"]), int(d["efi_max"])
            qa.append(da / fa if fa else 1.0)
            if int(f["jobs_continuing"]) > 0:
                jf.append(int(f["jobs_rerouted"]) / int(f["jobs_continuing"]))
                jd.append(int(d["jobs_rerouted"]) / int(d["jobs_continuing"]))
        if n == 0:
            print(f"| {engine} | not rerouted per event |")
            continue
        print(f"| {engine} | {med(ef):.0f} / {med(ed):.0f} | {med(bf):.0f} / {med(bd):.0f} "
              f"| {med(ratio):.1f}x | {five}/{n} | {med(q):.3f}, {max(q):.3f} | {max(qa):.3f} "
              f"| {100 * med(jf):.0f}% / {100 * med(jd):.0f}% "
              f"| {100 * mean(jf):.0f}% / {100 * mean(jd):.0f}% |")


if __name__ == "__main__":
    main()
