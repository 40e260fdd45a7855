#!/usr/bin/env python3
"""FORS in the running service: the OpenSM plugin gives alltoall jobs per-job FORS routes and
publishes their schedules; the switches' tables carry every phase without a shared link.

FT(2;16,16) in ibsim, stock OpenSM with libosmsar.so (`routing_engine sar`), a job mix of two
alltoall jobs (one on two and a half leaves, one scattered over six leaves) and two default jobs:
- a schedule file `<mapping>.fors.<job>` appears for each alltoall job, none for the others;
- each published phase, walked (here, in Python) through the tables read back from the switches
  (dump_fts), uses no directed link twice, delivers every transfer to its host, and the phases
  cover every ordered pair of the job's hosts exactly once;
- the switches hold exactly what `sar-route route --engine sar` (after the cut: with `--previous`
  the tables held before it and `--previous-jobs` the unchanged mapping) computes offline for the same
  fabric and mapping, and `sar-route eval` finds those tables valid and deadlock-free with its
  layers (the other jobs' routes included);
- a leaf-spine cable of the first job's leaf is cut in ibsim (`Unlink`) and OpenSM resweeps: the
  first job gets a new schedule (new generation), still conflict-free on the read-back tables;
  the second job's routes did not change, so its file is left as it was (same epoch);
- alltoall jobs go first: the plugin's pass notes its fixed entries, and the max effective load
  its refinement reports (the figure the delta, stability and all-pairs guards work with) equals
  the max effective EFI `sar-route eval --jobs` computes on the tables read back from the
  switches, before and after the cut (before alltoall jobs went first, FORS entries were written
  over SAR's tables after the guards: the switches held more than the guard saw);
- `sar-route fors-schedule --verify-lfts` (libsar's walk) agrees on the read-back tables;
- the walk can fail: a schedule with one transfer's destination changed is caught (both walks).
"""

import os
import re
import signal
import time

import sar_it
from sar_it import check
from test_osmsar_plugin import Fabric, write_atomic
from testbed_common import free_port_block

M0 = M1 = 16


def read_schedule(path):
    header, rows = {}, []
    with open(path) as f:
        lines = f.read().splitlines()
    check(lines[0] == "# sar-fors-schedule 1", f"{path}: bad first line {lines[0]!r}")
    w = lines[1].split()
    header = dict(zip(w[1::2], w[2::2]))  # '#' 'job' id 'epoch' e ...
    check(lines[2] == "phase,src,dst,dlid", f"{path}: bad column line")
    for line in lines[3:]:
        p, s, d, lid = line.split(",")
        rows.append((int(p), s, d, int(lid)))
    return header, rows


def walk(topo, tables, rows, job_hosts):
    """Every row through the tables: delivered, no channel twice per phase, every pair once."""
    by_name = {n.name.split()[0]: n for n in topo.hcas()}
    used, pairs = set(), set()
    for phase, src, dst, lid in rows:
        check((src, dst) not in pairs, f"pair {src}->{dst} twice")
        pairs.add((src, dst))
        node = by_name[src]
        chans = [(node.name, 1)]
        sw, _ = node.links[1]
        for _ in range(8):
            port = tables.get(topo.nodes[sw].guid, {}).get(lid)
            check(port in topo.nodes[sw].links, f"phase {phase}: {src}->{dst}: hole at {sw}")
            chans.append((sw, port))
            peer, _ = topo.nodes[sw].links[port]
            if topo.nodes[peer].kind == "hca":
                check(peer.split()[0] == dst, f"phase {phase}: {src}->{dst} reaches {peer}")
                break
            sw = peer
        else:
            check(False, f"phase {phase}: {src}->{dst}: loop")
        for c in chans:
            check((phase, c) not in used, f"phase {phase}: {src}->{dst}: link {c} used twice")
            used.add((phase, c))
    want = {(a, b) for a in job_hosts for b in job_hosts if a != b}
    check(pairs == want, f"pairs: {len(pairs)} scheduled, {len(want)} wanted")
    return max(r[0] for r in rows) + 1


def check_guard_figure(args, fab, rb_path, log, what):
    """SAR's last reported maximum in the pass's log (the no-regret stage's final figure, on by
    default, else the refinement's) equals eval's max effective EFI of the read-back tables
    (the final ones, FORS entries included)."""
    check(re.search(r"osmsar: .*fixed entries: \d+ routed first and kept", log),
          f"{what}: no fixed-entries note in the log")
    check("restored after the stages" not in log, f"{what}: a stage moved a fixed entry")
    figures = [m.group(1) or m.group(2) for m in re.finditer(
        r"osmsar: .*(?:refinement: \d+ moves, max effective load \d+ -> (\d+)"
        r"|no job regrets: .*\), max effective load (\d+))", log)]
    check(figures, f"{what}: no refinement note in the log")
    check(re.search(r"osmsar: .*no job regrets: .*fixed-route \(FORS\) jobs judged too", log),
          f"{what}: the no-regret stage (on by default) did not judge the alltoall jobs")
    ev = sar_it.sar_route_eval(args.sar_route, fab.live_topo, rb_path, fab.lids,
                               extra=["--jobs", fab.mapping])
    final = ev["effective_efi"]["max"]
    check(int(figures[-1]) == final,
          f"{what}: the guard saw max effective EFI {figures[-1]}, the switches hold {final}")
    print(f"{what}: max effective EFI on the switches {final} = SAR's last figure")


def body():
    args = sar_it.parse_args(__doc__, extra=lambda ap: ap.add_argument(
        "--plugin-dir", required=True, help="directory holding libosmsar.so"))
    args.plugin_dir = os.path.abspath(args.plugin_dir)
    t0 = time.monotonic()
    fab = Fabric(args, "ft2_16_16", [f"ft2:{M0},{M1}"])
    hosts = sorted(h.name.split()[0] for h in fab.topo.hcas())
    jobs = {
        "101": hosts[0:40],  # leaves 0, 1 and half of 2
        "102": [hosts[leaf * M0 + k] for leaf in range(5, 11) for k in (1, 4, 6, 9, 13)],
        # Leaves 11 and 12: no host in two jobs. (The refinement counts a route between two
        # hosts that share two jobs once, the metric once per job: the figures would differ.)
        "103": hosts[176:196],
        "104": hosts[200:230:2],
    }
    pattern = {"101": "alltoall", "102": "alltoall", "103": "default", "104": "default"}
    write_atomic(fab.mapping, "".join(f"{h} {j} {pattern[j]}\n" for j, hs in jobs.items()
                                      for h in hs))
    fab.start(free_port_block(1))
    sched = {j: fab.mapping + ".fors." + j for j in jobs}
    for j in jobs:
        check(os.path.exists(sched[j]) == (pattern[j] == "alltoall"),
              f"schedule file of job {j}: exists {os.path.exists(sched[j])}")
    fab.check_sar_tables("a", "FT(2;16,16) with alltoall jobs")
    tables, rb_path = fab.readback()
    check_guard_figure(args, fab, rb_path, fab.daemon.log_since(0), "intact")
    first = {}
    for j in ("101", "102"):
        header, rows = read_schedule(sched[j])
        phases = walk(fab.topo, tables, rows, jobs[j])
        # sar-route's own walk (libsar's CheckForsJobOnTables) agrees.
        v = sar_it.run([args.sar_route, "fors-schedule", "--job", j, "--schedule", sched[j],
                        "--verify-lfts", rb_path, "--topology", fab.live_topo, "--lids", fab.lids],
                       expect=0)
        check("every phase conflict-free through these tables" in v.stdout, v.stdout)
        check(phases == int(header["phases"]), f"job {j}: {phases} phases, header {header}")
        check(int(header["lower_bound"]) == len(jobs[j]) - 1, f"job {j}: bound {header}")
        first[j] = header
        print(f"intact: job {j}: {len(jobs[j])} hosts, {phases} phases (lower bound "
              f"{header['lower_bound']}), every phase conflict-free on the switches")

    # The walk can fail.
    header, rows = read_schedule(sched["101"])
    bad = list(rows)
    p0 = [r for r in bad if r[0] == 0]
    i = bad.index(p0[0])
    bad[i] = (0, p0[0][1], p0[1][2], p0[1][3])  # two transfers of phase 0 into one host
    try:
        walk(fab.topo, tables, bad, jobs["101"])
        check(False, "the walk missed a broken schedule")
    except sar_it.CheckFailed as e:
        check("twice" in str(e) or "pairs" in str(e), f"unexpected walk failure: {e}")
    bad_path = os.path.join(args.workdir, "bad.schedule")
    with open(sched["101"]) as f:
        head = f.read().splitlines()[:3]
    with open(bad_path, "w") as f:
        f.write("\n".join(head + [f"{p},{a},{b},{lid}" for p, a, b, lid in bad]) + "\n")
    v = sar_it.run([args.sar_route, "fors-schedule", "--job", "101", "--schedule", bad_path,
                    "--verify-lfts", rb_path, "--topology", fab.live_topo, "--lids", fab.lids],
                   expect=1)
    check("FAILED" in v.stdout, v.stdout)

    # A failed cable at job 101's first leaf (leaf port M0+1+3 goes to spine 3).
    time.sleep(1.1)  # the epoch is the pass's second: make a rewrite visible
    leaf = next(n for n in fab.topo.switches() if n.name.startswith("leaf000"))
    off = fab.daemon.log_offset()
    fab.tb.ibsim_command(f'Unlink "{leaf.name}"[{M0 + 1 + 3}]')
    time.sleep(0.5)
    fab.daemon.signal(signal.SIGHUP)
    fab.wait_pass(off, 30)
    fab.daemon.wait_log(r"SUBNET UP", off, 30)
    fab.tb.diag(["ibnetdiscover"], fab.live_topo)
    # The generated topology (names, GUIDs) without the cut cable: the walk must not cross it.
    peer, pport = leaf.links.pop(M0 + 1 + 3)
    del fab.topo.nodes[peer].links[pport]
    live = fab.topo
    # The pass after the cut starts from the tables held before it (the plugin's `delta true`).
    # Same mapping: every job runs on (`--previous-jobs`), its routes move only off the cut.
    fab.check_sar_tables("b", "after Unlink", previous=rb_path, previous_jobs=fab.mapping)
    tables, rb_after = fab.readback()
    check_guard_figure(args, fab, rb_after, fab.daemon.log_since(off), "after Unlink")
    for j in ("101", "102"):
        header, rows = read_schedule(sched[j])
        phases = walk(live, tables, rows, jobs[j])
        changed = header["generation"] != first[j]["generation"]
        check(changed == (j == "101"), f"job {j}: generation changed: {changed}")
        check((header["epoch"] != first[j]["epoch"]) == changed,
              f"job {j}: epoch {first[j]['epoch']} -> {header['epoch']}")
        print(f"failed link: job {j}: {phases} phases (lower bound {header['lower_bound']}), "
              f"{'new schedule' if changed else 'schedule unchanged'}, conflict-free on the "
              f"switches")
    sr = sar_it.run([args.sar_route, "fors-schedule", "--job", "102", "--mapping", fab.mapping,
                     "--host", jobs["102"][0]], expect=0)
    lines = sr.stdout.splitlines()
    check(len(lines) == 2 + len(jobs["102"]) - 1 or len(lines) > 2, sr.stdout)
    sends = [ln.split()[1] for ln in lines[2:] if ln.split()[1] != "-"]
    check(sorted(sends) == sorted(jobs["102"][1:]), f"fors-schedule sends: {sends}")
    fab.tb.stop()
    print(f"done in {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    sar_it.main(body)
