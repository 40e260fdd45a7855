#!/usr/bin/env python3
"""`sar-route compare --opensm minhop,dfsssp` on one public dump of ../shared/data/fabrics (read
in place; exits 77, skipped, when it is absent), one CTest per dump (issue 33 items 4 and 5).

The test bed sizes ibsim from the fabric and starts OpenSM on a node with a cable, so every dump
ibsim can load routes there (ibtopotool-example-4's only HCA is cabled on port 2, which ibsim
cannot attach a client to: OpenSM runs on the switch's port 0). Checks:
- both OpenSM rows are present, ok and valid (libsar's validation of the read-back tables under
  the dump's LIDs), and so are our minhop/dfsssp rows where the dump's expectations say they
  route (minhop refuses the SuperPOD: a dependency cycle between CAs);
- lft_truth.py (no libsar) walks OpenSM's read-back tables: every HCA port and every switch to
  every LID (switch port 0s included) is delivered without a loop, and OpenSM's minhop takes
  shortest paths;
- ibsim ran with the sizes the fabric needs (its own banner), OpenSM on the node the test bed
  says.
With --generated (no dump): a generated tree of 284 switches, past ibsim's default 256 (24 s);
ibsim alone with its default sizes refuses it ("no more switches"), the sized bed routes it.
"""

import json
import os
import re
import subprocess
import sys

import lft_truth
import sar_it
import sar_testbed  # scripts/, on the path through sar_it
from sar_it import check

# 240 leaves of one host, 40 spines, 4 cores: 284 switches.
WIDE = "pgft:3;1,12,20;1,2,2;1,1,1"

# Per dump: does our minhop route it, and what OpenSM runs on (an HCA's port 1, or a switch).
EXPECT = {
    "selene-storage.ibnetdiscover": dict(minhop=True, sm_on="Hca"),
    "nvidia-ndr-superpod.ibnetdiscover": dict(minhop=False, sm_on="Hca"),
    "loginoff-stage.ibnetdiscover": dict(minhop=True, sm_on="Hca"),
    "nvidia-lab-small.ibnetdiscover": dict(minhop=True, sm_on="Hca"),
    "ibtopotool-example-1.ibnetdiscover": dict(minhop=True, sm_on="Hca"),
    "ibtopotool-example-2.ibnetdiscover": dict(minhop=True, sm_on="Hca"),
    "ibtopotool-example-3.ibnetdiscover": dict(minhop=True, sm_on="Hca"),
    "ibtopotool-example-4.ibnetdiscover": dict(minhop=True, sm_on="Switch"),
}


def ibsim_sizes(testbed_dir):
    """ibsim's banner (MaxNetNodes/Switches/Ports = N) from its console log."""
    text = open(os.path.join(testbed_dir, "ibsim.out"), errors="replace").read()
    return {k: int(v) for k, v in re.findall(r"MaxNet(\w+)\s*=\s*(\d+)", text)}


def compare(sr, topo, w, engines, expect_rc=None):
    jobs = os.path.join(w, "jobs.map")
    sar_it.run([sr, "jobmix", "-t", topo, "--seed", "1", "--run-length", "3", "--max-size", "16",
                "-o", jobs], expect=0)
    out = os.path.join(w, "compare")
    res = sar_it.run([sr, "compare", "-t", topo, "--jobs", jobs, "--engines", engines,
                      "--opensm", "minhop,dfsssp", "--workdir", out, "--json",
                      "--testbed-script", os.path.join(sar_it.REPO, "scripts", "sar_testbed.py")],
                     expect=expect_rc, timeout=900)
    return out, {e["engine"]: e for e in json.loads(res.stdout)["engines"]}


def check_opensm_rows(out, rows):
    fabric = sar_testbed.SimFabric(os.path.join(out, "fabric.topo"))
    for engine in ("minhop", "dfsssp"):
        name = f"opensm:{engine}"
        check(name in rows, f"no {name} row: {sorted(rows)}")
        check(rows[name].get("ok") and rows[name].get("valid"), f"{name}: {rows[name]}")
        run = os.path.join(out, f"opensm-{engine}")
        rep = lft_truth.require(os.path.join(out, "fabric.topo"), os.path.join(out, "guid2lid"),
                                os.path.join(run, "switches.lfts"), name,
                                min_hop=engine == "minhop", all_lids=True, switch_lids=True)
        print(f"{name}: {rep.summary()}")
        sizes = ibsim_sizes(os.path.join(run, "testbed"))
        check(sizes.get("Switches", 0) >= fabric.switches and sizes.get("Nodes", 0) >=
              fabric.nodes and sizes.get("Ports", 0) >= fabric.ports,
              f"{name}: ibsim sized {sizes} for {fabric.switches} switches, {fabric.nodes} "
              f"nodes, {fabric.ports} ports")
    return fabric


def run_dump(args):
    dump = os.path.join(args.fabrics, args.dump)
    if not os.path.exists(dump):
        print(f"SKIPPED: {dump} is absent (see shared/data/fabrics/README.md)")
        sys.exit(77)
    expect = EXPECT[args.dump]
    engines = "minhop,dfsssp" if expect["minhop"] else "dfsssp"
    out, rows = compare(args.sar_route, dump, args.workdir, engines, expect_rc=0)
    check(rows["dfsssp"].get("ok") and rows["dfsssp"].get("valid"), f"dfsssp: {rows['dfsssp']}")
    if expect["minhop"]:
        check(rows["minhop"].get("ok") and rows["minhop"].get("valid"),
              f"minhop: {rows['minhop']}")
    fabric = check_opensm_rows(out, rows)
    host = fabric.sm_node()
    kind = "Hca" if any(name == host for name, _, _ in fabric.cas) else "Switch"
    check(kind == expect["sm_on"], f"OpenSM ran on {kind} {host}, expected a {expect['sm_on']}")
    print(f"{args.dump}: OpenSM minhop and dfsssp on ibsim valid (OpenSM on {kind} {host})")


def run_generated(args):
    topo = os.path.join(args.workdir, "wide.topo")
    sar_it.run([args.sar_route, "gen", "--fabric", WIDE, "-o", topo], expect=0)
    fabric = sar_testbed.SimFabric(topo)
    check(fabric.switches > sar_testbed.IBSIM_DEFAULT_SWITCHES,
          f"{WIDE}: {fabric.switches} switches, not past ibsim's default")
    # ibsim with its default sizes: refused (what compare --opensm hit before the bed sized it).
    env = dict(os.environ, IBSIM_SOCKNAME=f"sar-size-{os.getpid()}")
    p = subprocess.run(sar_testbed.with_parent_death_signal(["ibsim", "-s", topo]), env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    check(p.returncode != 0 and "no more switches" in p.stdout + p.stderr,
          f"ibsim with default sizes: exit {p.returncode}: {(p.stdout + p.stderr)[-500:]}")
    out, rows = compare(args.sar_route, topo, args.workdir, "minhop,dfsssp", expect_rc=0)
    check_opensm_rows(out, rows)
    print(f"{WIDE}: {fabric.switches} switches, ibsim sized, OpenSM rows valid")


def main():
    def extra(ap):
        ap.add_argument("--fabrics", help="shared/data/fabrics directory")
        ap.add_argument("--dump", help="file name of the dump in --fabrics")
        ap.add_argument("--generated", action="store_true",
                        help=f"the generated {WIDE} instead of a dump")
    args = sar_it.parse_args(__doc__, extra=extra)
    sar_it.main(lambda: run_generated(args) if args.generated else run_dump(args),
                errors=(lft_truth.TruthError,))


if __name__ == "__main__":
    main()
