#!/usr/bin/env python3
"""Soak run (a benchmark, not CI): many job events through sar-filterd's replay source against a
long-running stock OpenSM with the sar plugin on ibsim (scripts/day_bed.py's OpenSM), for hours
of daemon life in minutes. Reports:

  - RSS of sar-filterd and OpenSM at the start, at every checkpoint and at the end;
  - reroutes (sar-filterd's counter), trigger errors (must be 0);
  - latency of every event that changes the multi-switch job set: from the event (its time in
    the trace, on the replay clock) to its tables in the switches (the plugin's pass summary,
    logged at routing-done, of the pass sar-filterd's signal started), p50/p90/p99/max;
  - at every checkpoint (sar-filterd paused, OpenSM quiet): the tables read back from the
    switches are valid (`sar-route eval`) and equal to `sar-route route` for the mapping
    sar-filterd handed over (`sar-route diff-lfts`). Zero invalid tables is the pass mark.

The trace (docs/formats.md, "Replay trace") is seeded: jobs of 1..3 leaves' worth of hosts
(about half single-leaf, which must cause no reroute), placed on free hosts, arrivals with
exponential gaps of mean --gap seconds, each running a few gaps. Events that fall into a
checkpoint's pause are left out of the latency figures (they wait for the pause).

  bench/soak.py --events 10000 [--gap 0.25] [--fabric ft2:16,16] [--build build] [--out DIR]

The replay clock starts when sar-filterd reads its config; the event times here are taken from
just before it is spawned, so latencies are overstated by at most its start-up (printed as the
"clock bound": spawn to its first log line)."""

import argparse
import bisect
import json
import os
import random
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "scripts"))
import day_bed  # noqa: E402
import day_latency  # noqa: E402
import sar_testbed  # noqa: E402
from filterd_process import FilterdProcess  # noqa: E402
from testbed_common import exit_on_signals  # noqa: E402

_FILTERD_TIME = re.compile(r"^\[\d{4}-\d\d-(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{3})\]")
_CYCLE = re.compile(r"\] cycle: .*\(poll ([\d.]+) ms, cycle ([\d.]+) ms\)")
_SEEN = re.compile(r"\]   ([+-]) job (\S+) \(")


def month_seconds_now(t=None):
    return day_latency.month_seconds(time.time() if t is None else t)


def rss_kb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def make_trace(hosts, per_leaf, events, gap, seed):
    """[(start, end, id, hosts, multi_leaf)] with `events` starts+ends; hosts never shared."""
    rng = random.Random(seed)
    free = set(range(len(hosts)))
    running = []  # (end, idx list)
    jobs = []
    t = 5.0  # let the daemons settle first
    n = 0
    while 2 * len(jobs) < events:
        t += rng.expovariate(1.0 / gap)
        while running and running[0][0] <= t:
            _, idx = running.pop(0)
            free |= set(idx)
        multi = rng.random() < 0.5
        if multi:
            size = rng.randint(per_leaf + 1, 3 * per_leaf)
            pool = sorted(free)
            if len(pool) < size:
                continue
            start = rng.randrange(0, len(pool) - size + 1)
            idx = pool[start:start + size]
        else:
            leaves = {}
            for i in free:
                leaves.setdefault(i // per_leaf, []).append(i)
            fits = [v for v in leaves.values() if len(v) >= 2]
            if not fits:
                continue
            pick = rng.choice(fits)
            size = rng.randint(1, len(pick))
            idx = sorted(pick)[:size]
        leaves_of = {i // per_leaf for i in idx}
        duration = rng.uniform(2, 12) * gap
        n += 1
        job = (round(t, 3), round(t + duration, 3), f"{1000 + n}", [hosts[i] for i in idx],
               len(leaves_of) > 1)
        jobs.append(job)
        free -= set(idx)
        bisect.insort(running, (t + duration, idx))
    return jobs


def write_trace(path, jobs):
    with open(path, "w") as f:
        f.write("# start end id hosts (bench/soak.py)\n")
        for s, e, jid, hs, _ in jobs:
            f.write(f"{s} {e} {jid} {','.join(hs)}\n")


class SoakBed(day_bed.DayBed):
    """day_bed's fabric and OpenSM with the plugin; sar-filterd on a replay trace, no SLURM."""

    def start_soak(self, trace):
        for tool in (self.sar_route, self.sar_filterd):
            if not os.access(tool, os.X_OK):
                raise day_bed.DayError(f"{tool} is not built")
        shutil.rmtree(self.workdir, ignore_errors=True)
        os.makedirs(self.workdir)
        day_bed._live.add(self)
        self._step("fabric", self._gen)
        self._step("ibsim + OpenSM (sar)", self._start_sm)
        fd = os.path.join(self.workdir, "filterd")
        os.makedirs(fd)
        options = {
            "source": "replay", "replay_trace": trace, "replay_start_s": 0, "replay_speed": 1,
            "fabric": self.topology, "poll_interval_s": self.poll_interval_s, "settle_s": 0,
            "min_reroute_interval_s": 0, "mapping_file": self.mapping_file,
            "state_dir": os.path.join(fd, "state"), "control_socket": self.control_socket,
            "metrics_textfile": os.path.join(fd, "metrics.prom"), "routing_threads": 1,
        }
        options.update(day_bed.filterd_trigger("plugin", self))
        self.spawned = time.time()
        self.filterd = FilterdProcess(self.sar_filterd, fd, options, dict(os.environ))
        self.pids.append(self.filterd.pid)
        self.filterd.wait_polls(1)


def parse_filterd(text):
    """[(poll_start, end, [('+'|'-', id)], signal time or None)] per cycle."""
    cycles = []
    for line in text.splitlines():
        m = _FILTERD_TIME.match(line)
        if not m:
            continue
        day, hh, mm, ss, ms = (int(x) for x in m.groups())
        t = ((day * 24 + hh) * 60 + mm) * 60 + ss + ms / 1e3
        c = _CYCLE.search(line)
        if c:
            cycles.append(dict(start=t - float(c.group(2)) / 1e3, end=t, seen=[], signal=None))
            continue
        s = _SEEN.search(line)
        if s and cycles:
            cycles[-1]["seen"].append((s.group(1), s.group(2)))
        elif "reroute: wrote" in line and cycles:
            cycles[-1]["signal"] = t
    return cycles


def parse_opensm(text):
    """[(pass start, done)] per routing pass: done = the plugin's pass summary line, logged at
    OpenSM's routing-done once the switches acknowledged the pass's last changed block."""
    passes = []
    cur = None
    for line in text.splitlines():
        t = sar_testbed.log_time(line)
        if t is None:
            continue
        if "building routing with" in line:
            if cur:
                passes.append(cur)
            cur = dict(start=t, configured=None, done=None)
        elif cur and "tables configured on all switches" in line:
            cur["configured"] = t
        elif cur and cur["configured"] is not None and "osmsar: pass summary:" in line:
            cur["done"] = t
    if cur:
        passes.append(cur)
    return [(p["start"], p["done"]) for p in passes if p["done"] is not None]


def checkpoint(bed, tag, out):
    """sar-filterd paused; once OpenSM is quiet, the switches' tables against offline routing of
    the mapping it handed over. Returns (valid, same, pause window in month seconds)."""
    t0 = month_seconds_now()
    bed.filterd.pause()
    try:
        bed.wait_log_quiet(1.0, 60.0)
        lfts = bed.readback(tag)
        mapping = os.path.join(bed.workdir, f"mapping.{tag}")
        shutil.copyfile(bed.mapping_file, mapping)
        ev = bed.evaluate(lfts, mapping)
        offline = bed.offline_route(mapping, os.path.join(bed.workdir, f"offline.{tag}.lfts"))
        same, report = bed.diff_lfts(offline, lfts)
    finally:
        bed.filterd.resume()
    t1 = month_seconds_now()
    jobs = sum(1 for _ in open(mapping)) if os.path.exists(mapping) else 0
    out(f"  checkpoint {tag}: tables valid={ev['valid']}, equal to offline routing={same} "
        f"(mapping {jobs} lines), pause {t1 - t0:.1f} s, RSS sar-filterd "
        f"{rss_kb(bed.filterd.pid)} kB, OpenSM {rss_kb(bed.osm.pid)} kB")
    if not same:
        out(report[-1500:])
    return ev["valid"], same, (t0, t1)


def pct(values, q):
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q / 100.0 * (len(s) - 1))))]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10000, help="job starts + ends (10000)")
    ap.add_argument("--gap", type=float, default=0.25, help="mean seconds between arrivals")
    ap.add_argument("--fabric", default="ft2:16,16")
    ap.add_argument("--poll-interval", type=float, default=0.2)
    ap.add_argument("--checkpoints", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--build", default=os.path.join(day_bed.REPO, "build"))
    ap.add_argument("--bin-root", help="programs from an installed tree (day_bed.Binaries)")
    ap.add_argument("--out", help="keep every file here (default: a temp dir, removed)")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args(argv)
    exit_on_signals()
    root = os.path.abspath(args.out) if args.out else tempfile.mkdtemp(prefix="sar-soak-")
    say = (lambda msg: print(msg, flush=True))
    bins = (day_bed.Binaries.from_root(args.bin_root) if args.bin_root
            else day_bed.Binaries.from_build(args.build))
    # delta false, unlike the shipped config: a checkpoint compares the switches with a full
    # recompute, and with `delta true` they would hold the last of hours of passes, each from
    # the one before (which no checkpoint reads). The day demo and its tests run delta true.
    bed = SoakBed(os.path.join(root, "soak"), fabric=args.fabric, sm="plugin", hooks=False,
                  poll_interval_s=args.poll_interval, progress=say, bins=bins,
                  plugin_delta=False)
    code = 0
    try:
        # The fabric first (for the host names), then the trace, then the daemons.
        os.makedirs(root, exist_ok=True)
        tmp_topo = os.path.join(root, "probe.topo")
        day_bed.run([bins.sar_route, "gen", "--fabric", args.fabric, "-o", tmp_topo])
        host_leaf = day_bed.read_host_leaves(tmp_topo)
        hosts = sorted(host_leaf)
        per_leaf = sum(1 for h in hosts if host_leaf[h] == host_leaf[hosts[0]])
        jobs = make_trace(hosts, per_leaf, args.events, args.gap, args.seed)
        trace = os.path.join(root, "trace.txt")
        write_trace(trace, jobs)
        duration = max(e for _, e, _, _, _ in jobs)
        multi = sum(1 for j in jobs if j[4])
        say(f"trace: {len(jobs)} jobs ({2 * len(jobs)} events, {multi} multi-leaf jobs), "
            f"{duration:.0f} s of replay time, seed {args.seed}")
        bed.start_soak(trace)
        t0_month = month_seconds_now(bed.spawned)
        first = bed.filterd.log_since(0).splitlines()[0] if bed.filterd.log_offset() else ""
        m = _FILTERD_TIME.match(first)
        clock_bound = None
        if m:
            day, hh, mm, ss, ms = (int(x) for x in m.groups())
            clock_bound = ((day * 24 + hh) * 60 + mm) * 60 + ss + ms / 1e3 - t0_month
        rss0 = dict(filterd=rss_kb(bed.filterd.pid), opensm=rss_kb(bed.osm.pid))
        say(f"start: RSS sar-filterd {rss0['filterd']} kB, OpenSM {rss0['opensm']} kB; "
            f"clock bound {clock_bound if clock_bound is None else round(clock_bound * 1e3)} ms")
        pauses, checks = [], []
        marks = [duration * (i + 1) / (args.checkpoints + 1) for i in range(args.checkpoints)]
        for i, at in enumerate(marks):
            while time.time() - bed.spawned < at:
                time.sleep(0.5)
                if not bed.filterd.alive():
                    raise day_bed.DayError("sar-filterd exited")
            valid, same, window = checkpoint(bed, f"c{i + 1}", say)
            checks.append((valid, same))
            pauses.append(window)
        while time.time() - bed.spawned < duration + 3.0:
            time.sleep(0.5)
        bed.filterd.wait_polls(2)
        valid, same, window = checkpoint(bed, "end", say)
        checks.append((valid, same))
        rss1 = dict(filterd=rss_kb(bed.filterd.pid), opensm=rss_kb(bed.osm.pid))
        metrics = bed.filterd.metrics()

        # Latency of every event that changes the multi-switch set.
        cycles = parse_filterd(bed.filterd.log_since(0))
        passes = parse_opensm(bed.osm.log_since(0))
        pass_starts = [p[0] for p in passes]
        seen_at = {}
        for c in cycles:
            for sign, jid in c["seen"]:
                seen_at.setdefault((sign, jid), c)
        lat, unseen, paused, no_pass = [], 0, 0, 0
        for s, e, jid, _, is_multi in jobs:
            if not is_multi:
                continue
            for sign, t in (("+", s), ("-", e)):
                ev = t0_month + t
                if any(a - 0.5 <= ev <= b for a, b in pauses):
                    paused += 1
                    continue
                c = seen_at.get((sign, jid))
                if c is None or c["signal"] is None:
                    unseen += 1  # started and ended within one poll, or coalesced away
                    continue
                k = bisect.bisect_left(pass_starts, c["signal"])
                if k >= len(passes):
                    no_pass += 1
                    continue
                lat.append(passes[k][1] - ev)
        fig = dict(events=2 * len(jobs), jobs=len(jobs), multi_leaf_jobs=multi,
                   replay_seconds=duration, reroutes=metrics.get("reroutes_total"),
                   polls=metrics.get("polls_total"),
                   trigger_errors=metrics.get("trigger_errors_total"),
                   cycle_errors=metrics.get("cycle_errors_total"),
                   rss_start_kb=rss0, rss_end_kb=rss1, checkpoints=len(checks),
                   invalid_tables=sum(1 for v, _ in checks if not v),
                   differs_from_offline=sum(1 for _, s in checks if not s),
                   latency_events=len(lat), latency_p50_s=pct(lat, 50),
                   latency_p90_s=pct(lat, 90), latency_p99_s=pct(lat, 99),
                   latency_max_s=max(lat) if lat else None,
                   latency_mean_s=statistics.mean(lat) if lat else None,
                   events_in_pauses=paused, events_not_seen_alone=unseen,
                   events_without_pass=no_pass, clock_bound_s=clock_bound,
                   opensm_passes=len(passes))
        say("\n" + json.dumps(fig, indent=1))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(fig, f, indent=1)
        if fig["invalid_tables"] or fig["differs_from_offline"] or fig["trigger_errors"]:
            code = 1
    except day_bed.ERRORS as e:
        print(f"soak: {e}", file=sys.stderr)
        code = 3
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        try:
            bed.stop()
        except day_bed.DayError as e:
            print(f"soak: {e}", file=sys.stderr)
            code = code or 1
        left = bed.leftover_pids()
        if left:
            print(f"still running: {left}", file=sys.stderr)
            code = code or 1
        if not args.out:
            shutil.rmtree(root, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
