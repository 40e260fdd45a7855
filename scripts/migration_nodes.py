#!/usr/bin/env python3
"""Node side of the migration protocol on an ibsim test bed: sar-agent (in its ibsim test mode)
plus reference consumers (sar-migconsumer) per host, and readers of what they wrote.

    nodes = MigrationNodes(tb, agent_bin, consumer_bin, workdir)
    n = nodes.start("h00001", consumers=[{"peers": [2, 4]}])
    n.wait_subscribed(10)
    n.status()                  # the agent's --status-file (JSON)
    n.switches()                # every consumer's switch log lines (dicts), in order
    nodes.stop()

Every agent is one ibsim client (ibsim takes 10 in all, OpenSM and diagnostic tools included);
consumers talk to their agent over a UNIX socket and cost no client. Only processes started here
are signalled, by PID. Used by tests/integration/test_migration_agent.py, the day demo
(--migration on) and the coordinator's end-to-end tests.
"""

import json
import os
import subprocess
import time

from sar_testbed import preload_sanitizers
from testbed_common import (LoggedProcess, ProcessError, socket_path, start_logged,
                            with_parent_death_signal)


class AgentProcess(LoggedProcess):
    name = "sar-agent"


class ConsumerProcess(LoggedProcess):
    name = "sar-migconsumer"


class MigrationNode:
    """One host: its agent, its consumers, their files."""

    def __init__(self, host, run_dir):
        self.host = host
        self.run_dir = run_dir
        self.socket = socket_path(run_dir, "migration.sock")
        self.status_file = os.path.join(run_dir, "agent.json")
        self.agent_log = os.path.join(run_dir, "agent.log")
        self.agent = None
        self.consumers = []  # (ConsumerProcess, switch log path, name)

    def status(self):
        """The agent's last status, or {} before it wrote one."""
        try:
            with open(self.status_file) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def wait_status(self, cond, what, timeout):
        """Waits until cond(status) is true; returns that status."""
        return self.agent.wait_until(lambda: (lambda s: s if s and cond(s) else None)(
            self.status()), f"{self.host}: {what}", timeout)

    def wait_subscribed(self, timeout=15.0):
        return self.wait_status(
            lambda s: s.get("subscribed") and int(s.get("sm_guid", "0x0"), 16) != 0,
            "subscribed, SM GUID known", timeout)

    def switches(self):
        """Every line of every consumer's switch log, oldest first (sorted by mono_ns)."""
        out = []
        for _, path, _ in self.consumers:
            try:
                with open(path) as f:
                    out.extend(json.loads(line) for line in f if line.strip())
            except OSError:
                pass
        return sorted(out, key=lambda e: e["mono_ns"])

    def agent_log_text(self):
        try:
            with open(self.agent_log, errors="replace") as f:
                return f.read()
        except OSError:
            return ""


class MigrationNodes:
    """Agents and consumers on hosts of one Testbed."""

    def __init__(self, tb, agent_bin, consumer_bin, workdir, agent_args=()):
        self.tb = tb
        self.agent_bin = os.path.abspath(agent_bin)
        self.consumer_bin = os.path.abspath(consumer_bin)
        self.workdir = workdir
        self.agent_args = list(agent_args)
        self.nodes = {}

    def start(self, host, consumers=(), agent_args=()):
        """Starts the agent on `host` (test mode: issm) and one sar-migconsumer per dict in
        `consumers` (keys: peers [LIDs], drain_ms, never_answer, name)."""
        run_dir = os.path.join(self.workdir, f"node-{host}")
        os.makedirs(run_dir, exist_ok=True)
        node = MigrationNode(host, run_dir)
        env = self.tb.env(preload=True)
        env["SIM_HOST"] = host
        preload_sanitizers(env, run_dir)  # a sanitized agent under umad2sim (ASan builds)
        argv = [self.agent_bin, "--test-ibsim-issm", "--socket", node.socket, "--status-file",
                node.status_file, "--log-file", node.agent_log, *self.agent_args, *agent_args]
        # umad2sim leaves sys-<pid>/ in the working directory: keep it in the node's directory.
        node.agent = AgentProcess(start_logged(argv, os.path.join(run_dir, "agent.out"), env=env,
                                               cwd=run_dir), node.agent_log)
        self.nodes[host] = node
        for i, c in enumerate(consumers):
            self.add_consumer(node, c, i)
        return node

    def add_consumer(self, node, c, i=None):
        i = len(node.consumers) if i is None else i
        name = c.get("name", f"{node.host}-c{i}")
        log = os.path.join(node.run_dir, f"{name}.switches")
        argv = [self.consumer_bin, "--socket", node.socket, "--name", name, "--log", log,
                "--peers", ",".join(str(p) for p in c["peers"])]
        if c.get("drain_ms"):
            argv += ["--drain-ms", str(c["drain_ms"])]
        if c.get("never_answer"):
            argv.append("--never-answer")
        env = dict(os.environ)
        if env.get("SAR_TESTBED_PRELOAD"):
            # Sanitized builds: LeakSanitizer's exit check was seen spinning for good in a
            # consumer here (stop-the-world over /proc/self/task, after main returned), so the
            # test tool runs without it; libsarmig's leaks are checked by its unit tests.
            env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=1"
        proc = ConsumerProcess(start_logged(argv, os.path.join(node.run_dir, f"{name}.out"),
                                            env=env, cwd=node.run_dir), log)
        node.consumers.append((proc, log, name))
        return proc

    def wait_registered(self, timeout=10.0):
        for node in self.nodes.values():
            want = len(node.consumers)
            node.wait_status(lambda s, w=want: s.get("consumers_registered") == w,
                             f"{want} consumers registered", timeout)

    def stop(self):
        """Stops consumers, then agents (SIGTERM); returns {host: agent exit status}."""
        codes = {}
        for node in self.nodes.values():
            for proc, _, _ in node.consumers:
                proc.stop()
            if node.agent:
                codes[node.host] = node.agent.stop()
        return codes


def inject(tb, inject_bin, host, args, cwd, timeout=20.0):
    """Runs sar-mig-inject on `host` (one ibsim client while it runs); returns its stdout."""
    env = tb.env(preload=True)
    env["SIM_HOST"] = host
    preload_sanitizers(env, cwd)
    p = subprocess.run(with_parent_death_signal([os.path.abspath(inject_bin), *map(str, args)]),
                       env=env,
                       cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise ProcessError(f"sar-mig-inject {' '.join(map(str, args))} on {host}: exit "
                           f"{p.returncode}: {p.stderr}")
    return p.stdout


def base_use_during(switch_events, start_ns, end_ns, base_lids, clock="mono_ns"):
    """The switch events showing a consumer using a baseLID inside [start_ns, end_ns] (on
    `clock`: "mono_ns" or "real_ns"): a consumer's mode at t is its last event before t.
    Empty: none."""
    bad = []
    by_consumer = {}
    for e in switch_events:
        by_consumer.setdefault(e["consumer"], []).append(e)
    for name, evs in by_consumer.items():
        mode_at_start = None
        for e in evs:
            if e[clock] <= start_ns:
                mode_at_start = e
            elif e[clock] <= end_ns and set(e["lids"]) & set(base_lids):
                bad.append(e)
        if mode_at_start and set(mode_at_start["lids"]) & set(base_lids):
            bad.append(mode_at_start)
    return bad


def opensm_log_real_ns(line, year=None):
    """CLOCK_REALTIME ns of an OpenSM log line ("Nov 22 18:15:56 343512 ..."), local time."""
    w = line.split()
    year = year or time.localtime().tm_year
    t = time.mktime(time.strptime(f"{year} {w[0]} {w[1]} {w[2]}", "%Y %b %d %H:%M:%S"))
    return int(t) * 1_000_000_000 + int(w[3]) * 1000
