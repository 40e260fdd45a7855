#!/usr/bin/env python3
"""Test bed: the real, stock OpenSM routing a simulated InfiniBand fabric (ibsim).

    with Testbed("fabric.topo", "/tmp/x", guid2lid="lids") as tb:
        r = tb.route("ftree")          # RouteResult: files, routing time, RSS
        print(r.switches_lfts)         # the tables read back from the simulated switches

Each Testbed starts its own ibsim under a unique abstract socket name, so several can run at
once. OpenSM runs with -o (configure the subnet once, then exit): there is no daemon to stop, the
LFTs stay in ibsim, and every route() is a fresh OpenSM process that sweeps and routes from
scratch. Only processes started here are ever signalled, by PID. Every wait has a timeout, and a
failure raises TestbedError carrying the tail of the OpenSM and ibsim logs.

For a subnet manager that keeps running (signals, console, rerouting on events), start_opensm()
returns an OpenSMDaemon (a testbed_common.LoggedProcess, as ibsim is): its pid file, log offsets
to wait on, read-back, and stop(). Starting, waiting and stopping use testbed_common's helpers.

CLI: sar_testbed.py route --topology T --engine ftree --out DIR [--lmc N] [--guid2lid G]
     [--lfts-file L] writes DIR/{opensm-lfts.dump,switches.lfts,live.topo,guid2lid,opensm.log,
     result.json}.
"""

import argparse
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import time

from testbed_common import (LoggedProcess, ProcessError, StartStop, exit_on_signals,
                            live_registry, start_logged, stop_process, tail, vm_hwm_kb,
                            with_parent_death_signal)

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
# ibsim refuses clients beyond this many at once; OpenSM is one of them.
IBSIM_MAX_CLIENTS = 10
# OpenSM's -D with VERBOSE (0x04) added to the default 0x43: the osmsar plugin logs each LFT
# block the switches acknowledge at VERBOSE (one INFO summary per pass otherwise). (DEBUG, 0x08,
# would add OpenSM's own debug lines: 177 MB of log for test_osmsar_plugin's FT(2;20,18).)
OPENSM_VERBOSE_LOG_FLAGS = "0x47"

_instance_counter = itertools.count()
_live_testbeds = live_registry()


class TestbedError(ProcessError):
    """A step of the test bed failed; the message carries the relevant log tails."""


class IbsimProcess(LoggedProcess):
    """The bed's ibsim; its log is its console output."""

    name = "ibsim"
    error_class = TestbedError


def preload_sanitizers(env, run_dir):
    """In sanitized builds (SAR_SANITIZE), a plugin built with ASan/UBSan can only load into
    OpenSM, and our own sanitized MAD clients (sar-agent, sar-mig-inject) can only start under
    umad2sim's LD_PRELOAD, if the sanitizer runtimes come first: $SAR_TESTBED_PRELOAD (colon list, set by CTest) goes in
    front of LD_PRELOAD. OpenSM's own leaks are not ours to report, and neither are the MAD
    path's libc calls (umad2sim's read() copying past its buffer, a use-after-free in
    umad_send's write(): seen on most starts, in code not ours); everything else still aborts."""
    extra = [p for p in os.environ.get("SAR_TESTBED_PRELOAD", "").split(":") if p]
    if not extra:
        return
    supp = os.path.join(run_dir, "asan.supp")
    with open(supp, "w") as f:
        f.write("".join(f"interceptor_via_lib:{lib}\n" for lib in
                        ("libumad2sim.so", "libibumad.so.3", "libosmvendor.so.5")))
    env["LD_PRELOAD"] = " ".join(extra + env.get("LD_PRELOAD", "").split())
    env["ASAN_OPTIONS"] = f"detect_leaks=0:abort_on_error=1:suppressions={supp}"


# ibsim 0.10's table sizes (ibsim/sim.h) unless raised by -N/-S/-P/-L: nodes (switches and CAs),
# switches, ports (a switch has its port 0 besides its cabled ones), LIDs (linear forwarding cap).
IBSIM_DEFAULT_NODES = 2048
IBSIM_DEFAULT_SWITCHES = 256
IBSIM_DEFAULT_PORTS = 256 * 36 + 2048 * 2
IBSIM_DEFAULT_LINEAR_CAP = 30 * 1024
# The largest unicast LID: the linear forwarding table never needs to reach beyond it.
IB_MAX_UNICAST_LID = 0xBFFF


class SimFabric:
    """What ibsim will build from a topology file, read the way ibsim/sim_net.c reads it: node
    and port counts (to size ibsim's tables), every CA's node GUID and cabled ports, the first
    switch (where OpenSM can run when no CA has port 1 cabled). GUIDs follow ibsim's rule:
    `switchguid=`/`caguid=`/`rtguid=` set a counter per node type (`+N`: relative to the last
    absolute value), a switch takes the counter and adds 1, a CA or router takes it and adds its
    port count + 1; a CA's port N has node GUID + N."""

    def __init__(self, topology_path):
        self.switches = self.nodes = self.ports = 0
        self.cas = []  # (name, node GUID, [cabled port numbers]) in file order
        self.first_switch = None
        absolute = {"sw": 0x100000, "ca": 0x200000, "rt": 0x200000}
        counter = dict(absolute)
        current = None  # the CA record being read: its list of cabled ports
        with open(topology_path, errors="replace") as f:
            for line in f:
                line = line.strip()
                m = re.match(r"(switchguid|caguid|hcaguids|rtguid)\s*([=+])\s*(0x[0-9a-fA-F]+|\d+)",
                             line)
                if m:
                    kind = {"switchguid": "sw", "rtguid": "rt"}.get(m.group(1), "ca")
                    value = int(m.group(3), 0)
                    if m.group(2) == "=":
                        absolute[kind], value = value, 0
                    counter[kind] = absolute[kind] + value
                    continue
                m = re.match(r'(Switch|Hca|Ca|Rt)\s+(\d+)\s+"([^"]+)"', line)
                if m:
                    nports = int(m.group(2))
                    self.nodes += 1
                    if m.group(1) == "Switch":
                        self.switches += 1
                        self.first_switch = self.first_switch or m.group(3)
                        self.ports += nports + 1
                        counter["sw"] += 1
                        current = None
                    else:
                        kind = "rt" if m.group(1) == "Rt" else "ca"
                        self.ports += nports
                        current = []
                        self.cas.append((m.group(3), counter[kind], current))
                        counter[kind] += nports + 1
                    continue
                m = re.match(r"\[(\d+)\]", line)
                if m and current is not None and '"' in line:
                    current.append(int(m.group(1)))
                elif not line:
                    current = None

    def ibsim_args(self, max_lid=0):
        """ibsim's size flags: its defaults, raised to what this fabric needs."""
        return ["-N", str(max(IBSIM_DEFAULT_NODES, self.nodes)),
                "-S", str(max(IBSIM_DEFAULT_SWITCHES, self.switches)),
                "-P", str(max(IBSIM_DEFAULT_PORTS, self.ports)),
                "-L", str(max(IBSIM_DEFAULT_LINEAR_CAP, min(max_lid + 1, IB_MAX_UNICAST_LID + 1)))]

    def sm_node(self):
        """The node OpenSM runs on (SIM_HOST): the first CA whose port 1 has a cable, else the
        first switch (its management port 0). ibsim attaches a client to a CA's port 1 only, and
        OpenSM on an uncabled port waits for a link that never comes (122 s, then exits)."""
        for name, _, cabled in self.cas:
            if 1 in cabled:
                return name
        if self.first_switch is None:
            raise TestbedError("no CA with port 1 cabled and no switch: nowhere to run OpenSM")
        return self.first_switch


_LOG_TIME = re.compile(r"^(\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) (\d{6}) ")


def log_time(line):
    """Seconds (within the month) of an OpenSM log line, or None; OpenSM logs microseconds."""
    m = _LOG_TIME.match(line)
    if not m:
        return None
    _, day, hh, mm, ss, usec = m.groups()
    return ((int(day) * 24 + int(hh)) * 60 + int(mm)) * 60 + int(ss) + int(usec) / 1e6


def routing_time(log_text, engine):
    """(seconds, engine that configured the tables) from one OpenSM log.

    OpenSM prints no duration; the span runs from "building routing with '<engine>' routing
    algorithm" (INFO from osm_ucast_mgr.c, needs per-module logging 0x04) to "<name> tables
    configured on all switches". The name in the second line tells whether OpenSM fell back to
    another engine. Seconds is None if either line is missing; uses the last routing pass.
    """
    start = end = used = None
    for line in log_text.splitlines():
        if f"building routing with '{engine}' routing algorithm" in line:
            start, end, used = log_time(line), None, None
        m = re.search(r"osm_ucast_mgr_process: (\S+) tables configured on all switches", line)
        if m:
            end, used = log_time(line), m.group(1)
    if start is None or end is None:
        return None, used
    return end - start, used


class RouteResult:
    """What one OpenSM run produced. Paths are inside the run directory."""

    def __init__(self, run_dir, engine):
        self.run_dir = run_dir
        self.engine = engine
        self.engine_used = None  # name in "<name> tables configured" (differs on a fallback)
        self.log = os.path.join(run_dir, "opensm.log")
        self.opensm_lfts = os.path.join(run_dir, "opensm-lfts.dump")
        self.guid2lid = os.path.join(run_dir, "guid2lid")
        self.switches_lfts = None  # dump_fts output, if read back
        self.live_topo = None  # ibnetdiscover output, if read back
        self.routing_time_s = None  # from the log timestamps; None if the lines are missing
        self.subnet_up_s = None  # wall time from starting OpenSM to "SUBNET UP" in its log
        self.opensm_maxrss_kb = None  # OpenSM's peak RSS (VmHWM), last sample before exit
        self.readback_s = None

    def as_dict(self):
        return dict(self.__dict__)


class Testbed(StartStop):
    """One ibsim fabric plus the means to route it with stock OpenSM and read it back."""

    def __init__(self, topology, workdir, lmc=0, guid2lid=None, sim_host=None,
                 ibsim_args=(), ready_timeout=20.0):
        self.topology = os.path.abspath(topology)
        self.workdir = os.path.abspath(workdir)
        self.lmc = lmc
        self.guid2lid = os.path.abspath(guid2lid) if guid2lid else None
        self.sim_fabric = SimFabric(self.topology)
        self.sim_host = sim_host or self.sim_fabric.sm_node()
        # ibsim sized from the fabric (its defaults refuse a fabric past 256 switches, 2048 nodes
        # or 13,312 ports); `ibsim_args` come after, so a caller's own sizes win.
        self.ibsim_args = self.sim_fabric.ibsim_args(self._max_lid()) + list(ibsim_args)
        self.ready_timeout = ready_timeout
        self.sockname = f"sar-{os.getpid()}-{next(_instance_counter)}"
        self.cache_dir = os.path.join(self.workdir, "cache")
        self.ibsim_log = os.path.join(self.workdir, "ibsim.out")
        self.fifo = os.path.join(self.workdir, "ibsim.ctl")
        self._ibsim = None
        self._fifo_fd = None
        self._runs = 0
        self._last_log = None
        self._daemons = []

    def _max_lid(self):
        """The largest LID OpenSM may give: the seeded guid2lid's, or one LID block of 2^LMC per
        port (HCA ports and switch port 0s, each block aligned)."""
        top = 0
        if self.guid2lid:
            with open(self.guid2lid) as f:
                for line in f:
                    fields = line.split()
                    try:  # a malformed line is _seed_guid2lid's to report, with its line
                        top = max(top, int(fields[2], 16)) if len(fields) == 3 else top
                    except ValueError:
                        pass
        ports = sum(len(c) for _, _, c in self.sim_fabric.cas) + self.sim_fabric.switches
        return max(top, (ports + 1) << self.lmc)

    # --- lifecycle -------------------------------------------------------------------------

    def env(self, preload=False):
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)
        env.update(IBSIM_SOCKNAME=self.sockname, SIM_HOST=self.sim_host,
                   OSM_CACHE_DIR=self.cache_dir)
        if preload:
            env["LD_PRELOAD"] = UMAD2SIM
        return env

    def start(self):
        """Starts ibsim and waits until it is ready. Call it from a thread that outlives the
        bed: ibsim gets SIGKILL when the thread that started it ends (parent-death signal)."""
        if self._ibsim is not None:
            raise TestbedError("test bed already started")
        os.makedirs(self.workdir, exist_ok=True)
        # Stale LID caches from an earlier bed in this directory would change the LIDs.
        shutil.rmtree(self.cache_dir, ignore_errors=True)
        os.makedirs(self.cache_dir)
        if self.guid2lid:
            self._seed_guid2lid()
        if os.path.exists(self.fifo):
            os.unlink(self.fifo)
        os.mkfifo(self.fifo)
        # Read-write, so ibsim never sees EOF on its console (it would busy-loop) and we can
        # write console commands into it.
        self._fifo_fd = os.open(self.fifo, os.O_RDWR)
        _live_testbeds.add(self)
        self._ibsim = IbsimProcess(start_logged(
            ["ibsim", "-s", *self.ibsim_args, self.topology], self.ibsim_log, env=self.env(),
            stdin=self._fifo_fd, mode="wb",
            cwd=self.workdir), self.ibsim_log)  # umad2sim leaves sys-<pid>/ in the working dir
        try:
            self._ibsim.wait_log("Network simulator ready", 0, self.ready_timeout)
        except TestbedError:
            self.stop()
            raise

    def _seed_guid2lid(self):
        # OpenSM's cache reader needs a blank line after each entry: without it only the first
        # entry is taken and every other port gets a fresh LID. Rewrite the entries that way.
        entries = []
        with open(self.guid2lid) as f:
            for n, line in enumerate(f, 1):
                fields = line.split()
                if not fields or fields[0].startswith("#"):
                    continue
                if len(fields) != 3 or not all(x.startswith("0x") for x in fields):
                    raise TestbedError(f"{self.guid2lid}:{n}: expected '0x<guid> 0x<lid> 0x<lid>'")
                entries.append(" ".join(fields))
        with open(os.path.join(self.cache_dir, "guid2lid"), "w") as f:
            f.write("".join(e + "\n\n" for e in entries))

    def stop(self):
        """Stops any OpenSM daemons and ibsim (only ours, by PID) and closes the console FIFO.
        Idempotent."""
        try:
            for daemon in self._daemons:
                daemon.stop()
            if self._ibsim is not None:
                self._ibsim.stop()
        finally:
            if self._fifo_fd is not None:
                os.close(self._fifo_fd)
                self._fifo_fd = None
            _live_testbeds.discard(self)

    @property
    def ibsim_pid(self):
        return self._ibsim.pid if self._ibsim else None

    def ibsim_command(self, command):
        """Writes one console command (e.g. 'Unlink "leaf000"[5]') to ibsim."""
        os.write(self._fifo_fd, (command + "\n").encode())

    # --- routing ---------------------------------------------------------------------------

    def _check_ibsim(self):
        if self._ibsim is None or not self._ibsim.alive():
            raise TestbedError("ibsim is not running")

    def _write_conf(self, run_dir, dump_dir, extra_conf, console_port=None):
        pml = os.path.join(run_dir, "per-module-logging.conf")
        with open(pml, "w") as f:
            # INFO from the unicast manager gives the "building routing with" line we time from.
            f.write("osm_ucast_mgr.c 0x07\n")
        conf = os.path.join(run_dir, "opensm.conf")
        lines = [
            "force_log_flush TRUE",  # else the log (and SUBNET UP) may sit in a buffer
            "accum_log_file FALSE",
            "sweep_interval 0",
            f"dump_files_dir {dump_dir}",
            "console off" if console_port is None else "console loopback",
            f"per_module_logging_file {pml}",
        ]
        if console_port is not None:
            lines.append(f"console_port {console_port}")
        if extra_conf:
            lines.extend(extra_conf if isinstance(extra_conf, (list, tuple)) else [extra_conf])
        with open(conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        return conf

    def _spawn_opensm(self, mode_args, conf, log, engine, lfts_file, run_dir, dump_dir,
                      env_extra=None, log_flags=None):
        """Starts OpenSM on this fabric (stdout to run_dir/opensm.out). For engine "file",
        `lfts_file` is loaded with no fallback: a file OpenSM cannot use fails the run instead of
        silently routing with minhop. `log_flags`: OpenSM's -D (default 0x43: error, info,
        routing)."""
        cmd = ["opensm", *mode_args, "-F", conf, "-f", log, "-D", log_flags or "0x43", "-l",
               str(self.lmc)]
        if engine == "file":
            if not lfts_file:
                raise TestbedError("engine 'file' needs lfts_file")
            cmd += ["-R", "file,no_fallback", "-U", os.path.abspath(lfts_file)]
        else:
            cmd += ["-R", engine]
        env = self.env(preload=True)
        env["OSM_TMP_DIR"] = dump_dir
        env.update(env_extra or {})
        preload_sanitizers(env, run_dir)
        return start_logged(cmd, os.path.join(run_dir, "opensm.out"), env=env, mode="wb",
                            cwd=self.workdir)

    def route(self, engine, lfts_file=None, extra_conf=None, timeout=60.0, readback=True,
              allow_fallback=False):
        """Runs OpenSM once with routing engine `engine` and collects its results.

        For engine "file", `lfts_file` is loaded with no fallback to minhop: a file OpenSM cannot
        use fails the run instead of silently routing with minhop.
        """
        self._check_ibsim()
        self._runs += 1
        run_dir = os.path.join(self.workdir, f"run{self._runs}-{engine}")
        shutil.rmtree(run_dir, ignore_errors=True)
        dump_dir = os.path.join(run_dir, "dump")
        os.makedirs(dump_dir)
        result = RouteResult(run_dir, engine)
        self._last_log = result.log
        conf = self._write_conf(run_dir, dump_dir, extra_conf)
        t0 = time.monotonic()
        proc = self._spawn_opensm(["-o"], conf, result.log, engine, lfts_file, run_dir, dump_dir)
        try:
            self._wait_opensm(proc, result, engine, t0, timeout)
        finally:
            stop_process(proc)
        log_text = open(result.log, errors="replace").read()
        result.routing_time_s, result.engine_used = routing_time(log_text, engine)
        if result.engine_used != engine and not allow_fallback:
            raise self.error(f"OpenSM configured the tables with '{result.engine_used}', "
                             f"not '{engine}'")
        src = os.path.join(dump_dir, "opensm-lfts.dump")
        if not os.path.exists(src):
            raise self.error("OpenSM wrote no opensm-lfts.dump")
        shutil.copyfile(src, result.opensm_lfts)
        cache = os.path.join(self.cache_dir, "guid2lid")
        if os.path.exists(cache):
            shutil.copyfile(cache, result.guid2lid)
        if readback:
            t1 = time.monotonic()
            result.switches_lfts = os.path.join(run_dir, "switches.lfts")
            result.live_topo = os.path.join(run_dir, "live.topo")
            self.diag(["dump_fts"], result.switches_lfts)
            self.diag(["ibnetdiscover"], result.live_topo)
            result.readback_s = time.monotonic() - t1
        with open(os.path.join(run_dir, "result.json"), "w") as f:
            json.dump(result.as_dict(), f, indent=1)
        return result

    def _wait_opensm(self, proc, result, engine, t0, timeout):
        # OpenSM -o exits after SUBNET UP, but on a routing failure it keeps retrying forever:
        # watch the log for the outcome instead of only waiting for the process.
        failures = ("No routing engine able", "ERR 6302", "PARSE ERROR", "Exiting SM")
        if engine == "file":
            failures += ("ERR 63",)
        deadline = t0 + timeout
        up = False
        while True:
            # getrusage() of the child would count the forked Python before exec; VmHWM is
            # OpenSM's own peak so far. The last sample before exit is what we report.
            hwm = vm_hwm_kb(proc.pid)
            if hwm:
                result.opensm_maxrss_kb = hwm
            proc.poll()
            text = tail(result.log, 100000) if os.path.exists(result.log) else ""
            if not up and re.search(r"-> SUBNET UP\s*$", text, re.M):
                up = True
                result.subnet_up_s = time.monotonic() - t0
            bad = [f for f in failures if f in text and not (up and f == "Exiting SM")]
            if bad:
                raise self.error(f"OpenSM failed ({bad[0]})")
            if proc.returncode is not None:
                if up and proc.returncode == 0:
                    return
                raise self.error(f"OpenSM exited with {proc.returncode}"
                                 + ("" if up else " before SUBNET UP"))
            if time.monotonic() > deadline:
                raise self.error(f"OpenSM: no SUBNET UP and exit within {timeout} s")
            time.sleep(0.01)

    def start_opensm(self, engine, extra_conf=None, env_extra=None, console_port=None,
                     lfts_file=None, timeout=60.0, name=None, ready=r"-> SUBNET UP\s*$",
                     log_flags=None):
        """Starts OpenSM as a daemon (no -o) with routing engine `engine` and waits for its
        first SUBNET UP. Returns an OpenSMDaemon; stop() it (the bed's stop() does too).

        `extra_conf` lines go into opensm.conf (e.g. "event_plugin_name osmsar"); `env_extra`
        adds environment (e.g. LD_LIBRARY_PATH for a plugin). With `console_port`, the console
        listens on 127.0.0.1 only. For engine "file", `lfts_file` is loaded with no fallback.
        `ready`: the log line waited for (a standby SM logs "Entering STANDBY state" instead).
        `log_flags`: OpenSM's -D (e.g. OPENSM_VERBOSE_LOG_FLAGS).
        """
        self._check_ibsim()
        self._runs += 1
        run_dir = os.path.join(self.workdir, name or f"daemon{self._runs}-{engine}")
        shutil.rmtree(run_dir, ignore_errors=True)
        dump_dir = os.path.join(run_dir, "dump")
        os.makedirs(dump_dir)
        conf = self._write_conf(run_dir, dump_dir, extra_conf, console_port)
        log = os.path.join(run_dir, "opensm.log")
        self._last_log = log
        proc = self._spawn_opensm([], conf, log, engine, lfts_file, run_dir, dump_dir,
                                  env_extra, log_flags)
        daemon = OpenSMDaemon(self, proc, run_dir, log, dump_dir)
        self._daemons.append(daemon)
        try:
            daemon.wait_log(ready, 0, timeout)
        except TestbedError:
            daemon.stop()
            raise
        return daemon

    def diag(self, argv, out_path=None, timeout=60.0):
        """Runs an infiniband-diags tool against this fabric (ibsim-run); returns its stdout."""
        self._check_ibsim()
        try:
            p = subprocess.run(with_parent_death_signal(["ibsim-run", *argv]), env=self.env(),
                               capture_output=True, timeout=timeout, cwd=self.workdir)
        except subprocess.TimeoutExpired:
            raise self.error(f"{argv[0]} timed out after {timeout} s")
        out = p.stdout.decode(errors="replace")
        # Beyond ibsim's client limit some tools still exit 0 with nothing useful: also require
        # output.
        if p.returncode != 0 or not out.strip():
            raise self.error(f"{argv[0]} failed (exit {p.returncode}):\n"
                             f"{p.stderr.decode(errors='replace')[-2000:]}")
        if out_path:
            with open(out_path, "w") as f:
                f.write(out)
        return out

    def error(self, what):
        """A TestbedError saying `what`, with the tails of the last OpenSM log and ibsim's."""
        msg = [what]
        if self._last_log:
            msg.append(f"--- tail of {self._last_log}:\n{tail(self._last_log)}")
        msg.append(f"--- tail of {self.ibsim_log}:\n{tail(self.ibsim_log, 10)}")
        return TestbedError("\n".join(msg))


class OpenSMDaemon(LoggedProcess):
    """A running OpenSM of a Testbed (`log` is OpenSM's own log file). Its PID is written to
    `pid_file` (OpenSM writes none), so tools that signal OpenSM by pid file (sar-filterd) can be
    pointed at it."""

    name = "OpenSM"

    def __init__(self, testbed, proc, run_dir, log, dump_dir):
        super().__init__(proc, log)
        self.testbed = testbed
        self.run_dir = run_dir
        self.dump_dir = dump_dir
        self.pid_file = os.path.join(run_dir, "opensm.pid")
        with open(self.pid_file, "w") as f:
            f.write(f"{proc.pid}\n")
        self._readbacks = 0

    def error(self, what):
        return self.testbed.error(what)

    def routing_passes(self, engine, offset=0):
        """(seconds or None, engine used) of each routing pass logged after `offset`."""
        passes, chunk = [], []
        for line in self.log_since(offset).splitlines():
            chunk.append(line)
            if "tables configured on all switches" in line:
                passes.append(routing_time("\n".join(chunk), engine))
                chunk = []
        return passes

    def readback(self, out_path=None):
        """dump_fts of the simulated switches now; returns the file's path."""
        self._readbacks += 1
        path = out_path or os.path.join(self.run_dir, f"switches-{self._readbacks}.lfts")
        self.testbed.diag(["dump_fts"], path)
        return path


def _cli(argv):
    ap = argparse.ArgumentParser(description="Route a simulated fabric with stock OpenSM.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("route", help="route once and read the tables back")
    r.add_argument("--topology", required=True)
    r.add_argument("--engine", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--lmc", type=int, default=0)
    r.add_argument("--guid2lid")
    r.add_argument("--lfts-file")
    r.add_argument("--sim-host")
    r.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args(argv)
    exit_on_signals()
    os.makedirs(args.out, exist_ok=True)
    try:
        with Testbed(args.topology, os.path.join(args.out, "testbed"), lmc=args.lmc,
                     guid2lid=args.guid2lid, sim_host=args.sim_host) as tb:
            res = tb.route(args.engine, lfts_file=args.lfts_file, timeout=args.timeout)
    except TestbedError as e:
        print(f"sar_testbed: {e}", file=sys.stderr)
        return 1
    for name, src in (("opensm-lfts.dump", res.opensm_lfts), ("switches.lfts", res.switches_lfts),
                      ("live.topo", res.live_topo), ("guid2lid", res.guid2lid),
                      ("opensm.log", res.log)):
        if src and os.path.exists(src):
            shutil.copyfile(src, os.path.join(args.out, name))
    with open(os.path.join(args.out, "result.json"), "w") as f:
        json.dump(res.as_dict(), f, indent=1)
    print(f"{args.engine}: routing {res.routing_time_s} s, SUBNET UP after "
          f"{res.subnet_up_s:.3f} s, OpenSM max RSS {res.opensm_maxrss_kb} kB")
    return 0


if __name__ == "__main__":
    sys.exit(_cli(sys.argv[1:]))
