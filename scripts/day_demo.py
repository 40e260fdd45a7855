#!/usr/bin/env python3
"""A day on a simulated cluster, end to end, with real parts on one machine.

A fat-tree (`sar-route gen`, default ft2:16,16: 16 leaves of 16 hosts, 16 spines) runs in ibsim;
a long-running stock OpenSM routes it with sar; a real SLURM (slurmctld + one slurmd per host on
127.0.0.1, topology/tree with the fabric's leaves) runs the jobs; sar-filterd polls SLURM and
makes OpenSM reroute when the set of jobs spanning several leaves changes. A seeded day of
events follows: jobs of mixed sizes start and end, one job is resubmitted on the same nodes (only
its id changes) and some jobs fit in one leaf: those two kinds must not cause a reroute.

Per event it prints what changed, whether sar-filterd rerouted, how long the job start took to
reach the switches (and where the time went), and the metrics of the tables read back from the
switches (dump_fts), judged by `sar-route eval` for the jobs running at that moment: max
effective EFI, dark fiber, and the worst per-job max EFI, before and after the reroute, against
OpenSM's default engine (minhop, routed once on a second ibsim bed and read back). A summary
table ends the run; every process it started is stopped, also on errors and Ctrl-C.

Subnet manager modes (--sm): "file" (stock OpenSM's file engine fed by sar-filterd's file mode)
or "plugin" (OpenSM loads the sar plugin from build/opensm-patch). --hooks adds SLURM's
controller hooks and --sar-pattern (build/slurm-plugin); "auto" uses them when built.
--bin-root DIR takes every program from an installed tree instead (DIR/usr/bin/sar-filterd,
DIR/usr/lib/<multiarch>/libosmsar.so, ...: the Debian packages unpacked with dpkg-deb -x).
--migration on (with --sm plugin): LMC 1 and the plugin's baseLID/highLID coordinator; sar-agent
and a reference consumer run on 8 hosts spread over the leaves (ibsim's 10 clients: OpenSM, 8
agents, dump_fts); per reroute the epoch's outcome, acks and phase times, and whether any
consumer used a baseLID between the release of the new base tables and the end of their push
(docs/migration.md).

Exit codes: 0 the day ran and every check held; 1 a check failed (switch tables differ from
sar-route's for that moment's jobs, a reroute where none belongs, a process left running);
2 usage; 3 a part could not be started or failed (message and log tails say which);
130/143 interrupted.
"""

import argparse
import html
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import day_bed  # noqa: E402
import day_latency  # noqa: E402
import migration_nodes  # noqa: E402
from testbed_common import exit_on_signals  # noqa: E402

# The day, as (kind, label, size, pattern). Sizes of multi-leaf jobs are fractions of the
# machine, of single-leaf jobs fractions of a leaf; the seed jitters them.
FULL_DAY = [
    ("start", "A", 0.14, None),
    ("start", "B", 0.5, "one-leaf"),
    ("start", "C", 0.22, "alltoall"),
    ("start", "D", 0.09, None),
    ("end", "A", None, None),
    ("start", "E", 0.16, None),
    ("resubmit", "C", None, None),
    ("start", "F", 0.6, "one-leaf"),
    ("end", "D", None, None),
    ("start", "G", 0.10, "alltoall"),
    ("end", "B", None, None),
    ("end", "E", None, None),
]
SHORT_DAY = [
    ("start", "A", 0.2, None),
    ("start", "B", 0.5, "one-leaf"),
    ("start", "C", 0.25, "alltoall"),
    ("end", "A", None, None),
    ("resubmit", "C", None, None),
    ("end", "B", None, None),
    ("end", "C", None, None),
]


def plan_day(template, seed, num_hosts, per_leaf):
    """Concrete events: dict(kind, label, nodes, pattern, one_leaf)."""
    rng = random.Random(seed)
    events = []
    for kind, label, size, pattern in template:
        ev = dict(kind=kind, label=label, nodes=None, pattern=None, one_leaf=False)
        if kind == "start":
            jitter = rng.uniform(0.85, 1.15)
            if pattern == "one-leaf":
                ev.update(one_leaf=True, nodes=max(1, round(size * per_leaf * jitter)))
            else:
                ev.update(pattern=pattern,
                          nodes=max(per_leaf + 1, round(size * num_hosts * jitter)))
        events.append(ev)
    return events


def prefill(bed, seed, fraction=0.3):
    """The machine before the day: small jobs pinned inside single leaves, so the day's larger
    jobs land in a fragmented machine, as on a busy cluster. Returns the jobs started."""
    rng = random.Random(seed * 7919 + 1)
    started = []
    for i, leaf in enumerate(bed.leaves):
        hosts = [h for h, lf in bed.host_leaf.items() if lf == leaf]
        count = rng.randint(0, round(2 * fraction * len(hosts)))
        if count:
            chosen = sorted(rng.sample(hosts, count))
            started.append(bed.submit(f"m{i}", nodes=count, nodelist=",".join(chosen)))
    return started


def leaves_text(job):
    names = [lf.replace("leaf", "") for lf in job.leaves]
    return f"{len(names)} {'leaf' if len(names) == 1 else 'leaves'} ({','.join(names)})"


class Day:
    """Runs events on a DayBed and keeps the per-event record."""

    def __init__(self, bed, out=print, compare_offline=True, verify_quiet=False, seed=1):
        self.bed = bed
        self.rng = random.Random(seed * 31 + 5)
        self.out = out
        self.compare_offline = compare_offline
        self.verify_quiet = verify_quiet  # read back after quiet events too: nothing changed
        self.rows = []
        self.failures = []
        self.latency_gaps = {}  # event number -> which log lacked a latency line
        self.mpi_done = False  # an alltoall job's exchange under libsarfors was run or skipped
        self.n = 0
        # The mapping the switches' tables (bed.current_lfts) were routed for: with the shipped
        # `delta true` a pass starts from both (check_tables).
        moments = os.path.join(bed.workdir, "moments")
        os.makedirs(moments, exist_ok=True)
        self.last_handed = os.path.join(moments, "start.filterd.map")
        if os.path.exists(bed.mapping_file):
            shutil.copyfile(bed.mapping_file, self.last_handed)
        else:
            open(self.last_handed, "w").close()

    def moment(self, tag):
        """The mapping of all running jobs now, and the minhop reference's figures for it."""
        mapping = self.bed.write_mapping(os.path.join(self.bed.workdir, "moments",
                                                      f"{tag}.map"))
        return mapping, self.bed.evaluate(self.bed.minhop_lfts, mapping)

    def step(self, title, action, expect_reroute, start_job=None, end_job=None):
        """One event: action() changes SLURM; then observe, read back, judge, print. For a job's
        start (start_job() gives the Job after the action) or end (end_job), a reroute's latency
        is read from the logs."""
        self.n += 1
        tag = f"e{self.n:02d}"
        os.makedirs(os.path.join(self.bed.workdir, "moments"), exist_ok=True)
        # The previous event ended right after a poll; a job arrives at any moment between two.
        time.sleep(self.rng.uniform(0, self.bed.poll_interval_s))
        marks = self.bed.marks()
        detail = action()
        job = start_job() if start_job else None
        rerouted = self.bed.observe(marks)
        mapping, minhop = self.moment(tag)
        before = self.bed.evaluate(self.bed.current_lfts, mapping, schedules=True,
                                   baseline=self.bed.minhop_lfts)
        after = before
        multi = {j.id: (sorted(j.hosts), j.pattern or "default")
                 for j in self.bed.jobs.values() if self.bed.spans(j.hosts)}
        row = dict(n=self.n, tag=tag, title=title, detail=detail, rerouted=rerouted,
                   expect=expect_reroute,
                   before=before, after=after, minhop=minhop, latency=None, same=None,
                   multi_leaf_jobs=multi, event="start" if job else "end" if end_job else None)
        if rerouted:
            previous = self.bed.current_lfts
            self.bed.current_lfts = self.bed.readback(tag)
            row["after"] = after = self.bed.evaluate(self.bed.current_lfts, mapping,
                                                     schedules=True,
                                                     baseline=self.bed.minhop_lfts)
            row["fors"] = self.bed.fors_schedules(self.bed.current_lfts)
            for fors_job, ok, verdict in row["fors"]:
                if not ok:
                    self.failures.append(f"event {self.n}: FORS schedule of job {fors_job}: "
                                         f"{verdict}")
            self.exercise_mpi(row)
            row["same"] = self.check_tables(tag, previous)
            if job or end_job:
                row["latency"] = self.latency(job or end_job, marks, row["event"])
            if self.bed.migration:
                row["migration"] = self.migration_check(marks)
        elif self.verify_quiet:
            now = self.bed.readback(tag)
            row["same"], report = self.bed.diff_lfts(self.bed.current_lfts, now)
            if not row["same"]:
                self.failures.append(f"event {self.n} ({title}): no reroute, yet the switches' "
                                     f"tables changed:\n{report[-1500:]}")
        if expect_reroute is not None and rerouted != expect_reroute:
            self.failures.append(f"event {self.n} ({title}): "
                                 f"{'a reroute' if rerouted else 'no reroute'}, expected "
                                 f"{'one' if expect_reroute else 'none'}")
        self.rows.append(row)
        self.print_event(row, detail)
        return row

    def exercise_mpi(self, row):
        """The first alltoall job of the day whose schedule the switches verified runs its
        exchange under libsarfors (DayBed.run_alltoall_exchange); once per day, run or skipped
        (it takes seconds of mpirun on this machine)."""
        if self.mpi_done:
            return
        by_id = {str(j.id): j for j in self.bed.jobs.values()}
        for fors_job, ok, verdict in row["fors"]:
            job = by_id.get(str(fors_job))
            if not ok or job is None or job.pattern != "alltoall" or "none" in verdict.split():
                continue
            verdict, text = self.bed.run_alltoall_exchange(job)
            row["mpi"] = (job.label, job.id, verdict, text)
            self.mpi_done = True
            if verdict == "FAILED":
                self.failures.append(f"event {self.n}: MPI exchange of job {job.label} "
                                     f"({job.id}) under libsarfors: {text}")
            return

    def migration_check(self, marks):
        """The reroute ran as a migration epoch: its outcome, phase times and acks from the
        plugin's status file and log, and whether any consumer used a baseLID between the
        release of the new base tables and the end of their push (the window in which the base
        tables change)."""
        bed = self.bed
        prev = (marks["migration"] or {}).get("last_epoch", 0)
        deadline = time.monotonic() + 20
        st = bed.migration_status_now()
        while not (st and st.get("last_epoch", 0) > prev and st.get("phase") == 5):
            if time.monotonic() > deadline:
                self.failures.append(f"event {self.n}: no migration epoch ended: {st}")
                return None
            time.sleep(0.05)
            st = bed.migration_status_now()
        epoch = st["last_epoch"]
        log = bed.osm.log_since(marks["osm"])
        res = dict(epoch=epoch, outcome=st["last_outcome"], ms=st["last_ms"], acks=None,
                   consumers=0, base_used=[])
        m = re.search(rf"migration epoch {epoch} phase \d \(\w+\): acks (\d+)/(\d+) in \d+ ms: "
                      "releasing", log)
        if m:
            res["acks"] = f"{m.group(1)}/{m.group(2)}"
        rel = re.search(rf"^.*migration epoch {epoch} phase \d.*releasing.*$", log, re.M)
        push = re.search(rf"^.*migration epoch {epoch} phase 3 .*pushed.*$", log, re.M)
        if st["last_outcome"] != "released":
            self.failures.append(f"event {self.n}: migration epoch {epoch} ended "
                                 f"{st['last_outcome']}")
        elif not rel or not push:
            self.failures.append(f"event {self.n}: migration epoch {epoch}: no release/push "
                                 f"lines in OpenSM's log")
        else:
            t0 = migration_nodes.opensm_log_real_ns(rel.group(0))
            t1 = migration_nodes.opensm_log_real_ns(push.group(0))
            for host, node in bed.nodes.nodes.items():
                evs = node.switches()
                peers = [lid for o, lid in bed.base_lids.items() if o != host]
                res["consumers"] += 1
                res["base_used"] += migration_nodes.base_use_during(evs, t0, t1, peers,
                                                                    clock="real_ns")
            if res["base_used"]:
                self.failures.append(f"event {self.n}: a consumer used baseLIDs while the base "
                                     f"tables changed: {res['base_used'][:3]}")
        return res

    def check_tables(self, tag, previous):
        """The switches' tables equal `sar-route route` for sar-filterd's mapping, given the
        tables they held before (`previous`) and the mapping those were routed for, as the
        plugin's pass had them (the shipped `delta true`)."""
        handed = os.path.join(self.bed.workdir, "moments", f"{tag}.filterd.map")
        shutil.copyfile(self.bed.mapping_file, handed)
        previous_jobs, self.last_handed = self.last_handed, handed
        if not self.compare_offline:
            return None
        offline = self.bed.offline_route(handed, os.path.join(self.bed.workdir, "moments",
                                                              f"{tag}.offline.lfts"),
                                         previous=previous, previous_jobs=previous_jobs)
        same, report = self.bed.diff_lfts(offline, self.bed.current_lfts)
        if not same:
            self.failures.append(f"event {self.n}: switch tables differ from sar-route route "
                                 f"for the mapping sar-filterd handed over (given the tables "
                                 f"before and their mapping):\n{report[-1500:]}")
        return same

    def latency(self, job, marks, event):
        bed = self.bed
        with open(os.path.join(bed.slurm.workdir, "log", "slurmctld.log"),
                  errors="replace") as f:
            ctld = f.read()
        why = []
        lat = day_latency.stages(ctld, bed.filterd.log_since(marks["filterd"]),
                                 bed.osm.log_since(marks["osm"]), job.id,
                                 "file" if bed.sm == "file" else "sar", event, why)
        if lat is None:  # say which log lacked its line, for the test's message
            self.latency_gaps[self.n] = "; ".join(why)
        return lat

    def print_event(self, row, detail):
        b, a, m = row["before"], row["after"], row["minhop"]
        self.out(f"[{row['n']:2d}] {row['title']}")
        if detail:
            self.out(f"     {detail}")
        if row["rerouted"]:
            lat = row["latency"]
            line = "     sar-filterd rerouted"
            if lat:
                line += (f"; job {row['event']} -> tables in the switches {lat['total']:.2f} s "
                         f"(wait for "
                         f"poll {lat['wait']:.2f}, poll {lat['poll'] * 1e3:.1f} ms, filter "
                         f"{lat['filter'] * 1e3:.1f} ms, routing {lat['routing'] * 1e3:.0f} ms, "
                         f"write {lat['write'] * 1e3:.0f} ms, OpenSM push "
                         f"{lat['push'] * 1e3:.0f} ms)")
            self.out(line)
            if row["same"] is not None:
                self.out("     switches == sar-route route for that mapping: "
                         + ("yes" if row["same"] else "NO"))
            for fors_job, ok, verdict in row.get("fors", []):
                self.out(f"     FORS {verdict}" if ok
                         else f"     FORS job {fors_job}: FAILED {verdict}")
            if row.get("mpi"):
                label, job_id, verdict, text = row["mpi"]
                self.out(f"     MPI job {label} ({job_id}) under libsarfors: {verdict}: {text}")
            mig = row.get("migration")
            if mig:
                ms = mig["ms"]
                self.out(f"     migration epoch {mig['epoch']}: {mig['outcome']}, acks "
                         f"{mig['acks'] or '?'}; plan {ms.get('plan')} drain {ms.get('drain')} "
                         f"push {ms.get('push')} repath {ms.get('repath')} total "
                         f"{ms.get('total')} ms; consumers on highLIDs while the base tables "
                         f"changed: {'yes' if not mig['base_used'] else 'NO'} "
                         f"({mig['consumers']} consumers)")
        else:
            self.out("     no reroute (the multi-leaf host sets did not change)")
        arrow = (lambda x, y, f: f(x) if not row["rerouted"] else f"{f(x)} -> {f(y)}")
        self.out(f"     max eff. EFI  sar {arrow(b['max_eff_efi'], a['max_eff_efi'], str)}"
                 f"  minhop {m['max_eff_efi']}   | dark fiber sar "
                 f"{arrow(b['dark'], a['dark'], lambda v: f'{v:.0%}')}  minhop {m['dark']:.0%}"
                 f"   | worst job EFI sar "
                 f"{arrow(b['worst_job_efi'], a['worst_job_efi'], str)}  minhop "
                 f"{m['worst_job_efi']}")
        if a["job_time"]:
            self.out(f"     jobs' time    slowest job sar "
                     f"{arrow(b['worst_time'], a['worst_time'], lambda v: f'{v:.1f}')}  minhop "
                     f"{m['worst_time']:.1f}   | median job sar "
                     f"{arrow(b['median_time'], a['median_time'], lambda v: f'{v:.1f}')}  "
                     f"minhop {m['median_time']:.1f}   | jobs slower than under minhop: "
                     f"{a['slower']}" + (f" (FORS phases: {', '.join(a['phased'])})"
                                         if a["phased"] else ""))

    def summary(self):
        out = self.out
        out("")
        out(f" #  {'event':44s}  reroute  latency  max eff.EFI     dark fiber     worst job EFI"
            f"   slowest job's time  median job's time  slower")
        out(f"    {'':44s}               (s)    sar  minhop   sar   minhop   sar  minhop"
            f"      sar   minhop       sar   minhop   than minhop")
        for r in self.rows:
            lat = f"{r['latency']['total']:.2f}" if r["latency"] else "-"
            a, m = r["after"], r["minhop"]
            out(f"{r['n']:2d}  {r['title'][:44]:44s}  {'yes' if r['rerouted'] else 'no':>7s}"
                f"  {lat:>7s}  {a['max_eff_efi']:4d}  {m['max_eff_efi']:5d}"
                f"   {a['dark']:4.0%}  {m['dark']:5.0%}   "
                f"{a['worst_job_efi']:4d}  {m['worst_job_efi']:5d}"
                f"   {a['worst_time']:7.1f}  {m['worst_time']:7.1f}   {a['median_time']:7.1f}"
                f"  {m['median_time']:7.1f}   {a['slower'] if a['slower'] is not None else '-':>5}")
        out("job's time: an all-to-all of equal messages, in units of one message at line rate, "
            "with every running job sending at once (max-min fair); it ends when the job's "
            "slowest flow does. Alltoall jobs with a published FORS schedule exchange in its "
            "phases under sar; under minhop they send all at once. All from the tables read back "
            "from the switches.")
        # Where the two figures disagree, say so: the job's time is what a job waits for.
        low_efi_slow = [r["n"] for r in self.rows if r["after"]["slower"] and
                        r["after"]["max_eff_efi"] <= r["minhop"]["max_eff_efi"]]
        high_efi_fine = [r["n"] for r in self.rows if r["after"]["slower"] == 0 and
                         r["after"]["max_eff_efi"] > r["minhop"]["max_eff_efi"]]
        if low_efi_slow:
            out(f"note: at events {', '.join(map(str, low_efi_slow))} sar's max effective EFI is "
                f"at or below minhop's, yet some jobs are slower than under minhop")
        if high_efi_fine:
            out(f"note: at events {', '.join(map(str, high_efi_fine))} sar's max effective EFI is "
                f"above minhop's, yet no job is slower than under minhop")
        for r in self.rows:
            if r.get("mpi"):
                label, job_id, verdict, text = r["mpi"]
                out(f"\nMPI: at event {r['n']} alltoall job {label} ({job_id}): "
                    + (f"its exchange under libsarfors was skipped: {text}"
                       if verdict == "skipped" else
                       f"ran MPI_Alltoall and MPI_Alltoallv under libsarfors: {verdict}: {text}"))
        migs = [r["migration"] for r in self.rows if r.get("migration")]
        if migs:
            tot = [m["ms"].get("total", 0) for m in migs]
            clean = all(not m["base_used"] and m["outcome"] == "released" for m in migs)
            out(f"\nmigration: {len(migs)} epochs, median {statistics.median(tot):.0f} ms, worst "
                f"{max(tot)} ms per epoch (consumers' drain {self.bed.drain_ms} ms twice); no "
                f"consumer on a baseLID while base tables changed: {'yes' if clean else 'NO'}")
        if any("*" in r["title"] for r in self.rows):
            out("* alltoall, but the SLURM side is off (--hooks off, or slurm-plugin/ not built): "
                "submitted without --sar-pattern")
        for event in ("start", "end"):
            lats = [r["latency"] for r in self.rows if r["latency"] and r["event"] == event]
            if not lats:
                continue
            tot = [x["total"] for x in lats]
            out(f"\njob {event} -> LFTs in the switches over {len(lats)} reroutes: median "
                f"{statistics.median(tot):.2f} s, worst {max(tot):.2f} s")
            parts = ", ".join(
                f"{k} {statistics.median(x[k] for x in lats) * 1e3:.1f} ms"
                for k in ("wait", "poll", "filter", "routing", "write", "push"))
            out(f"median per stage: {parts}")
        return [r["latency"] for r in self.rows if r["latency"]]


def run_day(bed, template, seed, out=print, compare_offline=True, verify_quiet=False):
    """Prefill, then the events; returns the Day (rows, failures)."""
    day = Day(bed, out, compare_offline, verify_quiet, seed)
    events = plan_day(template, seed, len(bed.hosts), bed.per_leaf)
    def morning():
        jobs = prefill(bed, seed)
        return f"{len(jobs)} jobs, {sum(len(j.hosts) for j in jobs)} hosts busy"

    day.step("morning: small jobs in single leaves", morning, expect_reroute=False)
    for ev in events:
        label = ev["label"]
        if ev["kind"] == "start":
            kind = "one-leaf job" if ev["one_leaf"] else "job"
            pat = ""
            if ev["pattern"]:
                # Without the SLURM side there is no --sar-pattern: the job runs as a default one.
                pat = f", {ev['pattern']}" + ("" if bed.hooks else "*")
            title = f"start {kind} {label} ({ev['nodes']} nodes{pat})"
            started = {}

            def act(ev=ev, started=started):
                nodes = ev["nodes"]
                if ev["one_leaf"]:
                    nodes = min(nodes, max(len(v) for v in bed.idle_by_leaf().values()))
                job = bed.submit(ev["label"], nodes=nodes, pattern=ev["pattern"],
                                 one_leaf=ev["one_leaf"])
                started["job"] = job
                return f"job {job.id}: {len(job.hosts)} hosts on {leaves_text(job)}"

            # Where SLURM puts the job decides whether it must reroute: checked after the fact.
            row = day.step(title, act, expect_reroute=None, start_job=lambda s=started: s["job"])
            job = started["job"]
            # On rails (a real dump's DGXs) what spans is rail-aligned traffic between leaves.
            row["expect"] = bed.spans(job.hosts)
            if row["rerouted"] != row["expect"]:
                day.failures.append(f"event {row['n']} ({title}): job on {len(job.leaves)} "
                                    f"leaves (traffic across leaves: {row['expect']}), "
                                    f"rerouted: {row['rerouted']}")
        elif ev["kind"] == "end":
            job = bed.jobs[label]
            multi = bed.spans(job.hosts)

            def act(label=label, job=job):
                bed.cancel(label)
                return f"job {job.id} ended: {len(job.hosts)} hosts on {leaves_text(job)} free"

            day.step(f"end job {label}" + ("" if multi else " (one leaf)"), act,
                     expect_reroute=multi, end_job=job)
        else:
            ids = {}

            def act(label=label):
                old, new = bed.resubmit_same_nodes(label)
                ids.update(old=old, new=new)
                return (f"job {old.id} cancelled, job {new.id} started on the same "
                        f"{len(new.hosts)} hosts")

            day.step(f"resubmit {label} on its nodes (id-only change)", act,
                     expect_reroute=False)
            # No reroute, so the router publishes nothing: sar-filterd publishes the old id's
            # FORS schedule under the new id, where the job's tasks look (docs/fors.md).
            old, new = ids.get("old"), ids.get("new")
            if old is not None and old.pattern == "alltoall":
                def path(job_id):
                    return f"{bed.mapping_file}.fors.{job_id}"
                if os.path.exists(path(old.id)):
                    ok = os.path.exists(path(new.id))
                    out(f"     FORS schedule of job {old.id} under the new id {new.id}: "
                        f"{'yes' if ok else 'MISSING'}")
                    if not ok:
                        day.failures.append(f"resubmit {label}: no {path(new.id)}")
    return day


def day_trace(rows):
    """The day's multi-leaf jobs as a replay trace (docs/formats.md): event n at hour n, each job
    from the first event that saw it running to the event after the last one ('-' if it still
    runs at the end). Only multi-leaf jobs matter to the reroutes, so only they are listed."""
    first, last, hosts = {}, {}, {}
    for row in rows:
        for job_id, (job_hosts, _pattern) in row["multi_leaf_jobs"].items():
            first.setdefault(job_id, row["n"])
            last[job_id] = row["n"]
            hosts[job_id] = job_hosts
    end_n = rows[-1]["n"] if rows else 0
    lines = ["# sar day demo: event n at n hours; multi-leaf jobs only"]
    for job_id in sorted(first, key=lambda j: (first[j], str(j))):
        end = "-" if last[job_id] == end_n else str((last[job_id] + 1) * 3600)
        lines.append(f"{first[job_id] * 3600} {end} {job_id} {','.join(hosts[job_id])}")
    return "\n".join(lines) + "\n"


VEGA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "third_party", "vega")


# Dash patterns per series (report_html.cc's kDashes).
DASHES = [[1, 0], [6, 3], [2, 2], [8, 3, 2, 3], [4, 4], [1, 3], [10, 2], [3, 6]]


def _json_script(obj):
    """JSON safe inside an HTML/XML <script>: <, >, & as \\u escapes."""
    return (json.dumps(obj, separators=(",", ":")).replace("<", "\\u003c")
            .replace(">", "\\u003e").replace("&", "\\u0026"))


def _chart(title, unit, rows, key, engines=("sar", "minhop")):
    """A line chart of one figure per event as a Vega-Lite specification (drawn by the page's
    inlined Vega, as sar-route's reports are: router/include/sar/report/report_html.h): rows {n: event,
    v, s: series}; engines equal at every event are one series "sar = minhop", and the subtitle
    says so (one line would hide the other)."""
    series = {e: [float(key(r, e)) for r in rows] for e in engines}
    groups = []
    for e in engines:
        for g in groups:
            if series[g[0]] == series[e]:
                g.append(e)
                break
        else:
            groups.append([e])
    colours = {"sar": "#1f77b4", "minhop": "#d62728"}
    names = [" = ".join(g) for g in groups]
    values = [{"n": r["n"], "v": series[g[0]][i], "s": name}
              for g, name in zip(groups, names) for i, r in enumerate(rows)]
    same = [name for g, name in zip(groups, names) if len(g) > 1]
    spec = {
        "$schema": "https://vega.github.io/schema/vega-lite/v6.json",
        "title": {"text": title, "anchor": "start",
                  **({"subtitle": "; ".join(same) + ": equal at every event, drawn as one line"}
                     if same else {})},
        "width": 600, "height": 180, "data": {"values": values},
        "mark": {"type": "line", "point": True, "strokeWidth": 2},
        "encoding": {
            "x": {"field": "n", "type": "quantitative",
                  "axis": {"title": "event", "tickMinStep": 1, "format": "d"}},
            "y": {"field": "v", "type": "quantitative", "axis": {"title": unit}},
            "color": {"field": "s", "type": "nominal", "title": "engine",
                      "scale": {"domain": names,
                                "range": [colours.get(g[0], "#333") for g in groups]},
                      "legend": {"labelLimit": 400}},
            # Lines that meet at some events stay apart where they do: the second dashed.
            "strokeDash": {"field": "s", "type": "nominal", "title": "engine",
                           "scale": {"domain": names, "range": DASHES[:len(names)]}}}}
    note = (f'<p class="coincide">One line for several engines: {html_escape("; ".join(same))}'
            " (equal at every event).</p>" if same else "")
    return (f'<div class="chart" data-kind="series" data-title="{html_escape(title)}">'
            f'<script type="application/json" class="vega-lite-spec">{_json_script(spec)}'
            f"</script></div>{note}")


def chart_scripts():
    """Vega and Vega-Lite inline (CDATA, "]]>" written "]] >": the page stays well-formed XML)
    and the renderer that draws each chart's specification as SVG into its <div>."""
    parts = []
    for name in ("vega.min.js", "vega-lite.min.js"):
        with open(os.path.join(VEGA_DIR, name)) as f:
            parts.append("<script>//<![CDATA[\n" + f.read().replace("]]>", "]] >") +
                         "\n//]]></script>")
    parts.append("<script>//<![CDATA[\n"
                 "document.querySelectorAll('script.vega-lite-spec').forEach(function (el) {\n"
                 "  var spec = vegaLite.compile(JSON.parse(el.textContent)).spec;\n"
                 "  var div = document.createElement('div');\n"
                 "  el.parentNode.appendChild(div);\n"
                 "  new vega.View(vega.parse(spec), {renderer: 'svg', container: div, "
                 "hover: true}).runAsync();\n"
                 "});\n//]]></script>")
    return "\n".join(parts)


def html_escape(text):
    return html.escape(str(text), quote=True)


def day_report_html(rows, fabric):
    """The day as one self-contained page, every figure from the tables read back from the
    switches (sar) and from OpenSM's minhop (read back once from a second bed): per event max
    effective EFI and what the jobs feel (the slowest and the median job's exchange time, jobs
    slower than under minhop)."""
    head = ["#", "event", "rerouted", "max eff. EFI sar", "minhop", "slowest job's time sar",
            "minhop", "median job's time sar", "minhop", "jobs slower than under minhop",
            "FORS phases"]
    body = []
    for r in rows:
        a, m = r["after"], r["minhop"]
        cells = [r["n"], r["title"], "yes" if r["rerouted"] else "no", a["max_eff_efi"],
                 m["max_eff_efi"], f"{a['worst_time']:.1f}", f"{m['worst_time']:.1f}",
                 f"{a['median_time']:.1f}", f"{m['median_time']:.1f}",
                 "-" if a["slower"] is None else a["slower"], ", ".join(a["phased"]) or "-"]
        body.append("<tr>" + "".join(f"<td>{html_escape(c)}</td>" for c in cells) + "</tr>")
    table = ('<div style="overflow-x:auto"><table><thead><tr>' +
             "".join(f"<th>{html_escape(c)}</th>" for c in head) + "</tr></thead><tbody>" +
             "".join(body) + "</tbody></table></div>")
    charts = [
        _chart("Slowest job's exchange time", "exchange time (messages at line rate)", rows,
               lambda r, e: (r["after"] if e == "sar" else r["minhop"])["worst_time"]),
        _chart("Median job's exchange time", "exchange time (messages at line rate)", rows,
               lambda r, e: (r["after"] if e == "sar" else r["minhop"])["median_time"]),
        _chart("Max effective EFI", "max effective EFI (routes on a channel)", rows,
               lambda r, e: (r["after"] if e == "sar" else r["minhop"])["max_eff_efi"]),
    ]
    title = f"sar day demo on {fabric}: what the switches held"
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>"
            f"<title>{html_escape(title)}</title><style>body{{font-family:sans-serif;"
            "margin:2em;max-width:80em}table{border-collapse:collapse}td,th{border:1px solid "
            "#ccc;padding:2px 6px;font-size:13px}div.chart{margin:1.5em 0}</style></head><body>"
            f"<h1>{html_escape(title)}</h1>"
            "<p>Every figure comes from the tables read back from the simulated switches after "
            "each event (sar) and from OpenSM's own minhop, read back once. A job's time is that "
            "of an all-to-all exchange of equal messages, in units of one message at line rate, "
            "with every running job sending at once and rates shared max-min fairly: it ends "
            "when the job's slowest flow does. Alltoall jobs with a published FORS schedule "
            "exchange in its phases under sar. Max effective EFI counts the routes on the "
            "busiest channel; the job's time is what the job waits for.</p>"
            + table + "".join(charts) + chart_scripts() + "</body></html>\n")


def write_day_report(bed, day, html, out=print):
    """One self-contained page for the day from what the switches held (day_report_html), and
    beside it the day's multi-leaf job set as a replay trace (day.trace in the bed's workdir:
    `sar-route replay --trace` plays it offline)."""
    trace = os.path.join(bed.workdir, "day.trace")
    with open(trace, "w") as f:
        f.write(day_trace(day.rows))
    tmp = html + ".tmp"
    with open(tmp, "w") as f:
        f.write(day_report_html(day.rows, bed.fabric_spec))
    os.replace(tmp, html)
    out(f"day report: {html}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fabric", default="ft2:16,16",
                    help="sar-route gen spec (default ft2:16,16: 256 hosts, 16 leaves), or a "
                         "real ibnetdiscover dump read in place: its hosts with several named "
                         "HCAs (mlx5_N, HCA-N) are the SLURM nodes, a job reroutes when its "
                         "rail-aligned traffic crosses leaves (docs/formats.md)")
    ap.add_argument("--sm", choices=("auto", "file", "plugin"), default="auto",
                    help="how OpenSM gets sar's tables (default: plugin if built, else file)")
    ap.add_argument("--hooks", choices=("auto", "on", "off"), default="auto",
                    help="SLURM controller hooks and --sar-pattern (default: on if built)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the day (default 1)")
    ap.add_argument("--short", action="store_true", help="the short day of the CI test")
    ap.add_argument("--poll-interval", type=float, default=1.0,
                    help="sar-filterd's poll interval in seconds (default 1)")
    ap.add_argument("--build", default=os.path.join(day_bed.REPO, "build"),
                    help="build directory with sar-route and sar-filterd (default build/)")
    ap.add_argument("--bin-root", metavar="DIR",
                    help="take every program from an installed tree instead of --build: DIR/usr/"
                         "bin/sar-filterd, DIR/usr/lib/<multiarch>/libosmsar.so, ... (e.g. the "
                         "Debian packages unpacked with dpkg-deb -x)")
    ap.add_argument("--out", help="keep every file here (default: a temp dir, removed)")
    ap.add_argument("--html", help="write the day as one self-contained HTML page (time series "
                                   "of max effective EFI per event, heat map before/after a "
                                   "reroute), drawn by sar-route replay")
    ap.add_argument("--migration", choices=("on", "off"), default="off",
                    help="baseLID/highLID migration (docs/migration.md): LMC 1, the plugin's "
                         "coordinator, sar-agent + a reference consumer on up to 8 hosts "
                         "(needs --sm plugin; default off)")
    ap.add_argument("--fors-only-where-faster", action="store_true",
                    help="the plugin's fors_only_where_faster: an alltoall job keeps FORS only "
                         "where its phases are not slower for it than SAR's routes all at once "
                         "(docs/fors.md; needs --sm plugin)")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    exit_on_signals()
    keep = args.out is not None
    root = os.path.abspath(args.out) if keep else tempfile.mkdtemp(prefix="sar-day-")
    hooks = {"auto": None, "on": True, "off": False}[args.hooks]
    t0 = time.monotonic()
    say = (lambda msg: print(f"[{time.monotonic() - t0:6.1f} s] {msg}", flush=True))
    sm = None if args.sm == "auto" else args.sm
    bed = day_bed.DayBed(os.path.join(root, "day"), fabric=args.fabric, sm=sm, hooks=hooks,
                         build_dir=args.build, poll_interval_s=args.poll_interval, progress=say,
                         bins=day_bed.Binaries.from_root(args.bin_root) if args.bin_root else None,
                         migration=args.migration == "on",
                         fors_only_where_faster=args.fors_only_where_faster)
    if args.fors_only_where_faster and bed.sm != "plugin":
        print("day_demo: --fors-only-where-faster needs --sm plugin", file=sys.stderr)
        return 2
    code = 0
    pids = []
    try:
        say(f"programs from the {bed.bins.where}")
        say("starting: fabric, OpenSM, SLURM, sar-filterd ...")
        bed.start()
        print(flush=True)
        day = run_day(bed, SHORT_DAY if args.short else FULL_DAY, args.seed,
                      out=lambda s: print(s, flush=True))
        day.summary()
        if args.html:
            write_day_report(bed, day, args.html, out=lambda s: print(s, flush=True))
        for f in day.failures:
            print(f"CHECK FAILED: {f}", file=sys.stderr)
        code = 1 if day.failures else 0
    except day_bed.ERRORS as e:
        print(f"day_demo: {e}", file=sys.stderr)
        code = 3
    except SystemExit as e:
        print("day_demo: interrupted, stopping everything", file=sys.stderr)
        code = e.code if isinstance(e.code, int) else 130
    finally:
        # A second Ctrl-C (or the terminal's SIGHUP) must not cut the teardown short.
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        pids = list(bed.pids)
        try:
            bed.stop()
        except day_bed.DayError as e:
            print(f"day_demo: {e}", file=sys.stderr)
            code = code or 1
        left = bed.leftover_pids()
        if left:
            print(f"CHECK FAILED: still running: {left}", file=sys.stderr)
            code = code or 1
        else:
            print(f"\nstopped {len(pids)} processes; nothing left running "
                  f"({time.monotonic() - t0:.0f} s in all). Files: {root if keep else '(removed)'}")
        if not keep:
            shutil.rmtree(root, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
