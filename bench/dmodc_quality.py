#!/usr/bin/env python3
"""Dmodk/Dmodc routing quality for all-to-all traffic against OpenSM's real engines (issue 16 item 4).

Traffic: every host to every host (one job holding all hosts, `sar-route jobmix` with min = max
size = the host count), so compare's max effective EFI is the all-pairs max EFI and its lower
bound (sar/analysis/lower_bound.h) is the all-to-all bound.

Intact PGFTs: Dmodk's all-pairs max EFI against the bound and against OpenSM ftree's (real tables
read back from ibsim by `sar-route compare --opensm`).

Degraded PGFTs: `--seeds` fabrics per failure rate (that share of the switch-to-switch cables cut
at random, `sar-route gen --fail-links N --seed S`; HCAs stay connected), each routed once by
`sar-route compare --json --allow-disconnected` with our engines (`--engines`) and, on fabrics
ibsim holds, OpenSM's (`--opensm`). Per engine: how often it refused (no tables; OpenSM ftree
refuses a degraded tree and the test bed reports its fallback), how often its tables were
invalid (loops), mean / median / max of the all-pairs max EFI over the seeds it routed, the share
of (source, destination) pairs left unreachable (`--allow-disconnected`: our up*/down* engines
leave pairs without a legal route as holes instead of failing), and in how many seeds the engine's
max EFI was below dmodc's. Every figure comes from sar-route (one routing pass, one metric); this
script only runs it and aggregates.

Everything (50 seeds, all cases; hours on 2 shared cores):
  bench/dmodc_quality.py --sar-route build/router/sar-route --seeds 50
The tables in docs/benchmarks.md:
  bench/dmodc_quality.py --seeds 50 --cases pgft2,pgft2p,kary
  bench/dmodc_quality.py --seeds 10 --parallel 1 --cases pgft3
  bench/dmodc_quality.py --seeds 10 --cases pgft3big
Quick look:
  bench/dmodc_quality.py --seeds 3 --cases pgft2
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

CASES = {
    # name: (generator spec, description, OpenSM on ibsim)
    "pgft2": ("pgft:2;8,8;1,8;1,1", "PGFT(2;8,8;1,8;1,1), 64 hosts", True),
    "pgft2p": ("pgft:2;8,4;1,4;1,2", "PGFT(2;8,4;1,4;1,2), 32 hosts, double cables", True),
    # = PGFT(3;4,4,4;1,4,4;1,1,1)
    "kary": ("kary:4,3", "4-ary 3-tree, 64 hosts", True),
    # bench/quality.py's 1024-host PGFT (192 switches: ibsim holds 256).
    "pgft3": ("pgft:3;16,8,8;1,8,8;1,1,1", "PGFT(3;16,8,8;1,8,8;1,1,1), 1024 hosts", True),
    # 384 switches: beyond ibsim's 256, our engines only.
    "pgft3big": ("pgft:3;16,16,8;1,16,8;1,1,1", "PGFT(3;16,16,8;1,16,8;1,1,1), 2048 hosts", False),
}


def run(cmd):
    return subprocess.run(cmd, check=False, capture_output=True, text=True)


def info(args, topo):
    r = run([args.sar_route, "info", "--json", "-t", topo])
    if r.returncode != 0:
        raise RuntimeError("info: " + r.stderr.strip())
    return json.loads(r.stdout)


def one_run(args, case, pct, seed, workroot, cables):
    """One fabric (intact when pct == 0) routed by every engine: compare's JSON rows by engine."""
    spec, _, with_opensm = CASES[case]
    d = os.path.join(workroot, f"{case}-{pct:g}-{seed}")
    os.makedirs(d, exist_ok=True)
    try:
        topo = os.path.join(d, "fabric.topo")
        gen = [args.sar_route, "gen", "-f", spec, "-o", topo]
        fail = 0
        if pct > 0:
            fail = max(1, round(pct / 100.0 * cables))
            gen += ["--fail-links", str(fail), "--seed", str(seed)]
        r = run(gen)
        if r.returncode != 0:
            raise RuntimeError("gen: " + r.stderr.strip())
        hosts = info(args, topo)["hcas"]
        jobs = os.path.join(d, "all.jobs")
        r = run([args.sar_route, "jobmix", "-t", topo, "-o", jobs, "--min-size", str(hosts),
                 "--max-size", str(hosts), "--utilization", "1", "--rounds", "1"])
        if r.returncode != 0:
            raise RuntimeError("jobmix: " + r.stderr.strip())
        cmd = [args.sar_route, "compare", "-t", topo, "-j", jobs, "--json", "--threads", "1",
               "--allow-disconnected", "--engines", args.engines]
        if with_opensm and args.opensm:
            cmd += ["--opensm", args.opensm, "--workdir", os.path.join(d, "opensm")]
        r = run(cmd)
        if r.returncode not in (0, 1):
            raise RuntimeError("compare: " + r.stderr.strip())
        out = json.loads(r.stdout)
        return {"seed": seed, "failed_links": fail, "hosts": hosts,
                "bound": out["effective_efi_lower_bound"],
                "rows": {e["engine"]: e for e in out["engines"]}}
    finally:
        if not args.keep:
            shutil.rmtree(d, ignore_errors=True)


def summarise(results, names):
    """Per engine: refused / invalid counts, all-pairs max EFI stats, unreachable share."""
    table = {}
    for name in names:
        t = {"runs": 0, "refused": 0, "invalid": 0, "efi": [], "unreach": [], "beats_dmodc": 0,
             "vs_dmodc": 0, "errors": []}
        for res in results:
            row = res["rows"].get(name)
            if row is None:
                continue
            t["runs"] += 1
            if not row["ok"]:
                t["refused"] += 1
                t["errors"].append(row.get("error", ""))
                continue
            if not row["valid"]:
                t["invalid"] += 1
                t["errors"].append(row.get("invalid", ""))
                continue
            t["efi"].append(row["efi_max"])
            t["unreach"].append(row["unreachable_pairs"] / row["pairs"] if row["pairs"] else 0.0)
            ours = res["rows"].get("dmodc")
            if name != "dmodc" and ours and ours["ok"] and ours["valid"]:
                t["vs_dmodc"] += 1
                t["beats_dmodc"] += row["efi_max"] < ours["efi_max"]
        table[name] = t
    return table


def fmt(xs, f, spec=".1f"):
    return format(f(xs), spec) if xs else "-"


def print_intact(rows):
    print("\n### Intact trees: all-to-all max EFI (every host pair)\n")
    heads = sorted({e for r in rows for e in r["rows"]},
                   key=lambda e: (e.startswith("opensm:"), e))
    print("| fabric | bound | " + " | ".join(heads) + " |")
    print("|---|---:|" + "---:|" * len(heads))
    for r in rows:
        cells = []
        for e in heads:
            row = r["rows"].get(e)
            if row is None:
                cells.append("")
            elif not row["ok"]:
                cells.append("refused")
            elif not row["valid"]:
                cells.append(f"{row['efi_max']} (invalid)")
            else:
                u = row["unreachable_pairs"]
                cells.append(str(row["efi_max"]) + (f" ({u} unreachable)" if u else ""))
        print(f"| {r['desc']} | {r['bound']} | " + " | ".join(cells) + " |")


def print_degraded(desc, pct, n, fail, bounds, table):
    print(f"\n### {desc}, {pct:g}% of switch cables failed ({fail} cables), {n} seeds\n")
    print("| engine | refused | invalid | max EFI mean | median | max | unreachable % mean "
          "| max | below dmodc |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| lower bound | | | {fmt(bounds, statistics.fmean, '.2f')} | "
          f"{fmt(bounds, statistics.median)} | {fmt(bounds, max, 'd')} | | | |")
    for e, t in table.items():
        if t["runs"] == 0:
            continue
        below = f"{t['beats_dmodc']}/{t['vs_dmodc']}" if e != "dmodc" else "-"
        print(f"| {e} | {t['refused']} | {t['invalid']} | {fmt(t['efi'], statistics.fmean, '.2f')}"
              f" | {fmt(t['efi'], statistics.median)} | {fmt(t['efi'], max, 'd')}"
              f" | {fmt([100 * u for u in t['unreach']], statistics.fmean, '.3f')}"
              f" | {fmt([100 * u for u in t['unreach']], max, '.3f')} | {below} |")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--sar-route", default=os.path.join(here, "..", "build", "router", "sar-route"))
    p.add_argument("--seeds", type=int, default=50, help="degraded fabrics per failure rate")
    p.add_argument("--cases", default="pgft2,pgft2p,kary,pgft3,pgft3big",
                   help="comma list of " + ",".join(CASES))
    p.add_argument("--failures", default="1,3", help="percent of switch cables failed")
    p.add_argument("--engines", default="dmodc,dmodk,updn,minhop,dfsssp",
                   help="our engines")
    p.add_argument("--opensm", default="ftree,updn,minhop,dfsssp",
                   help="OpenSM engines (on the cases ibsim holds); empty for none")
    p.add_argument("--parallel", type=int, default=2, help="fabrics routed at once")
    p.add_argument("--json", help="write every run's rows here")
    p.add_argument("--keep", help="keep the work files here")
    a = p.parse_args()
    if not os.access(a.sar_route, os.X_OK):
        p.error(f"{a.sar_route} is not executable; build it or give --sar-route")
    for c in a.cases.split(","):
        if c not in CASES:
            p.error(f"unknown case {c!r}; known: {','.join(CASES)}")
    workroot = a.keep or tempfile.mkdtemp(prefix="sar-dmodc-quality-")
    os.makedirs(workroot, exist_ok=True)
    ours = a.engines.split(",")
    names = ours + ["opensm:" + e for e in a.opensm.split(",") if e]
    pcts = [float(x) for x in a.failures.split(",") if x]
    dump = {}
    t0 = time.time()
    try:
        intact, degraded = [], []
        for case in a.cases.split(","):
            spec, desc, _ = CASES[case]
            base = os.path.join(workroot, case + ".topo")
            r = run([a.sar_route, "gen", "-f", spec, "-o", base])
            if r.returncode != 0:
                sys.exit(f"gen {case}: {r.stderr}")
            cables = info(a, base)["switch_channels"] // 2
            print(f"{case}: intact...", file=sys.stderr, flush=True)
            res = one_run(a, case, 0, 0, workroot, cables)
            intact.append({"desc": desc, **res})
            dump[f"{case}/0"] = [res]
            for pct in pcts:
                with concurrent.futures.ThreadPoolExecutor(a.parallel) as ex:
                    futs = [ex.submit(one_run, a, case, pct, s, workroot, cables)
                            for s in range(1, a.seeds + 1)]
                    results = []
                    for i, f in enumerate(futs):
                        results.append(f.result())
                        print(f"  {case} {pct:g}%: {i + 1}/{a.seeds} seeds "
                              f"({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
                dump[f"{case}/{pct:g}"] = results
                degraded.append((desc, pct, len(results), results[0]["failed_links"],
                                 [r["bound"] for r in results], summarise(results, names)))
        print_intact(intact)
        for d in degraded:
            print_degraded(*d)
        print("\nmax EFI: all-pairs max EFI (routes of every host pair crossing the busiest "
              "switch-to-switch channel);\nbound: sar/analysis/lower_bound.h for all-to-all; refused: the "
              "engine gave no tables (OpenSM: failed or fell back);\ninvalid: tables with loops; "
              "unreachable: share of (source, destination LID) pairs not delivered;\nbelow dmodc: "
              "seeds where the engine's max EFI was below dmodc's / seeds both routed validly.")
        refusals = {}
        for *_, table in degraded:
            for e, t in table.items():
                for err in t["errors"][:1]:
                    refusals.setdefault(e, err)
        for e, err in refusals.items():
            print(f"{e}: e.g. {err[:200]}", file=sys.stderr)
        print(f"total {time.time() - t0:.0f} s", file=sys.stderr)
    finally:
        if a.json:
            with open(a.json, "w") as f:
                json.dump(dump, f, indent=1)
        if not a.keep:
            shutil.rmtree(workroot, ignore_errors=True)


if __name__ == "__main__":
    main()
