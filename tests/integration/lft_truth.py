#!/usr/bin/env python3
"""An independent truth for switch tables: pure Python, standard library only, no libsar.

The service tests compare the switches' tables with offline `sar-route route`; both come from
libsar, so an engine bug that its own validation misses passes them. This module checks tables
against the topology alone:

  - delivery: from every source HCA port, to every destination HCA port's base LID (with
    `all_lids`, every LID of its LMC range), the route is followed hop by hop through the LFTs
    with a visited set of switches; it must leave the fabric at exactly the port owning the
    LID. A missing entry or an entry naming an uncabled port is a hole, an entry sending the
    packet to port 0, to another HCA or to a switch already visited (a loop) is a failure;
  - min-hop (`min_hop=True`, where the engine promises it, e.g. minhop/dfsssp/sar/updn on an
    intact fat-tree): each delivered route's switch-to-switch links equal the BFS distance
    between the source's and the destination's switches;
  - deadlock freedom in one layer (`acyclic=True`, for engines whose tables are used without
    virtual layers, e.g. dmodc/minhop/updn on fat-trees): the channel dependency graph of all
    routes (channel = a switch's output port towards another switch; an edge from each channel
    of a route to the next) has no cycle (iterative DFS);
  - all LIDs (`switch_lids=True`, as OpenSM's dfsssp and libsar's validation count them): every
    switch's port-0 LID is a destination too (delivered where the owning switch's entry is port
    0), and every switch a source of its own, whose route starts at the switch itself. Aggregation
    Nodes are CAs and so always walked. Each switch source counts as one source port.

The route from a switch towards a LID does not depend on where the packet came from, so each
(entry switch, LID) walk is done once and its verdict counted for every source port behind
that switch; the pair counts are per source HCA port.

Inputs are the test beds' files: the topology in ibnetdiscover form (`sar-route gen`'s
ibsim-style file with switchguid=/caguid= counters, or real ibnetdiscover output with a GUID
line per node and port GUIDs in parentheses), a guid2lid file (`0xGUID 0xLO 0xHI`), and tables
as OpenSM dumps them (dump_fts/ibroute output, opensm-lfts.dump, or the file engine's input:
`Unicast lids ... guid 0x...` headers, then `0xLID PORT ...` rows).

Command line: lft_truth.py --topology T --lids L --lfts F [--min-hop] [--acyclic] [--all-lids]
[--switch-lids]
exits 0 when every check holds, 1 otherwise (the failures on stderr).
"""

import argparse
import re
import sys
from collections import deque

NO_ROUTE = 255
MAX_EXAMPLES = 8


class TruthError(AssertionError):
    """The tables fail a check (or an input cannot be read); the message says which."""


# --- parsers ---------------------------------------------------------------------------------


class Node:
    def __init__(self, kind, name, guid, nports, label):
        self.kind = kind  # "switch" or "hca"
        self.name = name  # the quoted name in the file
        self.label = label  # for messages: the name in the trailing comment if any
        self.guid = guid  # node GUID
        self.nports = nports
        self.links = {}  # port -> (peer Node name, peer port)
        self.port_guids = {}  # port -> port GUID (HCA ports; a switch has its node GUID)


_GUID_LINE = re.compile(r"^(switchguid|caguid)=(0x[0-9a-fA-F]+)")
_NODE_LINE = re.compile(r'^(Switch|Ca|Hca)\s+(\d+)\s+"([^"]+)"(?:.*?#\s*"([^"]*)")?')
_PORT_LINE = re.compile(
    r'^\[(\d+)\](?:\(([0-9a-fA-F]+)\))?\s+"([^"]+)"\[(\d+)\](?:\(([0-9a-fA-F]+)\))?')


def parse_topology(path):
    """name -> Node. Links must be listed on both ends."""
    nodes = {}
    base = {"switch": None, "hca": None}
    node = None
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line:
                node = None
                continue
            if line.startswith("#"):
                continue
            m = _GUID_LINE.match(line)
            if m:
                base["switch" if m.group(1) == "switchguid" else "hca"] = int(m.group(2), 16)
                continue
            m = _NODE_LINE.match(line)
            if m:
                kind = "switch" if m.group(1) == "Switch" else "hca"
                nports = int(m.group(2))
                if base[kind] is None:
                    raise TruthError(f"{path}:{lineno}: {m.group(1)} without a GUID line before")
                guid = base[kind]
                # ibsim's counters: a switch takes one GUID, an HCA its node GUID and one per
                # port (a real ibnetdiscover file gives each node its own GUID line anyway).
                base[kind] = guid + (1 if kind == "switch" else nports + 1)
                label = (m.group(4) or m.group(3)).replace(" HCA-1", "")
                node = Node(kind, m.group(3), guid, nports, label)
                if node.name in nodes:
                    raise TruthError(f"{path}:{lineno}: node {node.name!r} twice")
                nodes[node.name] = node
                continue
            m = _PORT_LINE.match(line)
            if m and node is not None:
                port = int(m.group(1))
                node.links[port] = (m.group(3), int(m.group(4)))
                if node.kind == "hca":
                    node.port_guids[port] = (int(m.group(2), 16) if m.group(2)
                                             else node.guid + port)
    for n in nodes.values():
        for port, (peer, pport) in n.links.items():
            if peer not in nodes or nodes[peer].links.get(pport) != (n.name, port):
                raise TruthError(f"{path}: link {n.name}[{port}] -> {peer}[{pport}] not listed "
                                 f"on both ends")
    return nodes


def parse_guid2lid(path):
    """port GUID -> (lowest LID, highest LID)."""
    out = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) >= 3 and w[0].lower().startswith("0x"):
                out[int(w[0], 16)] = (int(w[1], 16), int(w[2], 16))
    return out


_LFT_HEADER = re.compile(r"Unicast lids .* guid (0x[0-9a-fA-F]+)")
_LFT_ROW = re.compile(r"^(0x[0-9a-fA-F]+)\s+:?\s*(\d+)\b")


def parse_lfts(path):
    """switch GUID -> {LID: output port}; entries routing nowhere (255) left out."""
    tables, cur = {}, None
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            if "Unicast lids" in line:
                m = _LFT_HEADER.search(line)
                if not m:
                    raise TruthError(f"{path}:{lineno}: table header without a GUID")
                cur = tables.setdefault(int(m.group(1), 16), {})
                continue
            m = _LFT_ROW.match(line)
            if m and cur is not None:
                port = int(m.group(2))
                if port != NO_ROUTE:
                    cur[int(m.group(1), 16)] = port
    return tables


# --- the checks ------------------------------------------------------------------------------


class Report:
    """What check_tables found. Counts are (source HCA port, destination LID) pairs."""

    def __init__(self):
        self.pairs = 0
        self.delivered = 0
        self.holes = 0
        self.loops = 0
        self.misdelivered = 0
        self.non_min_hop = 0
        self.cycle = None  # a channel dependency cycle, as readable channels, if found
        self.min_hop_checked = False
        self.acyclic_checked = False
        self.channels = 0
        self.dependencies = 0
        self.examples = []

    def note(self, text):
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append(text)

    def failures(self):
        out = []
        for count, what in ((self.holes, "end at a hole (no entry or an uncabled port)"),
                            (self.loops, "loop (a switch visited twice)"),
                            (self.misdelivered, "leave the fabric at a port not owning the LID"),
                            (self.non_min_hop, "take more switch hops than the shortest path")):
            if count:
                out.append(f"{count} of {self.pairs} pairs {what}")
        if self.cycle:
            out.append("channel dependency cycle in one layer: " + " -> ".join(self.cycle))
        return out

    def ok(self):
        return not self.failures()

    def summary(self):
        s = f"{self.delivered}/{self.pairs} pairs delivered"
        if self.min_hop_checked:
            s += f", {self.non_min_hop} longer than the shortest path"
        if self.acyclic_checked:
            s += (f", {self.channels} channels / {self.dependencies} dependencies "
                  f"{'acyclic' if self.cycle is None else 'CYCLIC'}")
        return s


def switch_distances(nodes, start):
    """BFS over switch-to-switch links: switch name -> links from `start`."""
    dist = {start: 0}
    queue = deque([start])
    while queue:
        u = queue.popleft()
        for peer, _ in nodes[u].links.values():
            if nodes[peer].kind == "switch" and peer not in dist:
                dist[peer] = dist[u] + 1
                queue.append(peer)
    return dist


def find_cycle(deps):
    """A cycle in the graph {node: set(successors)} as a list (first == last), or None.
    Iterative DFS: 1 = on the current path, 2 = finished."""
    colour = {}
    for start in sorted(deps):
        if colour.get(start):
            continue
        colour[start] = 1
        path = [start]
        stack = [iter(sorted(deps.get(start, ())))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                colour[path.pop()] = 2
                stack.pop()
            elif colour.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not colour.get(nxt):
                colour[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(deps.get(nxt, ()))))
    return None


def check_tables(nodes, lids, tables, min_hop=False, acyclic=False, all_lids=False,
                 switch_lids=False):
    """Walks every (source HCA port, destination LID) route (with switch_lids, switches are
    sources and their LIDs destinations too: port 0 stands for the switch); returns a Report."""
    rep = Report()
    rep.min_hop_checked, rep.acyclic_checked = min_hop, acyclic
    # Which port owns each LID, and every HCA port cabled to a switch.
    hca_ports = []  # (hca name, port, switch name it is cabled to)
    dests = []  # (LID, hca name, port)
    for n in sorted(nodes.values(), key=lambda n: n.name):
        if n.kind != "hca":
            continue
        for port in sorted(n.links):
            peer, _ = n.links[port]
            if nodes[peer].kind != "switch":
                continue
            hca_ports.append((n.name, port, peer))
            pg = n.port_guids.get(port)
            if pg not in lids:
                raise TruthError(f"HCA port {n.label}[{port}] (GUID 0x{pg:016x}) has no LID")
            lo, hi = lids[pg]
            for lid in (range(lo, hi + 1) if all_lids else (lo,)):
                dests.append((lid, n.name, port))
    if not hca_ports:
        raise TruthError("the topology has no HCA port cabled to a switch")
    sources_at = {}  # entry switch -> [(hca, port)]
    for h, p, sw in hca_ports:
        sources_at.setdefault(sw, []).append((h, p))
    if switch_lids:
        for n in sorted(nodes.values(), key=lambda n: n.name):
            if n.kind != "switch" or n.guid not in lids:
                continue  # a switch without a LID is neither source nor destination
            sources_at.setdefault(n.name, []).append((n.name, 0))
            lo, hi = lids[n.guid]
            for lid in (range(lo, hi + 1) if all_lids else (lo,)):
                dests.append((lid, n.name, 0))
    dist = {sw: switch_distances(nodes, sw) for sw in sources_at} if min_hop else {}
    deps = {}
    channels = set()
    for sw0, sources in sorted(sources_at.items()):
        for lid, dh, dp in dests:
            senders = [s for s in sources if s != (dh, dp)]
            if not senders:
                continue
            rep.pairs += len(senders)
            verdict, hops, route = walk(nodes, tables, sw0, lid, dh, dp)
            if verdict != "delivered":
                if verdict == "hole":
                    rep.holes += len(senders)
                elif verdict == "loop":
                    rep.loops += len(senders)
                else:
                    rep.misdelivered += len(senders)
                rep.note(f"{nodes[senders[0][0]].label}[{senders[0][1]}] -> LID {lid} "
                         f"({nodes[dh].label}[{dp}]): {verdict}: {route}")
                continue
            rep.delivered += len(senders)
            dst_sw = dh if dp == 0 else nodes[dh].links[dp][0]
            if min_hop and hops != dist[sw0].get(dst_sw):
                rep.non_min_hop += len(senders)
                rep.note(f"{nodes[senders[0][0]].label}[{senders[0][1]}] -> LID {lid}: "
                         f"{hops} switch links, shortest {dist[sw0].get(dst_sw)}: {route}")
            if acyclic:
                chans = route_channels(nodes, tables, sw0, lid, hops)
                channels.update(chans)
                for a, b in zip(chans, chans[1:]):
                    deps.setdefault(a, set()).add(b)
    if acyclic:
        rep.channels = len(channels)
        rep.dependencies = sum(len(v) for v in deps.values())
        cycle = find_cycle(deps)
        if cycle is not None:
            rep.cycle = [f"{nodes[s].label}[{p}]" for s, p in cycle]
    return rep


def walk(nodes, tables, sw, lid, dst_hca, dst_port):
    """Follows `lid` from switch `sw`. Returns (verdict, switch-to-switch links, readable
    route); verdict: delivered, hole, loop, to port 0, or misdelivered."""
    visited = set()
    route = []
    links = 0
    while True:
        node = nodes[sw]
        if sw in visited:
            return "loop", links, " ".join(route + [node.label])
        visited.add(sw)
        port = tables.get(node.guid, {}).get(lid)
        route.append(f"{node.label}[{'no entry' if port is None else port}]")
        if port is None or (port != 0 and port not in node.links):
            return "hole", links, " ".join(route)
        if port == 0:
            if (sw, 0) == (dst_hca, dst_port):
                return "delivered", links, " ".join(route)
            return "to port 0 (the switch itself)", links, " ".join(route)
        peer, pport = node.links[port]
        if nodes[peer].kind == "hca":
            if (peer, pport) == (dst_hca, dst_port):
                return "delivered", links, " ".join(route)
            return "misdelivered", links, " ".join(route + [f"{nodes[peer].label}[{pport}]"])
        links += 1
        sw = peer


def route_channels(nodes, tables, sw, lid, links):
    """The switch-to-switch channels (switch name, output port) of a delivered route."""
    out = []
    for _ in range(links):
        port = tables[nodes[sw].guid][lid]
        out.append((sw, port))
        sw = nodes[sw].links[port][0]
    return out


def check_files(topology, guid2lid, lfts, min_hop=False, acyclic=False, all_lids=False,
                switch_lids=False):
    """check_tables on the test beds' files."""
    return check_tables(parse_topology(topology), parse_guid2lid(guid2lid), parse_lfts(lfts),
                        min_hop=min_hop, acyclic=acyclic, all_lids=all_lids,
                        switch_lids=switch_lids)


def require(topology, guid2lid, lfts, what, min_hop=False, acyclic=False, all_lids=False,
            switch_lids=False):
    """check_files, raising TruthError (an AssertionError) naming `what` and `lfts` on any
    failure; returns the Report (its summary() for the test's output)."""
    rep = check_files(topology, guid2lid, lfts, min_hop=min_hop, acyclic=acyclic,
                      all_lids=all_lids, switch_lids=switch_lids)
    if rep.pairs == 0:
        raise TruthError(f"{what}: no (source, destination) pair to walk in {lfts}")
    if not rep.ok():
        raise TruthError(f"{what} ({lfts}): " + "; ".join(rep.failures()) +
                         "\n  e.g. " + "\n  e.g. ".join(rep.examples))
    return rep


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topology", required=True)
    ap.add_argument("--lids", required=True, help="guid2lid file")
    ap.add_argument("--lfts", required=True)
    ap.add_argument("--min-hop", action="store_true")
    ap.add_argument("--acyclic", action="store_true")
    ap.add_argument("--all-lids", action="store_true", help="every LID of an LMC range")
    ap.add_argument("--switch-lids", action="store_true",
                    help="switches as sources and their port-0 LIDs as destinations too")
    a = ap.parse_args(argv)
    try:
        rep = require(a.topology, a.lids, a.lfts, "tables", min_hop=a.min_hop,
                      acyclic=a.acyclic, all_lids=a.all_lids, switch_lids=a.switch_lids)
    except (TruthError, OSError) as e:
        print(f"FAILED: {e}", file=sys.stderr)
        return 1
    print(rep.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
