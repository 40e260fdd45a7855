#!/usr/bin/env python3
"""Checks the test bed itself (scripts/sar_testbed.py), without sar-route.

- Two beds run at once (different LMC and LIDs), routed by OpenSM (ftree, updn) in two threads.
- The LIDs we seed through guid2lid are the ones OpenSM keeps and the live fabric reports.
- What the switches report (dump_fts) equals OpenSM's own opensm-lfts.dump, and an independent
  walk of those tables finds every route, minimal.
- The `file` engine loads a table file we write (with one entry changed) into the switches.
- A missing LFT file fails fast with the OpenSM log in the message instead of falling back.
- stop() leaves no ibsim or OpenSM behind; the CLI writes the files it promises.
"""

import json
import os
import re
import subprocess
import sys
import threading
import time

import fabric_gen
import sar_it
from sar_it import check, sar_testbed
from testbed_common import proc_stat, proc_state, wait_gone


# ftree refuses LMC > 0 (OpenSM falls back to minhop), so the LMC 1 bed uses updn.
ENGINES = ("ftree", "updn")


def seeded_lids(topo, lmc, base):
    """guid2lid text giving switches and HCAs LIDs from `base`, aligned for the LMC."""
    step = 1 << lmc
    lines, lid = [], base
    for n in topo.switches():
        lines.append(f"0x{n.guid:016x} 0x{lid:04x} 0x{lid:04x}")
        lid += 1
    lid = (lid + step - 1) // step * step
    for n in topo.hcas():
        for pg in n.port_guids.values():
            lines.append(f"0x{pg:016x} 0x{lid:04x} 0x{lid + step - 1:04x}")
            lid += step
    return "\n".join(lines) + "\n"


def live_lids(live_topo):
    """port GUID -> LID of the HCA ports, as ibnetdiscover reports them."""
    out = {}
    for line in open(live_topo):
        m = re.match(r"^\[\d+\]\(([0-9a-f]+)\)\s.*# lid (\d+) lmc", line)
        if m:
            out[int(m.group(1), 16)] = int(m.group(2))
    return out


def check_bed(tb, res, topo, seeded, lmc, engine):
    check(res.engine_used == engine, f"{tb.workdir}: engine used {res.engine_used}")
    check(res.routing_time_s is not None and res.routing_time_s >= 0,
          f"{tb.workdir}: no routing time in the log")
    check(sar_it.parse_guid2lid(res.guid2lid) == sar_it.parse_guid2lid(seeded),
          f"{tb.workdir}: OpenSM did not keep the seeded LIDs")
    want = {g: lo for g, (lo, _) in sar_it.parse_guid2lid(seeded).items()
            if g in {pg for h in topo.hcas() for pg in h.port_guids.values()}}
    check(live_lids(res.live_topo) == want, f"{tb.workdir}: live fabric has other HCA LIDs")
    osm = sar_it.parse_lfts(res.opensm_lfts)
    sw = sar_it.parse_lfts(res.switches_lfts)
    diff = sar_it.diff_tables(osm, sw)
    check(not diff, f"{tb.workdir}: switches differ from opensm-lfts.dump: {diff[:5]}")
    check(set(sw) == {s.guid for s in topo.switches()}, f"{tb.workdir}: switches missing")
    lids = sar_it.parse_guid2lid(res.guid2lid)
    for s in topo.switches():
        for h in topo.hcas():
            lo, hi = lids[h.port_guids[1]]
            check(hi - lo + 1 == 1 << lmc, f"LID range of {h.name} is not 2^{lmc}")
            for lid in range(lo, hi + 1):
                check(lid in sw[s.guid], f"{s.name} has no route to {h.name} LID {lid}")
    walk = sar_it.Walk(topo, lids, sw)
    check(walk.unreachable == 0 and walk.non_min_hop == 0,
          f"{tb.workdir}: {walk.unreachable} unreachable, {walk.non_min_hop} non-minimal pairs")
    return sw


def body():
    args = sar_it.parse_args(__doc__, need_sar_route=False)
    w = args.workdir
    topo_path = os.path.join(w, "ft44.topo")
    with open(topo_path, "w") as f:
        f.write(fabric_gen.ft2(4, 4))
    topo = sar_it.parse_topology(topo_path)
    seeds = []
    for lmc, base in ((0, 0x21), (1, 0x40)):
        path = os.path.join(w, f"seed-lmc{lmc}.guid2lid")
        with open(path, "w") as f:
            f.write(seeded_lids(topo, lmc, base))
        seeds.append((lmc, path))

    beds = [sar_testbed.Testbed(topo_path, os.path.join(w, f"bed{lmc}"), lmc=lmc, guid2lid=p)
            for lmc, p in seeds]
    pids = []
    try:
        for tb in beds:
            tb.start()
            pids.append(tb.ibsim_pid)
        check(len({tb.sockname for tb in beds}) == 2, "beds share a socket name")
        results, errors = [None, None], []

        def route(i):
            try:
                results[i] = beds[i].route(ENGINES[i], timeout=60)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)

        threads = [threading.Thread(target=route, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        check(not errors, f"concurrent routing failed: {errors}")
        tables = [check_bed(tb, res, topo, p, lmc, e)
                  for tb, res, (lmc, p), e in zip(beds, results, seeds, ENGINES)]

        # The file engine: our own table file, one entry moved to another up-port.
        leaf = topo.nodes["leaf000"]
        t = {g: dict(v) for g, v in tables[0].items()}
        lid, port = next((l, p) for l, p in sorted(t[leaf.guid].items()) if p > 4)
        t[leaf.guid][lid] = 5 if port != 5 else 6
        ours = os.path.join(w, "ours.lfts")
        sar_it.write_opensm_lfts(ours, t)
        res = beds[0].route("file", lfts_file=ours)
        got = sar_it.parse_lfts(res.switches_lfts)
        diff = sar_it.diff_tables(t, got)
        check(not diff, f"file engine: switches differ from our file: {diff[:5]}")
        check(got[leaf.guid][lid] != tables[0][leaf.guid][lid], "changed entry not in switch")

        # A missing file must fail the run (no silent minhop) well before the timeout.
        t0 = time.monotonic()
        try:
            beds[0].route("file", lfts_file=os.path.join(w, "missing.lfts"), timeout=30)
            check(False, "route with a missing LFT file succeeded")
        except sar_testbed.TestbedError as e:
            check("ERR 6302" in str(e), f"error lacks the OpenSM log: {e}")
        check(time.monotonic() - t0 < 10, "missing LFT file not detected quickly")
        check(not any(proc_state(p) not in (None, "Z", "X") for p in
                      children_named("opensm")), "an OpenSM is still running")
    finally:
        for tb in beds:
            tb.stop()
    for pid in pids:
        check(wait_gone(pid, 5), f"ibsim {pid} still running after stop()")

    # The CLI.
    out = os.path.join(w, "cli")
    p = subprocess.run([sys.executable, os.path.join(sar_it.REPO, "scripts", "sar_testbed.py"),
                        "route", "--topology", topo_path, "--engine", "updn", "--out", out,
                        "--guid2lid", seeds[0][1]], capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, f"CLI failed: {p.stderr[-2000:]}")
    for name in ("opensm-lfts.dump", "switches.lfts", "live.topo", "guid2lid", "opensm.log",
                 "result.json"):
        check(os.path.getsize(os.path.join(out, name)) > 0, f"CLI wrote no {name}")
    result = json.load(open(os.path.join(out, "result.json")))
    check(result["engine_used"] == "updn" and result["routing_time_s"] is not None,
          f"CLI result.json: {result}")
    check(not sar_it.diff_tables(sar_it.parse_lfts(os.path.join(out, "opensm-lfts.dump")),
                                 sar_it.parse_lfts(os.path.join(out, "switches.lfts"))),
          "CLI: switches differ from OpenSM's dump")


def children_named(name):
    """PIDs of our direct children whose command is `name`."""
    me = os.getpid()
    out = []
    for pid in os.listdir("/proc"):
        st = proc_stat(pid) if pid.isdigit() else None
        if st and st[0] == name and st[2] == me:
            out.append(int(pid))
    return out


if __name__ == "__main__":
    sar_it.main(body)
