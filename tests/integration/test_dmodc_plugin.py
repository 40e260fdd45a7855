#!/usr/bin/env python3
"""libosmsar.so inside stock OpenSM with `engine dmodc` and `engine sar-dmodc`.

On a degraded 4-ary-3-tree (failed links and a failed switch) and a degraded 3-level PGFT with
parallel cables, stock OpenSM loads the plugin with the osmsar.conf `engine` key set to dmodc,
then (SIGUSR2 after rewriting the config is not a reload, so a fresh OpenSM) sar-dmodc with a
job mapping:
- the tables read back from the simulated switches (dump_fts) equal, entry for entry, what
  `sar-route route --engine <e> --canonical-order` computes offline from the read-back
  topology, OpenSM's guid2lid and the same mapping;
- `sar-route eval` finds the read-back tables valid and deadlock-free in one layer (the engines
  have no virtual layers: their up*-down* routes must be acyclic on their own);
- sar-dmodc's tables differ from dmodc's (the job's indices are used), so the second check is
  not the first one again.
"""

import os

import sar_it
from sar_it import check
from test_osmsar_plugin import Fabric, mapping_text, write_atomic
from testbed_common import free_port_block


def run_engine(fab, engine, tag, first):
    """Runs OpenSM with the plugin set to `engine` (the test bed's first OpenSM starts it);
    checks the switches against offline."""
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
    offline, layers = fab.offline(engine, tag)
    rb = fab.check_equal(offline, f"{fab.w}: {engine}")
    ev = sar_it.sar_route_eval(fab.args.sar_route, fab.live_topo, rb, fab.lids,
                               extra=["--layers", layers, "--vls", "1"])
    check(ev["valid"] is True and ev["deadlock_free"] is True and ev["layers"] == 1,
          f"{engine}: eval: read-back tables not valid and deadlock-free in one layer: {ev}")
    fab.daemon.stop()
    return offline


def test_fabric(args, name, gen, jobs):
    fab = Fabric(args, name, gen)
    write_atomic(fab.mapping, mapping_text(fab.topo, 3, jobs=jobs, per_job=8))
    dmodc = run_engine(fab, "dmodc", "dmodc", True)
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
                     "--fail-link", "l2sw002:7", "--fail-switch", "l2sw006"], 2),
        test_fabric(args, "pgft_degraded",
                    ["pgft:3;4,3,3;1,2,3;1,2,1", "--fail-link", "leaf001:5",
                     "--fail-link", "l2sw003:9", "--fail-link", "leaf007:8"], 3)))


if __name__ == "__main__":
    main()
