#!/usr/bin/env python3
"""sar-filterd against a real SLURM when things go wrong, and its operational interfaces:

  0. slurmctld hung (SIGSTOP): polls time out after source_timeout_s instead of blocking the
     daemon; the control socket still answers; no reroute
  1. slurmctld SIGKILLed mid-run: polls fail, the daemon survives, no reroute on partial data;
     after the controller is back the unchanged job set causes no reroute either
  2. a daemon restart with the same state dir does not reroute
  3. the Prometheus endpoint on loopback; the fabric as topology source (an ibsim-format file whose HCA descriptions name the SLURM
     nodes), a 30 s poll interval, and a hook's "job-start <id>" on the owner-only control
     socket: the reroute follows the hook, not the timer
"""

import os
import stat
import time
import urllib.request

import filterd_it as it
from slurm_testbed import SlurmTestbed
from testbed_common import free_port_block


def write_fabric(path, sb):
    """ibsim topology: one switch per SLURM leaf, a spine, one HCA per node ('n001 HCA-1')."""
    per = sb.nodes_per_leaf
    out = ["switchguid=0x0002c90000100000"]
    for leaf in range(sb.num_leaves):
        out.append(f'Switch\t{per + 1} "leaf{leaf:02d}"')
        for k, host in enumerate(sb.leaf_nodes(leaf)):
            out.append(f'[{k + 1}]\t"{host}"[1]')
        out.append(f'[{per + 1}]\t"spine"[{leaf + 1}]')
        out.append("")
    out.append(f'Switch\t{sb.num_leaves} "spine"')
    for leaf in range(sb.num_leaves):
        out.append(f'[{leaf + 1}]\t"leaf{leaf:02d}"[{per + 1}]')
    out += ["", "caguid=0x0002c90000200000"]
    for leaf in range(sb.num_leaves):
        for k, host in enumerate(sb.leaf_nodes(leaf)):
            out += [f'Hca\t1 "{host}"\t# "{host} HCA-1"', f'[1]\t"leaf{leaf:02d}"[{k + 1}]', ""]
    with open(path, "w") as f:
        f.write("\n".join(out))


def body(args):
    w = args.workdir
    with SlurmTestbed(os.path.join(w, "slurm"), num_nodes=64, nodes_per_leaf=16) as sb:
        opensm = it.FakeOpenSM(w, os.path.join(w, "jobs.map"))
        # libslurm itself spends ~4 s per poll on a dead controller; retries are unit-tested.
        options = dict(it.base_options(w, sb, opensm), poll_retries=0, source_timeout_s=1.0)
        d = it.Filterd(args.sar_filterd, w, options, sb.env(), name="run1")
        try:
            multi = sb.sbatch(nodelist="n[013-020]")
            sb.wait_state(multi, "RUNNING")
            it.wait_for(lambda: len(opensm.signals()) == 1, "the first reroute")

            # 0. controller hung
            sb.pause_controller()
            try:
                d.wait_polls(2, errors=True, timeout=15)
                t0 = time.monotonic()
                status = it.control(options["control_socket"], "status", timeout=3.0)
                it.check(time.monotonic() - t0 < 2.5 and "poll_errors=" in status,
                         f"control socket while the controller hangs: {status!r}")
                it.check(d.alive() and len(opensm.signals()) == 1,
                         f"reroute while the controller hung:\n{d.tail()}")
            finally:
                sb.resume_controller()

            # 1. controller killed (after it saved the running job, so that it comes back)
            sb.wait_state_saved()
            sb.kill_controller()
            d.wait_polls(2, errors=True, timeout=30)
            it.check(d.alive(), "sar-filterd died with the controller")
            it.check(len(opensm.signals()) == 1,
                     f"reroute while the controller was down:\n{d.tail()}")
            sb.start_controller()
            sb.wait_state(multi, "RUNNING")
            # A libslurm call begun while the controller was dead may still be retrying its
            # connection for a few seconds; wait for three clean polls in a row.
            deadline = time.monotonic() + 30
            while True:
                errors = d.metrics()["poll_errors_total"]
                d.wait_polls(3)
                if d.metrics()["poll_errors_total"] == errors:
                    break
                it.check(time.monotonic() < deadline, f"polls still failing:\n{d.tail()}")
            it.check(len(opensm.signals()) == 1,
                     f"reroute after the controller came back:\n{d.tail()}")

            # 2. daemon restart, same state dir
            it.check(d.stop() == 0, "SIGTERM: non-zero exit")
            d = it.Filterd(args.sar_filterd, w, options, sb.env(), name="run2")
            d.wait_polls(3)
            it.check(len(opensm.signals()) == 1, f"reroute after a restart:\n{d.tail()}")
            d.stop()

            # 3. fabric topology + control socket
            fabric = os.path.join(w, "fabric.topo")
            write_fabric(fabric, sb)
            options3 = dict(options, poll_interval_s=30)
            del options3["topology_conf"]
            options3["fabric"] = fabric
            options3["metrics_textfile"] = os.path.join(w, "metrics3.prom")
            http_port = free_port_block(1)  # a free loopback port for the HTTP endpoint
            options3["metrics_listen"] = f"127.0.0.1:{http_port}"
            d = it.Filterd(args.sar_filterd, w, options3, sb.env(), name="run3")
            it.wait_for(lambda: d.metrics().get("polls_total", 0) >= 1, "the start-up poll")
            sock = options["control_socket"]
            mode = stat.S_IMODE(os.stat(sock).st_mode)
            it.check(mode == 0o600, f"control socket mode {oct(mode)}, want 0600")
            second = sb.sbatch(nodelist="n[029-036]")  # leaf01 + leaf02
            sb.wait_state(second, "RUNNING")
            time.sleep(0.5)
            it.check(len(opensm.signals()) == 1, "reroute before any poll was asked for")
            reply = it.control(sock, f"job-start {second}")
            it.check(reply == "ok\n", f"control socket replied {reply!r}")
            it.wait_for(lambda: len(opensm.signals()) == 2, "a reroute after the hook", timeout=5)
            got = it.parse_mapping(opensm.signals()[1])
            want = {multi: sb.job_hosts(multi), second: sb.job_hosts(second)}
            it.check(got == {k: sorted(v) for k, v in want.items()}, f"mapping {got}")
            status = it.control(sock, "status")
            it.check("reroutes=1" in status, f"status: {status!r}")
            it.check(it.control(sock, "format c:") == "error: unknown command\n", "bad command")
            with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/metrics", timeout=5) as r:
                body = r.read().decode()
            it.check("\nsar_filterd_reroutes_total 1\n" in body and
                     "\nsar_filterd_multi_switch_jobs 2\n" in body, f"/metrics: {body}")
        finally:
            d.stop()
            opensm.stop()


if __name__ == "__main__":
    a = it.parse_args(__doc__)
    it.main(lambda: body(a))
