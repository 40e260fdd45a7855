#!/usr/bin/env python3
"""Routing quality on random job mixes: our engines against OpenSM's real ones.

For each fabric and failure rate, `--mixes` seeds each give: a fabric (with that share of its
switch-to-switch cables failed at random, seeded), a job mix of a busy SLURM machine
(`sar-route jobmix`), and one `sar-route compare` run that routes it with our engines and with
OpenSM's engines on the ibsim test bed (tables read back from the simulated switches). The
script prints the mean over mixes of each metric per engine and checks the issue's targets:

  * SAR's mean max effective EFI at least 30% below OpenSM dfsssp's,
  * SAR's max effective EFI never above OpenSM ftree's on the intact tree (per mix),
  * SAR's dark fiber below every OpenSM engine's on average.

Example (the closing note's table):
  bench/quality.py --sar-route build/router/sar-route --mixes 50 --out quality.json
Quick look:
  bench/quality.py --mixes 5 --fabrics ft2 --failures 0
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

FABRICS = {
    # name: (generator spec, description)
    "ft2": ("ft2:20,18", "FT(2;20,18), 360 hosts"),
    # ibsim simulates at most 256 switches: 1024 hosts, 192 switches, 2:1 at the leaves.
    "pgft3": ("pgft:3;16,8,8;1,8,8;1,1,1", "PGFT(3;16,8,8;1,8,8;1,1,1), 1024 hosts"),
}
METRICS = ["effective_efi_max", "effective_efi_mean", "dark_fiber", "mean_job_efi_max",
           "mean_job_channels", "unused_channels", "routing_ms"]


def run(cmd, **kw):
    return subprocess.run(cmd, check=False, capture_output=True, text=True, **kw)


def switch_cables(sar_route, topo):
    r = run([sar_route, "info", "--json", "-t", topo])
    if r.returncode != 0:
        raise RuntimeError(r.stderr)
    return json.loads(r.stdout)["switch_channels"] // 2


def one_mix(args, fabric, pct, seed, workroot):
    spec = FABRICS[fabric][0]
    d = os.path.join(workroot, f"{fabric}-{pct}-{seed}")
    os.makedirs(d, exist_ok=True)
    topo = os.path.join(d, "fabric.topo")
    base = os.path.join(workroot, f"{fabric}.topo")
    fail = 0
    if pct > 0:
        fail = max(1, round(pct / 100.0 * switch_cables(args.sar_route, base)))
    gen = [args.sar_route, "gen", "-f", spec, "-o", topo]
    if fail:
        gen += ["--fail-links", str(fail), "--seed", str(seed)]
    r = run(gen)
    if r.returncode != 0:
        return {"error": "gen: " + r.stderr.strip()}
    jobs = os.path.join(d, "jobs.txt")
    r = run([args.sar_route, "jobmix", "-t", topo, "--seed", str(seed), "-o", jobs,
             "--min-size", str(args.min_size), "--max-size", str(args.max_size)])
    if r.returncode != 0:
        return {"error": "jobmix: " + r.stderr.strip()}
    cmd = [args.sar_route, "compare", "-t", topo, "-j", jobs, "--json", "--threads", "1",
           "--workdir", os.path.join(d, "opensm")]
    if args.engines:
        cmd += ["--engines", args.engines]
    if args.opensm:
        cmd += ["--opensm", args.opensm]
    r = run(cmd)
    if not args.keep:
        # A mix at 1024 hosts leaves ~0.7 GB of tables and logs: 100 mixes would fill a disk.
        shutil.rmtree(d, ignore_errors=True)
    if r.returncode not in (0, 1):
        return {"error": "compare: " + r.stderr.strip()}
    out = json.loads(r.stdout)
    out["failed_links"] = fail
    return out


def summarise(results, engines_order):
    table = {}
    for res in results:
        for row in res.get("engines", []):
            t = table.setdefault(row["engine"], {"ok": 0, "failed": 0, "invalid": 0,
                                                 **{m: [] for m in METRICS}})
            if not row["ok"]:
                t["failed"] += 1
                continue
            if not row["valid"]:
                t["invalid"] += 1
                continue
            t["ok"] += 1
            for m in METRICS:
                t[m].append(row[m])
    names = [e for e in engines_order if e in table] + [e for e in table if e not in engines_order]
    return {e: table[e] for e in names}


def mean(xs):
    return statistics.fmean(xs) if xs else float("nan")


def print_table(title, table):
    print(f"\n{title}")
    print(f"{'engine':16} {'ok':>4} {'fail':>4} {'effEFImax':>10} {'effEFImean':>10} "
          f"{'dark%':>6} {'jobEFImax':>9} {'jobChans':>8} {'unused':>6} {'route_ms(med)':>13}")
    for e, t in table.items():
        med = statistics.median(t["routing_ms"]) if t["routing_ms"] else float("nan")
        print(f"{e:16} {t['ok']:4d} {t['failed'] + t['invalid']:4d} "
              f"{mean(t['effective_efi_max']):10.2f} {mean(t['effective_efi_mean']):10.2f} "
              f"{100 * mean(t['dark_fiber']):6.1f} {mean(t['mean_job_efi_max']):9.2f} "
              f"{mean(t['mean_job_channels']):8.1f} {mean(t['unused_channels']):6.1f} {med:13.1f}")


def check_targets(fabric, pct, results, table):
    """The issue's targets for this configuration, as (text, met) pairs."""
    checks = []
    sar = table.get("sar")
    if not sar or not sar["effective_efi_max"]:
        return [("sar produced no valid routing", False)]
    dfsssp = table.get("opensm:dfsssp")
    if dfsssp and dfsssp["effective_efi_max"]:
        ratio = mean(sar["effective_efi_max"]) / mean(dfsssp["effective_efi_max"])
        checks.append((f"sar mean max effective EFI = {ratio:.2f} x opensm:dfsssp (target <= 0.70)",
                       ratio <= 0.70))
    if pct == 0 and "opensm:ftree" in table:
        worse = 0
        compared = 0
        for res in results:
            rows = {r["engine"]: r for r in res.get("engines", []) if r.get("ok")}
            if "sar" in rows and "opensm:ftree" in rows:
                compared += 1
                worse += rows["sar"]["effective_efi_max"] > rows["opensm:ftree"]["effective_efi_max"]
        checks.append((f"sar max effective EFI above opensm:ftree in {worse} of {compared} mixes "
                       "(target 0)", worse == 0 and compared > 0))
    for e, t in table.items():
        if e.startswith("opensm:") and t["dark_fiber"]:
            ok = mean(sar["dark_fiber"]) < mean(t["dark_fiber"])
            checks.append((f"sar dark fiber {100 * mean(sar['dark_fiber']):.1f}% vs {e} "
                           f"{100 * mean(t['dark_fiber']):.1f}% (target below)", ok))
    return checks


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--sar-route", default=os.path.join(here, "..", "build", "router", "sar-route"))
    ap.add_argument("--mixes", type=int, default=50)
    ap.add_argument("--fabrics", default="ft2,pgft3")
    ap.add_argument("--failures", default="0,1,3", help="percent of switch cables failed")
    ap.add_argument("--engines", default="sar,dfsssp,updn,minhop")
    ap.add_argument("--opensm", default="ftree,dfsssp,updn,minhop")
    ap.add_argument("--min-size", type=int, default=2)
    ap.add_argument("--max-size", type=int, default=128)
    ap.add_argument("--parallel", type=int, default=2, help="mixes run at once")
    ap.add_argument("--out", help="write all results as JSON")
    ap.add_argument("--keep", help="keep the work files here")
    args = ap.parse_args()
    if not os.access(args.sar_route, os.X_OK):
        ap.error(f"{args.sar_route} is not executable; build first or give --sar-route")

    workroot = args.keep or tempfile.mkdtemp(prefix="sar-quality-")
    os.makedirs(workroot, exist_ok=True)
    order = args.engines.split(",") + ["opensm:" + e for e in args.opensm.split(",") if e]
    all_out = {}
    all_met = True
    for fabric in args.fabrics.split(","):
        base = os.path.join(workroot, f"{fabric}.topo")
        r = run([args.sar_route, "gen", "-f", FABRICS[fabric][0], "-o", base])
        if r.returncode != 0:
            sys.exit(f"gen {fabric}: {r.stderr}")
        for pct in [float(x) for x in args.failures.split(",")]:
            t0 = time.time()
            results = []
            with concurrent.futures.ThreadPoolExecutor(max_workers=args.parallel) as pool:
                futs = [pool.submit(one_mix, args, fabric, pct, seed, workroot)
                        for seed in range(1, args.mixes + 1)]
                for i, f in enumerate(futs):
                    res = f.result()
                    if "error" in res:
                        print(f"  mix {i + 1}: {res['error']}", file=sys.stderr)
                    results.append(res)
                    print(f"  {fabric} {pct:g}% failed links: {i + 1}/{args.mixes} mixes",
                          file=sys.stderr, end="\r")
            print(file=sys.stderr)
            table = summarise(results, order)
            title = (f"{FABRICS[fabric][1]}, {pct:g}% failed switch cables, {args.mixes} mixes "
                     f"({time.time() - t0:.0f} s); means over mixes, routing time median")
            print_table(title, table)
            bounds = [r["effective_efi_lower_bound"] for r in results
                      if "effective_efi_lower_bound" in r]
            print(f"  lower bound of max effective EFI for any destination-based routing "
                  f"(sar-route compare), mean over mixes: {mean(bounds):.2f}")
            for text, met in check_targets(fabric, pct, results, table):
                print(f"  [{'met' if met else 'NOT met'}] {text}")
                all_met = all_met and met
            all_out[f"{fabric}/{pct:g}"] = {"results": results}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(all_out, f)
    if not args.keep:
        shutil.rmtree(workroot, ignore_errors=True)
    print(f"\nall targets {'met' if all_met else 'NOT all met'}; work files in {workroot}"
          if args.keep else f"\nall targets {'met' if all_met else 'NOT all met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
