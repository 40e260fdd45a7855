#!/usr/bin/env python3
"""Test bed: a real SLURM (slurmctld + one slurmd per emulated node) on loopback, topology/tree.

    with SlurmTestbed("/tmp/x", num_nodes=64, nodes_per_leaf=16) as sb:
        job = sb.sbatch(nodes=20)           # RUNNING within about a second
        sb.wait_state(job, "RUNNING")
        print(sb.job_hosts(job))            # ['n001', ..., 'n020'] as SLURM expands them
        sb.env()                            # SLURM_CONF=... for clients and libslurm

Every instance has its own ports, state dir and config (see ../shared/notes/testbed-slurm.md):
nodes n001.. share 127.0.0.1 and differ by port, one ranged NodeName line per leaf switch
(leaf00, leaf01, ... under one "spine"). Daemons run in the foreground under their canonical
names (symlinks in <workdir>/bin: libslurm picks its role from argv[0]) with SLURM_CONF always
set, each a testbed_common.LoggedProcess with a parent-death signal. Teardown kills only what
this instance started, by PID (SIGKILL: a slurmd with running steps hangs on SIGTERM), plus job
processes whose environment carries this test bed's SLURM_CONF. Every wait has a timeout; failures raise SlurmTestbedError with log tails.

Optional sar SLURM side (slurm-plugin/, docs/slurm.md): `spank_plugin` (sar_pattern.so, listed in
a plugstack.conf), `job_submit_lua` (copied beside slurm.conf, JobSubmitPlugins=lua) and
`prolog_slurmctld` / `epilog_slurmctld` (programs run by slurmctld at job start / end).

CLI: slurm_testbed.py up --workdir DIR [--nodes 64 --per-leaf 16]   (Ctrl-C tears down)
"""

import argparse
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from testbed_common import (LoggedProcess, ProcessError, StartStop, exit_on_signals,
                            free_port_block, live_registry, pids_with_env, start_logged,
                            stop_processes, tail)

SBIN = "/usr/sbin"
_live = live_registry()


class SlurmTestbedError(ProcessError):
    """A step of the SLURM test bed failed; the message carries the relevant log tails."""


class SlurmDaemon(LoggedProcess):
    """slurmctld, a slurmd or slurmrestd of a SlurmTestbed; `log` holds its output. Errors carry
    that output's tail and the bed's (slurmctld.log, slurmds that could not bind)."""

    error_class = SlurmTestbedError

    def __init__(self, bed, name, argv, log, mode, env=None):
        super().__init__(start_logged(argv, log, env=env or bed.env(), mode=mode,
                                      new_session=True), log, name)
        self.bed = bed

    def error(self, what):
        return self.bed.error(f"{what}\n--- {self.name} output:\n{self.tail(15)}")


def hostlist(prefix, first, last, width):
    """SLURM range form, e.g. n[001-016]."""
    return f"{prefix}[{first:0{width}d}-{last:0{width}d}]"


class SlurmTestbed(StartStop):
    def __init__(self, workdir, num_nodes=64, nodes_per_leaf=16, prefix="n", width=3,
                 extra_conf="", spank_plugin=None, job_submit_lua=None, prolog_slurmctld=None,
                 epilog_slurmctld=None, first_index=1, spank_args="", names_by_leaf=None):
        # names_by_leaf: [(leaf name, [node names])] for nodes named by a real fabric (no
        # ranged names: one NodeName line per node); num_nodes and nodes_per_leaf then follow.
        self.names_by_leaf = names_by_leaf
        if names_by_leaf:
            num_nodes = sum(len(names) for _, names in names_by_leaf)
            nodes_per_leaf = min(len(names) for _, names in names_by_leaf)
        elif num_nodes % nodes_per_leaf:
            raise ValueError("num_nodes must be a multiple of nodes_per_leaf")
        self.workdir = os.path.abspath(workdir)
        self.num_nodes = num_nodes
        self.nodes_per_leaf = nodes_per_leaf
        self.prefix = prefix
        self.width = width
        self.extra_conf = extra_conf
        self.spank_plugin = spank_plugin
        self.spank_args = spank_args  # words after the plugin in plugstack.conf
        self.job_submit_lua = job_submit_lua
        self.prolog_slurmctld = prolog_slurmctld
        self.epilog_slurmctld = epilog_slurmctld
        # Number in the first node's name: 1 gives n001; 0 matches `sar-route gen` (h00000).
        self.first_index = first_index
        self.conf = os.path.join(self.workdir, "etc", "slurm.conf")
        self.topology_conf = os.path.join(self.workdir, "etc", "topology.conf")
        self.ctld = None
        self.slurmds = []
        self.restd = None
        self.sockdir = None  # short private directory for everything that holds UNIX sockets
        self._rng = random.Random(os.getpid() ^ int(time.time() * 1000))

    # --- names -----------------------------------------------------------------------------
    def node(self, i):
        """Name of node i (0-based): n001 for i = 0 (with first_index 1)."""
        if self.names_by_leaf:
            return [n for _, names in self.names_by_leaf for n in names][i]
        return f"{self.prefix}{i + self.first_index:0{self.width}d}"

    @property
    def nodes(self):
        if self.names_by_leaf:
            return [n for _, names in self.names_by_leaf for n in names]
        return [self.node(i) for i in range(self.num_nodes)]

    @property
    def num_leaves(self):
        if self.names_by_leaf:
            return len(self.names_by_leaf)
        return self.num_nodes // self.nodes_per_leaf

    def leaf_of(self, host):
        if self.names_by_leaf:
            return next(i for i, (_, names) in enumerate(self.names_by_leaf) if host in names)
        return (int(host[len(self.prefix):]) - self.first_index) // self.nodes_per_leaf

    def leaf_nodes(self, leaf):
        if self.names_by_leaf:
            return list(self.names_by_leaf[leaf][1])
        return [self.node(leaf * self.nodes_per_leaf + k) for k in range(self.nodes_per_leaf)]

    def env(self):
        env = dict(os.environ)
        env["SLURM_CONF"] = self.conf
        env["HWLOC_PLUGINS_PATH"] = os.path.join(self.workdir, "no-hwloc-plugins")
        return env

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self, timeout=60.0):
        shutil.rmtree(self.workdir, ignore_errors=True)
        for d in ("etc", "bin", "state", "log", "jobs", "no-hwloc-plugins"):
            os.makedirs(os.path.join(self.workdir, d))
        self._make_sockdir()
        for name in ("slurmctld", "slurmd", "slurmstepd"):
            target = os.path.join(SBIN, f"{name}-wlm")
            if not os.path.exists(target):
                target = os.path.join(SBIN, name)
            os.symlink(target, os.path.join(self.workdir, "bin", name))
        self.ctld_port = self._free_ports(1)
        self.node_port0 = self._free_ports(self.num_nodes)
        self._write_conf()
        _live.add(self)
        self.start_controller()
        bin_dir = os.path.join(self.workdir, "bin")
        for i in range(self.num_nodes):
            self.slurmds.append(SlurmDaemon(
                self, f"slurmd {self.node(i)}",
                [os.path.join(bin_dir, "slurmd"), "-D", "-f", self.conf, "-N", self.node(i),
                 "-d", os.path.join(bin_dir, "slurmstepd")],
                os.path.join(self.workdir, "log", f"{self.node(i)}.out"), "wb"))
        self.wait_nodes_idle(timeout)

    def start_controller(self, wait=True, timeout=30.0):
        """Starts slurmctld (again, after kill_controller()); keeps the job state."""
        self.ctld = SlurmDaemon(
            self, "slurmctld",
            [os.path.join(self.workdir, "bin", "slurmctld"), "-D", "-f", self.conf],
            os.path.join(self.workdir, "log", "slurmctld.out"), "ab")
        if wait:
            self.ctld.wait_until(lambda: self.scontrol(["ping"], check=False).returncode == 0,
                                 "answer to scontrol ping", timeout, interval=0.2)

    def wait_state_saved(self, timeout=20.0):
        """Makes slurmctld write its job state now and waits for the file, so a kill -9 that
        follows loses nothing. slurmctld saves lazily and defers while RPCs keep arriving (a
        poller every 0.3 s keeps it from saving at all); `scontrol reconfigure` saves at once."""
        path = os.path.join(self.workdir, "state", "job_state")
        t0 = time.time() - 0.01
        self.scontrol(["reconfigure"])
        deadline = time.monotonic() + timeout
        while not (os.path.exists(path) and os.stat(path).st_mtime > t0):
            if time.monotonic() > deadline:
                raise self.error(f"slurmctld did not save its job state in {timeout} s")
            time.sleep(0.1)

    def start_slurmrestd(self, timeout=15.0):
        """slurmrestd on a UNIX socket (local auth; as root it needs disable_user_check).
        Returns the socket path; GET /slurm/v0.0.38/jobs answers like `squeue --json`."""
        sock = os.path.join(self.sockdir, "run", "slurmrestd.sock")  # short: sun_path limit
        self.restd = SlurmDaemon(
            self, "slurmrestd",
            ["slurmrestd", "-f", self.conf, "-a", "rest_auth/local", "-s", "openapi/v0.0.38",
             f"unix:{sock}"], os.path.join(self.workdir, "log", "slurmrestd.out"), "ab",
            env=dict(self.env(), SLURMRESTD_SECURITY="disable_user_check"))
        self.restd.wait_until(lambda: os.path.exists(sock), f"socket {sock}", timeout,
                              interval=0.1)
        return sock

    def pause_controller(self):
        """SIGSTOPs slurmctld: a controller that accepts connections but never answers."""
        self.ctld.pause()

    def resume_controller(self):
        self.ctld.resume()

    def kill_controller(self):
        """SIGKILLs slurmctld (a crash, not a shutdown); the slurmds and jobs keep running."""
        if self.ctld:
            self.ctld.stop(grace=0)

    def stop(self):
        """SIGKILLs every daemon started here (by PID; a slurmd with running steps hangs on
        SIGTERM), then the job processes that carry this bed's SLURM_CONF. Idempotent."""
        daemons = [d for d in (self.ctld, self.restd) if d] + self.slurmds
        try:
            stop_processes([d.proc for d in daemons], grace=0)
        finally:
            # slurmstepd and the job scripts outlive slurmd; they carry our SLURM_CONF.
            for pid in pids_with_env(f"SLURM_CONF={self.conf}"):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.ctld = None
            self.restd = None
            self.slurmds = []
            if self.sockdir:
                shutil.rmtree(self.sockdir, ignore_errors=True)
                self.sockdir = None
            _live.discard(self)

    def _make_sockdir(self):
        """slurmd's spool holds slurmstepd's UNIX sockets, named <spool>/<node>_<job>.<step>, and
        sun_path takes 107 bytes: under a deep build tree (a CI checkout, a long test name) the
        batch step's socket no longer fits, slurmstepd cannot listen, and every job is requeued
        as a launch failure. So spool/ and run/ live in a short private directory under the
        system's temp dir; the work directory links to them for reading the logs."""
        self.sockdir = tempfile.mkdtemp(prefix="sar-slurm-")  # mode 0700
        longest = os.path.join(self.sockdir, "spool", self.node(self.num_nodes - 1),
                               f"{self.node(self.num_nodes - 1)}_4294967295.4294967291")
        if len(longest.encode()) > 107:
            raise SlurmTestbedError(f"temp dir {self.sockdir} is too deep for slurmstepd's "
                                    f"sockets ({len(longest.encode())} > 107 bytes); set TMPDIR")
        for d in ("spool", "run"):
            os.makedirs(os.path.join(self.sockdir, d))
            os.symlink(os.path.join(self.sockdir, d), os.path.join(self.workdir, d))

    # --- clients ---------------------------------------------------------------------------
    def run(self, argv, check=True, timeout=30):
        """A SLURM client command with this bed's SLURM_CONF; the CompletedProcess (text)."""
        p = subprocess.run(argv, env=self.env(), capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise self.error(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.strip()}")
        return p

    def scontrol(self, args, check=True):
        return self.run(["scontrol", *args], check=check)

    def sbatch(self, nodes=None, nodelist=None, time_limit=None, partition=None, seconds=600,
               extra_args=(), command=None):
        """Submits a sleeping batch job; returns its id (a string). `extra_args` go before
        --wrap (e.g. ["--sar-pattern=alltoall"], ["--array=1-100"]); `command` replaces the
        sleep (its output goes to jobs/<id>.out under the test bed's directory)."""
        return self.sbatch_run(nodes, nodelist, time_limit, partition, seconds, extra_args,
                               check=True, command=command).stdout.strip().split(";")[0]

    def sbatch_run(self, nodes=None, nodelist=None, time_limit=None, partition=None, seconds=600,
                   extra_args=(), check=False, command=None):
        """Like sbatch(), but returns the CompletedProcess (for submissions meant to fail)."""
        argv = ["sbatch", "--parsable", "-o", os.path.join(self.workdir, "jobs", "%j.out")]
        if nodes:
            argv += ["-N", str(nodes)]
        if nodelist:
            argv += ["-w", nodelist]
        if time_limit:
            argv += ["-t", str(time_limit)]
        if partition:
            argv += ["-p", partition]
        argv += list(extra_args)
        argv += ["--wrap", command or f"sleep {seconds}"]
        return self.run(argv, check=check)

    def scancel(self, job_id):
        self.run(["scancel", str(job_id)])

    def job_field(self, job_id, fmt):
        return self.run(["squeue", "-h", "-j", str(job_id), "-o", fmt], check=False).stdout.strip()

    def wait_state(self, job_id, state, timeout=20.0):
        deadline = time.monotonic() + timeout
        while True:
            got = self.job_field(job_id, "%T")
            if got == state or (state == "GONE" and got in ("", "COMPLETED", "CANCELLED")):
                return
            if time.monotonic() > deadline:
                reason = self.job_field(job_id, "%r")  # e.g. "launch failed requeued held"
                raise self.error(f"job {job_id} is '{got}' ({reason}), not {state} "
                                  f"after {timeout} s")
            time.sleep(0.2)

    def job_hosts(self, job_id):
        nodelist = self.job_field(job_id, "%N")
        out = self.run(["scontrol", "show", "hostnames", nodelist]).stdout
        return out.split()

    def wait_nodes_idle(self, timeout=60.0):
        deadline = time.monotonic() + timeout
        while True:
            p = self.run(["sinfo", "-h", "-N", "-o", "%N %t"], check=False)
            idle = sum(1 for line in p.stdout.splitlines() if line.split()[-1:] == ["idle"])
            if idle == self.num_nodes:
                return
            if time.monotonic() > deadline:
                raise self.error(f"only {idle}/{self.num_nodes} nodes idle after {timeout} s")
            time.sleep(0.3)

    # --- config ----------------------------------------------------------------------------
    def _write_conf(self):
        w = self.workdir
        host = socket.gethostname().split(".")[0]
        lines = [
            "ClusterName=sartb",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={self.ctld_port}",
            "SlurmUser=root", "SlurmdUser=root",
            "AuthType=auth/none", "CredType=cred/none",
            f"StateSaveLocation={w}/state", f"SlurmdSpoolDir={self.sockdir}/spool/%n",
            f"SlurmctldPidFile={w}/run/slurmctld.pid", f"SlurmdPidFile={w}/run/%n.pid",
            f"SlurmctldLogFile={w}/log/slurmctld.log", f"SlurmdLogFile={w}/log/%n.log",
            "ProctrackType=proctrack/pgid", "TaskPlugin=task/none",
            "SelectType=select/linear", "TopologyPlugin=topology/tree",
            "SchedulerParameters=batch_sched_delay=0,bf_interval=2",
            "SlurmdParameters=config_overrides", "ReturnToService=2", "MpiDefault=none",
            "MessageTimeout=5", "SlurmdTimeout=300", "InactiveLimit=0", "KillWait=2",
            "JobCompType=jobcomp/none", "SwitchType=switch/none", "LaunchParameters=",
        ]
        lines = [l for l in lines if not l.endswith("=")]
        if self.names_by_leaf:
            for i, name in enumerate(self.nodes):
                lines.append(f"NodeName={name} NodeAddr=127.0.0.1 Port={self.node_port0 + i} "
                             "CPUs=1 RealMemory=1000 State=UNKNOWN")
        for leaf in range(0 if self.names_by_leaf else self.num_leaves):
            a, b = leaf * self.nodes_per_leaf, (leaf + 1) * self.nodes_per_leaf - 1
            names = hostlist(self.prefix, a + self.first_index, b + self.first_index, self.width)
            ports = f"[{self.node_port0 + a}-{self.node_port0 + b}]"
            lines.append(f"NodeName={names} NodeAddr=127.0.0.1 Port={ports} CPUs=1 "
                         "RealMemory=1000 State=UNKNOWN")
        lines.append("PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP "
                     "OverSubscribe=EXCLUSIVE")
        if self.spank_plugin:
            plugstack = os.path.join(w, "etc", "plugstack.conf")
            with open(plugstack, "w") as f:
                f.write(f"required {os.path.abspath(self.spank_plugin)} {self.spank_args}"
                        .rstrip() + "\n")
            lines.append(f"PlugStackConfig={plugstack}")
        if self.job_submit_lua:
            # slurmctld looks for job_submit.lua beside slurm.conf.
            shutil.copy(self.job_submit_lua, os.path.join(w, "etc", "job_submit.lua"))
            lines.append("JobSubmitPlugins=lua")
        if self.prolog_slurmctld:
            lines.append(f"PrologSlurmctld={os.path.abspath(self.prolog_slurmctld)}")
        if self.epilog_slurmctld:
            lines.append(f"EpilogSlurmctld={os.path.abspath(self.epilog_slurmctld)}")
        if self.extra_conf:
            lines.append(self.extra_conf)
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(self.topology_conf, "w") as f:
            for leaf, (_, names) in enumerate(self.names_by_leaf or []):
                f.write(f"SwitchName=leaf{leaf:02d} Nodes={','.join(names)}\n")
            for leaf in range(0 if self.names_by_leaf else self.num_leaves):
                a = leaf * self.nodes_per_leaf + self.first_index
                f.write(f"SwitchName=leaf{leaf:02d} Nodes="
                        f"{hostlist(self.prefix, a, a + self.nodes_per_leaf - 1, self.width)}\n")
            f.write(f"SwitchName=spine Switches=leaf[00-{self.num_leaves - 1:02d}]\n")

    def _free_ports(self, count):
        try:
            return free_port_block(count, self._rng)
        except OSError as e:
            raise SlurmTestbedError(str(e)) from None

    def error(self, what):
        """A SlurmTestbedError saying `what`, with slurmctld.log's tail and the slurmds that could
        not bind their ports."""
        logs = os.path.join(self.workdir, "log")
        unbound = []
        for i in range(self.num_nodes):
            try:
                with open(os.path.join(logs, f"{self.node(i)}.out"), errors="replace") as f:
                    if "Unable to bind listen port" in f.read():
                        unbound.append(self.node(i))
            except OSError:
                pass
        if unbound:
            what += f"\nslurmd could not bind its port on: {' '.join(unbound)}"
        return SlurmTestbedError(
            f"{what}\n--- slurmctld.log ---\n{tail(os.path.join(logs, 'slurmctld.log'), 15)}")


def _cli(argv):
    ap = argparse.ArgumentParser(description="Bring up a real SLURM on loopback.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="start, print SLURM_CONF, wait for Ctrl-C")
    up.add_argument("--workdir", required=True)
    up.add_argument("--nodes", type=int, default=64)
    up.add_argument("--per-leaf", type=int, default=16)
    args = ap.parse_args(argv)
    exit_on_signals()
    t0 = time.monotonic()
    with SlurmTestbed(args.workdir, args.nodes, args.per_leaf) as sb:
        print(f"SLURM_CONF={sb.conf}  ({args.nodes} nodes up in {time.monotonic() - t0:.1f} s)",
              flush=True)
        try:
            while True:
                time.sleep(3600)
        except (KeyboardInterrupt, SystemExit):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(_cli(sys.argv[1:]))
