#!/usr/bin/env python3
"""What an alltoall job feels with and without its FORS phases (issue 35's benchmark).

On the day demo's fabric, FT(2;16,16) (256 hosts), intact and with failed cables, per seed: a busy
machine's job mix (`sar-route jobmix`), its largest multi-leaf job tagged alltoall. Then
`sar-route route` with sar (FORS for the alltoall job, `--schedule-out`) and with minhop (OpenSM's
default), and `sar-route eval` judges what the jobs feel (each job's slowest flow, every job
sending at once, max-min fair; docs/engines.md "Judging a routing"):

  minhop          the alltoall job sends all at once on minhop's tables (no sar at all);
  sar, at once    sar's tables, the application ignores the schedule (no libsarfors);
  sar, phases     sar's tables, the application exchanges in the published phases (libsarfors);
  phases alone    the same with no other job sending: the schedule's own length (one message
                  per phase at line rate when every phase is conflict-free).

Printed per fabric: medians over the seeds of the alltoall job's time (units of one message at
line rate), and of the slowest other job's; how often the phases beat the all-at-once exchange
and minhop. Not a test: it prints figures.

  bench/fors_phases.py --sar-route build/router/sar-route [--seeds 10] [--fail 0,4,12]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-2000:]}")
    return p


def judged(sar_route, topo, lfts, mapping, schedules=False):
    """`sar-route eval`'s per-job records (id -> {time, alone_time, leaf_switches, ...}) of the
    jobs with flows."""
    cmd = [sar_route, "eval", "--topology", topo, "--lfts", lfts, "--jobs", mapping, "--json"]
    if schedules:
        cmd += ["--schedules"]
    j = json.loads(run(cmd).stdout)
    leaves = {x["id"]: x["leaf_switches"] for x in j["jobs"]}
    return {x["id"]: dict(x, leaf_switches=leaves.get(x["id"], 0))
            for x in (j.get("flows") or {}).get("jobs", []) if x.get("flows")}


def tag_alltoall(mapping, job):
    """Rewrites the mapping with `job` tagged alltoall."""
    with open(mapping) as f:
        rows = [line.split() for line in f if line.strip() and not line.startswith("#")]
    with open(mapping, "w") as f:
        for host, j, *_ in rows:
            f.write(f"{host} {j}" + (" alltoall\n" if j == job else "\n"))


def one(args, work, fail, seed):
    topo = os.path.join(work, f"ft-{fail}-{seed}.topo")
    gen = [args.sar_route, "gen", "--fabric", args.fabric, "-o", topo]
    if fail:
        gen += ["--fail-links", str(fail), "--seed", str(seed)]
    run(gen)
    mapping = os.path.join(work, f"jobs-{fail}-{seed}.map")
    run([args.sar_route, "jobmix", "-t", topo, "--seed", str(seed), "--min-size", "8",
         "--max-size", "64", "--utilization", "0.9", "-o", mapping])
    sar, minhop = mapping + ".sar.lfts", mapping + ".minhop.lfts"
    run([args.sar_route, "route", "-e", "minhop", "--topology", topo, "-o", minhop,
         "--out-format", "compact"])
    # minhop routes every job alike, so its figures need no tag; eval says which jobs span leaves.
    base = judged(args.sar_route, topo, minhop, mapping)
    multi = [j for j, x in base.items() if x["leaf_switches"] > 1]
    if not multi:
        return None
    job = max(multi, key=lambda j: (base[j]["endpoints"], j))  # the largest multi-leaf job
    tag_alltoall(mapping, job)
    p = run([args.sar_route, "route", "-e", "sar", "--topology", topo, "--jobs", mapping,
             "-o", sar, "--out-format", "compact", "--schedule-out", mapping])
    fors = "none" not in open(f"{mapping}.fors.{job}").read(4096).splitlines()[1].split()
    at_once = judged(args.sar_route, topo, sar, mapping)
    phased = judged(args.sar_route, topo, sar, mapping, schedules=True)
    others = [j for j in base if j != job]
    return dict(job=job, fors=fors, minhop=base[job]["time"], at_once=at_once[job]["time"],
                phases=phased[job]["time"], alone=phased[job]["alone_time"],
                others_minhop=max((base[j]["time"] for j in others), default=0),
                others_phases=max((phased[j]["time"] for j in others), default=0),
                notes=p.stderr.strip().splitlines()[-1:] if not fors else [])


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sar-route", required=True)
    ap.add_argument("--fabric", default="ft2:16,16", help="sar-route gen --fabric (default: the "
                    "day demo's FT(2;16,16))")
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--fail", default="0,4,12", help="failed cables per fabric, comma-separated")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as work:
        print(f"{args.fabric}: the largest multi-leaf job of each mix tagged alltoall; its time "
              f"(message units at line rate), median over {args.seeds} seeds\n")
        print(f"{'failed':>6}  {'FORS':>5}  {'minhop':>8}  {'sar, at once':>12}  "
              f"{'sar, phases':>11}  {'phases alone':>12}  {'phases < at once':>16}  {'phases <= minhop':>16}  "
              f"{'slowest other job sar/minhop':>28}")
        for fail in [int(x) for x in args.fail.split(",")]:
            rows = [r for r in (one(args, work, fail, s) for s in range(1, args.seeds + 1)) if r]
            fors = [r for r in rows if r["fors"]]
            if not fors:
                print(f"{fail:6d}  {0:5d}  no mix gave the alltoall job a FORS schedule "
                      f"({rows[0]['notes'] if rows else 'no multi-leaf job'})")
                continue
            med = lambda k: statistics.median(r[k] for r in fors)  # noqa: E731
            better = sum(r["phases"] < r["at_once"] - 1e-9 for r in fors)
            vs_min = sum(r["phases"] <= r["minhop"] + 1e-9 for r in fors)
            ratio = statistics.median(r["others_phases"] / r["others_minhop"]
                                      for r in fors if r["others_minhop"])
            print(f"{fail:6d}  {len(fors):5d}  {med('minhop'):8.1f}  "
                  f"{med('at_once'):12.1f}  {med('phases'):11.1f}  {med('alone'):12.1f}  {better:>9d} of {len(fors):<3d}"
                  f"  {vs_min:>9d} of {len(fors):<3d}  {ratio:28.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
