#!/usr/bin/env python3
"""FORS schedules are published in every service mode, once the tables that carry them are in
the switches, and a job without FORS gets a file that says why (issue 35).

- Plugin, `migration on` (LMC 1, FT(2;4,4), no subscriber so each epoch runs through): after
  the first pass and after an epoch for a new mapping, `<mapping>.fors.<job>` of each alltoall
  job equals, but for its epoch, what `sar-route route --migration --schedule-out` writes
  offline for the read-back topology and the same mapping; the plugin's "FORS schedules
  published" line follows the epoch's "new tables pushed" and its pass summary (logged once
  the switches acknowledged every changed LFT block; some were sent);
  the file of the job that ended is removed; `sar-route fors-schedule --verify-lfts` walks the
  new schedule through the tables read back from the switches without a shared link.
- Plugin on a 3-level fabric (2-ary 3-tree): an alltoall job gets the "none" file, equal but
  for its epoch to `sar-route route --schedule-out`'s, the reason says "not a 2-level fat-tree",
  OpenSM's log has the WARN line with the job and that reason, `sar-route fors-schedule` prints
  "no FORS schedule: <reason>" and exits 5; after a reroute for a second alltoall job the
  publish line follows that pass's summary (every LFT block it sent acknowledged).
- sar-filterd file mode (`--once`, replay source, stock OpenSM's file engine, FT(2;4,4)): the
  alltoall job's schedule appears beside sar-filterd's mapping, equal but for its epoch to
  `sar-route route --schedule-out` for that mapping, and it is conflict-free on the tables read
  back from the switches once OpenSM loaded them.
"""

import os
import re
import signal
import subprocess
import time

import sar_it
from sar_it import check
from test_osmsar_plugin import Fabric, write_atomic
from test_migration_opensm import migration_conf, wait_status
from filterd_process import write_config


def but_epoch(text):
    return re.sub(r"^(# job \S+ epoch )\d+ ", r"\1E ", text, count=1, flags=re.M)


def read(path):
    with open(path) as f:
        return f.read()


def offline_schedules(args, fab, tag, mapping, extra=(), vls=8):
    """sar-route route --schedule-out for `mapping` on the read-back topology: {job: text}."""
    prefix = os.path.join(fab.w, f"offline-{tag}")
    os.makedirs(prefix)
    prefix = os.path.join(prefix, "jobs")
    sar_it.run([args.sar_route, "route", "--engine", "sar", "--topology", fab.live_topo,
                "--canonical-order", "--lids", fab.lids, "--vls", vls, "--jobs", mapping,
                "-o", prefix + ".lfts", "--schedule-out", prefix, *extra], expect=0)
    d, base = os.path.dirname(prefix), "jobs.fors."
    return {n[len(base):]: read(os.path.join(d, n)) for n in os.listdir(d) if n.startswith(base)}


def published(mapping):
    d, base = os.path.dirname(mapping), os.path.basename(mapping) + ".fors."
    return {n[len(base):]: read(os.path.join(d, n)) for n in os.listdir(d)
            if n.startswith(base) and ".tmp." not in n}


def check_same(got, want, what):
    check(sorted(got) == sorted(want), f"{what}: files of jobs {sorted(got)}, offline "
                                       f"{sorted(want)}")
    for j in want:
        check(but_epoch(got[j]) == but_epoch(want[j]),
              f"{what}: job {j}: published\n{got[j][:400]}\noffline\n{want[j][:400]}")


# The plugin's pass summary (at OpenSM's routing-done: every changed block acknowledged) of a
# pass that sent LFT blocks.
SUMMARY_WITH_BLOCKS = r"osmsar: pass summary: .* [1-9]\d* LFT blocks changed"


def publish_after(log, what, *before):
    """The first publish line of `log` comes, within its routing pass (from OpenSM's "building
    routing with" line on), after a line matching each of `before` (publishing inside the
    routing callback, as before issue 35, comes before "tables configured on all switches")."""
    pub = log.find("osmsar: FORS schedules published")
    check(pub >= 0, f"{what}: no 'FORS schedules published' line:\n{log[-3000:]}")
    start = log.rfind("building routing with", 0, pub)
    check(start >= 0, f"{what}: no routing pass before the publish line")
    chunk = log[start:pub]
    for rx in before:
        check(re.search(rx, chunk), f"{what}: published before a /{rx}/ line of its pass:\n"
                                    f"{log[start:pub + 200]}")


def hosts_of(topo):
    return sorted(h.name.split()[0] for h in topo.hcas())


def plugin_migration(args):
    fab = Fabric(args, "mig", ["ft2:4,4"], lmc=1)
    fab.status = os.path.join(fab.w, "migration.json")
    migration_conf(fab)
    hosts = hosts_of(fab.topo)  # 4 per leaf, in leaf order
    first = {"201": ("alltoall", hosts[0:6]), "202": ("default", hosts[8:12:2] + hosts[13:15])}
    write_atomic(fab.mapping, "".join(f"{h} {j} {p}\n" for j, (p, hs) in first.items()
                                      for h in hs))
    fab.start(None)
    fab.daemon.wait_log(r"osmsar: FORS schedules published", 0, 20)
    check_same(published(fab.mapping), offline_schedules(args, fab, "m1", fab.mapping,
                                                         ["--migration"]), "migration, start")
    e0 = wait_status(fab, fab.status, lambda s: s["phase"] == 5, "idle")["epoch"]
    # Settle OpenSM (until its first heavy resweep it resends every block).
    off = fab.daemon.log_offset()
    fab.daemon.signal(signal.SIGHUP)
    fab.wait_pass(off)
    time.sleep(0.5)

    second = {"203": ("alltoall", hosts[8:16:2] + hosts[1:3]), "202": first["202"]}
    write_atomic(fab.mapping, "".join(f"{h} {j} {p}\n" for j, (p, hs) in second.items()
                                      for h in hs))
    off = fab.daemon.log_offset()
    fab.daemon.signal(signal.SIGUSR2)
    st = wait_status(fab, fab.status, lambda s: s["last_epoch"] == e0 + 1 and s["phase"] == 5,
                     "epoch 1")
    check(st["last_outcome"] == "released", f"epoch: {st}")
    fab.daemon.wait_log(r"osmsar: FORS schedules published", off, 20)
    log = fab.daemon.log_since(off)
    publish_after(log, "migration epoch", r"tables configured on all switches",
                  SUMMARY_WITH_BLOCKS, r"new tables pushed")
    got = published(fab.mapping)
    check("201" not in got, "the schedule of job 201, no longer running, was not removed")
    check_same(got, offline_schedules(args, fab, "m2", fab.mapping, ["--migration"]),
               "migration, after the epoch")
    _, rb = fab.readback()
    v = sar_it.run([args.sar_route, "fors-schedule", "--job", "203", "--mapping", fab.mapping,
                    "--verify-lfts", rb, "--topology", fab.live_topo, "--lids", fab.lids],
                   expect=0)
    check("every phase conflict-free through these tables" in v.stdout, v.stdout)
    print(f"migration: job 203's schedule published after epoch {e0 + 1} pushed its tables; "
          f"equal to sar-route route --migration --schedule-out; {v.stdout.strip()}")
    fab.tb.stop()


def plugin_three_level(args):
    fab = Fabric(args, "kary", ["kary:2,3"])
    hosts = hosts_of(fab.topo)
    write_atomic(fab.mapping, "".join(f"{h} 301 alltoall\n" for h in hosts[0:4]) +
                 "".join(f"{h} 302\n" for h in hosts[4:8]))
    fab.start(None)
    fab.daemon.wait_log(r"osmsar: FORS schedules published", 0, 20)
    got = published(fab.mapping)
    check_same(got, offline_schedules(args, fab, "k1", fab.mapping), "3-level")
    m = re.search(r"^# none: (.*)$", got["301"], re.M)
    check(m and "not a 2-level fat-tree" in m.group(1), f"job 301's file:\n{got['301']}")
    reason = m.group(1)
    warn = f"osmsar: WARN: alltoall job 301 gets no FORS schedule: {reason}"
    check(warn in fab.daemon.log_since(0), f"no WARN line '{warn}' in OpenSM's log")
    r = sar_it.run([args.sar_route, "fors-schedule", "--job", "301", "--mapping", fab.mapping,
                    "--host", hosts[0]], expect=5)
    check(r.stdout.strip() == f"no FORS schedule: {reason}", r.stdout)

    off = fab.daemon.log_offset()
    fab.daemon.signal(signal.SIGHUP)
    fab.wait_pass(off)
    time.sleep(0.5)
    # A new alltoall job and a cut leaf uplink (so that the pass sends LFT blocks, which a job
    # change alone need not: SAR keeps entries that cost nothing).
    write_atomic(fab.mapping, "".join(f"{h} 301 alltoall\n" for h in hosts[0:4]) +
                 "".join(f"{h} 303 alltoall\n" for h in hosts[4:8]))
    leaf = next(n for n in fab.topo.switches()
                if any(fab.topo.nodes[p].kind == "hca" for p, _ in n.links.values()))
    up = next(port for port, (peer, _) in sorted(leaf.links.items())
              if fab.topo.nodes[peer].kind != "hca")
    off = fab.daemon.log_offset()
    fab.tb.ibsim_command(f'Unlink "{leaf.name}"[{up}]')
    time.sleep(0.5)
    fab.daemon.signal(signal.SIGHUP)
    fab.daemon.wait_log(r"osmsar: FORS schedules published.*2 none", off, 30)
    fab.tb.diag(["ibnetdiscover"], fab.live_topo)
    log = fab.daemon.log_since(off)
    publish_after(log, "3-level reroute", r"tables configured on all switches",
                  SUMMARY_WITH_BLOCKS)
    check("osmsar: WARN: alltoall job 303 gets no FORS schedule" in log, "no WARN for job 303")
    check_same(published(fab.mapping), offline_schedules(args, fab, "k2", fab.mapping),
               "3-level, second mapping")
    print(f"3-level: 'none' files for jobs 301 and 303 ({reason}), WARN lines, fors-schedule "
          f"exit 5")
    fab.tb.stop()


def file_mode(args):
    fab = Fabric(args, "file", ["ft2:4,4"])
    hosts = hosts_of(fab.topo)
    lft_file = os.path.join(fab.w, "sar.lfts")
    guid2lid = os.path.join(fab.w, "fabric.guid2lid")
    # OpenSM needs a file at its first sweep: sar's tables without jobs.
    sar_it.run([args.sar_route, "route", "--engine", "sar", "--topology", fab.topo_path,
                "--lids", guid2lid, "--vls", 1, "-o", lft_file], expect=0)
    fab.tb.start()
    fab.daemon = fab.tb.start_opensm("file", lfts_file=lft_file)
    fab.tb.diag(["ibnetdiscover"], fab.live_topo)
    fab.lids = os.path.join(fab.tb.cache_dir, "guid2lid")
    fab.known = set()
    for lo, hi in sar_it.parse_guid2lid(fab.lids).values():
        fab.known.update(range(lo, hi + 1))
    trace = os.path.join(fab.w, "trace")
    with open(trace, "w") as f:
        f.write(f"0 - 401 {','.join(hosts[0:3] + hosts[5:7] + hosts[12:13])} batch 60 "
                "sar-pattern=alltoall\n")
        f.write(f"0 - 402 {','.join(hosts[8:10] + hosts[14:16])}\n")
    mapping = os.path.join(fab.w, "jobs.map")
    cfg = os.path.join(fab.w, "filterd.yaml")
    write_config(cfg, {"source": "replay", "replay_trace": trace, "fabric": fab.topo_path,
                       "guid2lid": guid2lid, "poll_interval_s": 0.2, "settle_s": 0,
                       "min_reroute_interval_s": 0, "mapping_file": mapping, "trigger": "file",
                       "lft_file": lft_file, "engine": "sar", "num_vls": 1,
                       "opensm_pid_file": fab.daemon.pid_file,
                       "state_dir": os.path.join(fab.w, "state"), "control_socket": "",
                       "metrics_textfile": ""})
    off = fab.daemon.log_offset()
    p = subprocess.run([args.sar_filterd, "--config", cfg, "--once"], capture_output=True,
                       text=True, timeout=120)
    check(p.returncode == 0, f"sar-filterd --once: exit {p.returncode}\n{p.stderr[-3000:]}")
    check("file mode: FORS schedules published: 1 FORS, 0 none" in p.stderr, p.stderr[-3000:])
    fab.daemon.wait_log(r"SUBNET UP", off, 30)
    got = published(mapping)
    check_same(got, offline_schedules(args, fab, "f1", mapping, vls=1), "file mode")
    switches, rb = fab.readback()
    diff = sar_it.diff_tables(switches, fab.restrict(sar_it.parse_lfts(lft_file)))
    check(not diff, f"file mode: the switches do not hold sar-filterd's tables yet: {diff[:5]}")
    v = sar_it.run([args.sar_route, "fors-schedule", "--job", "401", "--mapping", mapping,
                    "--verify-lfts", rb, "--topology", fab.live_topo, "--lids", fab.lids],
                   expect=0)
    check("every phase conflict-free through these tables" in v.stdout, v.stdout)
    print(f"file mode: job 401's schedule beside sar-filterd's mapping, equal to sar-route "
          f"route --schedule-out; {v.stdout.strip()}")
    fab.tb.stop()


def body():
    args = sar_it.parse_args(__doc__, extra=lambda ap: (
        ap.add_argument("--plugin-dir", required=True, help="directory holding libosmsar.so"),
        ap.add_argument("--sar-filterd", required=True)))
    args.plugin_dir = os.path.abspath(args.plugin_dir)
    t0 = time.monotonic()
    plugin_migration(args)
    plugin_three_level(args)
    file_mode(args)
    print(f"done in {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    sar_it.main(body)
