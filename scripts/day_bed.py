"""The whole service on one machine, as parts that start and stop together (scripts/day_demo.py
runs a day on it; tests/integration/test_e2e_day.py a short one):

  - a fat-tree from `sar-route gen`, simulated by ibsim, with a long-running stock OpenSM that
    routes it with sar (sar_testbed.OpenSMDaemon);
  - OpenSM's default engine (minhop) on a second ibsim bed, routed once and read back: it is
    oblivious to jobs, so those tables are the reference for every moment of the day;
  - a real SLURM (slurm_testbed.SlurmTestbed) whose node names are the fabric's host names and
    whose topology.conf has the fabric's leaves;
  - sar-filterd reading SLURM through libslurm and telling OpenSM to reroute.

How OpenSM gets sar's tables has two modes, chosen in one place each (sm_setup, filterd_trigger):
  plugin  OpenSM loads libosmsar.so (opensm-patch/) and routes with `routing_engine sar`;
          sar-filterd writes the job mapping and sends SIGUSR2 (the default when built);
  file    stock OpenSM's `file` engine; sar-filterd routes with libsar, writes the LFT file
          atomically and sends SIGHUP (needs nothing but stock OpenSM).
SLURM's controller hooks (slurm-plugin/: PrologSlurmctld/EpilogSlurmctld -> sar-filterd's control
socket, and --sar-pattern) are set up in hooks_setup, on when the build has them.

Every process is started here and stopped here by PID (also on errors and signals: the test
beds register themselves for interpreter exit, and sar-filterd runs with a parent-death signal).
"""

import glob
import json
import os
import re
import shutil
import signal
import subprocess
import time

import fors_mpi
import migration_nodes
import sar_testbed
from filterd_process import FilterdProcess
from slurm_testbed import SlurmTestbed
from testbed_common import (ProcessError, StartStop, live_registry, socket_path, tail,
                            wait_gone)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIPPED_OSMSAR_CONF = os.path.join(REPO, "config", "osmsar.conf")
_live = live_registry()


class DayError(RuntimeError):
    """A step of the end-to-end bed failed or a check did not hold; the message says which."""


ERRORS = (DayError, ProcessError)  # ProcessError: the test beds' and sar-filterd's errors


def run(argv, check=True, timeout=120, **kw):
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout,
                       **kw)
    if check and p.returncode != 0:
        raise DayError(f"{' '.join(map(str, argv))}: exit {p.returncode}\n{p.stderr[-2000:]}")
    return p


# --- the fabric ---------------------------------------------------------------------------


def read_host_leaves(topology):
    """Host name -> leaf switch name, from an ibsim/ibnetdiscover file (each HCA's port 1 peer)."""
    leaves, host = {}, None
    with open(topology) as f:
        for line in f:
            m = re.match(r'\s*(Hca|Ca|Switch)\s+\d+\s+"([^"]+)"', line)
            if m:
                host = m.group(2) if m.group(1) != "Switch" else None
                continue
            m = re.match(r'\s*\[1\]\s+"([^"]+)"\[\d+\]', line)
            if m and host is not None:
                leaves[host] = m.group(1)
                host = None
    return leaves


_HCA_NAME = re.compile(r"^(\S+)\s+(mlx\d+_\d+|HCA-\d+)$")


def read_dump(topology):
    """A real ibnetdiscover dump: (rails, guid2lid lines, the same for ibsim's port GUIDs).
    rails maps each host with several
    HCAs named "<host> mlx5_N" or "<host> HCA-N" (a DGX's) to {rail: switch record its HCA of
    that rail is cabled to}; the rest (SHARP Aggregation Nodes, HCAs without a host name) are no
    SLURM nodes. guid2lid: every port's LID as the dump has it."""
    hosts, lids, sim_lids, ca, caguid = {}, [], [], None, 0
    with open(topology, errors="replace") as f:
        for line in f:
            m = re.match(r"\s*caguid=0x(\w+)", line)
            if m:
                caguid = int(m.group(1), 16)
            m = re.match(r'\s*Switch\s+\d+\s+"([^"]+)".*\bport 0 lid (\d+)', line)
            if m:
                lids.append((m.group(1), int(m.group(2))))
                sim_lids.append(lids[-1])
                ca = None
                continue
            m = re.match(r'\s*(?:Ca|Hca)\s+\d+\s+"[^"]+"\s*#\s*"([^"]*)"', line)
            if m:
                ca = _HCA_NAME.match(m.group(1).strip())
                continue
            m = re.match(r'\s*\[(\d+)\]\((\w+)\)\s+"([^"]+)"\[\d+\].*#\s*lid (\d+)', line)
            if m:
                lids.append(("0x" + m.group(2), int(m.group(4))))
                # ibsim gives a CA port the GUID node GUID + port number, whatever the file says.
                sim_lids.append((f"{caguid + int(m.group(1)):#018x}", int(m.group(4))))
                if ca:
                    hosts.setdefault(ca.group(1), []).append((ca.group(2), m.group(3)))
    switch_guid = {}
    with open(topology, errors="replace") as f:  # switch records are named, GUIDs come before
        guid = None
        for line in f:
            m = re.match(r"\s*switchguid=(0x\w+)", line)
            if m:
                guid = m.group(1)
            m = re.match(r'\s*Switch\s+\d+\s+"([^"]+)"', line)
            if m and guid:
                switch_guid[m.group(1)] = guid
    def lines(entries):
        return [f"{g if g.startswith('0x') else switch_guid[g]} {lid:#06x} {lid:#06x}"
                for g, lid in entries]

    # Rails as docs/formats.md defines them: the rank of the number ending the HCA name among
    # the numbers of that prefix on all such hosts (mlx5_0,1,4,5 and HCA-1,2,5,6: rails 0..3).
    def split(name):
        m = re.match(r"(.*?)(\d+)$", name)
        return m.group(1), int(m.group(2))
    hosts = {h: hcas for h, hcas in hosts.items() if len(hcas) > 1}
    numbers = {}
    for hcas in hosts.values():
        for name, _ in hcas:
            prefix, n = split(name)
            numbers.setdefault(prefix, set()).add(n)
    rank = {p: sorted(ns) for p, ns in numbers.items()}
    rails = {h: {rank[split(name)[0]].index(split(name)[1]): sw for name, sw in hcas}
             for h, hcas in hosts.items()}
    return rails, lines(lids), lines(sim_lids)


# --- the three switches between modes -----------------------------------------------------


class Binaries:
    """Where sar's programs are: a build tree (from_build) or an installed tree such as the
    packages unpacked with `dpkg-deb -x` (from_root, the /usr layout of docs/operations.md)."""

    def __init__(self, sar_route, sar_filterd, plugin, sar_notify, spank, lua, agent, consumer,
                 where, osmsar_conf=SHIPPED_OSMSAR_CONF, sarfors=None, alltoall_check=None):
        self.sar_route = sar_route
        self.sar_filterd = sar_filterd
        self.plugin = plugin  # libosmsar.so
        self.sar_notify = sar_notify
        self.spank = spank  # sar_pattern.so
        self.lua = lua  # job_submit.lua
        self.agent = agent
        self.consumer = consumer
        self.where = where
        self.osmsar_conf = osmsar_conf  # the plugin's shipped config
        # libsarfors (mpi/) and the MPI program an alltoall job of the day runs under it
        # (alltoall_check: a test program, in build trees only).
        self.sarfors = sarfors
        self.alltoall_check = alltoall_check

    @classmethod
    def from_build(cls, build_dir):
        b = os.path.abspath(build_dir)
        return cls(os.path.join(b, "router", "sar-route"),
                   os.path.join(b, "filterd", "sar-filterd"),
                   os.path.join(b, "opensm-patch", "libosmsar.so"),
                   os.path.join(b, "slurm-plugin", "sar-notify"),
                   os.path.join(b, "slurm-plugin", "sar_pattern.so"),
                   os.path.join(REPO, "slurm-plugin", "job_submit.lua"),
                   os.path.join(b, "node", "agent", "sar-agent"),
                   os.path.join(b, "node", "libsarmig", "sar-migconsumer"),
                   f"build tree {b}", sarfors=os.path.join(b, "mpi", "libsarfors.so"),
                   alltoall_check=os.path.join(b, "mpi", "alltoall_check"))

    @classmethod
    def from_root(cls, root):
        """An installed tree under `root` (prefix /usr, Debian's multiarch library directory)."""
        r = os.path.abspath(root)
        usr = os.path.join(r, "usr")
        libdirs = [d for d in sorted(glob.glob(os.path.join(usr, "lib", "*-linux-gnu*")))
                   if os.path.isdir(d)] or [os.path.join(usr, "lib")]
        lib = libdirs[0]
        return cls(os.path.join(usr, "bin", "sar-route"),
                   os.path.join(usr, "bin", "sar-filterd"),
                   os.path.join(lib, "libosmsar.so"),
                   os.path.join(usr, "sbin", "sar-notify"),
                   os.path.join(lib, "slurm-wlm", "sar_pattern.so"),
                   os.path.join(usr, "share", "sar", "slurm", "job_submit.lua"),
                   os.path.join(usr, "bin", "sar-agent"),
                   os.path.join(usr, "bin", "sar-migconsumer"),
                   f"installed tree {r}", os.path.join(r, "etc", "sar", "osmsar.conf"),
                   sarfors=os.path.join(lib, "libsarfors.so"))

    def plugin_dir(self):
        return os.path.dirname(self.plugin)

    def hook_files(self):
        return self.sar_notify, self.spank, self.lua


def default_sm(bins):
    """The plugin when it is built, else stock OpenSM's file engine."""
    return "plugin" if os.path.exists(bins.plugin) else "file"


def shipped_osmsar_conf(shipped, path, settings):
    """Writes the plugin config that ships (`shipped`: config/osmsar.conf, installed as
    /etc/sar/osmsar.conf) to `path` with only `settings` (key -> value) changed or added: the
    bed's own paths and sizes. What ships is what is tested (issue 34: the beds ran `delta
    false` while the shipped config says `delta true`)."""
    out, done = [], set()
    with open(shipped) as f:
        for line in f.read().splitlines():
            words = line.split()
            if words and not words[0].startswith("#") and words[0] in settings:
                line = f"{words[0]} {settings[words[0]]}"
                done.add(words[0])
            out.append(line)
    out += [f"{k} {v}" for k, v in settings.items() if k not in done]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def sm_setup(mode, bed, run_dir):
    """What the long-running OpenSM runs with: dict(engine, lfts_file, extra_conf, env_extra)."""
    if mode == "file":
        # OpenSM needs a file at its first sweep: sar's tables for a machine without multi-leaf
        # jobs, which is what sar-filterd would compute for an empty job set.
        run([bed.sar_route, "route", "--engine", "sar", "--topology", bed.topology, "--lids",
             bed.guid2lid, "--vls", bed.num_vls, "-o", bed.lft_file])
        return dict(engine="file", lfts_file=bed.lft_file, extra_conf=[], env_extra={})
    if mode == "plugin":
        lib = bed.bins.plugin
        if not os.path.exists(lib):
            raise DayError(f"--sm plugin: {lib} is not built (opensm-patch/)")
        conf = os.path.join(run_dir, "osmsar.conf")
        with open(bed.mapping_file, "w"):
            pass  # no jobs yet
        # The shipped config (delta true: each pass starts from the switches' tables, so the
        # checks compare with `sar-route route --previous ... --previous-jobs ...`), with the
        # bed's mapping and VLs; `delta` only where a caller says so (bench/soak.py).
        settings = {"mapping_file": bed.mapping_file, "num_vls": bed.num_vls}
        if bed.plugin_delta is not None:
            settings["delta"] = "true" if bed.plugin_delta else "false"
        if bed.fors_only_where_faster:
            settings["fors_only_where_faster"] = "true"
        if bed.migration:
            # docs/opensm-plugin.md "Migration mode"; the agents give their consumers 3/4 of
            # the ack deadline.
            settings.update({"migration": "on", "status_file": bed.migration_status,
                             "ack_timeout_ms": 2000, "repath_timeout_ms": 2000})
        shipped_osmsar_conf(bed.bins.osmsar_conf, conf, settings)
        # As docs/opensm-plugin.md: QoS on, so OpenSM programs SL2VL through the engine.
        return dict(engine="sar", lfts_file=None,
                    extra_conf=["event_plugin_name osmsar", f"event_plugin_options {conf}",
                                "qos TRUE", f"qos_max_vls {bed.num_vls}"],
                    env_extra={"LD_LIBRARY_PATH": bed.bins.plugin_dir()})
    raise DayError(f"unknown subnet manager mode '{mode}'")


def filterd_trigger(mode, bed):
    """sar-filterd's action options for the mode (see config/sar-filterd.yaml); with a standby
    OpenSM both pid files (docs/operations.md, "Standby subnet manager")."""
    if mode == "file":
        return dict(trigger="file", opensm_pid_file=bed.osm.pid_file, lft_file=bed.lft_file,
                    guid2lid=bed.guid2lid, engine="sar", num_vls=bed.num_vls)
    if bed.standby_sm:
        return dict(trigger="signal",
                    opensm_pid_file=[bed.osm.pid_file, bed.standby_sm.pid_file])
    return dict(trigger="signal", opensm_pid_file=bed.osm.pid_file)


# --- a master and a standby OpenSM (docs/operations.md, "Standby subnet manager") ------------

MASTER_SM_PRIORITY = 14
STANDBY_SM_PRIORITY = 1


def sm_failover_conf(priority):
    """opensm.conf lines of one of a master/standby pair. The standby notices a dead master after
    polls_retry_number missed SMInfo polls (sminfo_polling_timeout ms apart): ~1.5 s here
    instead of OpenSM's default 40 s."""
    return [f"sm_priority {priority}", "sminfo_polling_timeout 500", "polls_retry_number 2"]


def start_standby_sm(tb, engine, extra_conf, env_extra, guid2lid, cache_dir, host,
                     name="standby"):
    """Starts a standby OpenSM on the Testbed `tb` beside its master: on another HCA (`host`),
    with its own LID cache seeded from `guid2lid` (the master's seed; not a copy of the
    master's live cache dir: OpenSM writes temporary files there, guid2mkey.tmp, that vanish
    mid-copy) and `extra_conf` plus the standby's priority; waits for `Entering STANDBY
    state`. Returns the OpenSMDaemon."""
    shutil.rmtree(cache_dir, ignore_errors=True)
    os.makedirs(cache_dir)
    shutil.copyfile(guid2lid, os.path.join(cache_dir, "guid2lid"))
    conf = [*extra_conf, *sm_failover_conf(STANDBY_SM_PRIORITY)]
    return tb.start_opensm(engine, extra_conf=conf, name=name,
                           env_extra=dict(env_extra, SIM_HOST=host, OSM_CACHE_DIR=cache_dir),
                           ready=r"Entering STANDBY state")


def hooks_available(bins):
    return all(os.path.exists(f) for f in bins.hook_files())


def hooks_setup(enabled, bed):
    """(SlurmTestbed keyword arguments, sar-filterd options) for the SLURM side (docs/slurm.md):
    PrologSlurmctld/EpilogSlurmctld run sar-notify, which asks sar-filterd for a poll over its
    control socket; the SPANK plugin and job_submit.lua carry --sar-pattern to sar-filterd.
    Without them sar-filterd finds job changes by polling alone."""
    if not enabled:
        return {}, {}
    notify, spank, lua = bed.bins.hook_files()
    for f in (notify, spank, lua):
        if not os.path.exists(f):
            raise DayError(f"--hooks on: {f} is not built (slurm-plugin/)")
    # slurmctld runs the hooks with a fresh environment: a wrapper names our socket.
    hook = os.path.join(bed.workdir, "sar-hook.sh")
    with open(hook, "w") as f:
        f.write(f"#!/bin/sh\nexec {notify} --socket {bed.control_socket}\n")
    os.chmod(hook, 0o755)
    return (dict(spank_plugin=spank, job_submit_lua=lua, prolog_slurmctld=hook,
                 epilog_slurmctld=hook),
            # The hooks bring every start and end; the poll is only a safety net.
            dict(poll_interval_s=max(bed.poll_interval_s, 30.0)))


# --- the bed ------------------------------------------------------------------------------


class Job:
    def __init__(self, label, job_id, hosts, leaves, pattern):
        self.label = label
        self.id = job_id
        self.hosts = hosts
        self.leaves = leaves  # sorted leaf switch names
        self.pattern = pattern


class DayBed(StartStop):
    """Starts fabric, OpenSM (sar), the minhop reference, SLURM and sar-filterd; stop() ends all."""

    def __init__(self, workdir, fabric="ft2:16,16", sm=None, hooks=None, sar_route=None,
                 sar_filterd=None, build_dir=None, poll_interval_s=1.0, num_vls=8,
                 progress=None, migration=False, migration_agents=8, drain_ms=50,
                 extra_env=None, bins=None, plugin_delta=None, fors_only_where_faster=False,
                 standby=False):
        self.workdir = os.path.abspath(workdir)
        # A standby OpenSM beside the master (plugin mode; bench/sm_failover_day.py): the
        # master runs with sm_priority 14, the standby (standby_sm) with 1 on the second leaf's
        # first host, and sar-filterd signals both.
        self.standby = standby
        self.standby_sm = None
        # The plugin's `fors_only_where_faster` (docs/fors.md), and sar-route's for the checks.
        self.fors_only_where_faster = fors_only_where_faster
        # The plugin's `delta`: None keeps the shipped config's (true).
        self.plugin_delta = plugin_delta
        self.fabric_spec = fabric
        # `bins`: the programs' layout (Binaries); else those of `build_dir` (default build/).
        self.bins = bins or Binaries.from_build(build_dir or os.path.join(REPO, "build"))
        self.sm = sm or default_sm(self.bins)
        self.hooks = hooks_available(self.bins) if hooks is None else hooks
        self.sar_route = sar_route or self.bins.sar_route
        self.sar_filterd = sar_filterd or self.bins.sar_filterd
        self.poll_interval_s = poll_interval_s
        self.num_vls = num_vls
        self.progress = progress or (lambda msg: None)
        # Added to OpenSM's and sar-filterd's environment (the fault matrix's stop files).
        self.extra_env = dict(extra_env or {})
        # Migration mode (docs/migration.md): LMC 1, the plugin's coordinator, sar-agent and a
        # reference consumer on `migration_agents` hosts (ibsim takes 10 clients: OpenSM, the
        # agents and dump_fts).
        self.migration = migration
        self.migration_agents = migration_agents
        self.drain_ms = drain_ms
        self.lmc = 1 if migration else 0
        self.migration_status = os.path.join(self.workdir, "migration.json")
        self.nodes = None
        self.topology = os.path.join(self.workdir, "fabric.topo")
        self.guid2lid = os.path.join(self.workdir, "guid2lid")
        self.sm_guid2lid = self.guid2lid  # OpenSM's seed (a real dump: ibsim's port GUIDs)
        self.lft_file = os.path.join(self.workdir, "sar.lfts")
        self.mapping_file = os.path.join(self.workdir, "jobs.map")
        self.minhop_lfts = os.path.join(self.workdir, "minhop.switches.lfts")
        self.control_socket = socket_path(os.path.join(self.workdir, "filterd"), "control.sock")
        self.startup = {}  # step -> seconds
        self.tb = self.osm = self.slurm = self.filterd = None
        self.names_by_leaf = None  # a real dump's SLURM leaves (read_dump), else ranged names
        self.host_rails = {}  # a real dump's hosts with several HCAs: their HCAs' switches
        self.jobs = {}  # label -> Job (running now)
        self.pids = []  # every PID started, for the final check

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self, reference=True, filterd=True):
        """Starts the bed; reference=False skips the minhop reference, filterd=False leaves
        sar-filterd to the caller (tests/integration/test_operations_walk.py runs its own)."""
        for tool in (self.sar_route, self.sar_filterd):
            if not os.access(tool, os.X_OK):
                raise DayError(f"{tool} is not built")
        shutil.rmtree(self.workdir, ignore_errors=True)
        os.makedirs(self.workdir)
        _live.add(self)
        self._step("fabric", self._gen)
        if reference:
            self._step("minhop reference", self._minhop_reference)
        self._step("ibsim + OpenSM (sar)", self._start_sm)
        if self.migration:
            self._step("sar-agent + sar-migconsumer", self._start_agents)
        self._step("SLURM", self._start_slurm)
        if filterd:
            self._step("sar-filterd", self._start_filterd)

    def _step(self, name, fn):
        t0 = time.monotonic()
        detail = fn()
        self.startup[name] = time.monotonic() - t0
        self.progress(f"{name}: {detail} ({self.startup[name]:.1f} s)")

    def stop(self):
        """Stops everything started here, by PID, newest first. Idempotent."""
        errors = []
        for part in (self.filterd, self.slurm, self.nodes, self.tb):
            if part is None:
                continue
            try:
                part.stop()
            except Exception as e:  # noqa: BLE001 - stop the rest, then report
                errors.append(str(e))
        self.filterd = self.slurm = self.nodes = self.tb = None
        _live.discard(self)
        if errors:
            raise DayError("teardown: " + "; ".join(errors))

    def leftover_pids(self):
        """PIDs started here that still run (zombies count as gone)."""
        return [p for p in self.pids if not wait_gone(p, 5.0)]

    # --- start-up steps ----------------------------------------------------------------------

    def _gen(self):
        if os.path.isfile(self.fabric_spec):
            return self._read_dump()
        run([self.sar_route, "gen", "--fabric", self.fabric_spec, "-o", self.topology,
             "--guid2lid", self.guid2lid, "--lmc", self.lmc])
        self.host_leaf = read_host_leaves(self.topology)
        self.hosts = sorted(self.host_leaf)
        self.leaves = sorted(set(self.host_leaf.values()))
        per_leaf = {leaf: 0 for leaf in self.leaves}
        for leaf in self.host_leaf.values():
            per_leaf[leaf] += 1
        self.per_leaf = per_leaf[self.leaves[0]]
        # SLURM's ranged node lines and topology.conf assume hosts h00000.. in leaf order.
        for i, h in enumerate(self.hosts):
            if h != f"h{i:05d}" or self.host_leaf[h] != self.leaves[i // self.per_leaf]:
                raise DayError(f"{self.topology}: host {h} is not in leaf order")
        return (f"{self.fabric_spec}: {len(self.hosts)} hosts on {len(self.leaves)} leaves of "
                f"{self.per_leaf}")

    def _read_dump(self):
        """A real dump (read in place): its multi-HCA hosts are the SLURM nodes, each under the
        leaf of its first HCA (by HCA name: rail 0 of its unit), leaves in fabric order."""
        if self.lmc:
            raise DayError("a real dump keeps its own LIDs: no --migration (LMC 1) on it")
        self.topology = os.path.abspath(self.fabric_spec)
        rails, guid2lid, sim_guid2lid = read_dump(self.topology)
        if not rails:
            raise DayError(f"{self.topology}: no host with several named HCAs (mlx5_N, HCA-N)")
        with open(self.guid2lid, "w") as f:
            f.write("\n".join(guid2lid) + "\n")
        # OpenSM in ibsim keeps the dump's LIDs when seeded with ibsim's port GUIDs.
        self.sm_guid2lid = os.path.join(self.workdir, "guid2lid.ibsim")
        with open(self.sm_guid2lid, "w") as f:
            f.write("\n".join(sim_guid2lid) + "\n")
        self.host_rails = rails  # host -> {rail: switch record of its HCA on that rail}
        by_leaf = {}
        for h in sorted(rails):
            by_leaf.setdefault(rails[h][min(rails[h])], []).append(h)
        self.names_by_leaf = [(leaf, by_leaf[leaf]) for leaf in sorted(by_leaf)]
        self.host_leaf = {h: leaf for leaf, names in self.names_by_leaf for h in names}
        self.hosts = sorted(self.host_leaf)
        self.leaves = [leaf for leaf, _ in self.names_by_leaf]
        self.per_leaf = min(len(names) for _, names in self.names_by_leaf)
        return (f"{os.path.basename(self.topology)}: {len(self.hosts)} hosts with "
                f"{sum(map(len, rails.values()))} HCAs (rails), SLURM leaves {len(self.leaves)} "
                f"of {self.per_leaf}+ hosts")

    def spans(self, hosts):
        """Whether a job on `hosts` has traffic between leaves: on a dump with rails, whether
        some rail's HCAs of two of its hosts sit on two switches (rail-aligned traffic,
        docs/formats.md; worked out here from the dump, not by libsar); else more than one
        leaf."""
        if not self.host_rails:
            return len({self.host_leaf[h] for h in hosts}) > 1
        by_rail = {}
        for h in hosts:
            for rail, sw in self.host_rails[h].items():
                by_rail.setdefault(rail, set()).add(sw)
        return any(len(sws) > 1 for sws in by_rail.values())

    def _minhop_reference(self):
        with sar_testbed.Testbed(self.topology, os.path.join(self.workdir, "minhop-bed"),
                                 guid2lid=self.sm_guid2lid, lmc=self.lmc) as ref:
            self.pids.append(ref.ibsim_pid)
            res = ref.route("minhop")
            shutil.copyfile(res.switches_lfts, self.minhop_lfts)
        return "OpenSM's default engine routed once on a second ibsim bed, tables read back"

    def _start_sm(self):
        self.tb = sar_testbed.Testbed(self.topology, os.path.join(self.workdir, "sar-bed"),
                                      guid2lid=self.sm_guid2lid, lmc=self.lmc)
        self.tb.start()
        self.pids.append(self.tb.ibsim_pid)
        self.sm_setup = sm_setup(self.sm, self, self.tb.workdir)
        self.restart_sm()
        standby = ""
        if self.standby:
            self.start_standby()
            standby = f", standby OpenSM pid {self.standby_sm.pid} on {self.standby_host()}"
        self.current_lfts = self.readback("start")
        return (f"OpenSM pid {self.osm.pid}, mode '{self.sm}', engine "
                f"'{self.sm_setup['engine']}'{standby}")

    def standby_host(self):
        return self.hosts[self.per_leaf]  # the second leaf's first host

    def start_standby(self):
        """Starts the standby OpenSM (again: same run directory, a new pid file at the same
        path; the one that ran there must be gone) beside the running master."""
        if self.sm != "plugin":
            raise DayError("a standby OpenSM needs the plugin (--sm plugin)")
        setup = self.sm_setup
        self.standby_sm = start_standby_sm(
            self.tb, setup["engine"], setup["extra_conf"],
            dict(setup["env_extra"], **self.extra_env), self.sm_guid2lid,
            os.path.join(self.tb.workdir, "standby-cache"), self.standby_host())
        self.pids.append(self.standby_sm.pid)
        return self.standby_sm

    def restart_sm(self):
        """Starts the long-running OpenSM (again, after a crash or a stop: same config, same run
        directory, a new pid file at the same path) and waits for its first SUBNET UP."""
        setup = self.sm_setup
        master = sm_failover_conf(MASTER_SM_PRIORITY) if self.standby else []
        self.osm = self.tb.start_opensm(setup["engine"], extra_conf=setup["extra_conf"] + master,
                                        env_extra=dict(setup["env_extra"], **self.extra_env),
                                        lfts_file=setup["lfts_file"], name="opensm")
        self.pids.append(self.osm.pid)
        if self.sm == "plugin":
            # Until its first heavy sweep OpenSM resends every LFT block on a reroute (and
            # reports no LFT_CHANGE); a live OpenSM has long had one (docs/opensm-plugin.md).
            off = self.osm.log_offset()
            self.osm.signal(signal.SIGHUP)
            self.osm.wait_log(r"-> SUBNET UP\s*$", off, 60.0)
        return self.osm

    def _start_agents(self):
        if self.sm != "plugin":
            raise DayError("--migration on needs the OpenSM plugin (--sm plugin)")
        agent, consumer = self.bins.agent, self.bins.consumer
        for tool in (agent, consumer):
            if not os.access(tool, os.X_OK):
                raise DayError(f"--migration on: {tool} is not built")
        # Spread over the leaves; never h00000 (OpenSM's port).
        n = min(self.migration_agents, len(self.hosts) - 1)
        step = max(1, (len(self.hosts) - 1) // n)
        hosts = [self.hosts[1 + i * step] for i in range(n)]
        self.nodes = migration_nodes.MigrationNodes(self.tb, agent, consumer,
                                                    os.path.join(self.workdir, "nodes"))
        for h in hosts:
            node = self.nodes.start(h)
            self.pids.append(node.agent.pid)
        self.base_lids = {}
        for h in hosts:
            st = self.nodes.nodes[h].wait_subscribed(20)
            self.base_lids[h] = st["lid"]
        for h in hosts:
            # Each consumer keeps connections to the other agents' hosts.
            peers = [lid for o, lid in self.base_lids.items() if o != h]
            proc = self.nodes.add_consumer(self.nodes.nodes[h], {"peers": peers,
                                                                 "drain_ms": self.drain_ms})
            self.pids.append(proc.pid)
        self.nodes.wait_registered(20)
        return (f"{len(hosts)} agents (ibsim test mode) subscribed, one consumer each "
                f"(drain {self.drain_ms} ms)")

    def migration_status_now(self):
        try:
            with open(self.migration_status) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def _start_slurm(self):
        slurm_hooks, self.hook_options = hooks_setup(self.hooks, self)
        self.slurm = SlurmTestbed(os.path.join(self.workdir, "slurm"), num_nodes=len(self.hosts),
                                  nodes_per_leaf=self.per_leaf, prefix="h", width=5,
                                  first_index=0, names_by_leaf=self.names_by_leaf,
                                  **slurm_hooks)
        try:
            self.slurm.start(timeout=180.0)
        finally:
            self.pids += [p.pid for p in [self.slurm.ctld, *self.slurm.slurmds] if p]
        return (f"slurmctld + {len(self.slurm.slurmds)} slurmd on 127.0.0.1, topology/tree, "
                f"hooks {'on' if self.hooks else 'off'}")

    def _start_filterd(self):
        fd = os.path.join(self.workdir, "filterd")
        os.makedirs(fd)
        options = {
            "source": "slurm",
            "slurm_conf": self.slurm.conf,
            "fabric": self.topology,
            "poll_interval_s": self.poll_interval_s,
            "settle_s": 0,
            "min_reroute_interval_s": 0,
            "poll_retries": 1,
            "retry_backoff_s": 0.2,
            "mapping_file": self.mapping_file,
            "state_dir": os.path.join(fd, "state"),
            "control_socket": self.control_socket,
            "metrics_textfile": os.path.join(fd, "metrics.prom"),
            "routing_threads": 1,
        }
        if self.migration:
            options["migration_status_file"] = self.migration_status
        options.update(filterd_trigger(self.sm, self))
        options.update(self.hook_options)
        self.filterd_options = options
        self.filterd_runs = 0
        self.restart_filterd()
        return (f"pid {self.filterd.pid}, polls SLURM every {options['poll_interval_s']} s"
                + (", and when a hook asks" if self.hooks else ""))

    def restart_filterd(self):
        """Starts sar-filterd (again, after a crash: same config and state dir, a new log) and
        waits for its first poll."""
        self.filterd_runs += 1
        options = dict(self.filterd_options)
        name = "sar-filterd"
        if self.filterd_runs > 1:  # its own log and counters (a new process counts from 0)
            name = f"sar-filterd-{self.filterd_runs}"
            options["metrics_textfile"] = options["metrics_textfile"].replace(
                ".prom", f"-{self.filterd_runs}.prom")
        self.filterd = FilterdProcess(self.sar_filterd, os.path.join(self.workdir, "filterd"),
                                      options,
                                      dict(self.slurm.env(), **self.extra_env), name=name)
        self.pids.append(self.filterd.pid)
        self.filterd.wait_polls(1)
        return self.filterd

    # --- jobs ---------------------------------------------------------------------------------

    def idle_by_leaf(self):
        p = self.slurm.run(["sinfo", "-h", "-N", "-t", "idle", "-o", "%N"])
        idle = {leaf: [] for leaf in self.leaves}
        for name in p.stdout.split():
            if name in self.host_leaf:
                idle[self.host_leaf[name]].append(name)
        return idle

    def submit(self, label, nodes=None, nodelist=None, pattern=None, one_leaf=False):
        """sbatch a sleeping job, wait until it runs; returns the Job."""
        extra = ["-J", label]
        if one_leaf:
            extra += ["--switches=1"]
        if pattern and self.hooks:
            extra += [f"--sar-pattern={pattern}"]
        job_id = self.slurm.sbatch(nodes=nodes, nodelist=nodelist, seconds=3600,
                                   extra_args=extra)
        self.slurm.wait_state(job_id, "RUNNING", timeout=30.0)
        hosts = self.slurm.job_hosts(job_id)
        leaves = sorted({self.host_leaf[h] for h in hosts})
        job = Job(label, job_id, hosts, leaves, pattern if self.hooks else None)
        self.jobs[label] = job
        return job

    def cancel(self, label):
        job = self.jobs.pop(label)
        self.slurm.scancel(job.id)
        self.slurm.wait_state(job.id, "GONE", timeout=30.0)
        return job

    def resubmit_same_nodes(self, label):
        """Cancels a job and submits a new one on the same nodes between two of sar-filterd's
        polls (it is SIGSTOPped meanwhile, so it sees only the before and the after): only the
        job id changes. Returns (old, new)."""
        old = self.jobs[label]
        self.filterd.pause()
        try:
            self.cancel(label)
            self.wait_hosts_idle(old.hosts)
            new = self.submit(label, nodes=len(old.hosts), nodelist=",".join(old.hosts),
                              pattern=old.pattern)
        finally:
            self.filterd.resume()
        return old, new

    def wait_hosts_idle(self, hosts, timeout=30.0):
        want = set(hosts)
        deadline = time.monotonic() + timeout
        while True:
            idle = {h for names in self.idle_by_leaf().values() for h in names}
            if want <= idle:
                return
            if time.monotonic() > deadline:
                raise DayError(f"nodes {sorted(want - idle)[:5]}... not idle after {timeout} s")
            time.sleep(0.2)

    def write_mapping(self, path):
        """Every running job (also single-leaf ones): the workload the metrics are judged on."""
        with open(path, "w") as f:
            for job in self.jobs.values():
                suffix = f" {job.pattern}" if job.pattern else ""
                f.writelines(f"{h} {job.id}{suffix}\n" for h in job.hosts)
        return path

    # --- observing ----------------------------------------------------------------------------

    def marks(self):
        """Where the logs and counters are now; observe() looks only at what comes after."""
        return dict(metrics=self.filterd.metrics(), osm=self.osm.log_offset(),
                    filterd=self.filterd.log_offset(), t=time.time(),
                    migration=self.migration_status_now() if self.migration else None)

    def observe(self, marks, timeout=60.0):
        """After a change in SLURM: waits until sar-filterd has polled since the change, then, if
        it rerouted, until OpenSM has the new tables in the switches. Returns True if it
        rerouted. OpenSM must route again exactly when sar-filterd rerouted."""
        before = marks["metrics"]
        if self.hooks:
            # The hook's poll comes by itself (if the change was a start or an end); then one
            # more, asked for here, so that a poll surely began after the change.
            deadline = time.monotonic() + 3.0
            while (self.filterd.metrics().get("polls_total", 0) <= before.get("polls_total", 0)
                   and time.monotonic() < deadline):
                time.sleep(0.05)
            polls = self.filterd.metrics().get("polls_total", 0)
            self.filterd.control("poll")
            m = self.filterd.wait_polls_total(polls + 1)
        else:
            m = self.filterd.wait_polls(2)  # the first may have begun before the change
        if m.get("trigger_errors_total", 0) > before.get("trigger_errors_total", 0):
            raise DayError(f"sar-filterd's trigger failed:\n{tail(self.filterd.log)}")
        rerouted = m.get("reroutes_total", 0) > before.get("reroutes_total", 0)
        if rerouted and self.sm == "file":
            self.osm.wait_log(r"-> SUBNET UP\s*$", marks["osm"], timeout)  # after a SIGHUP sweep
        elif rerouted:
            # A SIGUSR2 reroute logs no SUBNET UP: the plugin logs its pass summary at OpenSM's
            # routing-done, once the switches acknowledged every changed block.
            self.osm.wait_log(r"osmsar: pass summary:", marks["osm"], timeout)
        elif "tables configured on all switches" in self.osm.log_since(marks["osm"]):
            raise DayError("OpenSM routed again although sar-filterd did not reroute")
        return rerouted

    def wait_log_quiet(self, quiet_s, timeout):
        """Waits until OpenSM's log has not grown for `quiet_s` (a pass and its pushes done)."""
        deadline = time.monotonic() + timeout
        size = self.osm.log_offset()
        while True:
            time.sleep(quiet_s)
            now = self.osm.log_offset()
            if now == size:
                return
            if time.monotonic() > deadline:
                raise DayError(f"OpenSM's log did not settle within {timeout} s")
            size = now

    def fors_schedules(self, lfts):
        """The FORS schedules published beside the mapping (plugin mode: one per alltoall job on
        this 2-level fat-tree), each walked by `sar-route fors-schedule --verify-lfts` through
        `lfts` (tables read back from the switches). [(job, ok, verdict line)]."""
        out = []
        prefix = os.path.basename(self.mapping_file) + ".fors."
        d = os.path.dirname(self.mapping_file)
        for name in sorted(os.listdir(d)):
            if not name.startswith(prefix) or ".tmp." in name:
                continue
            job = name[len(prefix):]
            p = run([self.sar_route, "fors-schedule", "--job", job, "--schedule",
                     os.path.join(d, name), "--verify-lfts", lfts, "--topology", self.topology,
                     "--lids", self.guid2lid], check=False)
            text = (p.stdout + p.stderr).strip()
            # A "none" file (exit 5) is right where the plugin's fors_only_where_faster judged
            # the job's phases slower than SAR's routes (docs/fors.md).
            judged = (p.returncode == 5 and self.fors_only_where_faster
                      and "slower than SAR's routes all at once" in text)
            out.append((job, p.returncode == 0 or judged, text.split(": ", 1)[-1]))
        return out

    def run_alltoall_exchange(self, job, max_ranks=64):
        """An alltoall job's exchange as its application would run it: an MPI program
        (alltoall_check: MPI_Alltoall and MPI_Alltoallv, results checked element by element) with
        one rank per host of the job, under libsarfors, reading the schedule where the job finds
        it (`$SAR_FORS_SCHEDULE`, <mapping>.fors.<job id>). Every rank's partner order, phase by
        phase, is compared with `sar-route fors-schedule --host` for its host. Ranks run on this
        machine over shared memory; each is told its host by SAR_FORS_HOSTS_BY_RANK.
        Returns (verdict "ok" | "FAILED" | "skipped", text)."""
        mpirun = shutil.which("mpirun")
        missing = [what for what, path in (("libsarfors", self.bins.sarfors),
                                           ("alltoall_check (a build tree's)",
                                            self.bins.alltoall_check), ("mpirun", mpirun))
                   if not path or not os.path.exists(path)]
        if missing:
            return "skipped", f"no {', '.join(missing)}"
        if len(job.hosts) > max_ranks:
            return "skipped", f"{len(job.hosts)} hosts: more than {max_ranks} ranks on this machine"
        schedule = f"{self.mapping_file}.fors.{job.id}"
        try:
            with open(schedule) as f:
                head = f.read(4096).splitlines()[1].split()
            generation = head[head.index("generation") + 1]
        except (OSError, IndexError, ValueError) as e:
            return "FAILED", f"schedule {schedule} unreadable: {e}"
        if generation == "none":
            return "skipped", "the job's schedule is the 'none' form"
        t0 = time.monotonic()
        ok, summary, fails = fors_mpi.run_job_exchange(
            mpirun, self.bins.sarfors, self.bins.alltoall_check, self.sar_route, job.id,
            sorted(job.hosts), schedule, os.path.join(self.workdir, "mpi", str(job.id)))
        took = time.monotonic() - t0
        if ok and f"generation {generation}" not in summary:
            ok, fails = False, [f"ranks followed another generation than {generation}"]
        if not ok:
            return "FAILED", f"{summary}: " + "; ".join(fails)[:1500]
        return "ok", (f"{summary}; every rank's partner order = the schedule the switches were "
                      f"routed for; data verified ({took:.1f} s)")

    def readback(self, tag):
        path = os.path.join(self.workdir, "readback", f"{tag}.lfts")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return self.osm.readback(path)

    def offline_route(self, mapping, out, previous=None, previous_jobs=None):
        """What `sar-route route` computes for this mapping, independently of the daemons. libsar's
        routing pass settles the engine (an empty mapping routes as plain dfsssp) for the plugin,
        sar-filterd's file mode and sar-route alike. `previous`, `previous_jobs`: the tables the
        switches held before the pass and the mapping they were routed for, as the plugin's
        `delta true` pass starts from them; ignored where the pass is a full recompute (file
        mode, migration mode, `delta false`)."""
        delta = self.sm == "plugin" and not self.migration and self.plugin_delta is not False
        prev = []
        if delta and previous:
            prev = ["--previous", previous] + (["--previous-jobs", previous_jobs]
                                               if previous_jobs else [])
        run([self.sar_route, "route", "--engine", "sar", "--topology", self.topology, "--lids",
             self.guid2lid, "--jobs", mapping, "--vls", self.num_vls, "-o", out,
             *(["--migration"] if self.migration else []),
             *(["--fors-only-where-faster"] if self.fors_only_where_faster else []), *prev])
        return out

    def diff_lfts(self, a, b):
        """`sar-route diff-lfts` of two table files: (same, its report)."""
        p = run([self.sar_route, "diff-lfts", "--topology", self.topology, a, b], check=False)
        return p.returncode == 0, p.stdout

    def evaluate(self, lfts, mapping, schedules=False, baseline=None):
        """`sar-route eval` of tables read from the switches, for a job mapping: max effective
        EFI, dark fiber, worst per-job EFI, and what the jobs feel (each job's exchange time:
        its slowest flow with every job sending at once, max-min fair). schedules: alltoall jobs
        exchange in the FORS phases published beside sar-filterd's mapping; baseline: tables
        whose per-job times each job is compared with (minhop's)."""
        cmd = [self.sar_route, "eval", "--topology", self.topology, "--lids", self.guid2lid,
               "--lfts", lfts, "--jobs", mapping, "--json"]
        if schedules:
            cmd += ["--schedules-of", self.mapping_file]
        if baseline:
            cmd += ["--baseline-lfts", baseline, "--baseline-name", "minhop"]
        p = run(cmd, check=False)
        if p.returncode not in (0, 1):
            raise DayError(f"sar-route eval {lfts}: exit {p.returncode}\n{p.stderr[-2000:]}")
        j = json.loads(p.stdout)
        multi = [x for x in j["jobs"] if x["leaf_switches"] > 1]
        flows = j.get("flows") or {}
        summary = flows.get("summary") or {}
        times = {x["id"]: x["time"] for x in flows.get("jobs", []) if x.get("flows")}
        vs = flows.get("vs_baseline") or {}
        return dict(valid=j["valid"], max_eff_efi=j["effective_efi"]["max"],
                    dark=j["dark_fiber"],
                    worst_job_efi=max((x["efi_max"] for x in multi), default=0),
                    job_time=times, worst_time=summary.get("max_time", 0),
                    median_time=summary.get("median_time", 0),
                    phased=[x["id"] for x in flows.get("jobs", []) if x.get("phases")],
                    slower=vs.get("slower"), slower_2pct=vs.get("slower_over_2pct"),
                    flow_notes=flows.get("notes", []))
