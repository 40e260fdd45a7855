#!/usr/bin/env python3
"""FORS LMC tables through the real OpenSM `file` engine, read back from the switches.

For each case: `sar-route fors` writes the schedule, the application's LID table, the LFTs, the
fabric and its guid2lid; OpenSM (started with -l <LMC>) loads the LFTs into ibsim; the tables
read back from the switches must
  1. hold the same LIDs as ours (guid2lid) and deliver every transfer of the LID table, and
  2. show no link used twice in any phase when every phase's transfers are walked through them
     (walked here, in Python, independently of libsar; and by `sar-route fors --verify-lfts`).
Cases: FT(2;4,4) with one failed link cut in ibsim by `Unlink`, and FT(2;20,18) with the paper's
1F SW0 scenario (the failed link absent from the topology given to ibsim).
"""

import csv
import os
import time

import sar_it
from sar_it import check


def walk_phases(topo, tables, lid_table):
    """Walks every transfer of the LID table through `tables` (switch GUID -> {LID: port}).
    Returns (transfers, phases). Raises CheckFailed on a lost route or a shared link."""
    used = {}  # (node, out port) -> phase
    phases = set()
    count = 0
    for row in csv.DictReader(open(lid_table)):
        phase, src, dst, dlid = (int(row[k]) for k in ("phase", "src", "dst", "dlid"))
        phases.add(phase)
        count += 1
        src_name, dst_name = f"h{src:05d}", f"h{dst:05d}"
        hops = [(src_name, 1)]  # the source's own uplink
        node = topo.nodes[src_name].links[1][0]
        while topo.nodes[node].kind == "switch":
            port = tables.get(topo.nodes[node].guid, {}).get(dlid)
            check(port is not None and port in topo.nodes[node].links and len(hops) < 8,
                  f"phase {phase}: {src_name} -> LID {dlid} lost at {node} (port {port})")
            hops.append((node, port))
            node = topo.nodes[node].links[port][0]
        check(node == dst_name, f"phase {phase}: LID {dlid} reached {node}, not {dst_name}")
        for ch in hops:
            check(used.get(ch) != phase,
                  f"phase {phase}: link {ch[0]}[{ch[1]}] used twice ({src_name} -> {dst_name})")
            used[ch] = phase
    return count, len(phases)


def switch_cables(topo):
    return sum(1 for n in topo.switches() for peer, _ in n.links.values()
               if topo.nodes[peer].kind == "switch") // 2


def run_case(sr, w, name, m0, m1, failed, unlink):
    d = os.path.join(w, name)
    os.makedirs(d)
    failed_path = os.path.join(d, "failed.txt")
    with open(failed_path, "w") as f:
        f.write("# leaf spine\n" + "".join(f"{leaf} {spine}\n" for leaf, spine in failed))
    out = {k: os.path.join(d, v) for k, v in dict(
        sched="schedule.csv", lids="lids.csv", lfts="fors.lfts", topo="fabric.topo",
        g2l="fabric.guid2lid").items()}
    lmc = (m0 - 1).bit_length()
    base = [sr, "fors", "--spines", m0, "--leaves", m1, "--failed-links", failed_path]
    p = sar_it.run(base + ["--schedule-out", out["sched"], "--lid-table-out", out["lids"],
                           "--lfts-out", out["lfts"], "--topology-out", out["topo"],
                           "--guid2lid-out", out["g2l"]], expect=0)
    print(p.stdout, end="")
    ours = sar_it.parse_topology(out["topo"])
    check(switch_cables(ours) == m0 * m1 - len(failed),
          f"--topology-out has {switch_cables(ours)} leaf-spine cables")
    bed_topo = out["topo"]
    if unlink:
        # ibsim gets the intact fabric; the failure is made live with Unlink.
        bed_topo = os.path.join(d, "intact.topo")
        sar_it.run([sr, "gen", "--fabric", f"ft2:{m0},{m1}", "--lmc", lmc, "-o", bed_topo],
                   expect=0)
    with sar_it.new_testbed(d, "bed", bed_topo, out["g2l"], lmc=lmc) as tb:
        if unlink:
            for leaf, spine in failed:
                tb.ibsim_command(f'Unlink "leaf{leaf:03d}"[{m0 + 1 + spine}]')
            time.sleep(1.0)
        res = tb.route("file", lfts_file=out["lfts"], timeout=240)
    live = sar_it.parse_topology(res.live_topo)
    check(switch_cables(live) == m0 * m1 - len(failed),
          f"the live fabric has {switch_cables(live)} leaf-spine cables")
    check(sar_it.parse_guid2lid(res.guid2lid) == sar_it.parse_guid2lid(out["g2l"]),
          "OpenSM assigned other LIDs than ours")
    tables = sar_it.parse_lfts(res.switches_lfts)
    diff = sar_it.diff_tables(sar_it.parse_lfts(out["lfts"]), tables)
    check(not diff, f"switches differ from the loaded file: {diff[:5]}")
    transfers, phases = walk_phases(ours, tables, out["lids"])
    check(transfers == m0 * m1 * (m0 * m1 - 1), f"LID table has {transfers} transfers")
    p = sar_it.run(base + ["--verify-lfts", res.switches_lfts], expect=0)
    check("conflict-free through these tables" in p.stdout, p.stdout)
    # The walk must be able to fail: two phase-0 transfers of one leaf on the same spine.
    rows = list(csv.DictReader(open(out["lids"])))
    spine = {(r["phase"], r["src"], r["dst"]): int(r["spine"])
             for r in csv.DictReader(open(out["sched"]))}
    inter = [r for r in rows if r["phase"] == "0" and spine[("0", r["src"], r["dst"])] >= 0]
    a = inter[0]
    b = next(r for r in inter[1:] if int(r["src"]) // m0 == int(a["src"]) // m0)
    sa, sb = spine[("0", a["src"], a["dst"])], spine[("0", b["src"], b["dst"])]
    b["dlid"] = str(int(b["dlid"]) - sb + sa)
    bad = os.path.join(d, "bad-lids.csv")
    with open(bad, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=["phase", "src", "dst", "dlid"])
        wr.writeheader()
        wr.writerows(rows)
    try:
        walk_phases(ours, tables, bad)
        check(False, "the walk missed a shared link")
    except sar_it.CheckFailed as e:
        check("used twice" in str(e), f"unexpected walk failure: {e}")
    print(f"{name}: {transfers} transfers in {phases} phases, conflict-free on the switches")


def body():
    args = sar_it.parse_args(__doc__)
    w, sr = args.workdir, args.sar_route
    run_case(sr, w, "ft2_4_4_unlink", 4, 4, [(0, 1)], unlink=True)
    run_case(sr, w, "ft2_20_18_1f_sw0", 20, 18, [(0, 0)], unlink=False)


if __name__ == "__main__":
    sar_it.main(body)
