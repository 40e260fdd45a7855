#!/usr/bin/env python3
"""Our LFT writer against OpenSM's `file` routing engine.

1. OpenSM `updn` routes a fat-tree; the tables read back from the switches (dump_fts form) go
   through `sar-route convert-lfts` into the file-engine format.
2. A fresh bed loads that file with `-R file,no_fallback`; the tables read back must equal our
   file entry for entry (`sar-route diff-lfts` exit 0, and our own comparison).
3. The file with two up-ports of one leaf swapped for some LIDs, loaded the same way, must show
   exactly that change in the switch (and diff-lfts against the unchanged file must exit 1).
"""

import os
import re

import sar_it
from sar_it import check

FABRIC = "ft2:4,4"
M0 = 4  # hosts per leaf = up-ports per leaf; up-ports are M0+1..2*M0


def swap_up_ports(src, dst, leaf_guid, port_a, port_b, limit):
    """Copies an OpenSM-format LFT file, swapping port_a/port_b on up to `limit` route lines of
    the switch leaf_guid each way. Returns {lid: new port} of the changed lines."""
    changed, cur, counts = {}, None, {port_a: 0, port_b: 0}
    out = []
    for line in open(src):
        if "Unicast lids" in line:
            m = re.search(r" guid (0x[0-9a-fA-F]+)", line)
            cur = int(m.group(1), 16)
        m = re.match(r"^(0x[0-9a-fA-F]+)(\s+)(\d+)(.*)$", line.rstrip("\n"))
        if m and cur == leaf_guid:
            port = int(m.group(3))
            if port in counts and counts[port] < limit:
                counts[port] += 1
                new = port_b if port == port_a else port_a
                changed[int(m.group(1), 16)] = new
                line = f"{m.group(1)}{m.group(2)}{new:03d}{m.group(4)}\n"
        out.append(line)
    with open(dst, "w") as f:
        f.writelines(out)
    return changed


def load_file(sr, w, name, topo_path, lids_path, lfts):
    """Loads `lfts` into a fresh bed; returns the switches' tables and OpenSM's guid2lid."""
    with sar_it.new_testbed(w, name, topo_path, lids_path) as tb:
        res = tb.route("file", lfts_file=lfts, timeout=60)
    return res.switches_lfts, res.guid2lid


def body():
    args = sar_it.parse_args(__doc__)
    w, sr = args.workdir, args.sar_route
    topo_path, lids_path = os.path.join(w, "fabric.topo"), os.path.join(w, "fabric.guid2lid")
    sar_it.sar_route_gen(sr, FABRIC, topo_path, lids_path)
    topo = sar_it.parse_topology(topo_path)

    with sar_it.new_testbed(w, "updn", topo_path, lids_path) as tb:
        res = tb.route("updn", timeout=60)
    lids = res.guid2lid
    ours = os.path.join(w, "ours.lfts")
    sar_it.run([sr, "convert-lfts", "--topology", topo_path, "--lids", lids, res.switches_lfts,
                "-o", ours], expect=0)
    updn = sar_it.parse_lfts(res.switches_lfts)
    diff = sar_it.diff_tables(updn, sar_it.parse_lfts(ours))
    check(not diff, f"convert-lfts changed the tables: {diff[:5]}")
    check(set(updn) == {s.guid for s in topo.switches()}, "updn readback lacks switches")

    # 2. Loaded through the file engine, the switches hold exactly our file.
    back, back_lids = load_file(sr, w, "file", topo_path, lids_path, ours)
    check(sar_it.parse_guid2lid(back_lids) == sar_it.parse_guid2lid(lids),
          "the file-engine bed got other LIDs")
    sar_it.run([sr, "diff-lfts", "--topology", topo_path, "--lids", lids, ours, back], expect=0)
    diff = sar_it.diff_tables(sar_it.parse_lfts(ours), sar_it.parse_lfts(back))
    check(not diff, f"switches differ from the loaded file: {diff[:5]}")

    # 3. A deliberate change shows up in the switch, and only there.
    leaf = topo.nodes["leaf000"]
    changed_path = os.path.join(w, "changed.lfts")
    changed = swap_up_ports(ours, changed_path, leaf.guid, M0 + 1, M0 + 2, limit=2)
    check(len(changed) >= 2, f"found too few routes to swap on {leaf.name}: {changed}")
    back2, _ = load_file(sr, w, "changed", topo_path, lids_path, changed_path)
    sar_it.run([sr, "diff-lfts", "--topology", topo_path, "--lids", lids, changed_path, back2],
               expect=0)
    p = sar_it.run([sr, "diff-lfts", "--topology", topo_path, "--lids", lids, ours, back2],
                   expect=1)
    check(p.stdout.strip() or p.stderr.strip(), "diff-lfts exit 1 without printing differences")
    got = sar_it.parse_lfts(back2)
    want = {g: dict(t) for g, t in updn.items()}
    want[leaf.guid].update(changed)
    diff = sar_it.diff_tables(want, got)
    check(not diff, f"switches after the change differ from what we asked: {diff[:5]}")
    for lid, port in changed.items():
        check(got[leaf.guid][lid] == port != updn[leaf.guid][lid],
              f"{leaf.name} LID {lid}: switch has {got[leaf.guid].get(lid)}, wanted {port}")


if __name__ == "__main__":
    sar_it.main(body)
