#!/usr/bin/env python3
"""sar-agent and sar-migconsumer against stock OpenSM 3.3.23 on ibsim (no coordinator needed).

FT(2;2,2), LMC 1, OpenSM on h00000; agents (ibsim test mode) on h00001 and h00002, two
reference consumers each (one of h00002's never answers). OpenSM forwards a trap 68/69 that the
SM's own port sends, exactly as it forwards the coordinator's notices, so sar-mig-inject on
h00000 stands in for the plugin. Checks:
- each agent answers OpenSM's SMInfo (else OpenSM's sweeps would stall), learns the SM's GUID,
  and its two InformInfo records (traps 68, 69) show in `saquery -I` (checked with one agent:
  through umad2sim, records beyond the first MAD of an RMPP answer come back garbled);
- UnPath epoch 7: every consumer switches its connections to highLIDs (base + 1) and the agent
  acks phase 2 only after both consumers answered (h00001: 2/2) or the deadline passed
  (h00002: 1/2, LATE); OpenSM's log shows each agent's vendor trap (0x534152/0x4D47);
- a forged UnPath (trap 68 from another node: OpenSM writes that node's GUID as IssuerGID) and
  one with a broken magic change nothing;
- RePath epoch 7: the consumers move back; nobody used a baseLID between its switch to high and
  the RePath; the agent acks phase 4;
- OpenSM restarted (subscriptions lost): both agents renew their subscriptions within seconds
  and an UnPath from the new OpenSM reaches both; the restarted OpenSM reaches SUBNET UP (the
  agents answered its SMInfo queries);
- SIGTERM: agents and consumers exit 0.
Prints the latency notice -> consumer switch (includes starting sar-mig-inject).
"""

import os
import re
import sys
import time

import sar_it
from sar_it import check

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fabric_gen  # noqa: E402
from migration_nodes import MigrationNodes, base_use_during, inject  # noqa: E402
from sar_testbed import Testbed  # noqa: E402

SM_GUID = fabric_gen.HCA_GUID_BASE + 1  # h00000's port
VENDOR_RX = r"Received Vendor Notice type:4 vend:0x534152 dev:19783 from LID:{lid}\b"


def subscriber_traps(saquery_out):
    """{port GUID (int): set of generic trap numbers} from `saquery -I`."""
    subs = {}
    for block in saquery_out.split("InformInfoRecord dump:")[1:]:
        g = re.search(r"SubscriberGID\.+([0-9a-f:]+)", block)
        t = re.search(r"trap_num\.+(\d+)", block)
        if not g or not t or "is_generic..............0x1" not in block:
            continue
        words = g.group(1).split("::")[-1].split(":")
        guid = int("".join(w.zfill(4) for w in words[-4:]), 16)
        subs.setdefault(guid, set()).add(int(t.group(1)))
    return subs


def port_guid(host_index):
    return fabric_gen.HCA_GUID_BASE + 2 * host_index + 1


def main():
    args = sar_it.parse_args(__doc__, need_sar_route=False, extra=lambda ap: (
        ap.add_argument("--sar-agent", required=True),
        ap.add_argument("--sar-migconsumer", required=True),
        ap.add_argument("--sar-mig-inject", required=True)))
    work = args.workdir
    topo = os.path.join(work, "fabric.topo")
    with open(topo, "w") as f:
        f.write(fabric_gen.ft2(2, 2))

    def body():
        with Testbed(topo, os.path.join(work, "bed"), lmc=1) as tb:
            osm = tb.start_opensm("minhop")
            nodes = MigrationNodes(tb, args.sar_agent, args.sar_migconsumer, work,
                                   agent_args=["--resubscribe-ms", "1000",
                                               "--consumer-deadline-ms", "400"])
            try:
                run(tb, osm, nodes)
            finally:
                codes = nodes.stop()
            check(all(c == 0 for c in codes.values()), f"agents' exit codes on SIGTERM: {codes}")
            for node in nodes.nodes.values():
                for proc, _, name in node.consumers:
                    check(proc.proc.returncode == 0,
                          f"{name} exit code {proc.proc.returncode} on SIGTERM")

    def run(tb, osm, nodes):
        n1 = nodes.start("h00001")
        st = n1.wait_subscribed(15)
        # saquery -I while only h00001 subscribed: its two records fit in one MAD (through
        # umad2sim, records past the first MAD of an RMPP answer come back garbled).
        sa_out = tb.diag(["saquery", "-I"], timeout=20)
        with open(os.path.join(work, "saquery-I.txt"), "w") as f:
            f.write(sa_out)
        subs = subscriber_traps(sa_out)
        check(subs.get(port_guid(1)) == {68, 69},
              f"saquery -I: {n1.host} (0x{port_guid(1):016x}) subscribed to "
              f"{subs.get(port_guid(1))}, expected {{68, 69}}; all: {subs}")
        n2 = nodes.start("h00002")
        for n in (n1, n2):
            st = n.wait_subscribed(15)
            check(int(st["sm_guid"], 16) == SM_GUID,
                  f"{n.host}: SM GUID {st['sm_guid']}, expected 0x{SM_GUID:016x}")
            check(st["sminfo_answers"] >= 1, f"{n.host}: never answered OpenSM's SMInfo: {st}")
        sm_lid = n1.status()["sm_lid"]
        lid1, lid2 = n1.status()["lid"], n2.status()["lid"]
        print(f"subscribed: {n1.host} LID {lid1}, {n2.host} LID {lid2}, SM LID {sm_lid}")

        nodes.add_consumer(n1, {"peers": [sm_lid, lid2], "drain_ms": 20})
        nodes.add_consumer(n1, {"peers": [sm_lid, lid2]})
        nodes.add_consumer(n2, {"peers": [sm_lid, lid1]})
        nodes.add_consumer(n2, {"peers": [sm_lid, lid1], "never_answer": True})
        nodes.wait_registered(10)

        # --- UnPath epoch 7 from the SM's port: what the coordinator sends.
        off = osm.log_offset()
        t0 = time.monotonic_ns()
        inject(tb, args.sar_mig_inject, "h00000",
               ["--kind", "unpath", "--phase", 1, "--epoch", 7, "--deadline-ms", 1000], work)
        s1 = n1.wait_status(lambda s: s["state"] == "high" and s["epoch"] == 7, "high, epoch 7", 5)
        s2 = n2.wait_status(lambda s: s["state"] == "high" and s["epoch"] == 7, "high, epoch 7", 5)
        check((s1["last_consumers"], s1["last_drained"], s1["last_late"]) == (2, 2, False),
              f"{n1.host}: ack after 2/2 consumers, not late: {s1}")
        check((s2["last_consumers"], s2["last_drained"], s2["last_late"]) == (2, 1, True),
              f"{n2.host}: ack after the deadline with 1/2 drained, LATE: {s2}")
        for lid in (lid1, lid2):
            osm.wait_log(VENDOR_RX.format(lid=lid), off, 5)
        high_at = {}
        for n, peers in ((n1, [sm_lid, lid2]), (n2, [sm_lid, lid1])):
            for e in n.switches():
                if e["event"] == "move_high":
                    check(e["epoch"] == 7 and e["lids"] == [p + 1 for p in peers],
                          f"{e['consumer']}: move_high {e}, expected highLIDs of {peers}")
                    high_at[e["consumer"]] = e["mono_ns"]
        check(len(high_at) == 4, f"consumers that moved to high: {sorted(high_at)}")
        lat = sorted((t - t0) / 1e6 for t in high_at.values())
        print(f"UnPath -> consumer on highLIDs: {lat[0]:.1f}..{lat[-1]:.1f} ms "
              f"(from starting sar-mig-inject)")
        acks_before = (s1["acks_sent"], s2["acks_sent"])
        time.sleep(0.5)
        check(n1.status()["acks_sent"] > acks_before[0],
              f"{n1.host}: the phase-2 ack is not being resent until RePath")

        # --- Forged UnPath (another node's trap 68) and a broken magic: nothing changes.
        ign = (s1["ignored"], s2["ignored"])
        inject(tb, args.sar_mig_inject, "h00003",
               ["--kind", "unpath", "--phase", 1, "--epoch", 8, "--deadline-ms", 1000], work)
        inject(tb, args.sar_mig_inject, "h00000",
               ["--kind", "unpath", "--phase", 1, "--epoch", 9, "--bad-magic"], work)
        for n, before in ((n1, ign[0]), (n2, ign[1])):
            st = n.wait_status(lambda s, b=before: s["ignored"] >= b + 2, "2 notices ignored", 5)
            check(st["epoch"] == 7 and st["state"] == "high", f"{n.host}: forged notice acted "
                  f"on: {st}")
            check(all(e["epoch"] in (0, 7) for e in n.switches()),
                  f"{n.host}: a consumer saw epoch 8 or 9")

        # --- RePath epoch 7: back to baseLIDs, ack phase 4.
        t_repath = time.monotonic_ns()
        inject(tb, args.sar_mig_inject, "h00000", ["--kind", "repath", "--phase", 4,
                                                   "--epoch", 7], work)
        for n, peers in ((n1, [sm_lid, lid2]), (n2, [sm_lid, lid1])):
            n.wait_status(lambda s: s["state"] == "back" and s["epoch"] == 7, "back", 5)
            check("ack sent: epoch 7 phase 4" in n.agent_log_text(), f"{n.host}: no phase-4 ack")
            evs = n.switches()
            backs = [e for e in evs if e["event"] == "move_back"]
            check(len(backs) == 2 and all(e["lids"] == peers for e in backs),
                  f"{n.host}: move_back events {backs}")
            bad = base_use_during(evs, max(high_at.values()), t_repath, peers)
            check(not bad, f"{n.host}: baseLIDs in use between UnPath and RePath: {bad}")

        # --- OpenSM restart: the SA forgets the subscriptions; the agents renew them.
        subs_before = {n.host: n.status()["subscriptions"] for n in (n1, n2)}
        osm.stop()
        t_restart = time.monotonic()
        osm2 = tb.start_opensm("minhop", name="restarted")  # SUBNET UP: SMInfo was answered
        for n in (n1, n2):
            n.wait_status(lambda s, h=n.host: s["subscriptions"] >= subs_before[h] + 4,
                          "renewed subscriptions", 10)
        # Reports reach both agents again: the renewed records are in the new SA.
        inject(tb, args.sar_mig_inject, "h00000",
               ["--kind", "unpath", "--phase", 1, "--epoch", 10, "--deadline-ms", 1000], work)
        for n in (n1, n2):
            n.wait_status(lambda s: s["state"] == "high" and s["epoch"] == 10,
                          "UnPath epoch 10 after the OpenSM restart", 5)
        print(f"OpenSM restarted: both agents subscribed again and got UnPath epoch 10 "
              f"{time.monotonic() - t_restart:.1f} s after the stop")
        inject(tb, args.sar_mig_inject, "h00000", ["--kind", "repath", "--phase", 4,
                                                   "--epoch", 10], work)
        for n in (n1, n2):
            n.wait_status(lambda s: s["state"] == "back" and s["epoch"] == 10, "back", 5)
        osm2.stop()

    sar_it.main(body)


if __name__ == "__main__":
    main()
