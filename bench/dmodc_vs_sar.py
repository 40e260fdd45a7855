#!/usr/bin/env python3
"""sar-dmodc against SAR (SSSP) and plain dmodc on job mixes (issue 16).

For each fabric, failure rate and seed: `sar-route gen` (with that share of switch cables failed,
seeded), `sar-route jobmix` (a busy SLURM machine, same seed), then one `sar-route compare
--engines sar,sar-dmodc,dmodc --json` (our engines only, one thread each). Prints per engine the
mean over mixes of: max effective EFI (intra-job routes only, SAR paper Def. 7), dark fiber
(channels no intra-job route uses), all-pairs max EFI, the mean over multi-switch jobs of the
job's own max EFI, and the median routing time (the engine's wall time in compare).

  bench/dmodc_vs_sar.py --sar-route build/router/sar-route --mixes 20
  bench/dmodc_vs_sar.py --fabrics pgft10k --failures 1 --mixes 3
"""
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import tempfile

FABRICS = {
    "ft2": "ft2:20,18",                              # 360 hosts
    "pgft3": "pgft:3;16,8,8;1,8,8;1,1,1",            # 1024 hosts
    "pgft10k": "pgft:3;32,16,20;1,16,20;1,1,1",      # 10,240 hosts (the SAR timing)
}
METRICS = [("effective_efi_max", "effEFImax"), ("dark_fiber", "dark%"), ("efi_max", "EFImax"),
           ("mean_job_efi_max", "jobEFImax")]


def run(cmd):
    return subprocess.run(cmd, check=False, capture_output=True, text=True)


def one_mix(args, fabric, pct, seed, root):
    d = os.path.join(root, f"{fabric}-{pct}-{seed}")
    os.makedirs(d, exist_ok=True)
    topo, jobs = os.path.join(d, "fabric.topo"), os.path.join(d, "jobs.txt")
    gen = [args.sar_route, "gen", "-f", FABRICS[fabric], "-o", topo]
    if pct > 0:
        info = run([args.sar_route, "gen", "-f", FABRICS[fabric], "-o", topo])
        if info.returncode != 0:
            return {"error": info.stderr}
        cables = json.loads(run([args.sar_route, "info", "--json", "-t", topo]).stdout)[
            "switch_channels"] // 2
        gen += ["--fail-links", str(max(1, round(pct / 100 * cables))), "--seed", str(seed)]
    for cmd in (gen, [args.sar_route, "jobmix", "-t", topo, "--seed", str(seed), "-o", jobs]):
        r = run(cmd)
        if r.returncode != 0:
            return {"error": " ".join(cmd[:2]) + ": " + r.stderr.strip()}
    r = run([args.sar_route, "compare", "-t", topo, "-j", jobs, "--json", "--threads", "1",
             "--engines", args.engines, "--workdir", os.path.join(d, "cmp")])
    if r.returncode not in (0, 1):
        return {"error": "compare: " + r.stderr.strip()}
    return json.loads(r.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--sar-route", default=os.path.join(here, "..", "build", "router", "sar-route"))
    ap.add_argument("--mixes", type=int, default=10)
    ap.add_argument("--fabrics", default="ft2,pgft3")
    ap.add_argument("--failures", default="0,1,3", help="percent of switch cables failed")
    ap.add_argument("--engines", default="sar,sar-dmodc,dmodc")
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--out", help="write all results as JSON")
    args = ap.parse_args()
    engines = args.engines.split(",")
    everything = []
    with tempfile.TemporaryDirectory(prefix="dmodc-vs-sar-") as root:
        for fabric in args.fabrics.split(","):
            for pct in [float(x) for x in args.failures.split(",")]:
                with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
                    results = list(pool.map(lambda s: one_mix(args, fabric, pct, s, root),
                                            range(1, args.mixes + 1)))
                errors = [r["error"] for r in results if "error" in r]
                table = {e: {m: [] for m, _ in METRICS + [("routing_ms", "")]} for e in engines}
                bad = {e: 0 for e in engines}
                for res in results:
                    for row in res.get("engines", []):
                        if row["engine"] not in table:
                            continue
                        if not row.get("ok") or not row.get("valid"):
                            bad[row["engine"]] += 1
                            continue
                        for m in table[row["engine"]]:
                            table[row["engine"]][m].append(row[m])
                print(f"\n{fabric} ({FABRICS[fabric]}), {pct:g}% failed switch cables, "
                      f"{len(results) - len(errors)} mixes" +
                      (f", {len(errors)} errors: {errors[0]}" if errors else ""))
                print(f"{'engine':10} {'bad':>3} " + " ".join(f"{h:>9}" for _, h in METRICS) +
                      f" {'ms(med)':>9}")
                for e in engines:
                    t = table[e]
                    vals = []
                    for m, _ in METRICS:
                        v = statistics.fmean(t[m]) if t[m] else float("nan")
                        vals.append(100 * v if m == "dark_fiber" else v)
                    med = statistics.median(t["routing_ms"]) if t["routing_ms"] else float("nan")
                    print(f"{e:10} {bad[e]:3d} " + " ".join(f"{v:9.2f}" for v in vals) +
                          f" {med:9.1f}")
                everything.append({"fabric": fabric, "failed_pct": pct, "results": results})
                sys.stdout.flush()
    if args.out:
        with open(args.out, "w") as f:
            json.dump(everything, f)


if __name__ == "__main__":
    main()
