#!/usr/bin/env python3
"""sar-filterd as the packaged unit runs it: an unprivileged user with CAP_KILL only (setpriv
stands in for systemd's User= and AmbientCapabilities=), trigger "signal", against root's stock
OpenSM with libosmsar.so on ibsim (docs/operations.md, "Privileges"):

  - the plugin wrote "<mapping_file>.ready" naming OpenSM's pid;
  - the user cannot read OpenSM's /proc/<pid>/maps (so the ready file is what vouches for it);
  - --once as that user with CAP_KILL: exit 0, OpenSM runs a routing pass with the new mapping;
  - the ready file gone: --once refuses (exit 1, names the ready file), OpenSM gets no signal
    (no new routing pass) and still runs;
  - ready file back but no CAP_KILL: exit 1, kill() EPERM, no routing pass: CAP_KILL is what the
    unit must grant.
Skipped (exit 77) when not run as root (setpriv needs it)."""

import os
import subprocess
import sys
import time

import fabric_gen
import filterd_it as it
from sar_it import sar_testbed
from filterd_process import write_config

NOBODY = 65534


def as_user(argv, caps):
    """argv run as uid/gid 65534 without supplementary groups, with `caps` (e.g. ["kill"]) as
    its only capabilities (inheritable, ambient and bounding set)."""
    c = ",".join(["-all"] + [f"+{x}" for x in caps])
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
            f"--inh-caps={c}", f"--ambient-caps={c}", f"--bounding-set={c}", "--", *argv]


def body(args):
    w = args.workdir
    topo = os.path.join(w, "ft2.topo")
    with open(topo, "w") as f:
        f.write(fabric_gen.ft2(2, 2))  # h00000,h00001 on leaf000; h00002,h00003 on leaf001
    # What the unit gives the user: a state directory of its own, readable by OpenSM (root).
    d = os.path.join(w, "lib")
    os.makedirs(d, exist_ok=True)
    os.chown(d, NOBODY, NOBODY)
    os.chmod(d, 0o755)
    os.chmod(w, 0o755)
    mapping = os.path.join(d, "jobs.map")
    trace = os.path.join(w, "trace")
    with open(trace, "w") as f:
        f.write("0 - wide h00001,h00002\n")  # spans both leaves from the start
    conf = os.path.join(w, "osmsar.conf")
    with open(conf, "w") as f:
        f.write(f"engine sar\nmapping_file {mapping}\nnum_vls 2\nthreads 1\n")

    def options(name):
        return {"source": "replay", "replay_trace": trace, "fabric": topo,
                "poll_interval_s": 0.2, "settle_s": 0, "min_reroute_interval_s": 0,
                "mapping_file": mapping, "trigger": "signal", "opensm_pid_file": pid_file,
                "state_dir": os.path.join(d, f"state-{name}"), "control_socket": "",
                "metrics_textfile": ""}

    def once(name, caps):
        cfg = os.path.join(w, f"{name}.yaml")
        write_config(cfg, options(name))
        os.chmod(cfg, 0o644)
        return subprocess.run(as_user([args.sar_filterd, "--config", cfg, "--once"], caps),
                              capture_output=True, text=True, timeout=60)

    with sar_testbed.Testbed(topo, os.path.join(w, "bed")) as tb:
        osm = tb.start_opensm("sar", extra_conf=["event_plugin_name osmsar",
                                                 f"event_plugin_options {conf}",
                                                 "qos TRUE", "qos_max_vls 2"],
                              env_extra={"LD_LIBRARY_PATH": args.plugin_dir})
        pid_file = osm.pid_file
        ready = mapping + ".ready"
        it.check(os.path.exists(ready) and open(ready).read() == f"osmsar {osm.pid}\n",
                 f"ready file {ready}: "
                 f"{open(ready).read() if os.path.exists(ready) else 'missing'}")
        maps = subprocess.run(as_user(["cat", f"/proc/{osm.pid}/maps"], ["kill"]),
                              capture_output=True, text=True, timeout=10)
        it.check(maps.returncode != 0, "the unprivileged user can read OpenSM's maps: this test "
                 "would not show the ready file at work")

        def passes():
            return osm.log_since(0).count("building routing with 'sar'")

        before = passes()
        p = once("kill", ["kill"])
        it.check(p.returncode == 0, f"--once as the user with CAP_KILL: exit {p.returncode}\n"
                 f"{p.stderr[-2000:]}")
        it.check("reroute: wrote 1 multi-switch jobs" in p.stderr, f"no reroute:\n{p.stderr}")
        deadline = time.monotonic() + 10
        while passes() == before and time.monotonic() < deadline:
            time.sleep(0.1)
        it.check(passes() > before, "OpenSM ran no routing pass after the SIGUSR2")
        it.check("h00001" in open(mapping).read(), "the mapping lacks the job's hosts")

        # The ready file gone (an OpenSM that did not load the plugin writes none).
        saved = open(ready).read()
        os.unlink(ready)
        time.sleep(1.0)  # let the previous pass finish before counting
        before = passes()
        p = once("noready", ["kill"])
        it.check(p.returncode == 1 and "ready file" in p.stderr and ready in p.stderr,
                 f"no ready file: exit {p.returncode}\n{p.stderr[-2000:]}")
        time.sleep(0.5)
        it.check(passes() == before, "OpenSM was signalled without a ready file")
        it.check(osm.alive(), "OpenSM died")

        # Ready file back, but no capability: kill() of root's process fails.
        with open(ready, "w") as f:
            f.write(saved)
        p = once("nocap", [])
        it.check(p.returncode == 1 and "Operation not permitted" in p.stderr,
                 f"without CAP_KILL: exit {p.returncode}\n{p.stderr[-2000:]}")
        time.sleep(0.5)
        it.check(passes() == before, "OpenSM was signalled without CAP_KILL")
        osm.stop()


if __name__ == "__main__":
    if os.geteuid() != 0:
        print("skip: needs root for setpriv")
        sys.exit(77)
    a = it.sar_it.parse_args(__doc__, need_sar_route=False, extra=lambda ap: (
        ap.add_argument("--sar-filterd", required=True),
        ap.add_argument("--plugin-dir", required=True)))
    it.main(lambda: body(a))
