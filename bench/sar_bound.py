#!/usr/bin/env python3
"""SAR against the lower bound of max effective EFI, and the price the rest of the traffic pays.

For each case (fabric, share of failed switch-to-switch cables) and each of `--mixes` seeds: the
fabric (failures seeded), a fragmented job mix (`sar-route jobmix --run-length`: jobs in runs of
a few hosts per leaf on random leaves), then offline routing with our own engines only
(`sar-route compare --json`, canonical node order as the plugin uses it): SAR with its
refinement (the default), SAR without it (`--no-sar-refine`, the engine before the refinement),
and DFSSSP. Printed per case: the mean lower bound (sar/analysis/lower_bound.h), SAR's mean max effective
EFI before and after, the mean gap after (value / bound - 1), the mean all-pairs max EFI ratio
SAR / DFSSSP, and SAR's median routing time.

Goals (issue 18): mean gap <= 5%; all-pairs ratio <= 1.25.

Example (the numbers in docs/benchmarks.md):
  bench/sar_bound.py --sar-route build/router/sar-route --mixes 50
Quick look:
  bench/sar_bound.py --mixes 5 --cases ft2
Trade-off curve of the all-pairs budget:
  bench/sar_bound.py --mixes 10 --cases ft2 --budgets 0,1.5,1.25,1.1,1.0
Order robustness (issue 20 item 5): SAR's max effective EFI over the topology file's node blocks
shuffled K times (`compare --file-order`), spread = max - min per mix, before and after:
  bench/sar_bound.py --mixes 10 --cases ft2 --order-spread 5
"""
import random
import argparse
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import tempfile

CASES = {
    # name: (generator spec, failed share of switch cables in %)
    "ft2": ("ft2:20,18", 0),
    "ft2-1%": ("ft2:20,18", 1),
    "ft2-3%": ("ft2:20,18", 3),
    "pgft3": ("pgft:3;16,8,8;1,8,8;1,1,1", 0),
}


def run(cmd):
    return subprocess.run(cmd, check=False, capture_output=True, text=True)


def compare(args, topo, jobs, engines, extra):
    r = run([args.sar_route, "compare", "-t", topo, "-j", jobs, "--json", "--threads", "1",
             "--engines", engines] + extra)
    if r.returncode not in (0, 1):
        raise RuntimeError("compare: " + r.stderr.strip())
    out = json.loads(r.stdout)
    rows = {e["engine"]: e for e in out["engines"]}
    for e in rows.values():
        if not e.get("ok") or not e.get("valid"):
            raise RuntimeError(f"{e['engine']}: {e.get('error') or e.get('invalid')}")
    return out, rows


def one_mix(args, case, seed, workroot, budget):
    spec, pct = CASES[case]
    d = os.path.join(workroot, f"{case}-{seed}-{budget}")
    os.makedirs(d, exist_ok=True)
    topo = os.path.join(d, "fabric.topo")
    gen = [args.sar_route, "gen", "-f", spec, "-o", topo]
    if pct:
        r = run([args.sar_route, "info", "--json", "-t", os.path.join(workroot, case + ".topo")])
        cables = json.loads(r.stdout)["switch_channels"] // 2
        gen += ["--fail-links", str(max(1, round(pct / 100.0 * cables))), "--seed", str(seed)]
    r = run(gen)
    if r.returncode != 0:
        raise RuntimeError("gen: " + r.stderr.strip())
    jobs = os.path.join(d, "jobs.txt")
    r = run([args.sar_route, "jobmix", "-t", topo, "--seed", str(seed), "-o", jobs,
             "--run-length", str(args.run_length), "--max-size", str(args.max_size)])
    if r.returncode != 0:
        raise RuntimeError("jobmix: " + r.stderr.strip())
    knob = [] if budget is None else ["--sar-all-pairs-budget", str(budget)]
    after, rows = compare(args, topo, jobs, "sar,dfsssp", knob)
    _, before = compare(args, topo, jobs, "sar", ["--no-sar-refine"])
    return {
        "bound": after["effective_efi_lower_bound"],
        "before": before["sar"]["effective_efi_max"],
        "after": rows["sar"]["effective_efi_max"],
        "dfsssp_eff": rows["dfsssp"]["effective_efi_max"],
        "all_ratio": rows["sar"]["efi_max"] / rows["dfsssp"]["efi_max"],
        "all_ratio_before": before["sar"]["efi_max"] / rows["dfsssp"]["efi_max"],
        "ms": rows["sar"]["routing_ms"],
        "ms_before": before["sar"]["routing_ms"],
    }


def shuffled_topology(src, dst, seed):
    """The same fabric (LIDs included: they are in the file) with its node blocks reordered."""
    with open(src) as f:
        blocks = f.read().split("\n\n")
    head, nodes = blocks[0], [b for b in blocks[1:] if b.strip()]
    random.Random(seed).shuffle(nodes)
    with open(dst, "w") as f:
        f.write("\n\n".join([head] + nodes) + "\n")


def order_spread(args, case, seed, workroot):
    spec, pct = CASES[case]
    d = os.path.join(workroot, f"order-{case}-{seed}")
    os.makedirs(d, exist_ok=True)
    topo = os.path.join(d, "fabric.topo")
    # ibnetdiscover style: every node's GUID is in the file, so a shuffled file is the same
    # subnet (same GUIDs, LIDs, cables) in another order.
    gen = [args.sar_route, "gen", "-f", spec, "--style", "ibnetdiscover", "-o", topo]
    if pct:
        r = run([args.sar_route, "info", "--json", "-t", os.path.join(workroot, case + ".topo")])
        cables = json.loads(r.stdout)["switch_channels"] // 2
        gen += ["--fail-links", str(max(1, round(pct / 100.0 * cables))), "--seed", str(seed)]
    if run(gen).returncode != 0:
        raise RuntimeError("gen failed")
    jobs = os.path.join(d, "jobs.txt")
    run([args.sar_route, "jobmix", "-t", topo, "--seed", str(seed), "-o", jobs,
         "--run-length", str(args.run_length), "--max-size", str(args.max_size)])
    before, after = [], []
    for k in range(args.order_spread + 1):
        t = topo
        if k > 0:
            t = os.path.join(d, f"order{k}.topo")
            shuffled_topology(topo, t, seed * 1000 + k)
        _, rows = compare(args, t, jobs, "sar", ["--file-order"])
        after.append(rows["sar"]["effective_efi_max"])
        _, rows = compare(args, t, jobs, "sar", ["--file-order", "--no-sar-refine"])
        before.append(rows["sar"]["effective_efi_max"])
    return {"before": max(before) - min(before), "after": max(after) - min(after),
            "before_max": max(before), "after_max": max(after)}


def main_order(a):
    print(f"{'case':8} {'mixes':>5} {'orders':>6} {'spread before':>13} {'spread after':>12} "
          f"{'worst before':>12} {'worst after':>11}")
    with tempfile.TemporaryDirectory(prefix="sar-order-") as work:
        for case in a.cases.split(","):
            run([a.sar_route, "gen", "-f", CASES[case][0], "-o",
                 os.path.join(work, case + ".topo")])
            with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
                res = list(ex.map(lambda s: order_spread(a, case, s, work),
                                  range(1, a.mixes + 1)))
            m = lambda k: statistics.fmean(x[k] for x in res)
            print(f"{case:8} {len(res):5d} {a.order_spread + 1:6d} {m('before'):13.2f} "
                  f"{m('after'):12.2f} {m('before_max'):12.2f} {m('after_max'):11.2f}",
                  flush=True)
    print("\nspread: mean over mixes of (max - min) of SAR's max effective EFI over the node "
          "orders;\nworst: mean over mixes of the worst order's value; before/after: without/with "
          "the refinement.")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sar-route", default="build/router/sar-route")
    p.add_argument("--mixes", type=int, default=50)
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--run-length", type=int, default=3, help="hosts per leaf per run")
    p.add_argument("--max-size", type=int, default=64)
    p.add_argument("--budgets", default="",
                   help="comma list of --sar-all-pairs-budget values (default: the engine's)")
    p.add_argument("--jobs", type=int, default=2, help="mixes in parallel")
    p.add_argument("--json", help="write every mix's numbers here")
    p.add_argument("--order-spread", type=int, default=0,
                   help="K > 0: measure SAR's spread over K shuffled node orders instead")
    a = p.parse_args()
    if a.order_spread > 0:
        return main_order(a)
    budgets = [None] if not a.budgets else [float(b) for b in a.budgets.split(",")]
    results = {}
    print(f"{'case':8} {'budget':>6} {'mixes':>5} {'bound':>7} {'before':>7} {'after':>7} "
          f"{'gap%':>6} {'maxgap%':>7} {'dfsssp':>7} {'all/dfs':>7} {'before':>7} "
          f"{'ms':>7} {'ms_bef':>7}")
    with tempfile.TemporaryDirectory(prefix="sar-bound-") as work:
        for case in a.cases.split(","):
            spec = CASES[case][0]
            r = run([a.sar_route, "gen", "-f", spec, "-o", os.path.join(work, case + ".topo")])
            if r.returncode != 0:
                sys.exit(r.stderr)
            for budget in budgets:
                with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
                    mixes = list(ex.map(lambda s: one_mix(a, case, s, work, budget),
                                        range(1, a.mixes + 1)))
                results[f"{case}/{budget}"] = mixes
                m = lambda k: statistics.fmean(x[k] for x in mixes)
                gaps = [x["after"] / x["bound"] - 1 for x in mixes if x["bound"] > 0]
                med = lambda k: statistics.median(x[k] for x in mixes)
                print(f"{case:8} {'dflt' if budget is None else budget:>6} {len(mixes):5d} "
                      f"{m('bound'):7.2f} {m('before'):7.2f} {m('after'):7.2f} "
                      f"{100 * statistics.fmean(gaps):6.1f} {100 * max(gaps):7.1f} "
                      f"{m('dfsssp_eff'):7.2f} {m('all_ratio'):7.3f} {m('all_ratio_before'):7.3f} "
                      f"{med('ms'):7.1f} {med('ms_before'):7.1f}", flush=True)
    print("\nbound: mean lower bound of max effective EFI; before/after: SAR's mean max effective "
          "EFI\nwithout/with the refinement; gap%: mean of after/bound-1 (maxgap% the worst mix); "
          "dfsssp: its\nmean max effective EFI; all/dfs: mean all-pairs max EFI SAR/DFSSSP (after, "
          "then before);\nms: SAR's median routing time with/without the refinement.")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
