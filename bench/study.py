#!/usr/bin/env python3
"""The fail-in-place study's regression table (docs/benchmarks.md) for FT(2;20,18) (360 hosts)
and a ~1000-host 3-level tree, PGFT(3;16,8,8;1,8,8;1,1,1) (1024 hosts, 2:1 at the leaves):
`sar-route study` with sar, dfsssp, minhop, updn, dmodc (and osrm2 / osrm3 where the fabric is
their m-port tree shape, with the LMC they need), growing seeded cable failures.

Prints per fabric and engine: routed draws, intercept / slope / R^2 of the all-to-all max-min
fair throughput, of the exchange throughput and of clustered traffic, in link bandwidths per
failed cable, and the wall time; --html DIR writes each fabric's report there.

  bench/study.py --sar-route build/router/sar-route [--links 0,2,4,8,16,32 --seeds 3]
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

FABRICS = [
    # name, gen spec, LMC, extra engine (its source groups need the LMC)
    ("FT(2;20,18)", "ft2:20,18", 2, "osrm2"),
    ("PGFT(3;16,8,8;1,8,8;1,1,1)", "pgft:3;16,8,8;1,8,8;1,1,1", 3, "osrm3"),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sar-route", default="build/router/sar-route")
    ap.add_argument("--engines", default="sar,dfsssp,minhop,updn,dmodc")
    ap.add_argument("--links", default="0,2,4,8,16,32")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--clusters", default="4,16")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--only", default="", help="run only fabrics whose name starts with this (FT, PGFT)")
    ap.add_argument("--html", default="", help="directory for the HTML reports")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="sar-study-") as tmp:
        for name, spec, lmc, extra in FABRICS:
            if a.only and not name.startswith(a.only):
                continue
            topo = os.path.join(tmp, "f.topo")
            subprocess.run([a.sar_route, "gen", "-f", spec, "--lmc", str(lmc), "-o", topo],
                           check=True, capture_output=True)
            cmd = [a.sar_route, "study", "-t", topo, "--engines", f"{a.engines},{extra}",
                   "--links", a.links, "--seeds", str(a.seeds), "--clusters", a.clusters,
                   "--threads", str(a.threads), "--json", "--progress", "off"]
            if a.html:
                os.makedirs(a.html, exist_ok=True)
                cmd += ["--html", os.path.join(a.html, spec.split(":")[0] + ".html")]
            t0 = time.monotonic()
            out = json.loads(subprocess.run(cmd, check=True, capture_output=True,
                                            text=True).stdout)
            wall = time.monotonic() - t0
            sizes = out["cluster_sizes"]
            print(f"\n{name}: {out['endpoints']} hosts, links {a.links}, {a.seeds} draws per "
                  f"step, {wall:.0f} s")
            head = f"{'engine':8s} {'routed':>7s} | {'all-to-all':>10s} {'slope':>7s} {'R2':>5s} |" \
                   f" {'exchange':>9s} {'slope':>7s} {'R2':>5s}"
            for s in sizes:
                head += f" | {'c' + str(s):>8s} {'slope':>7s} {'R2':>5s}"
            print(head)
            for i, e in enumerate(out["engines"]):
                drawn = sum(1 for p in out["points"] if "engines" in p)
                routed = sum(1 for p in out["points"] if "engines" in p and
                             p["engines"][i]["routed"])
                row = f"{e['engine']:8s} {routed:3d}/{drawn:<3d}"
                for fit in [e["alltoall"], e["exchange"]] + e["clustered"]:
                    row += f" | {fit['intercept']:9.2f} {fit['slope']:7.3f} {fit['r2']:5.2f}"
                print(row)
                if "intact_error" in e:
                    print(f"  {e['engine']}: {e['intact_error']}")


if __name__ == "__main__":
    main()
