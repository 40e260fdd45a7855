#!/usr/bin/env python3
"""Migration mode of libosmsar.so inside stock OpenSM (LMC 1), on ibsim.

With node agents (sar-agent --test-ibsim-issm, one per host, each with a reference consumer
sar-migconsumer that takes --drain-ms to "drain"), when --sar-agent is given:
- hold and order: during phase 2 the base-LID entries read back from the switches are the old
  ones, however often they are read, and after a routing pass OpenSM makes during the hold
  (SIGHUP in phase 2: only the release may install the plan); after the epoch the switches hold
  the offline
  `sar-route route --migration` tables of the new mapping; highLID entries never change over
  three reroutes; every consumer moved to highLIDs before the release and back after the push
  (their logs against OpenSM's); the same check fails against a plugin built without the hold
  (OSMSAR_TEST_NO_HOLD, --nohold-plugin-dir);
- abort: an agent killed after subscribing never acks: the epoch aborts at the ack deadline,
  RePath carries "stay", the switches keep the old tables; a restarted agent re-subscribes and
  the next epoch releases;
- `ack_scope changed`: the plan asks only the subscribers on changed routes, the epoch releases;
- OpenSM restarted while an epoch waits for acks: the new one routes afresh (= offline), its
  epochs start above the old ones, the agents re-subscribe and its first epoch releases with
  all four;
- a link fails (ibsim Unlink) while an epoch waits for acks: OpenSM routes around it at once
  (not held), the epoch aborts and re-plans, nothing stays pending, and the switches hold
  `sar-route route --migration`'s tables of the degraded fabric.

Without subscribers (no node agent running):
- OpenSM registers the plugin with `migration on`; the status file reads epoch 0, idle;
- the first pass installs base tables and Up*/Down* highLID tables: the highLID entries read back
  from the switches (dump_fts) equal `sar-route route --engine updn` on the highLIDs alone
  (computed offline from the read-back topology with every HCA's LID replaced by base + 1);
- three reroutes (new job mapping + SIGUSR2) each run one epoch that proceeds at once (no
  subscriber): the status file names the epoch and outcome "released", the base entries change
  (the premise) and reach the offline `sar-route route --migration` tables, and no highLID entry
  of any switch ever changes;
- SA PathRecords (saquery): base -> base carries the route's layer of the offline tables,
  high -> high SL 7 (the last lane);
- 100 SIGUSR2 in a burst start at most two epochs (one running, one merged), OpenSM survives;
- with `migration on` but LMC 0 the plugin refuses to register, naming `lmc 1`.
"""

import json
import os
import re
import signal
import time

import sar_it
from sar_it import check
from migration_nodes import MigrationNodes
from test_osmsar_plugin import Fabric, mapping_text, parse_layers, write_atomic


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


def offline_migration(args, fab, tag, layers=False):
    """`sar-route route --migration` on the read-back topology with the current mapping (and
    the layers file's path, with `layers`)."""
    out = os.path.join(fab.w, f"offline-mig-{tag}.lfts")
    sl = os.path.join(fab.w, f"offline-mig-{tag}.layers")
    sar_it.run([args.sar_route, "route", "--engine", "sar", "--topology", fab.live_topo,
                "--canonical-order", "--lids", fab.lids, "--vls", 8, "--jobs", fab.mapping,
                "--migration", "-o", out, "--sl-out", sl], expect=0)
    tables = fab.restrict(sar_it.parse_lfts(out))
    return (tables, sl) if layers else tables


def migration_conf(fab, ack_ms=1500, repath_ms=1000):
    with open(fab.conf, "a") as f:
        f.write(f"migration on\nstatus_file {fab.status}\nack_timeout_ms {ack_ms}\n"
                f"repath_timeout_ms {repath_ms}\nexclude_after 2\n")


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
    check(st["last_epoch"] == 0 and st["phase"] == 5 and st["phase_name"] == "idle" and
          st["epochs_started"] == 0, f"status before any reroute: {st}")
    # Epochs count from wall-clock seconds (above those of an earlier OpenSM run).
    e0 = st["epoch"]
    check(e0 > 0, f"epoch before the first: {e0}")
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
                         lambda s, k=k: s["last_epoch"] == e0 + k and s["phase"] == 5,
                         f"epoch {k}")
        dt = time.monotonic() - t0
        check(st["last_outcome"] in ("released", "no-change"), f"epoch {k}: {st}")
        log = fab.daemon.log_since(off)
        check(f"epoch {e0 + k} phase 3 (push): no subscriber to wait for" in log or
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

    # path_sl: base -> base gets the engine's layer (0..6), high -> high the last lane (7).
    _, sl_path = offline_migration(args, fab, "sl", layers=True)
    layers = parse_layers(sl_path)
    pairs = sorted(k for k in layers if k[0] in base and k[1] in base and layers[k] != 0)
    check(pairs, "no base route off layer 0: the SL check proves nothing")
    for slid, dlid in pairs[:: max(1, len(pairs) // 3)][:3]:
        for s_, d_, want in ((slid, dlid, layers[(slid, dlid)]), (slid + 1, dlid + 1, 7)):
            pr = fab.tb.diag(["saquery", "-p", "--slid", str(s_), "--dlid", str(d_)])
            m = re.search(r"\bsl\.+0x([0-9a-fA-F]+)", pr)
            check(m and int(m.group(1), 16) == want,
                  f"PathRecord {s_}->{d_}: SL {m and m.group(1)}, want {want}\n{pr}")

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


class Agents:
    """sar-agent (ibsim test mode) with one sar-migconsumer each on some hosts, through the node
    side's test helper (scripts/migration_nodes.py)."""

    def __init__(self, args, fab, drain_ms):
        self.nodes = MigrationNodes(fab.tb, args.sar_agent, args.sar_migconsumer,
                                    os.path.join(fab.w, "agents"),
                                    agent_args=["--resubscribe-ms", "2000"])
        base, _ = lid_kinds(fab.lids)
        self.consumer = {"peers": sorted(base)[:6], "drain_ms": drain_ms}

    @property
    def procs(self):
        return self.nodes.nodes

    def start(self, host):
        self.nodes.start(host, consumers=[self.consumer])

    def wait_ready(self, hosts):
        for h in hosts:
            self.nodes.nodes[h].wait_subscribed(20)
        self.nodes.wait_registered()

    def kill(self, host):
        node = self.nodes.nodes.pop(host)
        for proc, _, _ in node.consumers:
            proc.stop()
        node.agent.stop()

    def consumer_events(self, host):
        return self.nodes.nodes[host].switches()

    def stop(self):
        self.nodes.stop()


def log_real_ns(line):
    """CLOCK_REALTIME of an OpenSM log line ("Nov 22 17:57:25 112153 [...]"), in ns."""
    m = re.match(r"(\w{3} +\d+ \d\d:\d\d:\d\d) (\d{6})", line)
    t = time.strptime(f"{time.localtime().tm_year} {m.group(1)}", "%Y %b %d %H:%M:%S")
    return int(time.mktime(t)) * 1_000_000_000 + int(m.group(2)) * 1000


def log_line(text, pattern):
    for line in text.splitlines():
        if re.search(pattern, line):
            return line
    raise sar_it.CheckFailed(f"no log line /{pattern}/")


def hold_epoch(args, fab, agents, k, base, high, high0):
    """The k-th reroute with every agent acking: the switches keep the old base entries while the
    epoch is in phase 2, also after a routing pass (SIGHUP) inside it, then hold the offline
    --migration tables. Returns the read-backs made during the hold."""
    epoch = fab.e0 + k
    before, _ = fab.readback()
    write_atomic(fab.mapping, mapping_text(fab.topo, k + 10, jobs=2, per_job=4))
    want = offline_migration(args, fab, f"hold{epoch}")
    check(entries(want, base) != entries(before, base),
          f"epoch {epoch}: the new mapping changes no base entry: the test proves nothing")
    off = fab.daemon.log_offset()
    fab.daemon.signal(signal.SIGUSR2)
    wait_status(fab, fab.status, lambda s: s["epoch"] == epoch and s["phase"] == 2,
                f"epoch {epoch} phase 2", 10)
    # OpenSM routes during the hold (SIGHUP; a trap or a resweep does the same): that pass must
    # keep the installed tables, the plan goes in only on its release. Every read-back below
    # comes after the pass.
    hup = fab.daemon.log_offset()
    fab.daemon.signal(signal.SIGHUP)
    fab.wait_pass(hup)
    st = read_status(fab.status)
    check(st["epoch"] == epoch and st["phase"] == 2,
          f"epoch {epoch}: the SIGHUP pass ended after the hold (drain too short?): {st}")
    held = 0
    while True:
        tables, _ = fab.readback()
        st = read_status(fab.status)
        if not (st["epoch"] == epoch and st["phase"] == 2):
            break  # this read-back may have raced the release: not counted
        moved = [k for k, p in entries(tables, base).items() if p != entries(before, base)[k]]
        check(not moved, f"epoch {epoch}: base entries changed during the hold (acks "
                         f"{st['acked']}/{st['expected']}): {moved[:5]}")
        held += 1
    st = wait_status(fab, fab.status, lambda s: s["last_epoch"] == epoch and s["phase"] == 5,
                     f"epoch {epoch} end", 20)
    check(st["last_outcome"] == "released", f"epoch {epoch}: {st}")
    check(held >= 1, f"epoch {epoch}: no read-back finished inside the hold (drain too short?)")
    tables, _ = fab.readback()
    diff = sar_it.diff_tables(tables, want)
    check(not diff, f"epoch {epoch}: switches differ from sar-route route --migration in "
                    f"{len(diff)} entries: {diff[:5]}")
    changed = [k for k, p in entries(tables, high).items() if p != high0.get(k)]
    check(not changed, f"epoch {epoch}: highLID entries changed: {changed[:5]}")
    # Order: every consumer on highLIDs before the release, back after the push.
    log = fab.daemon.log_since(off)
    release = log_real_ns(log_line(log, rf"migration epoch {epoch} phase 3 .*releasing"))
    pushed = log_real_ns(log_line(log, rf"migration epoch {epoch} phase 3 .*pushed"))
    for h in agents.procs:
        ev = [e for e in agents.consumer_events(h) if e["epoch"] == epoch]
        high_at = [e["real_ns"] for e in ev if e["mode"] == "high"]
        back_at = [e["real_ns"] for e in ev if e["mode"] == "base"]
        check(high_at and high_at[0] <= release,
              f"epoch {epoch}: consumer {h} not on highLIDs before the release: {ev}")
        check(back_at and back_at[-1] >= pushed,
              f"epoch {epoch}: consumer {h} back on base LIDs before the push ended: {ev}")
    print(f"epoch {epoch}: released; {held} read-back(s) inside the hold; timings {st['last_ms']}")
    return held


def start_with_agents(args, name, plugin_dir, hosts, drain_ms, extra_conf=""):
    fab = Fabric(args, name, ["ft2:4,4"], lmc=1)
    fab.status = os.path.join(fab.w, "migration.json")
    # The agents give their consumers 3/4 of the ack deadline: leave the drain room.
    migration_conf(fab, ack_ms=max(1500, drain_ms * 8 // 3), repath_ms=max(1000, drain_ms * 2))
    with open(fab.conf, "a") as f:
        f.write(extra_conf)
    write_atomic(fab.mapping, mapping_text(fab.topo, 1, jobs=2, per_job=4))
    saved, args.plugin_dir = args.plugin_dir, plugin_dir
    try:
        fab.start(None)
    finally:
        args.plugin_dir = saved
    agents = Agents(args, fab, drain_ms)
    for h in hosts:
        agents.start(h)
    agents.wait_ready(hosts)
    fab.e0 = wait_status(fab, fab.status, lambda s: True, "status file")["epoch"]
    off = fab.daemon.log_offset()
    fab.daemon.signal(signal.SIGHUP)  # settle: until its first heavy resweep OpenSM resends all
    fab.wait_pass(off)
    time.sleep(0.3)
    return fab, agents


AGENT_HOSTS = ["h00001", "h00005", "h00009", "h00013"]  # one per leaf; OpenSM is on h00000
DRAIN_MS = 1500  # the consumers' simulated drain: the hold lasts at least this long


def test_hold(args, plugin_dir, name, epochs=3):
    """Returns normally if the hold held in every epoch; raises CheckFailed otherwise."""
    fab, agents = start_with_agents(args, name, plugin_dir, AGENT_HOSTS, DRAIN_MS)
    try:
        base, high = lid_kinds(fab.lids)
        first, _ = fab.readback()
        high0 = entries(first, high)
        for epoch in range(1, epochs + 1):
            hold_epoch(args, fab, agents, epoch, base, high, high0)
    finally:
        agents.stop()
        fab.tb.stop()


def test_abort(args):
    fab, agents = start_with_agents(args, "abort", args.plugin_dir, AGENT_HOSTS[:3], 600)
    try:
        base, _ = lid_kinds(fab.lids)
        before, _ = fab.readback()
        # The agent on AGENT_HOSTS[2] dies after subscribing: its SA subscription stays, so the
        # coordinator waits for it, and it never acks.
        agents.kill(AGENT_HOSTS[2])
        write_atomic(fab.mapping, mapping_text(fab.topo, 20, jobs=2, per_job=4))
        want = offline_migration(args, fab, "abort")
        check(entries(want, base) != entries(before, base), "mapping changes nothing")
        off = fab.daemon.log_offset()
        t0 = time.monotonic()
        fab.daemon.signal(signal.SIGUSR2)
        st = wait_status(fab, fab.status,
                         lambda s: s["last_epoch"] == fab.e0 + 1 and s["phase"] == 5,
                         "aborted epoch", 20)
        dt = time.monotonic() - t0
        check(st["last_outcome"] == "aborted-timeout", f"epoch 1: {st}")
        log = fab.daemon.log_since(off)
        check(re.search(rf"migration epoch {fab.e0 + 1} phase 2 \(drain\): ack deadline passed "
                        r"with acks 2/3, late: 0x", log), "no 'ack deadline passed ... late' line")
        check("RePath notice (trap 69, stay) sent" in log, "no RePath stay notice")
        check(dt >= 1.5, f"aborted after {dt:.2f} s, before the 1.6 s ack deadline")
        tables, _ = fab.readback()
        diff = sar_it.diff_tables(tables, before)
        check(not diff, f"aborted epoch changed {len(diff)} entries: {diff[:5]}")
        for h in AGENT_HOSTS[:2]:
            modes = [e["mode"] for e in agents.consumer_events(h) if e["epoch"] == fab.e0 + 1]
            check(modes and modes[-1] == "base", f"consumer {h} not back on base: {modes}")
        print(f"abort: epoch 1 {st['last_outcome']} after {dt * 1000:.0f} ms, tables kept")
        # The agent comes back; the next epoch releases.
        agents.start(AGENT_HOSTS[2])
        agents.wait_ready(AGENT_HOSTS[:3])
        fab.daemon.signal(signal.SIGUSR2)
        st = wait_status(fab, fab.status,
                         lambda s: s["last_epoch"] == fab.e0 + 2 and s["phase"] == 5,
                         "epoch after the abort", 20)
        check(st["last_outcome"] == "released", f"epoch 2: {st}")
        tables, _ = fab.readback()
        diff = sar_it.diff_tables(tables, want)
        check(not diff, f"epoch 2: switches differ from offline in {len(diff)}: {diff[:5]}")
        print(f"abort: epoch 2 released, timings {st['last_ms']}")

        # A fault in phase 2: routed around at once (no hold), the epoch aborts and re-plans.
        write_atomic(fab.mapping, mapping_text(fab.topo, 30, jobs=2, per_job=4))
        off = fab.daemon.log_offset()
        fab.daemon.signal(signal.SIGUSR2)
        wait_status(fab, fab.status, lambda s: s["epoch"] == fab.e0 + 3 and s["phase"] == 2,
                    "phase 2 before the fault", 10)
        fab.tb.ibsim_command('Unlink "leaf003"[8]')
        st = wait_status(fab, fab.status, lambda s: s["last_epoch"] >= fab.e0 + 4 and
                         s["phase"] == 5 and not s["pending"], "the re-planned epoch", 30)
        log = fab.daemon.log_since(off)
        check(f"epoch {fab.e0 + 3} phase 2 (drain): topology changed: epoch aborted" in log,
              "no 'topology changed: epoch aborted' line")
        check("(topology changed: routed at once, not held)" in log, "the fault was not routed")
        check(st["last_outcome"] in ("no-change", "released"), f"after the fault: {st}")
        fab.tb.diag(["ibnetdiscover"], fab.live_topo)
        tables, _ = fab.readback()
        diff = sar_it.diff_tables(tables, offline_migration(args, fab, "fault"))
        check(not diff, f"after the fault: switches differ from sar-route route --migration on "
                        f"the live topology in {len(diff)} entries: {diff[:5]}")
        print(f"fault in phase 2: epoch {fab.e0 + 3} aborted, epoch {st['last_epoch']} "
              f"{st['last_outcome']}; tables = offline on the degraded fabric")
    finally:
        agents.stop()
        fab.tb.stop()


def test_scope_and_restart(args):
    """ack_scope changed: only ports on changed routes are asked, the epoch releases. Then
    OpenSM is restarted while an epoch waits for acks: the new OpenSM routes afresh, its epochs
    continue above the old ones, the agents re-subscribe and its first epoch releases."""
    fab, agents = start_with_agents(args, "scope", args.plugin_dir, AGENT_HOSTS, 600,
                                    "ack_scope changed\n")
    try:
        base, high = lid_kinds(fab.lids)
        off = fab.daemon.log_offset()
        write_atomic(fab.mapping, mapping_text(fab.topo, 40, jobs=2, per_job=4))
        fab.daemon.signal(signal.SIGUSR2)
        st = wait_status(fab, fab.status,
                         lambda s: s["last_epoch"] == fab.e0 + 1 and s["phase"] == 5,
                         "epoch with ack scope changed", 20)
        check(st["last_outcome"] == "released", f"scope changed: {st}")
        m = re.search(r"planned .*; 4 subscriber\(s\), (\d+) asked to ack \(subscribers on "
                      r"changed routes\)", fab.daemon.log_since(off))
        check(m and 1 <= int(m.group(1)) <= 4, "no 'asked to ack (subscribers on changed routes)'")
        tables, _ = fab.readback()
        diff = sar_it.diff_tables(tables, offline_migration(args, fab, "scope"))
        check(not diff, f"scope changed: switches differ from offline in {len(diff)}")
        print(f"ack scope changed: {m.group(1)} of 4 subscribers asked, released")

        # OpenSM restarted in phase 2.
        old_epoch = fab.e0 + 2
        write_atomic(fab.mapping, mapping_text(fab.topo, 41, jobs=2, per_job=4))
        fab.daemon.signal(signal.SIGUSR2)
        wait_status(fab, fab.status, lambda s: s["epoch"] == old_epoch and s["phase"] == 2,
                    "phase 2 before the restart", 10)
        fab.daemon.stop()
        time.sleep(1.1)  # the new epochs count from wall-clock seconds
        fab.daemon = fab.tb.start_opensm(
            "sar", extra_conf=["event_plugin_name osmsar", f"event_plugin_options {fab.conf}",
                               "qos TRUE", "qos_max_vls 8"],
            env_extra={"LD_LIBRARY_PATH": args.plugin_dir}, name="restarted")
        st = wait_status(fab, fab.status, lambda s: s["epochs_started"] == 0, "restarted status")
        check(st["epoch"] >= old_epoch, f"restarted epochs start at {st['epoch'] + 1}, "
                                        f"not above {old_epoch}")
        tables, _ = fab.readback()
        diff = sar_it.diff_tables(tables, offline_migration(args, fab, "restart"))
        check(not diff, f"restarted OpenSM: switches differ from offline in {len(diff)}")
        # The agents re-subscribe (every 2 s here); then an epoch of the new OpenSM releases
        # with all four acks (a new mapping each try, so every plan changes the tables).
        t0 = time.monotonic()
        for seed in range(42, 80):
            write_atomic(fab.mapping, mapping_text(fab.topo, seed, jobs=2, per_job=4))
            started = read_status(fab.status)["epochs_started"]
            off = fab.daemon.log_offset()
            fab.daemon.signal(signal.SIGUSR2)
            st = wait_status(fab, fab.status, lambda s: s["epochs_started"] > started and
                             s["phase"] == 5 and not s["pending"], "new epoch", 20)
            if re.search(r"4 subscriber\(s\), 4 asked to ack", fab.daemon.log_since(off)):
                break
            check(time.monotonic() - t0 < 15, "agents did not re-subscribe within 15 s")
            time.sleep(0.5)
        check(st["last_outcome"] == "released", f"after the restart: {st}")
        tables, _ = fab.readback()
        diff = sar_it.diff_tables(tables, offline_migration(args, fab, "restart2"))
        check(not diff, f"after the restart: switches differ from offline in {len(diff)}")
        print(f"restart in phase 2: new OpenSM epoch {st['last_epoch']} {st['last_outcome']} "
              f"with 4 subscribers, {time.monotonic() - t0:.1f} s after the first request")
    finally:
        agents.stop()
        fab.tb.stop()


def main():
    args = sar_it.parse_args(
        __doc__, extra=lambda ap: (ap.add_argument("--plugin-dir", required=True),
                                   ap.add_argument("--sar-agent"),
                                   ap.add_argument("--sar-migconsumer"),
                                   ap.add_argument("--nohold-plugin-dir")))
    args.plugin_dir = os.path.abspath(args.plugin_dir)
    for tool in ("sar_agent", "sar_migconsumer"):
        if getattr(args, tool):
            setattr(args, tool, os.path.abspath(getattr(args, tool)))

    def body():
        test_refuses_lmc0(args)
        test_no_subscribers(args)
        if not args.sar_agent:
            print("no --sar-agent: hold and abort tests skipped")
            return
        test_hold(args, args.plugin_dir, "hold")
        if args.nohold_plugin_dir:
            try:
                test_hold(args, os.path.abspath(args.nohold_plugin_dir), "nohold", epochs=1)
            except sar_it.CheckFailed as e:
                check("base entries changed during the hold" in str(e),
                      f"the plugin without the hold failed otherwise: {e}")
                print(f"without the hold the test fails as it must: {str(e)[:160]}")
            else:
                raise sar_it.CheckFailed("the plugin without the hold passed the hold test")
        test_abort(args)
        test_scope_and_restart(args)

    sar_it.main(body)


if __name__ == "__main__":
    main()
