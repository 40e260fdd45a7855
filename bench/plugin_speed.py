#!/usr/bin/env python3
"""Routing pass time inside stock OpenSM: the sar plugin (libosmsar.so) against OpenSM's dfsssp.

For each fabric, in one run on one ibsim test bed: `--repeat` rounds of starting OpenSM with
`routing_engine sar` (plugin, job mix from `sar-route jobmix`) and with OpenSM's own `dfsssp`,
timing each first routing pass from OpenSM's log (`routing_time` in scripts/sar_testbed.py:
"building routing with '<engine>'" to "<engine> tables configured on all switches"; for sar this
includes OpenSM's min-hop matrices, which the plugin leaves to OpenSM, and the plugin's table
validation). The plugin's own split (engine / validation) comes from its log line. Medians are
printed with the ratio sar / dfsssp.

  bench/plugin_speed.py --sar-route build/router/sar-route --plugin-dir build/opensm-patch
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
import sar_testbed  # noqa: E402
from testbed_common import exit_on_signals  # noqa: E402

FABRICS = {
    "ft2": ("ft2:20,18", "FT(2;20,18), 360 hosts"),
    # ibsim simulates at most 2048 nodes and 256 switches: 1792 hosts on 192 switches.
    "pgft3-2k": ("pgft:3;28,8,8;1,8,8;1,2,2", "PGFT(3;28,8,8;1,8,8;1,2,2), 1792 hosts"),
}
PLUGIN_LINE = re.compile(r"osmsar: engine (\S+) routed .* in ([\d.]+) ms \(validated in ([\d.]+) ms\)")


def one_pass(tb, engine, conf, plugin_dir):
    extra = []
    env = {}
    if engine == "sar":
        extra = ["event_plugin_name osmsar", f"event_plugin_options {conf}"]
        env = {"LD_LIBRARY_PATH": plugin_dir}
    d = tb.start_opensm(engine, extra_conf=extra, env_extra=env, timeout=300)
    try:
        passes = d.routing_passes(engine)
        log = d.log_since(0)
    finally:
        d.stop()
    if not passes or passes[0][0] is None or passes[0][1] != engine:
        raise sar_testbed.TestbedError(f"{engine}: no timed routing pass: {passes}")
    m = PLUGIN_LINE.search(log)
    split = (float(m.group(2)), float(m.group(3))) if m else None
    return passes[0][0] * 1000.0, split


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sar-route", default=os.path.join(HERE, "..", "build", "router", "sar-route"))
    ap.add_argument("--plugin-dir", default=os.path.join(HERE, "..", "build", "opensm-patch"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--fabrics", default="ft2,pgft3-2k")
    ap.add_argument("--threads", type=int, default=0, help="plugin threads (0 = all cores)")
    args = ap.parse_args()
    exit_on_signals()
    plugin_dir = os.path.abspath(args.plugin_dir)
    print(f"{'fabric':40} {'engine':7} {'median ms':>10} {'min ms':>8} {'max ms':>8} "
          f"{'x dfsssp':>9} {'plugin route/check ms':>22}")
    with tempfile.TemporaryDirectory(prefix="sar-plugin-speed-") as d:
        for key in args.fabrics.split(","):
            spec, title = FABRICS[key]
            topo, lids = os.path.join(d, key + ".topo"), os.path.join(d, key + ".guid2lid")
            jobs, conf = os.path.join(d, key + ".jobs"), os.path.join(d, key + ".conf")
            subprocess.run([args.sar_route, "gen", "-f", spec, "-o", topo, "--guid2lid", lids],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            subprocess.run([args.sar_route, "jobmix", "-t", topo, "-o", jobs], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            with open(conf, "w") as f:
                f.write(f"engine sar\nmapping_file {jobs}\nthreads {args.threads}\n")
            times = {"dfsssp": [], "sar": []}
            splits = []
            with sar_testbed.Testbed(topo, os.path.join(d, key), guid2lid=lids) as tb:
                for _ in range(args.repeat):
                    for engine in ("dfsssp", "sar"):
                        ms, split = one_pass(tb, engine, conf, plugin_dir)
                        times[engine].append(ms)
                        if split:
                            splits.append(split)
            base = statistics.median(times["dfsssp"])
            for engine in ("dfsssp", "sar"):
                t = times[engine]
                med = statistics.median(t)
                extra = ""
                if engine == "sar" and splits:
                    extra = (f"{statistics.median(s[0] for s in splits):.1f} / "
                             f"{statistics.median(s[1] for s in splits):.1f}")
                print(f"{title:40} {engine:7} {med:10.1f} {min(t):8.1f} {max(t):8.1f} "
                      f"{med / base:9.2f} {extra:>22}", flush=True)


if __name__ == "__main__":
    main()
