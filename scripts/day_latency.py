"""Job start (or end) -> tables in the switches: the latency of one reroute and its stages, read
from the logs of the three daemons (all on one machine, all in local time):

  slurmctld.log  [2026-11-21T14:57:27.123] sched: Allocate JobId=7 NodeList=...   job start
                 [...] _slurm_rpc_kill_job: REQUEST_KILL_JOB JobId=7 uid 0         job end (scancel)
                 [...] _job_complete: JobId=7 WEXITSTATUS 0                        job end (exit)
  sar-filterd    [2026-11-21 14:57:27.611] [info] cycle: ... (poll 2.1 ms, cycle 2.4 ms)
                 [...] [info]   + job 7 (...)    seen (an end: "- job <id> (", where the id is
                                                 the one sar-filterd recorded for those hosts)
                 [...] [info] file mode: new tables ... (routing and checks 41.0 ms,
                               write 3.2 ms); SIGHUP sent (0.1 ms)                 (file mode)
                 [...] [info] reroute: wrote N multi-switch jobs to ..., triggered '<trigger>'
                               (mapping write 0.4 ms, trigger 44.9 ms)
  OpenSM         Nov 21 14:57:28 101234 [..] 0x02 -> SUBNET UP                      tables pushed
                 (plugin: the pass's "osmsar: pass summary: ...", logged at routing-done)

Stages: wait (job start or end -> the poll that saw it began), poll (the libslurm call), filter
(filter + diff), routing (libsar in sar-filterd, or OpenSM's routing pass with the plugin), write
(the mapping file, fsynced, and in file mode the LFT file), push (signal -> OpenSM's SUBNET UP,
less its routing pass: OpenSM notices
the signal, sweeps, loads and sends the changed LFT blocks). OpenSM sends the blocks before it
logs SUBNET UP (docs/testbed.md), so SUBNET UP is when the tables are in the switches; with the
plugin, a reroute logs no SUBNET UP, but the plugin logs one summary line per pass when OpenSM
reports routing done, once every switch acknowledged its changed blocks.
"""

import re
import time

import sar_testbed

_SLURM_TIME = re.compile(r"^\[\d{4}-\d\d-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{3})\]")
_FILTERD_TIME = re.compile(r"^\[\d{4}-\d\d-(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{3})\]")
_CYCLE = re.compile(r"\] cycle: .*\(poll ([\d.]+) ms, cycle ([\d.]+) ms\)")
_FILE_MODE = re.compile(r"file mode: new tables .*\(routing and checks ([\d.]+) ms, write "
                        r"([\d.]+) ms\)(?:; SIGHUP sent \(([\d.]+) ms\))?")
_REROUTE = re.compile(r"reroute: wrote .*?(?:\(mapping write ([\d.]+) ms, trigger ([\d.]+) ms\))?$")


def month_seconds(t):
    """A time.time() value on the scale of the logs' times here (seconds within the month, local
    time; sar_testbed.log_time's for OpenSM)."""
    lt = time.localtime(t)
    return ((lt.tm_mday * 24 + lt.tm_hour) * 60 + lt.tm_min) * 60 + lt.tm_sec + t % 1.0


def _month_seconds(m):
    """Seconds within the month, the scale sar_testbed.log_time uses for OpenSM's log."""
    day, hh, mm, ss, ms = (int(x) for x in m.groups())
    return ((day * 24 + hh) * 60 + mm) * 60 + ss + ms / 1e3


def job_start_time(slurmctld_log_text, job_id):
    """When slurmctld allocated nodes to the job (main scheduler or backfill), or None."""
    return _first_time(slurmctld_log_text, rf"(Allocate|Started) JobId={job_id}\b")


def job_end_time(slurmctld_log_text, job_id):
    """When the job was cancelled or its script ended, or None."""
    return _first_time(slurmctld_log_text,
                       rf"(REQUEST_KILL_JOB|_job_complete:) JobId={job_id}\b")


def _first_time(slurmctld_log_text, pattern):
    rx = re.compile(pattern)
    for line in slurmctld_log_text.splitlines():
        if rx.search(line):
            m = _SLURM_TIME.match(line)
            if m:
                return _month_seconds(m)
    return None


def filterd_reroute(filterd_log_text, seen_marker):
    """The first cycle that logs `seen_marker` (e.g. "+ job 7 (") and the reroute it made: dict
    or None."""
    cycle = None
    seen = None
    for line in filterd_log_text.splitlines():
        m = _FILTERD_TIME.match(line)
        t = _month_seconds(m) if m else None
        c = _CYCLE.search(line)
        if c:
            if seen:
                return None  # the cycle that saw the job did not reroute
            poll_ms, cycle_ms = float(c.group(1)), float(c.group(2))
            cycle = dict(end=t, poll_ms=poll_ms, filter_ms=cycle_ms - poll_ms,
                         poll_start=t - cycle_ms / 1e3)
            continue
        if cycle and not seen and seen_marker in line:
            seen = dict(cycle, routing_ms=None, write_ms=None)
            continue
        if seen:
            f = _FILE_MODE.search(line)
            if f:
                # The signal went out before the line: its own time is part of the push.
                sighup_ms = float(f.group(3) or 0.0)
                seen.update(routing_ms=float(f.group(1)), write_ms=float(f.group(2)),
                            signal=t - sighup_ms / 1e3)
            r = _REROUTE.search(line)
            if r:
                # The mapping file is written (and fsynced) before the trigger: a write stage.
                seen["mapping_ms"] = float(r.group(1) or 0.0)
                # Signal mode: the trigger (SIGUSR2) began trigger ms before this line.
                seen.setdefault("signal", t - float(r.group(2) or 0.0) / 1e3)
                return seen
    return None


def opensm_subnet_up(opensm_log_text, after, engine):
    """(time of the first SUBNET UP at or after `after`, seconds of its routing pass or None)."""
    chunk = []
    for line in opensm_log_text.splitlines():
        t = sar_testbed.log_time(line)
        if t is None or t < after:
            continue
        chunk.append(line)
        if re.search(r"-> SUBNET UP\s*$", line):
            seconds, _ = sar_testbed.routing_time("\n".join(chunk), engine)
            return t, seconds
    return None, None


def opensm_plugin_done(opensm_log_text, after):
    """(time the tables of the first routing pass at or after `after` were in the switches,
    seconds of that pass). The plugin logs `osmsar: pass summary: ...` at OpenSM's routing-done,
    after the switches acknowledged the pass's last changed block; a SIGUSR2 reroute logs no
    SUBNET UP. None until that line is in the log."""
    configured = done = None
    chunk = []
    for line in opensm_log_text.splitlines():
        t = sar_testbed.log_time(line)
        if t is None or t < after:
            continue
        if configured is not None and "building routing with" in line:
            break  # the next pass
        chunk.append(line)
        if configured is None and "tables configured on all switches" in line:
            configured = t
        elif configured is not None and "osmsar: pass summary:" in line:
            done = t
            break
    if done is None:
        return None, None
    seconds, _ = sar_testbed.routing_time("\n".join(chunk), "sar")
    return done, seconds


def stages(slurmctld_log_text, filterd_log_text, opensm_log_text, job_id, osm_engine,
           event="start", why=None):
    """Latency of a job's start or end (`event`) in seconds: dict(total, wait, poll, filter,
    routing, write, push), or None if a log lacks a line it needs. The filterd log should begin
    at the event: for an end, the first cycle that drops a job is taken, as sar-filterd names the
    job id it recorded for those hosts (an id-only resubmit keeps the old one). When it returns
    None and `why` is a list, the missing line is appended to it."""
    def missing(what):
        if why is not None:
            why.append(what)
        return None

    if event == "start":
        start = job_start_time(slurmctld_log_text, job_id)
        fd = filterd_reroute(filterd_log_text, f"+ job {job_id} (")
    else:
        start = job_end_time(slurmctld_log_text, job_id)
        fd = filterd_reroute(filterd_log_text, "- job ")
    if start is None:
        return missing(f"slurmctld.log: no {event} line for job {job_id}")
    if fd is None:
        return missing("sar-filterd log: no cycle that saw the job "
                       f"{'start' if event == 'start' else 'end'} and then rerouted (log since "
                       f"the event:\n{filterd_log_text[-2000:]})")
    # OpenSM's pass is looked for from the end of the cycle that decided the reroute, not from
    # the time on sar-filterd's "reroute: wrote ... triggered" line: that line is written after
    # the signal, and on a loaded machine OpenSM can route and push (a few ms) before it is.
    if osm_engine == "file":
        up, osm_routing = opensm_subnet_up(opensm_log_text, fd["end"], osm_engine)
    else:
        up, osm_routing = opensm_plugin_done(opensm_log_text, fd["end"])
    if up is None:
        return missing(f"OpenSM log: no finished routing pass after sar-filterd's signal at "
                       f"{fd['signal']:.3f} (log since the event, end:\n{opensm_log_text[-2000:]})")
    if fd["routing_ms"] is not None:  # file mode: sar-filterd routed
        routing, osm_part = fd["routing_ms"] / 1e3, 0.0
    else:  # plugin: OpenSM routed
        routing = osm_routing or 0.0
        osm_part = routing
    return dict(total=up - start, wait=max(0.0, fd["poll_start"] - start),
                poll=fd["poll_ms"] / 1e3, filter=fd["filter_ms"] / 1e3, routing=routing,
                write=((fd["write_ms"] or 0.0) + fd.get("mapping_ms", 0.0)) / 1e3,
                push=max(0.0, up - fd["signal"] - osm_part))  # the signal line can be late
