#!/usr/bin/env python3
"""Subnet manager failover on the day demo's fabric with a real SLURM (a benchmark, not CI;
issue 34). The steps of tests/integration/test_sm_failover.py on scripts/day_bed.py's bed:
ibsim with FT(2;16,16) (256 hosts, 16 leaves), two stock OpenSMs loading libosmsar.so with the
shipped config/osmsar.conf (`delta true`), a master (sm_priority 14, on h00000) and a standby
(sm_priority 1, on the second leaf's first host), a real SLURM (slurmctld + 256 slurmd on
loopback) and sar-filterd reading it through libslurm and signalling both OpenSMs:

  1. a job over leaves 0 and 1 starts (sbatch): the master routes, the standby logs the
     signal and runs no pass;
  2. the master is SIGKILLed and a job over leaves 2 and 3 starts: the standby takes over
     (MASTER) and puts the tables for both jobs in the switches; sar-filterd's warning for the
     dead master's pid file is no failed trigger;
  3. the first job ends (scancel): the new master reroutes.

After each step the mapping holds the running multi-leaf jobs and the switches (read back with
dump_fts) hold `sar-route route`'s tables for it, as the pass ran it (tests/integration/
failover_it.py: from the tables held before with their mapping; for the new master also a full
recompute and a delta pass after it), and pass lft_truth's walk (every route arrives, no
channel dependency cycle in one layer). Then the last job ends and the next repetition starts
a fresh master and standby on the same fabric, SLURM and sar-filterd.

Measured per repetition (OpenSM's, sar-filterd's and slurmctld's log times, day_latency.py):
takeover (master killed -> the standby logs `Entering MASTER state`), the second job's start
(slurmctld allocates it) -> its tables in the switches on the new master (the first pass summary
after sar-filterd's cycle that saw it), kill -> those tables (total); also the master's reroute
in step 1 and the new master's in step 3. Prints each repetition and the medians. Exit status 1
if any check failed. Every process started here is stopped by PID and checked gone.

  bench/sm_failover_day.py [--build build] [--fabric ft2:16,16] [--repeat 3] [--out DIR]"""

import argparse
import os
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
import sar_it  # noqa: E402  (puts scripts/ on the path)
import day_bed  # noqa: E402
import day_latency  # noqa: E402
import failover_it  # noqa: E402
import filterd_it  # noqa: E402
import sar_testbed  # noqa: E402
from sar_it import check  # noqa: E402
from testbed_common import exit_on_signals, pids_with_env, wait_gone  # noqa: E402

_BLOCKS = re.compile(r"osmsar: pass summary: .*; (\d+) LFT blocks changed on (\d+) switches")
QUIET_S = 1.0  # OpenSM's log unchanged this long: no pass is running or about to
STEP_TIMEOUT_S = 60.0


def blocks_sent(sm, offset):
    """LFT blocks the last pass logged after `offset` sent (its pass summary)."""
    found = _BLOCKS.findall(sm.log_since(offset))
    return int(found[-1][0]) if found else None


class Failover:
    def __init__(self, bed, work, sighup_after_takeover=False):
        self.bed = bed
        self.sighup_after_takeover = sighup_after_takeover
        self.work = work
        os.makedirs(work, exist_ok=True)
        self.held = None  # (tables read back last, the mapping they were routed for)
        n = bed.per_leaf
        check(n >= 4 and len(bed.leaves) >= 4, f"{bed.fabric_spec}: needs 4 leaves of 4+ hosts")
        # 4 hosts each side of a leaf boundary: leaves 0-1 and 2-3.
        self.hosts = {"wide": bed.hosts[n - 4:n + 4], "second": bed.hosts[3 * n - 4:3 * n + 4]}
        self.rows = []

    # --- what the test's Bed does, on the day bed ------------------------------------------

    def offline(self, tag, mapping, previous=None, previous_jobs=None):
        return self.bed.offline_route(mapping, os.path.join(self.work, f"{tag}.offline.lfts"),
                                      previous, previous_jobs)

    def read_held(self, sm, tag):
        got = sm.readback(os.path.join(self.work, f"{tag}.switches.lfts"))
        mapping = os.path.join(self.work, f"{tag}.jobs.map")
        shutil.copyfile(self.bed.mapping_file, mapping)
        self.held = (got, mapping)
        return got, mapping

    def check_step(self, sm, what, tag, new_master=False):
        """The mapping holds the running multi-leaf jobs; the switches hold offline routing's
        tables for it, independently valid (failover_it). Returns how the pass ran."""
        want = {j.id: sorted(j.hosts) for j in self.bed.jobs.values() if len(j.leaves) > 1}
        before = self.held
        got, mapping = self.read_held(sm, tag)
        with open(mapping) as f:
            jobs = filterd_it.parse_mapping(f.read())
        check(jobs == want, f"{what}: the mapping holds {sorted(jobs)}, want {sorted(want)}")
        return failover_it.check_switches(self.offline, self.bed.topology, self.bed.guid2lid,
                                          got, mapping, before, new_master, what, tag)

    def marks(self, *sms):
        return dict(metrics=self.bed.filterd.metrics(),
                    filterd=self.bed.filterd.log_offset(),
                    sms=[sm.log_offset() for sm in sms])

    def wait_reroute(self, marks, what):
        """sar-filterd's reroute after `marks` (no failed trigger)."""
        before = marks["metrics"]
        m = self.bed.filterd.wait_metric("reroutes_total", before.get("reroutes_total", 0) + 1,
                                         STEP_TIMEOUT_S)
        check(m.get("trigger_errors_total", 0) == before.get("trigger_errors_total", 0),
              f"{what}: sar-filterd's trigger failed:\n{self.bed.filterd.tail()}")

    def latency(self, marks, sm, sm_offset, job, event, what):
        """day_latency.stages of the job's start or end on `sm` (waits for its pass)."""
        with open(os.path.join(self.bed.slurm.workdir, "log", "slurmctld.log"),
                  errors="replace") as f:
            ctld = f.read()
        deadline = time.monotonic() + STEP_TIMEOUT_S
        while True:
            why = []
            lat = day_latency.stages(ctld, self.bed.filterd.log_since(marks["filterd"]),
                                     sm.log_since(sm_offset), job.id, "sar", event, why)
            if lat:
                return lat
            check(time.monotonic() < deadline, f"{what}: no latency: {'; '.join(why)}")
            time.sleep(0.1)
            with open(os.path.join(self.bed.slurm.workdir, "log", "slurmctld.log"),
                      errors="replace") as f:
                ctld = f.read()

    def submit(self, label):
        self.bed.wait_hosts_idle(self.hosts[label])  # the last repetition's epilogs
        return self.bed.submit(label, nodes=len(self.hosts[label]),
                               nodelist=",".join(self.hosts[label]))

    # --- one repetition ------------------------------------------------------------------

    def repetition(self, r):
        bed = self.bed
        if r > 0:  # the last repetition's new master goes; a fresh pair as at the start
            bed.osm.stop()
            bed.restart_sm()
            bed.start_standby()
        master, standby = bed.osm, bed.standby_sm
        self.read_held(master, f"r{r}.start")
        row = dict(r=r)

        # 1. the master routes, the standby only hears the signal
        mk = self.marks(master, standby)
        wide = self.submit("wide")
        self.wait_reroute(mk, "step 1")
        row["step1"] = self.latency(mk, master, mk["sms"][0], wide, "start", "step 1")["total"]
        standby.wait_log(r"osmsar: SIGUSR2", mk["sms"][1], 10)
        bed.wait_log_quiet(QUIET_S, STEP_TIMEOUT_S)
        check("tables configured" not in standby.log_since(mk["sms"][1]),
              "step 1: the standby ran a routing pass")
        row["how1"] = self.check_step(master, "step 1 (master)", f"r{r}.step1")
        row["blocks1"] = blocks_sent(master, mk["sms"][0])

        # 2. the master dies while a second job starts; the standby takes over
        mk = self.marks(standby)
        os.kill(master.pid, signal.SIGKILL)
        t_kill = day_latency.month_seconds(time.time())
        check(wait_gone(master.pid, 10), "the master survived SIGKILL")
        bed.osm = standby  # bed.readback, wait_log_quiet and the next restart follow it
        second = self.submit("second")
        self.wait_reroute(mk, "step 2")
        check("another was signalled" in bed.filterd.log_since(mk["filterd"]),
              "step 2: sar-filterd did not warn about the dead master's pid file")
        standby.wait_log(r"Entering MASTER state", mk["sms"][0], STEP_TIMEOUT_S)
        lat = self.latency(mk, standby, mk["sms"][0], second, "start", "step 2")
        bed.wait_log_quiet(QUIET_S, STEP_TIMEOUT_S)
        row["how2"] = self.check_step(standby, "step 2 (standby took over)", f"r{r}.step2",
                                      new_master=True)
        t_master = next(sar_testbed.log_time(line) for line in
                        standby.log_since(mk["sms"][0]).splitlines()
                        if "Entering MASTER state" in line)
        t_start = day_latency.job_start_time(open(os.path.join(
            bed.slurm.workdir, "log", "slurmctld.log"), errors="replace").read(), second.id)
        row.update(takeover=t_master - t_kill, job_to_tables=lat["total"],
                   total=t_start + lat["total"] - t_kill,
                   order="job before takeover" if t_start < t_master else "takeover first")

        if self.sighup_after_takeover:
            # A heavy sweep on the new master, as DayBed.restart_sm gives a started one: until
            # then OpenSM resends every LFT block at each reroute (docs/opensm-plugin.md).
            off = standby.log_offset()
            standby.signal(signal.SIGHUP)
            standby.wait_log(r"-> SUBNET UP\s*$", off, STEP_TIMEOUT_S)
            bed.wait_log_quiet(QUIET_S, STEP_TIMEOUT_S)
            self.check_step(standby, "step 2 (new master after its heavy sweep)",
                            f"r{r}.step2sighup")

        # 3. the first job ends: the new master reroutes
        mk = self.marks(standby)
        bed.cancel("wide")
        self.wait_reroute(mk, "step 3")
        standby.wait_log(r"osmsar: SIGUSR2", mk["sms"][0], 10)
        row["step3"] = self.latency(mk, standby, mk["sms"][0], wide, "end", "step 3")["total"]
        bed.wait_log_quiet(QUIET_S, STEP_TIMEOUT_S)
        row["how3"] = self.check_step(standby, "step 3 (new master rerouted)", f"r{r}.step3")
        row["blocks3"] = blocks_sent(standby, mk["sms"][0])

        # the last job ends (the next repetition starts with no job)
        mk = self.marks(standby)
        bed.cancel("second")
        self.wait_reroute(mk, "end")
        self.latency(mk, standby, mk["sms"][0], second, "end", "end")
        bed.wait_log_quiet(QUIET_S, STEP_TIMEOUT_S)
        self.rows.append(row)
        print(f"repetition {r + 1}: takeover {row['takeover']:.2f} s, second job's start -> "
              f"tables on the new master {row['job_to_tables']:.2f} s, kill -> tables "
              f"{row['total']:.2f} s ({row['order']}); step 1 {row['step1']:.2f} s "
              f"({row['blocks1']} LFT blocks sent), step 3 {row['step3']:.2f} s "
              f"({row['blocks3']} blocks); switches = sar-route route at every step (step 2: "
              f"{row['how2']}), lft_truth valid", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(REPO, "build"),
                    help="build tree with sar-route, sar-filterd, libosmsar.so (default build/)")
    ap.add_argument("--fabric", default="ft2:16,16",
                    help="the bed's fabric, `sar-route gen --fabric` (default: the day demo's)")
    ap.add_argument("--repeat", type=int, default=3, help="repetitions (default 3)")
    ap.add_argument("--poll-interval", type=float, default=0.3,
                    help="sar-filterd's poll_interval_s (default 0.3, as the fault matrix)")
    ap.add_argument("--sighup-after-takeover", action="store_true",
                    help="SIGHUP the new master after step 2 (a heavy sweep) before step 3")
    ap.add_argument("--out", help="work directory, kept (default: a temporary one, removed "
                                  "after a run that passed)")
    args = ap.parse_args()
    exit_on_signals()
    work = os.path.abspath(args.out or tempfile.mkdtemp(prefix="sar-sm-failover-day-"))
    t0 = time.monotonic()
    load = os.getloadavg()
    bed = day_bed.DayBed(os.path.join(work, "bed"), fabric=args.fabric, sm="plugin",
                         hooks=False, build_dir=args.build, poll_interval_s=args.poll_interval,
                         progress=lambda m: print(m, flush=True), standby=True)
    ok, conf, fo = False, None, None
    try:
        try:
            bed.start(reference=False)
            conf = bed.slurm.conf
            fo = Failover(bed, os.path.join(work, "checks"), args.sighup_after_takeover)
            for r in range(args.repeat):
                fo.repetition(r)
            ok = True
        finally:
            bed.stop()
        left = bed.leftover_pids()
        check(not left, f"{len(bed.pids)} started, still running: {left}")
        strays = pids_with_env(f"SLURM_CONF={conf}") if conf else []
        check(not strays, f"job processes left: {strays}")
    except (sar_it.CheckFailed, *day_bed.ERRORS) as e:
        print(f"FAILED: {e}\n(work directory kept: {work})", file=sys.stderr)
        return 1
    rows = fo.rows
    med = {k: statistics.median(x[k] for x in rows)
           for k in ("takeover", "job_to_tables", "total", "step1", "step3")}
    print(f"\nSM failover on {args.fabric} with a real SLURM, {len(rows)} repetitions "
          f"({time.monotonic() - t0:.0f} s in all; load average at the start "
          f"{load[0]:.1f}, at the end {os.getloadavg()[0]:.1f}), medians:")
    print(f"  takeover (master killed -> standby MASTER)          {med['takeover']:.2f} s")
    print(f"  second job's start -> its tables, new master         {med['job_to_tables']:.2f} s")
    print(f"  master killed -> those tables (total)                {med['total']:.2f} s")
    print(f"  step 1: job start -> tables (master)                 {med['step1']:.2f} s, "
          f"LFT blocks sent {statistics.median(x['blocks1'] for x in rows):g}")
    print(f"  step 3: job end -> tables (new master)               {med['step3']:.2f} s, "
          f"LFT blocks sent {statistics.median(x['blocks3'] for x in rows):g}"
          + (" (after a SIGHUP)" if args.sighup_after_takeover else ""))
    print("every step: mapping = running multi-leaf jobs, switches = sar-route route, "
          "lft_truth valid, standby idle until it took over; nothing left running")
    if ok and not args.out:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
