#!/usr/bin/env python3
"""Route a generated fat-tree with sar and with the real OpenSM on ibsim; judge what lands in the switches.

For each of our engines (`sar-route route`, default sar and dfsssp): compute the tables for a job
mix placed the way a busy SLURM fragments a machine (`sar-route jobmix`), load them into stock
OpenSM through its `file` routing engine, and read them back from the simulated switches. For each
OpenSM engine: let OpenSM route and read its tables back the same way. Every set of tables is then
judged by `sar-route eval` (validity, deadlock freedom with our virtual layers, EFI, effective
EFI, dark fiber, per-job EFI). Prints one table per fabric; leaves nothing running.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sar_testbed  # noqa: E402


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
    r = run([args.sar_route, "jobmix", "--topology", topo, "--lids", g2l, "--seed", str(args.seed),
             "-o", jobs])
    if r.returncode != 0:
        sys.exit("sar-route jobmix failed:\n" + r.stderr)
    with open(jobs) as f:
        njobs = len({line.split()[1] for line in f if line.strip() and not line.startswith("#")})
    print("fabric %s%s: %d switches, %d HCAs, %d cables; %d jobs in %s"
          % (args.fabric, " with %d failed links" % fail_links if fail_links else "",
             info["switches"], info["hcas"], info["cables"], njobs, jobs))
    print("routing with sar and with the real OpenSM on ibsim, reading tables back from the "
          "switches ...\n")

    rows = []
    with sar_testbed.Testbed(topo, os.path.join(out, "testbed"), guid2lid=g2l) as bed:
        runs = [("sar:" + e, e) for e in args.ours.split(",") if e]
        runs += [("opensm:" + e, None) for e in args.engines.split(",") if e]
        for label, ours in runs:
            layers = None
            ms = None
            try:
                if ours:
                    lfts = os.path.join(out, ours + ".lfts")
                    layers = os.path.join(out, ours + ".layers")
                    r = run([args.sar_route, "route", "--engine", ours, "--topology", topo,
                             "--lids", g2l, "--jobs", jobs, "-o", lfts, "--sl-out", layers,
                             "--json"])
                    if r.returncode != 0:
                        print("%-14s failed: %s" % (label, r.stderr.strip()))
                        continue
                    ms = json.loads(r.stdout)["timing_ms"]["route_ms"]
                    res = bed.route("file", lfts_file=lfts)
                else:
                    res = bed.route(label.split(":", 1)[1])
                    ms = res.routing_time_s * 1000 if res.routing_time_s is not None else None
            except sar_testbed.TestbedError as e:
                print("%-14s skipped: %s" % (label, str(e).splitlines()[0]))
                continue
            cmd = [args.sar_route, "eval", "--topology", topo, "--lids", g2l,
                   "--lfts", res.switches_lfts, "--jobs", jobs, "--json"]
            if layers:
                cmd += ["--layers", layers]
            ev = run(cmd)
            if ev.returncode not in (0, 1):
                print("%-14s eval failed: %s" % (label, ev.stderr.strip()))
                continue
            m = json.loads(ev.stdout)
            per_job = [j["efi_max"] for j in m["jobs"] if j["leaf_switches"] >= 2]
            rows.append((label, m, ms, per_job))

    hdr = ("engine", "valid", "min-hop", "EFI max", "eff.EFI max", "eff.EFI mean", "dark fiber",
           "job EFI max (mean)", "route ms")
    print("%-14s %6s %8s %8s %12s %13s %11s %19s %10s" % hdr)
    for engine, m, ms, per_job in rows:
        valid = m["valid"] and m["deadlock_free"] is not False
        print("%-14s %6s %8s %8d %12d %13.2f %10.1f%% %19.1f %10s" % (
            engine, "yes" if valid else "NO", "yes" if m["non_min_hop"] == 0 else "no",
            m["efi"]["max"], m["effective_efi"]["max"], m["effective_efi"]["mean"],
            100 * m["dark_fiber"], sum(per_job) / len(per_job) if per_job else 0.0,
            "%.1f" % ms if ms is not None else "-"))
    return bool(rows) and all(m["valid"] and m["deadlock_free"] is not False
                              for _, m, _, _ in rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sar-route", required=True, help="path to the sar-route binary")
    ap.add_argument("--fabric", default="ft2:20,18", help="generator spec (default ft2:20,18, 360 hosts)")
    ap.add_argument("--ours", default="sar,dfsssp",
                    help="our engines: tables from sar-route route, loaded through OpenSM's file engine")
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
    print("sar:X = our engine X's tables, loaded by OpenSM's file engine and read back from the")
    print("switches (valid includes deadlock freedom with its virtual layers); opensm:X = OpenSM's")
    print("engine X. EFI: routes per switch-to-switch channel (all HCA pairs); effective EFI: only")
    print("pairs in one job; dark fiber: channels no intra-job route uses. route ms: ours from")
    print("sar-route, OpenSM's from its log. Files: %s" % (root if keep else "(removed)"))
    if not keep:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
