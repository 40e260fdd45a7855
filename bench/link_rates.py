#!/usr/bin/env python3
"""One cable trained down to 4xDDR among 4xEDR (issue 20 item 3): loads per unit of capacity.

On the issue's production fabric (pgft:2;24,4;1,2;1,6: 4 leaves of 24 hosts, 2 spines, 6 cables
per leaf-spine pair), all 4xEDR but the first leaf's first uplink cable (4xDDR, both ends), for
each job mix: `compare --opensm dfsssp` (real OpenSM dfsssp on ibsim, our sar and dfsssp), our
sar and dfsssp routing the all-4xEDR fabric (capacity-blind) judged on the real rates, and the
routes (all pairs) on the slow cable against its share by rate (the routes of its alternatives, the leaf's
12 uplinks or the 12 downlinks into it, shared out by capacity).

  bench/link_rates.py --sar-route build/router/sar-route [--seeds 4,6]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "scripts"))
from fabric_edit import slow_first_uplink  # noqa: E402
RATE = {"4xEDR": 100000, "4xDDR": 16000}


def run(cmd):
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {res.returncode}\n{res.stderr}")
    return res.stdout


def fabrics(sr, w):
    full = os.path.join(w, "full.topo")
    run([sr, "gen", "--fabric", "pgft:2;24,4;1,2;1,6", "--style", "ibnetdiscover", "-o", full])
    text = open(full).read().replace("4xHDR", "4xEDR")
    open(full, "w").write(text)
    slow, (leaf, _, _, _) = slow_first_uplink(text)
    topo = os.path.join(w, "slow.topo")
    open(topo, "w").write(slow)
    return full, topo, leaf


def evaluate(sr, topo, lids, lfts, jobs):
    return json.loads(run([sr, "eval", "-t", topo, "--lids", lids, "--lfts", lfts, "--jobs", jobs,
                           "--json", "--per-channel"]))


def slow_share(ev, leaf):
    """(routes, share by rate) on the slow cable, uplink and downlink."""
    out = []
    for up in (True, False):
        group = [c for c in ev["per_channel"] if (c["from"] if up else c["to"]) == leaf
                 and c["to"].startswith("S-") and c["from"].startswith("S-")]
        slow = [c for c in group if c["rate"] == "4xDDR"]
        routes = sum(c["efi"] for c in group)
        cap = sum(RATE[c["rate"]] for c in group)
        out.append((slow[0]["efi"], routes * RATE["4xDDR"] / cap))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sar-route", default=os.path.join(REPO, "build", "router", "sar-route"))
    ap.add_argument("--seeds", default="4,6", help="jobmix seeds")
    args = ap.parse_args()
    sr = args.sar_route
    with tempfile.TemporaryDirectory() as w:
        full, topo, leaf = fabrics(sr, w)
        print("| jobs | engine | max EFI / cap | max eff. EFI / cap | slow cable up (share) "
              "| down (share) |")
        print("|---|---|---|---|---|---|")
        for seed in [int(s) for s in args.seeds.split(",")]:
            jobs = os.path.join(w, f"jobs{seed}.map")
            run([sr, "jobmix", "--topology", topo, "--seed", str(seed), "--min-size", "8",
                 "--max-size", "48", "-o", jobs])
            cmp_dir = os.path.join(w, f"compare{seed}")
            cmd = [sr, "compare", "-t", topo, "--engines", "sar,dfsssp", "--opensm", "dfsssp",
                   "--workdir", cmp_dir, "--testbed-script",
                   os.path.join(REPO, "scripts", "sar_testbed.py"), "--json", "--jobs", jobs]
            json.loads(run(cmd))
            lids = os.path.join(cmp_dir, "guid2lid")
            rows = [("opensm dfsssp", os.path.join(cmp_dir, "opensm-dfsssp", "switches.lfts"))]
            for engine in ("sar", "dfsssp"):
                for blind in (False, True):
                    lfts = os.path.join(w, f"{engine}{seed}{blind}.lfts")
                    cmd = [sr, "route", "-t", full if blind else topo, "--lids", lids,
                           "--engine", engine, "--jobs", jobs, "-o", lfts]
                    run(cmd)
                    rows.append((engine + (" capacity-blind" if blind else ""), lfts))
            for name, lfts in rows:
                ev = evaluate(sr, topo, lids, lfts, jobs)
                (u, us), (d, ds) = slow_share(ev, leaf)
                print(f"| seed {seed} | {name} "
                      f"| {ev['efi_per_capacity']['max']:.1f} "
                      f"| {ev['effective_efi_per_capacity']['max']:.1f} "
                      f"| {u} ({us:.1f}) | {d} ({ds:.1f}) |", flush=True)


if __name__ == "__main__":
    main()
