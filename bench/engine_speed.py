#!/usr/bin/env python3
"""Routing time and memory: our DFSSSP and SAR against OpenSM's dfsssp, in the same run.

For each fabric, `--repeat` rounds of `sar-route compare --engines dfsssp,sar --opensm dfsssp`
on one job mix: our time is the engine's wall time (shortest paths + virtual layers, all cores),
OpenSM's is the routing pass from its own log timestamps on the ibsim test bed. Medians are
reported with the ratio ours / OpenSM (the issue's target: at most 0.5). Memory: the peak RSS of
one `sar-route route` process for each engine (fabric, tables and layers included) and OpenSM's
peak RSS on the test bed (whole daemon).

  bench/engine_speed.py --sar-route build/router/sar-route --repeat 5
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

FABRICS = {
    "ft2": ("ft2:20,18", "FT(2;20,18), 360 hosts"),
    # ibsim simulates at most 2048 nodes and 256 switches: 1792 hosts on 192 switches.
    "pgft3-2k": ("pgft:3;28,8,8;1,8,8;1,2,2", "PGFT(3;28,8,8;1,8,8;1,2,2), 1792 hosts"),
}


def peak_rss_kb(cmd):
    """Runs cmd; returns (exit code, peak RSS in kB of that process)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode()
    p.stderr.close()
    if p.returncode != 0:
        print(f"  {' '.join(cmd)} failed: {err.strip()}", file=sys.stderr)
    return p.returncode, usage.ru_maxrss


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--sar-route", default=os.path.join(here, "..", "build", "router", "sar-route"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--fabrics", default="ft2,pgft3-2k")
    ap.add_argument("--engines", default="dfsssp,sar")
    args = ap.parse_args()
    sr = args.sar_route
    engines = args.engines.split(",")
    with tempfile.TemporaryDirectory(prefix="sar-speed-") as d:
        print(f"{'fabric':28} {'engine':14} {'median ms':>10} {'min ms':>8} {'max ms':>8} "
              f"{'x opensm':>9} {'peak RSS MB':>11}")
        for key in args.fabrics.split(","):
            spec, title = FABRICS[key]
            topo = os.path.join(d, key + ".topo")
            jobs = os.path.join(d, key + ".jobs")
            subprocess.run([sr, "gen", "-f", spec, "-o", topo], check=True,
                           stderr=subprocess.DEVNULL)
            subprocess.run([sr, "jobmix", "-t", topo, "-o", jobs], check=True,
                           stderr=subprocess.DEVNULL)
            times = {e: [] for e in engines + ["opensm:dfsssp"]}
            rss = {}
            for i in range(args.repeat):
                work = os.path.join(d, f"{key}-{i}")
                r = subprocess.run([sr, "compare", "-t", topo, "-j", jobs, "--json",
                                    "--engines", ",".join(engines), "--opensm", "dfsssp",
                                    "--workdir", work], capture_output=True, text=True)
                if r.returncode not in (0, 1):
                    sys.exit(f"compare failed: {r.stderr}")
                for row in json.loads(r.stdout)["engines"]:
                    if row["ok"]:
                        times[row["engine"]].append(row["routing_ms"])
                    else:
                        print(f"  {row['engine']}: {row['error']}", file=sys.stderr)
                res = os.path.join(work, "opensm-dfsssp", "result.json")
                if os.path.exists(res):
                    with open(res) as f:
                        kb = json.load(f).get("opensm_maxrss_kb")
                    if kb:
                        rss["opensm:dfsssp"] = max(rss.get("opensm:dfsssp", 0), kb)
            for e in engines:
                rc, kb = peak_rss_kb([sr, "route", "--engine", e, "-t", topo, "--jobs", jobs,
                                      "-o", os.path.join(d, f"{key}-{e}.lfts")])
                if rc == 0:
                    rss[e] = kb
            osm = statistics.median(times["opensm:dfsssp"]) if times["opensm:dfsssp"] else None
            for e, ts in times.items():
                if not ts:
                    print(f"{title:28} {e:14} {'failed':>10}")
                    continue
                med = statistics.median(ts)
                ratio = f"{med / osm:9.2f}" if osm and not e.startswith("opensm") else " " * 9
                mem = f"{rss[e] / 1024:11.1f}" if e in rss else " " * 11
                print(f"{title:28} {e:14} {med:10.1f} {min(ts):8.1f} {max(ts):8.1f} {ratio} {mem}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
