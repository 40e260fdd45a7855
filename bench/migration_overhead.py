#!/usr/bin/env python3
"""Migration protocol overhead per epoch, on ibsim with stock OpenSM, the plugin in migration
mode (LMC 1) and sar-agent + sar-migconsumer on N hosts of FT(2;4,4) (at most 8: ibsim takes 10
clients, OpenSM and one diagnostic tool included).

Each epoch: a new job mapping, SIGUSR2, and the coordinator's status file until the epoch is
idle again. Reported per epoch: the plugin's phase times (plan, drain = UnPath to the last ack,
push, repath = RePath to the last ack, total) and the wall time from the signal to the status
file saying idle (OpenSM looks at signals only between its own steps). The consumers drain for
--drain-ms in each of the two phases, so the protocol's own overhead is total - 2 * drain-ms.
Target (issue 14): under 50 ms.

    bench/migration_overhead.py --sar-route build/router/sar-route \
        --plugin-dir build/opensm-patch --sar-agent build/node/agent/sar-agent \
        --sar-migconsumer build/node/libsarmig/sar-migconsumer --agents 8 --epochs 5
"""

import argparse
import os
import shutil
import signal
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))

import sar_it  # noqa: E402
from test_migration_opensm import read_status, start_with_agents, wait_status  # noqa: E402
from test_osmsar_plugin import mapping_text, write_atomic  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    for a in ("--sar-route", "--plugin-dir", "--sar-agent", "--sar-migconsumer"):
        ap.add_argument(a, required=True)
    ap.add_argument("--workdir", default="/tmp/sar-migration-bench")
    ap.add_argument("--agents", type=int, default=8, help="hosts with an agent (1..8)")
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--drain-ms", type=int, default=0, help="the consumers' simulated drain")
    args = ap.parse_args()
    if not 1 <= args.agents <= 8:
        ap.error("--agents must be 1..8 (ibsim's 10 clients: OpenSM, the agents, one tool)")
    for a in ("sar_route", "plugin_dir", "sar_agent", "sar_migconsumer"):
        setattr(args, a, os.path.abspath(getattr(args, a)))
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    hosts = [f"h{i:05d}" for i in range(1, args.agents + 1)]  # OpenSM is on h00000
    fab, agents = start_with_agents(args, "bench", args.plugin_dir, hosts, args.drain_ms)
    rows = []
    try:
        for i in range(args.epochs):
            before = read_status(fab.status)
            write_atomic(fab.mapping, mapping_text(fab.topo, 100 + i, jobs=2, per_job=4))
            t0 = time.monotonic()
            fab.daemon.signal(signal.SIGUSR2)
            st = wait_status(fab, fab.status,
                             lambda s: s["last_epoch"] > before["last_epoch"] and s["phase"] == 5,
                             "epoch done", 30)
            wall = (time.monotonic() - t0) * 1e3
            ms = st["last_ms"]
            acks = sum(agents.status(h).get("acks_sent", 0) for h in hosts)
            rows.append((st["last_epoch"], st["last_outcome"], ms, wall, acks))
            print(f"epoch {st['last_epoch']}: {st['last_outcome']}, {args.agents} agents, "
                  f"plan {ms['plan']} drain {ms['drain']} push {ms['push']} repath "
                  f"{ms['repath']} total {ms['total']} ms; signal -> idle {wall:.0f} ms; "
                  f"overhead {ms['total'] - 2 * args.drain_ms} ms")
            time.sleep(0.3)
    finally:
        agents.stop()
        fab.tb.stop()
    released = [r for r in rows if r[1] == "released"]
    if not released:
        print("no epoch released", file=sys.stderr)
        return 1
    over = [r[2]["total"] - 2 * args.drain_ms for r in released]
    print(f"protocol overhead per epoch ({len(released)} released, {args.agents} agents, drain "
          f"{args.drain_ms} ms): median {statistics.median(over):.0f} ms, max {max(over)} ms "
          f"(target < 50 ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
