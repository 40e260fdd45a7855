#!/usr/bin/env python3
"""sar-filterd on the SLURM test bed: how long the scheduler call takes per source (libslurm,
squeue --json, slurmrestd) with many running jobs, and the idle daemon's memory.

    bench/filterd_slurm_bench.py --sar-filterd build/filterd/sar-filterd --workdir /tmp/fb
        [--nodes 256 --per-leaf 16 --jobs 250 --repeat 5]

The poll time is what sar-filterd itself logs per cycle ("poll X ms"), measured around the
source call inside the process, so process start-up is not in it. Figures: docs/filterd.md.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "scripts"))
from filterd_process import write_config  # noqa: E402
from slurm_testbed import SlurmTestbed  # noqa: E402
from testbed_common import exit_on_signals  # noqa: E402

CYCLE = re.compile(r"cycle: (\d+) running, (\d+) multi-switch.*\(poll ([\d.]+) ms, cycle ([\d.]+) ms\)")


def vm_rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def idle_rss(binary, cfg, env, settle=2.0):
    p = subprocess.Popen([binary, "--config", cfg], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        time.sleep(settle)
        return vm_rss_kb(p.pid)
    finally:
        p.terminate()
        p.wait(timeout=10)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sar-filterd", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--nodes", type=int, default=256)
    ap.add_argument("--per-leaf", type=int, default=16)
    ap.add_argument("--jobs", type=int, default=250)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    exit_on_signals()
    os.makedirs(a.workdir, exist_ok=True)
    results = {}
    with SlurmTestbed(os.path.join(a.workdir, "slurm"), a.nodes, a.per_leaf) as sb:
        sock = sb.start_slurmrestd()
        # Mostly one-node jobs plus a few that span two leaves.
        multi = 4
        for k in range(multi):
            first = k * a.per_leaf + a.per_leaf // 2 + 1
            sb.sbatch(nodelist=f"n[{first:03d}-{first + a.per_leaf - 1:03d}]")
        for _ in range(a.jobs - multi):
            sb.sbatch(nodes=1)
        deadline = time.monotonic() + 120
        while True:
            out = subprocess.run(["squeue", "-h", "-t", "R", "-o", "%i"], env=sb.env(),
                                 capture_output=True, text=True).stdout.split()
            if len(out) >= a.jobs or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        running = len(out)
        for source, extra in (("slurm", {}), ("squeue", {}),
                              ("slurmrestd", {"slurmrestd_socket": sock})):
            cfg = os.path.join(a.workdir, f"{source}.yaml")
            write_config(cfg, {"source": source, "slurm_conf": sb.conf,
                               "topology_conf": sb.topology_conf, "trigger": "none",
                               "mapping_file": os.path.join(a.workdir, f"{source}.map"),
                               "state_dir": os.path.join(a.workdir, f"state-{source}"),
                               "poll_interval_s": 3600, **extra})
            polls, cycles = [], []
            for _ in range(a.repeat):
                p = subprocess.run([a.sar_filterd, "--config", cfg, "--once"], env=sb.env(),
                                   capture_output=True, text=True, timeout=60)
                m = CYCLE.search(p.stderr)
                if not m:
                    print(f"{source}: no cycle line:\n{p.stderr[-1500:]}", file=sys.stderr)
                    break
                polls.append(float(m.group(3)))
                cycles.append(float(m.group(4)))
            if polls:
                results[source] = {"running_jobs": int(m.group(1)),
                                   "multi_switch_jobs": int(m.group(2)),
                                   "poll_ms_median": statistics.median(polls),
                                   "cycle_ms_median": statistics.median(cycles),
                                   "filter_diff_ms_median": statistics.median(
                                       c - p for c, p in zip(cycles, polls))}
        results["idle_rss_kb_libslurm"] = idle_rss(a.sar_filterd,
                                                   os.path.join(a.workdir, "slurm.yaml"), sb.env())
        results["running_jobs_on_testbed"] = running

    # Idle memory with a 20,000-host topology and a 10,000-job replay trace.
    topo = os.path.join(a.workdir, "topology20k.conf")
    with open(topo, "w") as f:
        for leaf in range(1000):
            f.write(f"SwitchName=leaf{leaf:04d} Nodes=n[{leaf * 20:05d}-{leaf * 20 + 19:05d}]\n")
    trace = os.path.join(a.workdir, "jobs10k.trace")
    with open(trace, "w") as f:
        for j in range(10000):
            f.write(f"0 - {j} n[{2 * j:05d}-{2 * j + 1:05d}]\n")
    cfg = os.path.join(a.workdir, "replay20k.yaml")
    write_config(cfg, {"source": "replay", "replay_trace": trace, "topology_conf": topo,
                       "trigger": "none", "mapping_file": os.path.join(a.workdir, "r.map"),
                       "state_dir": os.path.join(a.workdir, "state-replay"),
                       "poll_interval_s": 3600})
    results["idle_rss_kb_replay_20k_hosts_10k_jobs"] = idle_rss(a.sar_filterd, cfg, os.environ)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
