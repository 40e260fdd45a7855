"""Edits of ibnetdiscover-form topology text shared by the link-rate test and benchmark: one
cable trained below the others' rate, as a real fabric has them."""

import re


def slow_first_uplink(text, fast="4xEDR", slow="4xDDR"):
    """`text` with the first switch-to-switch cable of the first switch block (a leaf's uplink)
    at rate `slow` on both of its lines; returns (new text, (leaf, its port, spine, its port))
    with the node names and port numbers as strings. Raises
    ValueError unless exactly that cable's two lines changed."""
    m = re.search(r'^Switch\t\d+ "(S-[0-9a-f]+)".*?\n((?:\[.*\n)+)', text, re.M)
    if not m:
        raise ValueError("no switch block")
    leaf = m.group(1)
    up = next(line for line in m.group(2).splitlines() if '"S-' in line)
    port, spine, sport = re.match(r'\[(\d+)\]\t"(S-[0-9a-f]+)"\[(\d+)\]', up).groups()
    out = text.replace(up, up.replace(fast, slow))
    back = re.search(rf'^\[{sport}\]\t"{leaf}"\[{port}\].*$', out[out.index(f'"{spine}"'):],
                     re.M).group(0)
    out = out.replace(back, back.replace(fast, slow))
    if out.count(slow) != text.count(slow) + 2:
        raise ValueError(f"could not set exactly one cable to {slow}")
    return out, (leaf, port, spine, sport)
