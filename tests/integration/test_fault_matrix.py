#!/usr/bin/env python3
"""Fault-injection matrix (issue 19, "Also"): the whole service (scripts/day_bed.py: real SLURM
on loopback, OpenSM with libosmsar.so on ibsim, sar-filterd signalling it) with one process
killed (SIGKILL, then started again) or paused (SIGSTOP, SIGCONT a second later) at each stage
of a reroute:

  poll      sar-filterd has SLURM's answer, not yet filtered
  mapping   sar-filterd wrote the mapping, has not signalled
  signal    sar-filterd signalled, has not saved its state; OpenSM has the signal, has not
            asked for the pass (the plugin's thread)
  routing   OpenSM is in the routing callback, under its lock
  push      OpenSM has pushed the first changed LFT block to the switches

A reroute's stages follow each other within milliseconds, so they are hit with test-only stop
points (filterd/test_stop.h, $OSMSAR_TEST_STOP_FILE in opensm-patch/osmsar_plugin.c): the test
writes the stage into a file, the daemon that reaches it removes the file and stops itself;
the test then applies the fault to the target (the stopped daemon itself, or another one while
it is held) and lets the held one go on. Also: OpenSM stopped (SIGTERM) while the job set
changes and started again; an ibsim link (leaf-spine) taken down while OpenSM is in a routing
pass, then brought back.

For every case, within BOUND_S of the fault: the mapping holds the running multi-leaf jobs, and
the tables read back from the switches equal `sar-route route` for them (on the fabric as it is:
without the link while it is down), every route arrives and the channel dependencies are
acyclic (independent checks in sar_it). The plugin runs the shipped config/osmsar.conf (`delta
true`): a pass starts from the tables the switches hold and the job set of the plugin's last
pass, so "equal" means equal to `sar-route route --previous --previous-jobs` along the passes a
fault can cause (Matrix.candidates). At the end every process started is gone. The cases
share one bed; --targets picks which processes are faulted (CTest runs one per target).
"""

import hashlib
import os
import re
import signal
import time

import filterd_it as it
import sar_it

import day_bed  # scripts/ (sar_it puts it on the path)
from testbed_common import pids_with_env, proc_state, wait_gone

STAGES = ("poll", "mapping", "signal", "routing", "push")
FILTERD_STAGES = ("poll", "mapping", "signal")  # signal: filterd's; OpenSM's is "signal" too
BOUND_S = 30.0  # from the fault's end to valid tables for the final job set
HELD_S = 1.0  # how long a SIGSTOPped process stays stopped


class Matrix:
    def __init__(self, args):
        self.args = args
        w = os.path.abspath(os.path.join(args.workdir, "bed"))
        self.filterd_stop = os.path.join(args.workdir, "filterd.stop")
        self.osm_stop = os.path.join(args.workdir, "osmsar.stop")
        build = os.path.dirname(os.path.dirname(os.path.abspath(args.sar_route)))
        self.bed = day_bed.DayBed(
            w, fabric=args.fabric, sm="plugin", hooks=False, sar_route=args.sar_route,
            sar_filterd=args.sar_filterd, build_dir=build, poll_interval_s=0.3, progress=print,
            extra_env={"SAR_FILTERD_TEST_STOP_FILE": self.filterd_stop,
                       "OSMSAR_TEST_STOP_FILE": self.osm_stop})
        self.offline = {}  # (mapping text, topology, previous, previous jobs) -> (file, tables)
        # The tables the switches held at the last convergence and the job set (mapping file)
        # they were routed for: where the next case's passes start. None before the first.
        self.held = None
        self.n = 0
        self.times = []

    # --- the job change of each case ------------------------------------------------------

    def change_jobs(self):
        """Starts the multi-leaf job 'wide' (on leaves 0 and 1) if it is not running, else ends
        it; waits until SLURM says so."""
        # Two hosts each side of the first leaf boundary (h00002..h00005 on ft2:4,4).
        first = self.bed.per_leaf - 2
        hosts = [f"h{i:05d}" for i in range(first, first + 4)]
        if "wide" in self.bed.jobs:
            self.bed.cancel("wide")
        else:
            self.bed.wait_hosts_idle(hosts)  # the last one's epilog may still run
            self.bed.submit("wide", nodes=len(hosts), nodelist=",".join(hosts))

    def expected_mapping(self):
        return {j.id: sorted(j.hosts) for j in self.bed.jobs.values() if len(j.leaves) > 1}

    # --- stop points -----------------------------------------------------------------------

    def arm(self, stage, holder):
        path = self.filterd_stop if holder == "filterd" else self.osm_stop
        with open(path + ".tmp", "w") as f:
            f.write(stage + "\n")
        os.rename(path + ".tmp", path)
        return path

    def wait_held(self, path, pid, what):
        deadline = time.monotonic() + 15
        while os.path.exists(path) or proc_state(pid) != "T":
            it.check(time.monotonic() < deadline, f"{what}: the stop point was not reached in "
                                                  f"15 s (armed: {os.path.exists(path)})")
            time.sleep(0.01)

    # --- the processes ---------------------------------------------------------------------

    def pid_of(self, target):
        b = self.bed
        return {"slurmctld": lambda: b.slurm.ctld.pid, "opensm": lambda: b.osm.pid,
                "filterd": lambda: b.filterd.pid}[target]()

    def kill(self, target):
        pid = self.pid_of(target)
        if target == "slurmctld":
            self.bed.slurm.kill_controller()
        else:
            os.kill(pid, signal.SIGKILL)
        it.check(wait_gone(pid, 10), f"{target} (pid {pid}) survived SIGKILL")

    def restart(self, target):
        if target == "slurmctld":
            self.bed.slurm.start_controller()
        elif target == "opensm":
            self.bed.restart_sm()
        else:
            self.bed.restart_filterd()

    # --- the check --------------------------------------------------------------------------

    def mapping_file(self, mapping):
        text = "".join(f"{h} {j}\n" for j, hosts in sorted(mapping.items()) for h in hosts)
        path = os.path.join(self.args.workdir,
                            f"jobs-{hashlib.sha1(text.encode()).hexdigest()[:12]}.map")
        if not os.path.exists(path):
            with open(path, "w") as f:
                f.write(text)
        return path

    def offline_for(self, mapping, topo, previous=None, previous_jobs=None):
        """`sar-route route` for the job set `mapping` (dict), from the tables file `previous`
        routed for the mapping file `previous_jobs` (the plugin's `delta true` pass) or, without
        `previous`, a full recompute. Returns (LFT file, parsed tables)."""
        jobs = self.mapping_file(mapping)
        key = (jobs, topo, previous, previous_jobs)
        if key not in self.offline:
            out = os.path.join(self.args.workdir, f"offline{len(self.offline)}.lfts")
            prev = ["--previous", previous] if previous else []
            prev += ["--previous-jobs", previous_jobs] if previous and previous_jobs else []
            sar_it.run([self.args.sar_route, "route", "--engine", "sar", "--topology", topo,
                        "--lids", self.bed.guid2lid, "--jobs", jobs, "--vls", self.bed.num_vls,
                        "-o", out, *prev], expect=0)
            self.offline[key] = (out, sar_it.parse_lfts(out))
        return self.offline[key]

    def candidates(self, want, topo, passes=3):
        """The tables the switches may hold once the plugin has routed the job set `want` on
        the fabric `topo`, most likely first (a generator of (LFT file, parsed tables), each
        computed when asked for): up to `passes` passes, each for `want` or for the job set
        held before the case (a fault can make a pass for it run again: the unsent mapping), on
        `topo` or the intact fabric (a pass held while a link went down ends on the fabric it
        started on), the last for `want` on `topo`. The first starts from the tables held at
        the last convergence, with their job set (the plugin's last mapping) or without it (a
        restarted OpenSM has none), or from nothing (a restarted OpenSM holds no tables: a full
        recompute). Each further pass starts from the one before, with its job set."""
        sets = [want]
        topos = [topo] + ([self.bed.topology] if topo != self.bed.topology else [])
        starts = [(None, None)]
        if self.held:
            held_lfts, held_jobs, held_map = self.held
            starts = [(held_lfts, held_jobs), (held_lfts, None), (None, None)]
            if held_map != want:
                sets.append(held_map)
        seen, frontier = set(), starts
        for step in range(passes):
            after = []
            for prev, prev_jobs in frontier:
                for t in topos:
                    for m in sets:
                        final = m is want and t == topo
                        if step == passes - 1 and not final:
                            continue  # would only start passes beyond `passes`
                        out, tables = self.offline_for(m, t, prev, prev_jobs)
                        digest = hashlib.sha1(open(out, "rb").read()).hexdigest()
                        if (digest, id(m)) in seen:
                            continue
                        seen.add((digest, id(m)))
                        if final:
                            yield out, tables
                        after.append((out, self.mapping_file(m)))
            frontier = after

    def converge(self, what, topo=None):
        """Waits (BOUND_S) until the mapping holds the running multi-leaf jobs and the switches
        hold offline routing's tables for them; then checks those tables independently.
        Returns the seconds it took."""
        topo = topo or self.bed.topology
        t0 = time.monotonic()
        want = self.expected_mapping()
        last = "nothing read yet"
        passes = 1  # the usual case; more passes only while the switches match none
        while True:
            try:
                with open(self.bed.mapping_file) as f:
                    got = it.parse_mapping(f.read())
            except FileNotFoundError:
                got = None
            if got == want:
                self.n += 1
                lfts = self.bed.readback(f"case{self.n}")
                switches = sar_it.parse_lfts(lfts)
                nearest, tried = None, 0
                for out, tables in self.candidates(want, topo, passes):
                    tried += 1
                    diff = sar_it.diff_tables(tables, switches)
                    if not diff:
                        sar_it.check_tables_valid(topo, self.bed.guid2lid, lfts, what)
                        self.held = (lfts, self.mapping_file(want), want)
                        return time.monotonic() - t0
                    if nearest is None or len(diff) < len(nearest):
                        nearest = diff
                passes = min(passes + 1, 3)
                last = (f"switches differ from each of {tried} offline routings (sar-route "
                        f"route, delta passes as the plugin runs them), from the nearest in "
                        f"{len(nearest or [])} entries: {(nearest or [])[:3]}")
            else:
                last = f"mapping {got}, want {want}"
            it.check(time.monotonic() - t0 < BOUND_S,
                     f"{what}: not converged after {BOUND_S} s: {last}\n--- sar-filterd:\n"
                     f"{self.bed.filterd.tail()}\n--- OpenSM:\n{self.bed.osm.tail()}")
            time.sleep(0.3)

    def alive_all(self, what):
        for target in ("slurmctld", "opensm", "filterd"):
            pid = self.pid_of(target)
            it.check(proc_state(pid) not in (None, "Z", "X", "T"),
                     f"{what}: {target} (pid {pid}) is not running ({proc_state(pid)})")

    # --- the cases ----------------------------------------------------------------------------

    def case(self, target, fault, stage):
        what = f"{fault} {target} at {stage}"
        t0 = time.monotonic()
        holder = "filterd" if stage in FILTERD_STAGES and not (
            stage == "signal" and target == "opensm") else "opensm"
        if stage == "push":
            # A pass that changes no table pushes nothing. With `delta true` a toggle of 'wide'
            # often keeps every entry ("delta: kept 47 of 47": its routes cost no quality on
            # dfsssp's tables, and after a few toggles the tables suit both job sets). Ending it
            # on the tables a restarted OpenSM computes from nothing (a full recompute with
            # 'wide') does change entries ("kept 10 of 49"): so the push case starts from there.
            if "wide" not in self.bed.jobs:
                self.change_jobs()
                self.converge(f"{what}: 'wide' started first")
            self.bed.osm.stop()
            self.bed.restart_sm()
            self.converge(f"{what}: OpenSM restarted first")
        if stage == "poll":
            # sar-filterd paused while the job set changes, so that its next poll (the one it
            # stops after) is the first to see the change.
            os.kill(self.bed.filterd.pid, signal.SIGSTOP)
            try:
                self.change_jobs()
                path = self.arm(stage, holder)
            finally:
                os.kill(self.bed.filterd.pid, signal.SIGCONT)
        else:
            path = self.arm(stage, holder)
            self.change_jobs()
        held = self.pid_of(holder)
        self.wait_held(path, held, what)
        if target == "slurmctld" and fault == "kill":
            self.bed.slurm.wait_state_saved()  # a crash after the state is on disk
        if target == holder:
            if fault == "stop":
                time.sleep(HELD_S)
                os.kill(held, signal.SIGCONT)
            else:
                self.kill(target)
                self.restart(target)
        elif fault == "stop":
            victim = self.pid_of(target)
            os.kill(victim, signal.SIGSTOP)
            os.kill(held, signal.SIGCONT)
            time.sleep(HELD_S)
            os.kill(victim, signal.SIGCONT)
        else:
            self.kill(target)
            os.kill(held, signal.SIGCONT)
            self.restart(target)
        took = self.converge(what)
        self.alive_all(what)
        self.times.append((what, took, time.monotonic() - t0))
        print(f"{what}: converged {took:.1f} s after the fault (case {time.monotonic() - t0:.1f} s)")

    def unsent_mapping_read(self):
        """sar-filterd killed between the mapping write and the signal; while it is down OpenSM
        restarts (and so routes with that mapping) and the job set returns to what sar-filterd
        last told the router. The restarted sar-filterd must not only put the old mapping back
        but also have OpenSM route with it: OpenSM has read the other one."""
        what = "unsent mapping read by OpenSM, job set back"
        t0 = time.monotonic()
        path = self.arm("mapping", "filterd")
        self.change_jobs()
        self.wait_held(path, self.bed.filterd.pid, what)
        self.kill("filterd")
        self.bed.osm.stop()
        self.bed.restart_sm()  # routes with the mapping sar-filterd wrote but never signalled
        self.change_jobs()  # back to the set sar-filterd's state says the router has
        self.bed.restart_filterd()
        took = self.converge(what)
        self.alive_all(what)
        self.times.append((what, took, time.monotonic() - t0))
        print(f"{what}: converged {took:.1f} s after sar-filterd's restart")

    def opensm_restart(self):
        """OpenSM stopped cleanly while the job set changes (sar-filterd's signals fail and are
        retried), then started again."""
        what = "OpenSM restart"
        t0 = time.monotonic()
        self.bed.osm.stop()
        self.change_jobs()
        time.sleep(1.0)  # a few failed triggers
        self.bed.restart_sm()
        took = self.converge(what)
        self.alive_all(what)
        self.times.append((what, took, time.monotonic() - t0))
        print(f"{what}: converged {took:.1f} s after the start")

    def link_down_in_pass(self):
        """A leaf-spine link goes down while OpenSM is in a routing pass (held at the stop point),
        and comes back later; OpenSM routes around it and back."""
        what = "link down during a pass"
        t0 = time.monotonic()
        topo = sar_it.parse_topology(self.bed.topology)
        leaf = topo.nodes["leaf001"]
        port = max(p for p, (peer, _) in leaf.links.items() if topo.nodes[peer].kind == "switch")
        peer, pport = leaf.links[port]
        degraded = os.path.join(self.args.workdir, "degraded.topo")
        write_without_link(self.bed.topology, degraded, ("leaf001", port), (peer, pport))
        path = self.arm("routing", "opensm")
        self.change_jobs()
        self.wait_held(path, self.bed.osm.pid, what)
        off = self.bed.osm.log_offset()
        self.bed.tb.ibsim_command(f'Unlink "leaf001"[{port}]')
        time.sleep(0.2)
        os.kill(self.bed.osm.pid, signal.SIGCONT)
        took = self.converge(what, topo=degraded)
        passes = self.bed.osm.log_since(off).count("tables configured on all switches")
        it.check(passes >= 2, f"{what}: {passes} routing passes after the link went down")
        self.bed.tb.ibsim_command(f'ReLink "leaf001"[{port}]')
        back = self.converge("link back up")
        self.alive_all(what)
        self.times.append((what, took, time.monotonic() - t0))
        print(f"{what}: converged {took:.1f} s after the fault, {back:.1f} s after the link "
              "came back")


def write_without_link(src, dst, a, b):
    """The topology file `src` without the cable between a=(node, port) and b, both ends."""
    drop = {a, b}
    node = None
    out = []
    for line in open(src):
        m = re.match(r'\s*(?:Switch|Hca|Ca)\s+\d+\s+"([^"]+)"', line)
        if m:
            node = m.group(1)
        m = re.match(r"\s*\[(\d+)\]", line)
        if m and (node, int(m.group(1))) in drop:
            continue
        if not line.strip():
            node = None
        out.append(line)
    with open(dst, "w") as f:
        f.writelines(out)


def body(args):
    t0 = time.monotonic()
    m = Matrix(args)
    conf = None
    try:
        m.bed.start(reference=False)  # the minhop reference is the day's, not needed here
        conf = m.bed.slurm.conf
        m.converge("start")
        for target in args.targets.split(","):
            for stage in STAGES:
                for fault in ("kill", "stop"):
                    m.case(target, fault, stage)
            if target == "filterd":
                m.unsent_mapping_read()
            if target == "opensm":
                m.opensm_restart()
                m.link_down_in_pass()
        # No stop point left armed: each was reached once and removed.
        it.check(not os.path.exists(m.filterd_stop) and not os.path.exists(m.osm_stop),
                 "a stop point was left armed")
    finally:
        pids = list(m.bed.pids)
        m.bed.stop()
    left = m.bed.leftover_pids()
    it.check(not left, f"{len(pids)} started, still running: {left}")
    if conf:
        strays = pids_with_env(f"SLURM_CONF={conf}")
        it.check(not strays, f"job processes left: {strays}")
    worst = max(m.times, key=lambda x: x[1])
    print(f"{len(m.times)} cases in {time.monotonic() - t0:.1f} s; slowest convergence "
          f"{worst[1]:.1f} s ({worst[0]})")


if __name__ == "__main__":
    def extra(ap):
        ap.add_argument("--sar-filterd", required=True)
        ap.add_argument("--targets", default="slurmctld,opensm,filterd",
                        help="comma-separated: slurmctld, opensm, filterd")
        ap.add_argument("--fabric", default="ft2:4,4",
                        help="the bed's fabric (bench/fault_matrix_day.py: the day demo's)")
    a = sar_it.parse_args(__doc__, extra=extra)
    sar_it.main(lambda: body(a), errors=(day_bed.DayError,))
