#!/usr/bin/env python3
"""Route a generated fat-tree with the real OpenSM on ibsim and judge what lands in the switches.

For each OpenSM engine: start ibsim + OpenSM (scripts/sar_testbed.py), read the LFTs back from
the simulated switches with dump_fts, and evaluate them with `sar-route eval` against a job mix
placed the way a busy SLURM fragments a machine. Prints one table; leaves nothing running.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sar_testbed  # noqa: E402


def write_job_mix(topology_info, path, seed):
    """Jobs of 2..64 hosts, placed best-fit across leaves with holes, as SLURM does on a busy day."""
    hosts = topology_info["hcas"]
    rng = random.Random(seed)
    free = list(range(hosts))
    lines = ["# hostname jobid (demo mix, seed %d)" % seed]
    job = 1000
    while len(free) > hosts // 5:
        size = min(rng.choice([2, 4, 8, 12, 16, 24, 32, 48, 64]), len(free))
        start = rng.randrange(0, len(free) - size + 1)
        members = free[start:start + size]
        del free[start:start + size]
        # leave a hole now and then, like finished jobs do
        if free and rng.random() < 0.3:
            free.pop(rng.randrange(len(free)))
        job += 1
        lines += ["h%05d %d" % (h, job) for h in members]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return job - 1000


def run(cmd, **kw):
    return subprocess.run(cmd, check=False, text=True, capture_output=True, **kw)


def scenario(args, out, fail_links):
    """Generates one fabric, routes it with every engine, prints the table."""
    os.makedirs(out, exist_ok=True)
    topo = os.path.join(out, "fabric.topo")
    g2l = os.path.join(out, "guid2lid")
    jobs = os.path.join(out, "jobs.map")

    r = run([args.sar_route, "gen", "--fabric", args.fabric, "-o", topo, "--guid2lid", g2l,
             "--fail-links", str(fail_links), "--seed", str(args.seed)])
    if r.returncode != 0:
        sys.exit("sar-route gen failed:\n" + r.stderr)
    info = json.loads(run([args.sar_route, "info", "--topology", topo, "--lids", g2l, "--json"]).stdout)
    njobs = write_job_mix(info, jobs, args.seed)
    print("fabric %s%s: %d switches, %d HCAs, %d cables; %d jobs in %s"
          % (args.fabric, " with %d failed links" % fail_links if fail_links else "",
             info["switches"], info["hcas"], info["cables"], njobs, jobs))
    print("routing with the real OpenSM on ibsim, reading tables back from the switches ...\n")

    rows = []
    with sar_testbed.Testbed(topo, os.path.join(out, "testbed"), guid2lid=g2l) as bed:
        for engine in args.engines.split(","):
            try:
                res = bed.route(engine)
            except sar_testbed.TestbedError as e:
                print("%-8s skipped: %s" % (engine, str(e).splitlines()[0]))
                continue
            ev = run([args.sar_route, "eval", "--topology", topo, "--lids", g2l,
                      "--lfts", res.switches_lfts, "--jobs", jobs, "--json"])
            if ev.returncode not in (0, 1):
                print("%-8s eval failed: %s" % (engine, ev.stderr.strip()))
                continue
            m = json.loads(ev.stdout)
            per_job = [j["efi_max"] for j in m["jobs"] if j["leaf_switches"] >= 2]
            ms = res.routing_time_s * 1000 if res.routing_time_s is not None else None
            rows.append((engine, m, ms, per_job))

    hdr = ("engine", "valid", "min-hop", "EFI max", "eff.EFI max", "eff.EFI mean", "dark fiber",
           "job EFI max (mean)", "OpenSM ms")
    print("%-8s %6s %8s %8s %12s %13s %11s %19s %10s" % hdr)
    for engine, m, ms, per_job in rows:
        print("%-8s %6s %8s %8d %12d %13.2f %10.1f%% %19.1f %10s" % (
            engine, "yes" if m["valid"] else "NO", "yes" if m["non_min_hop"] == 0 else "no",
            m["efi"]["max"], m["effective_efi"]["max"], m["effective_efi"]["mean"],
            100 * m["dark_fiber"], sum(per_job) / len(per_job) if per_job else 0.0,
            "%.1f" % ms if ms is not None else "-"))
    return bool(rows) and all(m["valid"] for _, m, _, _ in rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sar-route", required=True, help="path to the sar-route binary")
    ap.add_argument("--fabric", default="ft2:20,18", help="generator spec (default ft2:20,18, 360 hosts)")
    ap.add_argument("--engines", default="ftree,updn,minhop,dfsssp", help="OpenSM engines to run")
    ap.add_argument("--seed", type=int, default=7, help="seed of the job mix and of failures")
    ap.add_argument("--fail-links", default="0,6",
                    help="one run per value: cut N random switch-to-switch cables (default 0,6: "
                         "the intact fabric, then a degraded one)")
    ap.add_argument("--out", help="keep all files here (default: a temp dir, removed)")
    args = ap.parse_args()

    keep = args.out is not None
    root = args.out or tempfile.mkdtemp(prefix="sar-demo-")
    ok = True
    for n in [int(x) for x in args.fail_links.split(",")]:
        ok &= scenario(args, os.path.join(root, "fail%d" % n), n)
        print()
    print("EFI: routes per switch-to-switch channel (all HCA pairs); effective EFI: only pairs in")
    print("one job; dark fiber: channels no intra-job route uses. Files: %s"
          % (root if keep else "(removed)"))
    if not keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
