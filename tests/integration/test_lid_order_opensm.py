#!/usr/bin/env python3
"""Our minhop and updn equal OpenSM's own, entry for entry, whatever the LID assignment.

OpenSM fills each switch's table destination by destination in its own order (switch by switch,
not by LID; docs/engines.md), so an engine that only matched it with LIDs in leaf order would
pass test_engines_opensm.py and still differ on a real fabric. For each fabric below:
- `sar-route gen` writes the fabric and its guid2lid; the LIDs are permuted over the ports with
  a fixed seed (a check makes sure the permutation is not in switch-by-switch order);
- OpenSM on ibsim, seeded with the permuted guid2lid, routes with its `minhop` and its `updn`;
  it must keep the LIDs, and its tables are read back from the switches (dump_fts);
- `sar-route route --engine minhop|updn` routes with the same LIDs;
- `sar-route diff-lfts` must find no difference (exit 0) and an independent comparison here
  must find every LID of the fabric (HCA and switch LIDs) equal on every switch, except that
  our updn may route a LID from a switch that OpenSM's leaves empty for want of a legal route
  (a deliberate fallback for management traffic, docs/engines.md; never an HCA LID on an
  HCA-attached switch).
The degraded fabric's top level loses cables, so OpenSM's automatic updn roots (a switch whose
HCAs all lie at one distance) and ours (the switches farthest from the leaves) differ; there
both get the same root_guid_file / --roots, so the test compares the up*/down* routing itself.
"""

import os
import random
import re

import sar_it
from sar_it import check

SEED = 20

FABRICS = [
    # (name, sar-route gen arguments, give updn the roots explicitly, first switch GUID or None)
    ("ft2_4_4", ["--fabric", "ft2:4,4"], False, None),
    # 3 HCAs on each leaf (a leaf's HCAs no longer fill its 4 up-ports evenly, so the order of
    # the leaves matters) and switch GUIDs ..00fe, ..00ff, ..0100, ..: OpenSM's switch map
    # compares GUIDs in network byte order, so leaves ..0100 and ..0101 come before ..00fe.
    ("ft2_4_4_guid_bytes", ["--fabric", "ft2:4,4", "--hosts-per-leaf", "3,3,3,3"], False,
     0x0002c900001000fe),
    ("kary_3_3", ["--fabric", "kary:3,3"], False, None),
    # Dmodc's PGFT(3;2,2,3;1,2,2;1,2,1) (parallel cables), uneven leaves (OpenSM orders switches
    # by HCA count) and two cut cables.
    ("pgft_degraded", ["--fabric", "pgft:3;2,2,3;1,2,2;1,2,1",
                       "--hosts-per-leaf", "2,1,2,0,2,1",
                       "--fail-link", "leaf001:3", "--fail-link", "l2sw002:5"], True, None),
]


def move_switch_guids(topo_path, lids_path, first):
    """Renumbers the switches from GUID `first` on (ibsim's switchguid= counter), in the
    topology and in its guid2lid."""
    old = {s.guid for s in sar_it.parse_topology(topo_path).switches()}
    delta = first - min(old)
    text = open(topo_path).read()
    check(text.count("switchguid=") == 1, f"{topo_path}: expected one switchguid= line")
    text = re.sub(r"^switchguid=0x[0-9a-fA-F]+", f"switchguid=0x{first:016x}", text,
                  flags=re.M)
    with open(topo_path, "w") as f:
        f.write(text)
    lids = sar_it.parse_guid2lid(lids_path)
    with open(lids_path, "w") as f:
        for g, (lo, hi) in sorted(lids.items()):
            f.write(f"0x{g + delta if g in old else g:016x} 0x{lo:04x} 0x{hi:04x}\n")


def shuffle_lids(src, dst, seed):
    """Writes src's guid2lid with the LIDs permuted over the ports (LMC 0); returns the map."""
    lids = sar_it.parse_guid2lid(src)
    check(all(lo == hi for lo, hi in lids.values()), f"{src}: expected LMC 0")
    guids = sorted(lids)
    values = [lids[g][0] for g in guids]
    random.Random(seed).shuffle(values)
    out = dict(zip(guids, ((v, v) for v in values)))
    with open(dst, "w") as f:
        for g in guids:
            f.write(f"0x{g:016x} 0x{out[g][0]:04x} 0x{out[g][1]:04x}\n")
    return out


def switch_order_broken(topo, lids):
    """True if ordering the HCA LIDs differs from taking them leaf by leaf, port by port, so
    that a fill in LID order would not be OpenSM's."""
    by_switch = []
    for sw in sorted(topo.switches(), key=lambda s: s.guid):
        for port in sorted(sw.links):
            peer, pport = sw.links[port]
            node = topo.nodes[peer]
            if node.kind == "hca" and node.port_guids.get(pport) in lids:
                by_switch.append(lids[node.port_guids[pport]][0])
    return by_switch != sorted(by_switch)


def one_fabric(args, name, gen_args, explicit_roots, first_guid, summary):
    w, sr = os.path.join(args.workdir, name), args.sar_route
    os.makedirs(w)
    topo_path, gen_lids = os.path.join(w, "fabric.topo"), os.path.join(w, "gen.guid2lid")
    sar_it.sar_route_gen(sr, gen_args[1], topo_path, gen_lids, extra=gen_args[2:])
    if first_guid is not None:
        move_switch_guids(topo_path, gen_lids, first_guid)
    lids_path = os.path.join(w, "shuffled.guid2lid")
    lids = shuffle_lids(gen_lids, lids_path, SEED)
    topo = sar_it.parse_topology(topo_path)
    check(switch_order_broken(topo, lids), f"{name}: seed {SEED} left the LIDs in leaf order")
    all_lids = {lo for lo, _ in lids.values()}
    switch_guids = {s.guid for s in topo.switches()}
    switch_lids = {lids[g][0] for g in switch_guids}
    hca_switches = {s.guid for s in topo.switches()
                    if any(topo.nodes[peer].kind == "hca" for peer, _ in s.links.values())}

    roots_conf, roots_arg = None, []
    if explicit_roots:
        tops = [s for s in topo.switches() if s.name.startswith("spine")]
        roots_file = os.path.join(w, "roots.guids")
        with open(roots_file, "w") as f:
            f.write("".join(f"0x{s.guid:016x}\n" for s in tops))
        roots_conf = f"root_guid_file {roots_file}"
        roots_arg = ["--roots", ",".join(s.name for s in tops)]

    with sar_it.new_testbed(w, "bed", topo_path, lids_path) as tb:
        for engine in ("minhop", "updn"):
            res = tb.route(engine, extra_conf=roots_conf if engine == "updn" else None,
                           timeout=60)
            check(sar_it.parse_guid2lid(res.guid2lid) == lids,
                  f"{name}/{engine}: OpenSM changed the permuted LIDs")
            ours = os.path.join(w, f"ours-{engine}.lfts")
            sar_it.run([sr, "route", "--engine", engine, "--topology", topo_path, "--lids",
                        lids_path, "-o", ours, *(roots_arg if engine == "updn" else [])],
                       expect=0)
            theirs_t = sar_it.parse_lfts(res.switches_lfts)
            ours_t = sar_it.parse_lfts(ours)
            check(set(theirs_t) == switch_guids and set(ours_t) == switch_guids,
                  f"{name}/{engine}: a dump lacks switches")
            ours_t = {g: {l: t[l] for l in all_lids if l in t} for g, t in ours_t.items()}
            theirs_t = {g: {l: t[l] for l in all_lids if l in t} for g, t in theirs_t.items()}
            # Our updn gives a switch with no legal up*/down* route to a LID a shortest-path
            # entry anyway, for management traffic (docs/engines.md), where OpenSM leaves none:
            # between roots, or from a root cut off from part of the tree. No HCA route enters
            # such a switch, and an HCA-attached switch gets no such entry for an HCA LID. Only
            # those entries may be ours alone; every entry OpenSM has must be ours too.
            extra = 0
            if engine == "updn":
                for g, t in ours_t.items():
                    for lid in [l for l in t if l not in theirs_t[g]]:
                        if lid in switch_lids or g not in hca_switches:
                            del t[lid]
                            extra += 1
            compared = os.path.join(w, f"ours-{engine}-compared.lfts")
            sar_it.write_opensm_lfts(compared, ours_t)
            p = sar_it.run([sr, "diff-lfts", "-t", topo_path, "--lids", lids_path, compared,
                            res.switches_lfts])
            diff = sar_it.diff_tables(ours_t, theirs_t)
            check(p.returncode == 0 and not diff,
                  f"{name}: our {engine} differs from OpenSM {engine} with permuted LIDs: "
                  f"{len(diff)} entries (ours vs theirs), e.g. {diff[:5]}; diff-lfts exit "
                  f"{p.returncode}: {p.stdout[-1500:]}{p.stderr[-500:]}")
            entries = sum(len(t) for t in ours_t.values())
            note = f" (+{extra} entries only ours routes: no legal route)" if extra else ""
            summary.append(f"{name}: {engine} equal to OpenSM's on all {entries} entries{note}")


def body():
    args = sar_it.parse_args(__doc__)
    summary = []
    for name, gen_args, explicit_roots, first_guid in FABRICS:
        one_fabric(args, name, gen_args, explicit_roots, first_guid, summary)
    print("\n".join(summary))


if __name__ == "__main__":
    sar_it.main(body)
