"""Shared helpers of the integration tests: argument handling, running sar-route, and small
parsers and a route walker written independently of libsar, so the tests can check sar-route's
answers against a second computation.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))

import lft_truth  # noqa: E402  (beside this file)
import sar_testbed  # noqa: E402  (path set above)
from testbed_common import ProcessError, exit_on_signals  # noqa: E402

NO_ROUTE = 255  # an LFT entry that routes nowhere


class CheckFailed(AssertionError):
    pass


def check(cond, what):
    if not cond:
        raise CheckFailed(what)


def parse_args(description, need_sar_route=True, extra=None):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--sar-route", required=need_sar_route, help="path of the sar-route binary")
    ap.add_argument("--workdir", required=True, help="scratch directory (wiped first)")
    if extra:
        extra(ap)
    args = ap.parse_args()
    exit_on_signals()
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    return args


def main(body, errors=()):
    """Runs body() and maps failures (checks, the test beds' and their processes' errors, and
    `errors`) to a non-zero exit with a readable message."""
    try:
        body()
    except (CheckFailed, ProcessError, *errors) as e:
        print(f"FAILED: {e}", file=sys.stderr)
        sys.exit(1)
    print("PASSED")


def run(cmd, expect=None, timeout=120):
    """Runs a command; returns CompletedProcess (text). `expect`: required exit code."""
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout)
    if expect is not None and p.returncode != expect:
        raise CheckFailed(f"{' '.join(map(str, cmd))}: exit {p.returncode}, expected {expect}\n"
                          f"stdout: {p.stdout[-3000:]}\nstderr: {p.stderr[-3000:]}")
    return p


def sar_route_gen(sar_route, fabric, out_topo, out_lids, extra=()):
    run([sar_route, "gen", "--fabric", fabric, *extra, "-o", out_topo, "--guid2lid", out_lids],
        expect=0)
    for path in (out_topo, out_lids):
        check(os.path.exists(path) and os.path.getsize(path) > 0,
              f"sar-route gen (exit 0) wrote no {path}")


def sar_route_eval(sar_route, topo, lfts, lids, extra=(), expect=0):
    p = run([sar_route, "eval", "--topology", topo, "--lfts", lfts, "--lids", lids, "--json",
             *extra], expect=expect)
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError as e:
        raise CheckFailed(f"sar-route eval printed no JSON ({e}): {p.stdout[:500]}")


# --- independent parsers -------------------------------------------------------------------


class Node:
    def __init__(self, kind, name, guid, nports):
        self.kind = kind  # "switch" or "hca"
        self.name = name
        self.guid = guid  # node GUID
        self.nports = nports
        self.links = {}  # port -> (peer name, peer port)
        self.port_guids = {}  # port -> port GUID (HCAs); a switch's port 0 uses the node GUID


class Topology:
    def __init__(self):
        self.nodes = {}  # name -> Node

    def switches(self):
        return [n for n in self.nodes.values() if n.kind == "switch"]

    def hcas(self):
        return [n for n in self.nodes.values() if n.kind == "hca"]

    def by_guid(self):
        return {n.guid: n for n in self.nodes.values()}


_NODE = re.compile(r'^(Switch|Hca|Ca)\s+(\d+)\s+"([^"]+)"')
_PORT = re.compile(r'^\[(\d+)\](?:\(([0-9a-fA-F]+)\))?\s+"([^"]+)"\[(\d+)\]')


def parse_topology(path):
    """ibsim/ibnetdiscover topology with ibsim's GUID counters (see the project notes)."""
    topo = Topology()
    counters = {"switch": None, "hca": None}
    node = None
    for line in open(path):
        line = line.strip()
        m = re.match(r"^(switchguid|caguid)=(0x[0-9a-fA-F]+)", line)
        if m:
            counters["switch" if m.group(1) == "switchguid" else "hca"] = int(m.group(2), 16)
            continue
        m = _NODE.match(line)
        if m:
            kind = "switch" if m.group(1) == "Switch" else "hca"
            nports = int(m.group(2))
            guid = counters[kind]
            counters[kind] = guid + (1 if kind == "switch" else nports + 1)
            node = Node(kind, m.group(3), guid, nports)
            topo.nodes[node.name] = node
            continue
        m = _PORT.match(line)
        if m and node is not None:
            port = int(m.group(1))
            node.links[port] = (m.group(3), int(m.group(4)))
            if node.kind == "hca":
                node.port_guids[port] = (int(m.group(2), 16) if m.group(2)
                                         else node.guid + port)
            continue
        if not line:
            node = None
    for n in topo.nodes.values():
        for port, (peer, pport) in n.links.items():
            check(peer in topo.nodes and topo.nodes[peer].links.get(pport) == (n.name, port),
                  f"{path}: link {n.name}[{port}] -> {peer}[{pport}] not listed on both ends")
    return topo


def parse_guid2lid(path):
    """port GUID -> (min LID, max LID)."""
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 3 and f[0].startswith("0x"):
            out[int(f[0], 16)] = (int(f[1], 16), int(f[2], 16))
    return out


def parse_lfts(path):
    """Either dump form (OpenSM's opensm-lfts.dump or dump_fts/ibroute output):
    switch GUID -> {LID: port}; entries routing nowhere (255) are left out."""
    tables = {}
    cur = None
    for line in open(path):
        if "Unicast lids" in line:
            m = re.search(r" guid (0x[0-9a-fA-F]+)", line)
            check(m is not None, f"{path}: header without guid: {line!r}")
            cur = tables.setdefault(int(m.group(1), 16), {})
            continue
        m = re.match(r"^(0x[0-9a-fA-F]+)\s+(\d+)", line)
        if m and cur is not None:
            port = int(m.group(2))
            if port != NO_ROUTE:
                cur[int(m.group(1), 16)] = port
    return tables


def write_opensm_lfts(path, tables):
    """Writes tables in the file-engine format (every switch, trailing newline)."""
    with open(path, "w") as f:
        for guid in sorted(tables):
            t = tables[guid]
            top = max(t) if t else 0
            f.write(f"Unicast lids [0-{top}] of switch Lid 0 guid 0x{guid:016x} ('x'):\n")
            for lid in sorted(t):
                f.write(f"0x{lid:04x} {t[lid]:03d}\n")
            f.write(f"{len(t)} lids dumped\n")


def diff_tables(a, b):
    """Human-readable differences between two parsed LFT sets (empty list if equal)."""
    out = []
    for guid in sorted(set(a) | set(b)):
        ta, tb = a.get(guid, {}), b.get(guid, {})
        for lid in sorted(set(ta) | set(tb)):
            if ta.get(lid) != tb.get(lid):
                out.append(f"switch 0x{guid:016x} lid {lid}: {ta.get(lid)} vs {tb.get(lid)}")
    return out


# --- independent route walk ----------------------------------------------------------------


class Walk:
    """Follows the LFTs from every leaf to every HCA base LID.

    efi[(switch name, out port)]: number of (source HCA, destination HCA) pairs, sources counted
    per leaf, whose route leaves that switch port towards another switch. Also counts pairs that
    do not arrive and switch hops beyond the shortest possible.
    """

    def __init__(self, topo, lids, tables):
        self.efi = {}
        self.unreachable = 0
        self.non_min_hop = 0
        hca_lid = {}
        for h in topo.hcas():
            for port, pg in h.port_guids.items():
                if pg in lids and port in h.links:
                    hca_lid[(h.name, port)] = lids[pg][0]
        leaf_hosts = {}  # leaf switch -> its HCA ports
        for (h, port), _ in hca_lid.items():
            leaf = topo.nodes[h].links[port][0]
            leaf_hosts.setdefault(leaf, []).append((h, port))
        dist = self._switch_distances(topo)
        for src_leaf, srcs in leaf_hosts.items():
            for (dst, dport), dlid in hca_lid.items():
                dst_leaf = topo.nodes[dst].links[dport][0]
                senders = len([s for s in srcs if s != (dst, dport)])
                if senders == 0:
                    continue
                sw, hops, used = src_leaf, 0, []
                while True:
                    port = tables.get(topo.nodes[sw].guid, {}).get(dlid)
                    if port is None or port not in topo.nodes[sw].links or hops > 64:
                        self.unreachable += senders
                        used = None
                        break
                    peer, _ = topo.nodes[sw].links[port]
                    if topo.nodes[peer].kind == "hca":
                        if (peer, topo.nodes[sw].links[port][1]) != (dst, dport):
                            self.unreachable += senders
                            used = None
                        break
                    used.append((sw, port))
                    sw, hops = peer, hops + 1
                if used is None:
                    continue
                if hops > dist[src_leaf][dst_leaf]:
                    self.non_min_hop += senders
                for ch in used:
                    self.efi[ch] = self.efi.get(ch, 0) + senders

    @staticmethod
    def _switch_distances(topo):
        names = [s.name for s in topo.switches()]
        dist = {}
        for s in names:
            d = {s: 0}
            frontier = [s]
            while frontier:
                nxt = []
                for u in frontier:
                    for peer, _ in topo.nodes[u].links.values():
                        if topo.nodes[peer].kind == "switch" and peer not in d:
                            d[peer] = d[u] + 1
                            nxt.append(peer)
                frontier = nxt
            dist[s] = d
        return dist


def new_testbed(workdir, name, topo, lids, lmc=0):
    return sar_testbed.Testbed(topo, os.path.join(workdir, name), lmc=lmc, guid2lid=lids)


def check_tables_valid(topo_path, lids_path, lfts_path, what):
    """The independent checks on tables read back from the switches (lft_truth.py, no libsar):
    every route reaches its destination and the channel dependencies of one layer are
    acyclic."""
    try:
        lft_truth.require(topo_path, lids_path, lfts_path, what, acyclic=True)
    except lft_truth.TruthError as e:
        raise CheckFailed(str(e)) from None