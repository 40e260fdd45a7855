#!/usr/bin/env python3
"""Migration mode of libosmsar.so inside stock OpenSM (LMC 1), on ibsim.

Without subscribers (no node agent running):
- OpenSM registers the plugin with `migration on`; the status file reads epoch 0, idle;
- the first pass installs base tables and Up*/Down* highLID tables: the highLID entries read back
  from the switches (dump_fts) equal `sar-route route --engine updn` on the highLIDs alone
  (computed offline from the read-back topology with every HCA's LID replaced by base + 1);
- three reroutes (new job mapping + SIGUSR2) each run one epoch that proceeds at once (no
  subscriber): the status file names the epoch and outcome "released", the base entries change
  (the premise) and reach the offline `sar-route route --migration` tables, and no highLID entry
  of any switch ever changes;
- 100 SIGUSR2 in a burst start at most two epochs (one running, one merged), OpenSM survives;
- with `migration on` but LMC 0 the plugin refuses to register, naming `lmc 1`.
"""

import json
import os
import signal
import time

import sar_it
from sar_it import check
from test_osmsar_plugin import Fabric, mapping_text, write_atomic


def read_status(path):
    with open(path) as f:
        return json.loads(f.read())


def wait_status(fab, path, cond, what, timeout=20.0):
    t0 = time.monotonic()
    last = None
    while time.monotonic() - t0 < timeout:
        try:
            last = read_status(path)
        except (OSError, ValueError):
            last = None
        if last is not None and cond(last):
            return last
        time.sleep(0.02)
    raise sar_it.CheckFailed(f"{what}: status never got there; last: {last}")


def lid_kinds(lids_path):
    """(base LIDs, highLIDs) of the HCA ports (LMC 1 ranges) in a guid2lid file."""
    base, high = set(), set()
    for lo, hi in sar_it.parse_guid2lid(lids_path).values():
        if hi == lo + 1:
            base.add(lo)
            high.add(hi)
    return base, high


def entries(tables, lids):
    return {(g, l): p for g, t in tables.items() for l, p in t.items() if l in lids}


def high_only_lids(lids_path, out_path):
    """A guid2lid file with every HCA port on its highLID alone (LMC 0)."""
    with open(lids_path) as f, open(out_path, "w") as out:
        for line in f:
            w = line.split()
            if len(w) >= 3 and w[0].startswith("0x") and int(w[2], 0) == int(w[1], 0) + 1:
                out.write(f"{w[0]} {int(w[2], 0)} {int(w[2], 0)}\n")
            else:
                out.write(line)


def offline_migration(args, fab, tag):
    """`sar-route route --migration` on the read-back topology with the current mapping."""
    out = os.path.join(fab.w, f"offline-mig-{tag}.lfts")
    sar_it.run([args.sar_route, "route", "--engine", "sar", "--topology", fab.live_topo,
                "--canonical-order", "--lids", fab.lids, "--vls", 8, "--jobs", fab.mapping,
                "--migration", "-o", out], expect=0)
    return fab.restrict(sar_it.parse_lfts(out))


def migration_conf(fab, extra=""):
    with open(fab.conf, "a") as f:
        f.write(f"migration on\nstatus_file {fab.status}\nack_timeout_ms 1500\n"
                f"repath_timeout_ms 1000\nexclude_after 2\n{extra}")


def test_no_subscribers(args):
    fab = Fabric(args, "mig", ["ft2:4,4"], lmc=1)
    fab.status = os.path.join(fab.w, "migration.json")
    migration_conf(fab)
    write_atomic(fab.mapping, mapping_text(fab.topo, 1, jobs=2, per_job=4))
    fab.start(None)
    log = fab.daemon.log_since(0)
    check("osmsar: migration on: base LIDs by sar on SLs 0..6, highLIDs by updn on SL 7" in log,
          "no migration line in the log")
    st = wait_status(fab, fab.status, lambda s: True, "status file")
    check(st["epoch"] == 0 and st["phase"] == 5 and st["phase_name"] == "idle",
          f"status before any reroute: {st}")
    base, high = lid_kinds(fab.lids)
    check(len(base) == len(high) > 0, "no LMC 1 HCA ports in guid2lid")
    first, _ = fab.readback()
    high0 = entries(first, high)
    check(len(high0) == len(high) * len(first), "highLID entries missing in the read-back tables")

    # The highLID tables are Up*/Down* on the highLIDs alone, computed offline.
    hi_lids = os.path.join(fab.w, "high.guid2lid")
    high_only_lids(fab.lids, hi_lids)
    out = os.path.join(fab.w, "offline-updn-high.lfts")
    sar_it.run([args.sar_route, "route", "--engine", "updn", "--topology", fab.live_topo,
                "--canonical-order", "--lids", hi_lids, "-o", out], expect=0)
    updn = entries(sar_it.parse_lfts(out), high)
    diff = [k for k in high0 if updn.get(k) != high0[k]]
    check(not diff, f"highLID entries differ from offline updn in {len(diff)}: {diff[:5]}")

    # Settle OpenSM (until its first heavy resweep it resends every block).
    off = fab.daemon.log_offset()
    fab.daemon.signal(signal.SIGHUP)
    fab.wait_pass(off)
    time.sleep(0.3)

    base_changed = 0
    prev = entries(first, base)
    for k in range(1, 4):
        write_atomic(fab.mapping, mapping_text(fab.topo, k + 1, jobs=2, per_job=4))
        off = fab.daemon.log_offset()
        t0 = time.monotonic()
        fab.daemon.signal(signal.SIGUSR2)
        st = wait_status(fab, fab.status,
                         lambda s, k=k: s["last_epoch"] == k and s["phase"] == 5,
                         f"epoch {k}")
        dt = time.monotonic() - t0
        check(st["last_outcome"] in ("released", "no-change"), f"epoch {k}: {st}")
        log = fab.daemon.log_since(off)
        check(f"epoch {k} phase 3 (push): no subscriber to wait for" in log or
              st["last_outcome"] == "no-change", f"epoch {k}: no 'no subscriber' line")
        tables, _ = fab.readback()
        diff = sar_it.diff_tables(tables, offline_migration(args, fab, k))
        check(not diff, f"epoch {k}: switches differ from sar-route route --migration in "
                        f"{len(diff)} entries: {diff[:5]}")
        now_base, now_high = entries(tables, base), entries(tables, high)
        changed = [key for key in now_high if now_high[key] != high0.get(key)]
        check(not changed, f"epoch {k}: highLID entries changed: {changed[:5]}")
        base_changed += sum(1 for key in now_base if now_base[key] != prev.get(key))
        prev = now_base
        print(f"epoch {k}: {st['last_outcome']} in {dt * 1000:.0f} ms (SIGUSR2 -> status), "
              f"timings {st['last_ms']}")
    check(base_changed > 0, "no reroute changed a base entry: the test proves nothing")

    # A burst of requests: one epoch running, the rest merged into one next epoch.
    before = read_status(fab.status)["epochs_started"]
    for _ in range(100):
        fab.daemon.signal(signal.SIGUSR2)
    time.sleep(2.0)
    st = wait_status(fab, fab.status, lambda s: s["phase"] == 5 and not s["pending"], "burst")
    started = st["epochs_started"] - before
    check(1 <= started <= 2, f"100 SIGUSR2 started {started} epochs")
    check(fab.daemon.alive(), "OpenSM died")
    tables, _ = fab.readback()
    changed = [key for key, p in entries(tables, high).items() if p != high0.get(key)]
    check(not changed, f"after the burst: highLID entries changed: {changed[:5]}")
    fab.tb.stop()


def test_refuses_lmc0(args):
    fab = Fabric(args, "mig-lmc0", ["ft2:4,4"], lmc=0)
    fab.status = os.path.join(fab.w, "migration.json")
    migration_conf(fab)
    fab.tb.start()
    daemon = fab.tb.start_opensm(
        "sar", extra_conf=["event_plugin_name osmsar", f"event_plugin_options {fab.conf}"],
        env_extra={"LD_LIBRARY_PATH": args.plugin_dir})
    daemon.wait_log(r"migration on needs 'lmc 1' in opensm.conf", 0, 20)
    check("routing engine 'sar' registered" not in daemon.log_since(0), "registered with LMC 0")
    fab.tb.stop()


def main():
    args = sar_it.parse_args(
        __doc__, extra=lambda ap: (ap.add_argument("--plugin-dir", required=True),
                                   ap.add_argument("--sar-agent")))
    args.plugin_dir = os.path.abspath(args.plugin_dir)
    sar_it.main(lambda: (test_refuses_lmc0(args), test_no_subscribers(args)))


if __name__ == "__main__":
    main()
