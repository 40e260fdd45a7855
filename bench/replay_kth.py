#!/usr/bin/env python3
"""`sar-route replay` of the KTH SP2 log (Parallel Workloads Archive, 28,476 jobs of a 100-node
IBM SP2, 1996-97) on FT(2;20,18) (360 hosts, 18 leaves, 20 spines): job sizes scaled by 3.6 and
placed by the tree best-fit allocator, rerouted at every change of the multi-leaf job set.

Engines: every engine `sar-route route --engine list` names among sar, dfsssp, dmodk, minhop, updn
(or --engines). Prints the per-engine table of docs/benchmarks.md (mean and p95 of the max
effective EFI and of dark fiber over the events, reroute time) and the wall time.

  bench/replay_kth.py --sar-route build/router/sar-route [--from-days 30 --days 30]
      [--fail-links 4 --seed 1]
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import tempfile
import time

DEFAULT_SWF = "/work/shared/data/KTH-SP2-1996-2.1-cln.swf.gz"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sar-route", default="build/router/sar-route")
    ap.add_argument("--swf", default=DEFAULT_SWF, help="the KTH SP2 log (.swf or .swf.gz)")
    ap.add_argument("--fabric", default="ft2:20,18")
    ap.add_argument("--fail-links", type=int, default=0, help="cut N random cables (gen --fail-links)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the failures")
    ap.add_argument("--from-days", type=float, default=30)
    ap.add_argument("--days", type=float, default=30)
    ap.add_argument("--engines", default="", help="comma list (default: what the binary has)")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--html", default="", help="also write the report here")
    a = ap.parse_args()

    known = subprocess.run([a.sar_route, "route", "--engine", "list"], check=True,
                           capture_output=True, text=True).stdout.split()
    engines = a.engines.split(",") if a.engines else [
        e for e in ["sar", "dfsssp", "dmodk", "minhop", "updn"] if e in known]
    work = tempfile.mkdtemp(prefix="sar-replay-bench-")
    try:
        topo = os.path.join(work, "fabric.topo")
        gen = [a.sar_route, "gen", "-f", a.fabric, "-o", topo]
        if a.fail_links:
            gen += ["--fail-links", str(a.fail_links), "--seed", str(a.seed)]
        subprocess.run(gen, check=True, capture_output=True)
        swf = os.path.join(work, "history.swf")
        opener = gzip.open if a.swf.endswith(".gz") else open
        with opener(a.swf, "rb") as src, open(swf, "wb") as dst:
            shutil.copyfileobj(src, dst)
        cmd = [a.sar_route, "replay", "-t", topo, "--swf", swf, "-e", ",".join(engines),
               "--from-days", str(a.from_days), "--days", str(a.days), "--json",
               "--threads", str(a.threads), "--progress", "off"]
        if a.html:
            cmd += ["--html", a.html]
        start = time.monotonic()
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        wall = time.monotonic() - start
    finally:
        shutil.rmtree(work, ignore_errors=True)
    r = json.loads(out)
    failed = f" with {a.fail_links} failed cables (seed {a.seed})" if a.fail_links else ""
    print(f"{a.fabric}{failed}, days {a.from_days:g}-{a.from_days + a.days:g} of the log: "
          f"{r['events']} events, {r['multi_leaf_jobs']} multi-leaf jobs placed of {r['placed']} "
          f"({r['not_placed']} not placed), wall {wall:.1f} s")
    print("| engine | max eff. EFI mean | p95 | max | mean without the reroutes | dark fiber mean "
          "| p95 | worst job EFI mean | all-pairs EFI max | reroutes | reroute ms mean | p95 "
          "| LFT entries changed mean |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for e in r["engines"]:
        print(f"| {e['engine']} | {e['effective_efi_max_mean']:.2f} | {e['effective_efi_max_p95']:.0f} "
              f"| {e['effective_efi_max_max']} | {e['effective_efi_max_mean_without_reroute']:.2f} "
              f"| {100 * e['dark_fiber_mean']:.1f}% "
              f"| {100 * e['dark_fiber_p95']:.1f}% | {e['worst_job_efi_mean']:.2f} | {e['efi_max']} "
              f"| {e['reroutes']} | {e['reroute_ms_mean']:.1f} | {e['reroute_ms_p95']:.1f} "
              f"| {e['lft_changed_mean']:.0f} |")


if __name__ == "__main__":
    main()
