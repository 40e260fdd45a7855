#!/usr/bin/env python3
"""sar-filterd's guards that need real processes (issue 19), on the replay source (no SLURM):

  21. a stale pid file naming a `sleep`: the sleep survives every reroute attempt, the refusal
      is logged and counted as a failed trigger (trigger "signal", verify_sm_process default);
      a real OpenSM on ibsim without the plugin gets no SIGUSR2 (which would kill it): --once
      exits 1 naming libosmsar.so and OpenSM still runs
  13. a second sar-filterd with the same config exits 1 naming the first one's pid, and the
      first one's control socket still answers afterwards (it used to be stolen and deleted)
  14. a log_file in a missing directory: exit 2 with the path, the directory not created
  16. metrics_listen "127.0.0.1:19192x": exit 2 with file:line
  12. --once with the mapping's directory missing: exit 1, the failed write in the metrics
   9. --once with last_reroute 1e300 in the state dir still reroutes
"""

import os
import subprocess
import sys
import time

import fabric_gen
import filterd_it as it
from sar_it import sar_testbed
from filterd_process import write_config
from testbed_common import socket_path, start_logged


def options(w, pid_file, name):
    trace = os.path.join(w, "trace")
    with open(trace, "w") as f:
        f.write("0 - wide n[0-5]\n")  # spans both leaves from the start
    topo = os.path.join(w, "topology.conf")
    with open(topo, "w") as f:
        f.write("SwitchName=leaf0 Nodes=n[0-3]\nSwitchName=leaf1 Nodes=n[4-7]\n"
                "SwitchName=spine Switches=leaf[0-1]\n")
    d = os.path.join(w, name)
    os.makedirs(d, exist_ok=True)
    return {
        "source": "replay",
        "replay_trace": trace,
        "topology_conf": topo,
        "poll_interval_s": 0.2,
        "settle_s": 0,
        "min_reroute_interval_s": 0,
        "mapping_file": os.path.join(d, "jobs.map"),
        "trigger": "signal",
        "opensm_pid_file": pid_file,
        "state_dir": os.path.join(d, "state"),
        "control_socket": socket_path(d, "control.sock"),
        "metrics_textfile": os.path.join(d, "metrics.prom"),
    }


def run_once(binary, w, name, opts, extra=()):
    cfg = os.path.join(w, f"{name}.yaml")
    write_config(cfg, opts)
    p = subprocess.run([binary, "--config", cfg, "--once", *extra], capture_output=True,
                       text=True, timeout=60)
    return p, cfg


def metrics(path):
    out = {}
    with open(path) as f:
        for line in f:
            if line.startswith("sar_filterd_"):
                k, v = line.split()
                out[k] = float(v)
    return out


def body(args):
    w = args.workdir
    binary = args.sar_filterd
    sleeper = start_logged(["sleep", "300"], os.path.join(w, "sleep.log"))
    try:
        pid_file = os.path.join(w, "opensm.pid")
        with open(pid_file, "w") as f:
            f.write(f"{sleeper.pid}\n")
        # 21: the daemon tries every cycle (the set differs from the router's); sleep survives.
        opts = options(w, pid_file, "first")
        d = it.Filterd(binary, w, opts, dict(os.environ), name="first")
        try:
            d.wait_metric("trigger_errors_total", 3, timeout=20)
            it.check(sleeper.poll() is None, f"sleep was signalled (exit {sleeper.returncode})")
            log = d.log_since(0)
            it.check("'sleep', not opensm" in log and str(sleeper.pid) in log,
                     f"the refusal is not logged:\n{d.tail()}")
            it.check(d.metrics().get("reroutes_total", 0) == 0, "a reroute was counted")

            # 13: a second one on the same state dir.
            cfg2 = os.path.join(w, "second.yaml")
            write_config(cfg2, opts)
            p = subprocess.run([binary, "--config", cfg2], capture_output=True, text=True,
                               timeout=30)
            it.check(p.returncode == 1, f"second sar-filterd: exit {p.returncode}\n{p.stderr}")
            it.check(f"pid {d.pid}" in p.stderr, f"the holder's pid is not named:\n{p.stderr}")
            it.check(os.path.exists(opts["control_socket"]), "the control socket was deleted")
            status = d.control("status", timeout=3.0)
            it.check("polls=" in status, f"first daemon's control socket: {status!r}")
            it.check(d.alive(), "the first daemon died")
        finally:
            it.check(d.stop() == 0, f"first sar-filterd did not exit cleanly:\n{d.tail()}")
        it.check(sleeper.poll() is None, "sleep died")
    finally:
        sleeper.kill()
        sleeper.wait()

    # 21: a real OpenSM without the plugin (not registered): SIGUSR2 would be its death.
    topo = os.path.join(w, "ft2.topo")
    with open(topo, "w") as f:
        f.write(fabric_gen.ft2(2, 2))
    with sar_testbed.Testbed(topo, os.path.join(w, "bed")) as tb:
        osm = tb.start_opensm("minhop")
        p, _ = run_once(binary, w, "noplugin", options(w, osm.pid_file, "noplugin"))
        it.check(p.returncode == 1 and "without libosmsar.so" in p.stderr,
                 f"OpenSM without the plugin: exit {p.returncode}\n{p.stderr}")
        time.sleep(0.3)
        it.check(osm.alive(), f"OpenSM died (exit {osm.proc.returncode}): it was signalled")
        osm.stop()

    # The remaining cases run --once with trigger "none" (no process to signal).
    base = dict(options(w, pid_file, "once"), trigger="none")

    # 14: log_file in a missing directory.
    missing = os.path.join(w, "no-such-dir")
    p, _ = run_once(binary, w, "logfile", dict(base, log_file=os.path.join(missing, "x.log")))
    it.check(p.returncode == 2 and "no-such-dir/x.log" in p.stderr,
             f"log_file in a missing dir: exit {p.returncode}\n{p.stderr}")
    it.check(not os.path.exists(missing), "the log_file's directory was created")

    # 16: trailing garbage after the port.
    p, cfg = run_once(binary, w, "listen", dict(base, metrics_listen="127.0.0.1:19192x"))
    it.check(p.returncode == 2 and f"{cfg}:" in p.stderr and "19192x" in p.stderr,
             f"metrics_listen with garbage: exit {p.returncode}\n{p.stderr}")

    # 12: the mapping's directory is missing.
    o = dict(base, mapping_file=os.path.join(missing, "jobs.map"))
    p, _ = run_once(binary, w, "nomap", o)
    m = metrics(o["metrics_textfile"])
    it.check(p.returncode == 1, f"--once with an unwritable mapping: exit {p.returncode}")
    it.check(m.get("sar_filterd_mapping_write_errors_total") == 1, f"metrics: {m}")

    # 9: a last reroute "in the future" in the state dir.
    o = dict(base, state_dir=os.path.join(w, "future-state"))
    os.makedirs(o["state_dir"])
    with open(os.path.join(o["state_dir"], "router.jobs"), "w") as f:
        f.write("")
    with open(os.path.join(o["state_dir"], "last_reroute"), "w") as f:
        f.write("1e300\n")
    t0 = time.time()
    p, _ = run_once(binary, w, "future", o)
    m = metrics(o["metrics_textfile"])
    it.check(p.returncode == 0 and m.get("sar_filterd_reroutes_total") == 1,
             f"--once with last_reroute 1e300: exit {p.returncode}, {m}\n{p.stderr}")
    it.check(t0 - 1 <= m["sar_filterd_last_reroute_timestamp_seconds"] <= time.time() + 1,
             f"last reroute time: {m}")


if __name__ == "__main__":
    a = it.parse_args(__doc__)
    it.main(lambda: body(a))
