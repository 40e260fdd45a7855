#!/usr/bin/env python3
"""libosmsar.so inside stock OpenSM with `engine dmodc` and `engine sar-dmodc`.

On a degraded 4-ary-3-tree (failed links and a failed switch) and a degraded 3-level PGFT with
parallel cables, stock OpenSM loads the plugin with the osmsar.conf `engine` key set to dmodc,
then (SIGUSR2 after rewriting the config is not a reload, so a fresh OpenSM) sar-dmodc with a
job mapping:
- the tables read back from the simulated switches (dump_fts) equal, entry for entry, what
  `sar-route route --engine <e> --canonical-order` computes offline from the read-back
  topology, OpenSM's guid2lid and the same mapping;
- `sar-route eval` finds the read-back tables valid and deadlock-free with the offline layers:
  the routes between CAs in one layer (the engines' up*-down* routes are acyclic on their own),
  and with switch LIDs counted too (their routes may go down and then up, so the routing pass
  gives cyclic tables layers, which the plugin's path_sl answers);
- independently of libsar (lft_truth.py: the read-back topology, guid2lid and tables only):
  every host reaches every other host's LID without a loop, in as many switch hops as the
  shortest path (these failures leave every shortest path an up-down one, so dmodc's min-hop
  up*-down* routes are shortest), and the channel dependency graph of all routes between CAs in
  one layer has no cycle; every switch LID is delivered too, and the walker's verdict on the
  cycle with switch LIDs counted equals eval's;
- sar-dmodc's tables differ from dmodc's (the job's indices are used), so the second check is
  not the first one again.
On the 4-ary-3-tree, with engine dmodc, the plugin keeps libsar's memory between passes (issue
16): its first pass logs `dmodc: full pass (no earlier pass)`; then one leaf uplink is cut in
ibsim (`Unlink`), OpenSM resweeps, the plugin logs `dmodc: incremental reroute: 2 switches
recabled, ...` (the cable's two ends), and the switches hold what offline `sar-route route
--engine dmodc` (a full pass) computes on the degraded topology read back with ibnetdiscover,
valid and deadlock-free; sar-dmodc then runs on that degraded topology.
"""

import os
import re
import signal
import time

import lft_truth
import sar_it
from sar_it import check
from test_osmsar_plugin import Fabric, mapping_text, write_atomic
from testbed_common import free_port_block


def check_switches(fab, engine, tag):
    """The switches hold offline `sar-route route --engine <engine>`'s tables for the live
    topology, valid and deadlock-free with the offline layers (between CAs in one layer);
    returns the offline tables."""
    offline, layers = fab.offline(engine, tag)
    rb = fab.check_equal(offline, f"{fab.w}: {engine} ({tag})")
    ev = sar_it.sar_route_eval(fab.args.sar_route, fab.live_topo, rb, fab.lids,
                               extra=["--layers", layers])
    check(ev["valid"] is True and ev["deadlock_free"] is True,
          f"{engine} ({tag}): eval: read-back tables not valid and deadlock-free: {ev}")
    hcas = sar_it.sar_route_eval(fab.args.sar_route, fab.live_topo, rb, fab.lids,
                                 extra=["--hca-pairs-only"])
    check(hcas["single_layer_deadlock_free"] is True,
          f"{engine} ({tag}): eval: routes between CAs not acyclic in one layer: {hcas}")
    full = lft_truth.check_files(fab.live_topo, fab.lids, rb, acyclic=True, switch_lids=True)
    check(full.delivered == full.pairs and
          (full.cycle is None) == ev["single_layer_deadlock_free"] and
          full.dependencies == ev["single_layer_dependencies"],
          f"{engine} ({tag}): walker with switch LIDs {full.summary()} disagrees with eval "
          f"({ev['single_layer_deadlock_free']}, {ev['single_layer_dependencies']})")
    # The same tables walked without libsar (lft_truth.py): every host to every other host's
    # LID delivered without a loop, in as many switch hops as the shortest path, and all
    # routes together free of channel dependency cycles in one layer.
    rep = lft_truth.require(fab.live_topo, fab.lids, rb, f"{engine} ({tag}): switches' tables",
                            min_hop=True, acyclic=True)
    print(f"{engine} ({tag}): independent walk: {rep.summary()}")
    return offline


def cut_leaf_uplink(fab):
    """Cuts, in ibsim, the last uplink of the last leaf with all four (in the last pod, away
    from the generated failures: no switch changes its distance to the leaves and every leaf
    pair keeps an up-down path, so the plugin's memory can follow); waits for OpenSM's reroute
    and reads the topology back. Returns the log since the cut."""
    up = lambda n: sorted(p for p, (peer, _) in n.links.items()
                          if fab.topo.nodes[peer].kind == "switch")
    leaf = next(n for n in sorted(fab.topo.switches(), key=lambda n: n.name, reverse=True)
                if n.name.startswith("leaf") and len(up(n)) == 4)
    port = up(leaf)[-1]
    peer, pport = leaf.links.pop(port)
    del fab.topo.nodes[peer].links[pport]
    off = fab.daemon.log_offset()
    fab.tb.ibsim_command(f'Unlink "{leaf.name}"[{port}]')
    time.sleep(0.5)
    fab.daemon.signal(signal.SIGHUP)
    fab.wait_pass(off, 30)
    fab.daemon.wait_log(r"SUBNET UP", off, 30)
    fab.tb.diag(["ibnetdiscover"], fab.live_topo)
    live = sar_it.parse_topology(fab.live_topo).by_guid()  # ibnetdiscover names nodes by GUID
    check(leaf.guid in live and port not in live[leaf.guid].links,
          f"{leaf.name}[{port}] still cabled after Unlink")
    print(f"cut {leaf.name}[{port}] -> {peer}[{pport}]")
    return fab.daemon.log_since(off)


def run_engine(fab, engine, tag, first, cut=False):
    """Runs OpenSM with the plugin set to `engine` (the test bed's first OpenSM starts it);
    checks the switches against offline; with `cut`, then cuts a leaf uplink (see the module
    docstring) and checks again. Returns the offline tables of the last check."""
    with open(fab.conf, "w") as f:
        f.write(f"engine {engine}\nmapping_file {fab.mapping}\nnum_vls 1\nthreads 2\n")
    if first:
        fab.start(free_port_block(1))
    else:
        fab.daemon = fab.tb.start_opensm(
            "sar", extra_conf=["event_plugin_name osmsar", f"event_plugin_options {fab.conf}"],
            env_extra={"LD_LIBRARY_PATH": fab.args.plugin_dir}, name=f"opensm-{tag}")
    log = fab.daemon.log_since(0)
    check(f"osmsar: engine {engine} routed" in log,
          f"the plugin did not route with {engine}:\n{log[-1500:]}")
    if engine == "dmodc":
        check("osmsar: dmodc: full pass (no earlier pass)" in log,
              f"dmodc's first pass does not say full:\n{log[-1500:]}")
    offline = check_switches(fab, engine, tag)
    if cut:
        log = cut_leaf_uplink(fab)
        m = re.search(r"osmsar: dmodc: incremental reroute: (\d+) switches recabled.*", log)
        check(m and m.group(1) == "2",
              f"the pass after the cut is not incremental over the cable's two ends:\n"
              f"{log[-2500:]}")
        check(f"osmsar: engine {engine} routed" in log and "full pass" not in log,
              f"the pass after the cut:\n{log[-2500:]}")
        print(m.group(0).strip())
        offline = check_switches(fab, engine, tag + "-cut")
    fab.daemon.stop()
    return offline


def test_fabric(args, name, gen, jobs, cut=False):
    fab = Fabric(args, name, gen)
    write_atomic(fab.mapping, mapping_text(fab.topo, 3, jobs=jobs, per_job=8))
    dmodc = run_engine(fab, "dmodc", "dmodc", True, cut)
    sar_dmodc = run_engine(fab, "sar-dmodc", "sar-dmodc", False)
    diff = sar_it.diff_tables(dmodc, sar_dmodc)
    check(diff, f"{name}: sar-dmodc equals dmodc: the job indices changed nothing")
    print(f"{name}: dmodc and sar-dmodc tables on the switches equal sar-route's; "
          f"{len(diff)} entries differ between the two")
    fab.tb.stop()


def main():
    args = sar_it.parse_args(__doc__, extra=lambda ap: ap.add_argument(
        "--plugin-dir", required=True, help="directory holding libosmsar.so"))
    args.plugin_dir = os.path.abspath(args.plugin_dir)
    sar_it.main(lambda: (
        test_fabric(args, "kary_4_3_degraded",
                    ["kary:4,3", "--fail-link", "leaf000:5", "--fail-link", "leaf005:6",
                     "--fail-link", "l2sw002:7", "--fail-switch", "l2sw006"], 2, cut=True),
        test_fabric(args, "pgft_degraded",
                    ["pgft:3;4,3,3;1,2,3;1,2,1", "--fail-link", "leaf001:5",
                     "--fail-link", "l2sw003:9", "--fail-link", "leaf007:8"], 3)),
        errors=(lft_truth.TruthError,))


if __name__ == "__main__":
    main()
