#!/usr/bin/env python3
"""`sar-route eval` on malformed input files: exit 3 and a message naming `file:line:`.

Uses a hand-written fabric (one 3-port switch, two hosts), whose well-formed files evaluate
cleanly, so each failure below is caused by the one broken line.
"""

import os

import sar_it
from sar_it import check

TOPOLOGY = """\
switchguid=0x0002c90000100000
Switch\t3 "sw0"\t# "sw0" enhanced port 0 lid 1 lmc 0
[1]\t"h0"[1]\t# "h0 HCA-1" lid 2 4xHDR
[2]\t"h1"[1]\t# "h1 HCA-1" lid 3 4xHDR

caguid=0x0002c90000200000
Hca\t1 "h0"\t# "h0 HCA-1"
[1]\t"sw0"[1]\t# lid 2 lmc 0 "sw0" lid 1 4xHDR

caguid=0x0002c90000200002
Hca\t1 "h1"\t# "h1 HCA-1"
[1]\t"sw0"[2]\t# lid 3 lmc 0 "sw0" lid 1 4xHDR
"""

GUID2LID = """\
0x0002c90000100000 0x0001 0x0001

0x0002c90000200001 0x0002 0x0002

0x0002c90000200003 0x0003 0x0003

"""

LFTS = """\
Unicast lids [0-3] of switch Lid 1 guid 0x0002c90000100000 ('sw0'):
0x0001 000 # the switch itself
0x0002 001 # h0
0x0003 002 # h1
3 lids dumped
"""


def write(w, name, text):
    path = os.path.join(w, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def broken(text, line_no, new_line):
    lines = text.splitlines(keepends=True)
    lines[line_no - 1] = new_line + "\n"
    return "".join(lines)


def expect_malformed(sr, topo, lfts, lids, bad_file, line_no):
    p = sar_it.run([sr, "eval", "--topology", topo, "--lfts", lfts, "--lids", lids, "--json"],
                   expect=3)
    # The path may be printed as given or made absolute; the name and line must be there.
    where = f"{os.path.basename(bad_file)}:{line_no}:"
    check(where in p.stderr, f"eval on {bad_file}: stderr lacks '{where}': {p.stderr[-1000:]}")


def body():
    args = sar_it.parse_args(__doc__)
    w, sr = args.workdir, args.sar_route
    topo = write(w, "good.topo", TOPOLOGY)
    lids = write(w, "good.guid2lid", GUID2LID)
    lfts = write(w, "good.lfts", LFTS)
    ev = sar_it.sar_route_eval(sr, topo, lfts, lids)
    check(ev["valid"] is True and ev["pairs"] == 2, f"the well-formed files do not evaluate: {ev}")

    cases = [
        # A port index that is not a number.
        ("bad-port.topo", "topo", 3, '[two]\t"h0"[1]\t# "h0 HCA-1" lid 2 4xHDR'),
        # A switch record whose port count is not a number.
        ("bad-switch.topo", "topo", 2, 'Switch\tmany "sw0"\t# "sw0" enhanced port 0'),
        # A route to port 200 on a 3-port switch (OpenSM's file engine rejects it too).
        ("bad-port.lfts", "lfts", 3, "0x0002 200 # h0"),
        # A route header whose GUID is not hex.
        ("bad-guid.lfts", "lfts", 1,
         "Unicast lids [0-3] of switch Lid 1 guid 0xsw0 ('sw0'):"),
    ]
    for name, kind, line_no, text in cases:
        if kind == "topo":
            bad = write(w, name, broken(TOPOLOGY, line_no, text))
            expect_malformed(sr, bad, lfts, lids, bad, line_no)
        else:
            bad = write(w, name, broken(LFTS, line_no, text))
            expect_malformed(sr, topo, bad, lids, bad, line_no)

    # An empty topology (what a failed ibnetdiscover leaves) is refused, and nothing is written.
    empty = write(w, "empty.topo", "# ibnetdiscover died here\n")
    out = os.path.join(w, "empty.lfts")
    p = sar_it.run([sr, "route", "-e", "minhop", "--topology", empty, "-o", out], expect=3)
    check("no switch or HCA records" in p.stderr, f"empty topology: {p.stderr[-500:]}")
    check(not os.path.exists(out), "route wrote tables for an empty topology")

    # A misspelt subcommand is named, with the choices; `--help` after it does not hide it.
    for argv in (["frobnicate"], ["frobnicate", "--help"]):
        p = sar_it.run([sr, *argv], expect=2)
        check("unknown subcommand 'frobnicate'" in p.stderr and "route" in p.stderr,
              f"sar-route {' '.join(argv)}: {p.stderr[-500:]}")


if __name__ == "__main__":
    sar_it.main(body)
