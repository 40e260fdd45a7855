#!/usr/bin/env python3
"""Hosts with several HCAs (rails) in stock OpenSM with libosmsar.so, on NVIDIA's SuperPOD dump
(../shared/data/fabrics/nvidia-ndr-superpod.ibnetdiscover, read in place; the test exits 77,
skipped, when it is absent). Each DGX there has 4 HCAs on 4 leaves, one per rail of its unit.

ibsim simulates the dump; OpenSM assigns the LIDs and routes with `routing_engine sar`:
- a job of one DGX (its traffic stays inside the host) is not multi-switch: the tables read
  back from the switches (dump_fts) equal `sar-route route --engine dfsssp` offline for the
  read-back topology and OpenSM's guid2lid, i.e. SAR does not reroute for it;
- after the mapping changes to a job of two DGXs of two units (rail-aligned traffic crossing
  leaves) and SIGUSR2, the switches hold `sar-route route --engine sar` for that mapping, and
  those differ from dfsssp's: SAR reroutes;
- both times eval finds the read-back tables valid and deadlock-free with sar-route's layers,
  and lft_truth.py (no libsar) walks every host to every LID of every other host on a shortest
  path without a loop.
"""

import os
import signal
import sys

import sar_it
from sar_it import check
from test_osmsar_plugin import NUM_VLS, Fabric, write_atomic
from testbed_common import free_port_block

DUMP = "nvidia-ndr-superpod.ibnetdiscover"
ONE_DGX = "a08-p1-dgx-04-c01 1\n"
TWO_UNITS = "a08-p1-dgx-04-c01 2\nb05-p1-dgx-05-c15 2\n"


class DumpFabric(Fabric):
    """test_osmsar_plugin's bed on a dump file instead of a generated fat-tree."""

    def __init__(self, args, name, dump):  # noqa: super().__init__ generates a fabric
        self.args, self.w = args, os.path.join(args.workdir, name)
        os.makedirs(self.w)
        self.topo_path = dump
        self.mapping = os.path.join(self.w, "job_mapping")
        self.conf = os.path.join(self.w, "osmsar.conf")
        with open(self.conf, "w") as f:  # full passes: offline needs no --previous
            f.write(f"engine sar\nmapping_file {self.mapping}\nnum_vls {NUM_VLS}\nthreads 2\n"
                    "delta false\n")
        self.tb = sar_it.new_testbed(args.workdir, name + "-bed", dump, None)
        self.daemon = None
        self.live_topo = os.path.join(self.w, "live.topo")


def test_superpod(args, dump):
    fab = DumpFabric(args, "superpod", dump)
    write_atomic(fab.mapping, ONE_DGX)
    fab.start(free_port_block(1))
    dfsssp, _ = fab.offline("dfsssp", "dfsssp", jobs=False)
    fab.check_sar_tables("one", "one DGX job")
    switches, _ = fab.readback()
    diff = sar_it.diff_tables(switches, dfsssp)
    check(not diff, f"one DGX job: the switches differ from dfsssp in {len(diff)} entries "
                    f"(a one-host job rerouted): {diff[:5]}")
    print("one DGX job (4 HCAs on 4 leaves): the switches hold dfsssp's tables", flush=True)

    write_atomic(fab.mapping, TWO_UNITS)
    off = fab.daemon.log_offset()
    fab.daemon.signal(signal.SIGUSR2)
    fab.wait_pass(off)
    fab.check_sar_tables("two", "two-unit job")
    switches, _ = fab.readback()
    diff = sar_it.diff_tables(switches, dfsssp)
    check(diff, "two-unit job: the switches still hold dfsssp's tables (no reroute)")
    print(f"two-unit job: rerouted, {len(diff)} entries differ from dfsssp", flush=True)
    fab.tb.stop()


def main():
    args = sar_it.parse_args(__doc__, extra=lambda ap: (
        ap.add_argument("--plugin-dir", required=True, help="directory holding libosmsar.so"),
        ap.add_argument("--fabrics", required=True, help="shared/data/fabrics directory")))
    args.plugin_dir = os.path.abspath(args.plugin_dir)
    dump = os.path.join(args.fabrics, DUMP)
    if not os.path.exists(dump):
        print(f"SKIPPED: {dump} is absent (see shared/data/fabrics/README.md)")
        sys.exit(77)
    sar_it.main(lambda: test_superpod(args, dump))


if __name__ == "__main__":
    main()
