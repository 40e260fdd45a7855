#!/usr/bin/env python3
"""Stock OpenSM `ftree` on a fat-tree from `sar-route gen`, judged by `sar-route eval`.

- OpenSM keeps the LIDs sar-route gen wrote, and its opensm-lfts.dump equals what the switches
  report (sar-route diff-lfts, and our own comparison).
- The switches' tables evaluate as valid and min-hop, with every pair delivered.
- Load balance: every leaf->spine channel carries the same number of routes, as does every
  spine->leaf channel.
- The per-channel EFI sar-route reports equals an independent count: walking OpenSM's own dump
  from every leaf to every HCA, weighted by the hosts on the leaf.
"""

import os

import sar_it
from sar_it import check


def body():
    args = sar_it.parse_args(__doc__, extra=lambda ap: ap.add_argument(
        "--fabric", required=True, help="sar-route gen spec of a 2-level fat-tree, ft2:M0,M1"))
    w, sr = args.workdir, args.sar_route
    topo_path, lids_path = os.path.join(w, "fabric.topo"), os.path.join(w, "fabric.guid2lid")
    sar_it.sar_route_gen(sr, args.fabric, topo_path, lids_path)
    topo = sar_it.parse_topology(topo_path)
    m0, m1 = (int(x) for x in args.fabric.split(":")[1].split(","))
    leaves = [n for n in topo.switches() if n.name.startswith("leaf")]
    spines = [n for n in topo.switches() if n.name.startswith("spine")]
    check(len(leaves) == m1 and len(spines) == m0 and len(topo.hcas()) == m0 * m1,
          f"gen {args.fabric}: {len(leaves)} leaves, {len(spines)} spines, "
          f"{len(topo.hcas())} hosts")

    with sar_it.new_testbed(w, "bed", topo_path, lids_path) as tb:
        res = tb.route("ftree", timeout=90)
    seeded = sar_it.parse_guid2lid(lids_path)
    kept = sar_it.parse_guid2lid(res.guid2lid)
    check(all(kept.get(g) == r for g, r in seeded.items()),
          "OpenSM did not keep the LIDs from sar-route gen --guid2lid")

    # OpenSM's own dump is what the switches hold.
    sar_it.run([sr, "diff-lfts", "--topology", topo_path, "--lids", res.guid2lid,
                res.opensm_lfts, res.switches_lfts], expect=0)
    osm = sar_it.parse_lfts(res.opensm_lfts)
    diff = sar_it.diff_tables(osm, sar_it.parse_lfts(res.switches_lfts))
    check(not diff, f"opensm-lfts.dump differs from the switches: {diff[:5]}")

    ev = sar_it.sar_route_eval(sr, topo_path, res.switches_lfts, res.guid2lid,
                               extra=["--per-channel"])
    n = m0 * m1
    check(ev["valid"] is True, f"eval: not valid: {ev}")
    check(ev["pairs"] == n * (n - 1), f"eval: pairs {ev['pairs']}, expected {n * (n - 1)}")
    for key in ("unreachable_pairs", "loops", "non_min_hop"):
        check(ev[key] == 0, f"eval: {key} = {ev[key]}")
    check(ev["channels"] == 2 * m0 * m1, f"eval: {ev['channels']} channels, expected {2 * m0 * m1}")

    # Independent EFI from OpenSM's dump.
    walk = sar_it.Walk(topo, kept, osm)
    check(walk.unreachable == 0 and walk.non_min_hop == 0,
          f"own walk: {walk.unreachable} unreachable, {walk.non_min_hop} non-minimal")
    reported = {}
    for ch in ev["per_channel"]:
        key = (ch["from"], ch["from_port"])
        check(topo.nodes[ch["from"]].links.get(ch["from_port"]) == (ch["to"], ch["to_port"]),
              f"eval per_channel: {ch} is not a cable of the topology")
        reported[key] = ch["efi"]
    mine = {}
    for sw in topo.switches():
        for port, (peer, _) in sw.links.items():
            if topo.nodes[peer].kind == "switch":
                mine[(sw.name, port)] = walk.efi.get((sw.name, port), 0)
    wrong = [(k, reported.get(k), v) for k, v in sorted(mine.items()) if reported.get(k) != v]
    check(not wrong, f"per-channel EFI differs from the independent count "
                     f"(channel, eval, ours): {wrong[:8]}")
    extra = set(reported) - set(mine)
    check(not extra, f"eval reports non-switch channels: {sorted(extra)[:5]}")

    up = {mine[(l.name, p)] for l in leaves for p, (peer, _) in l.links.items()
          if peer.startswith("spine")}
    down = {mine[(s.name, p)] for s in spines for p in s.links}
    # Each leaf sends (hosts on it) x (hosts elsewhere) routes up, spread over m0 up-ports.
    check(up == {m0 * (n - m0) // m0}, f"leaf->spine EFIs not balanced: {sorted(up)}")
    check(down == {m0 * (n - m0) // m0}, f"spine->leaf EFIs not balanced: {sorted(down)}")
    check(ev["efi"]["max"] == n - m0, f"eval: efi max {ev['efi']['max']}, expected {n - m0}")


if __name__ == "__main__":
    sar_it.main(body)
