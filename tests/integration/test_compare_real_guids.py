#!/usr/bin/env python3
"""Real dumps whose HCA port GUID equals the node GUID (ConnectX), issue 20 item 1.

ibsim always simulates port GUID = node GUID + port. `sar-route compare --opensm` used to key
the guid2lid it hands OpenSM by the dump's own port GUIDs, so OpenSM gave every HCA a new LID
and each OpenSM row failed ("LID ... outside the fabric's LIDs"). Here, on FT(2;4,4) written
in ibnetdiscover's live form with every HCA port GUID set to its node GUID:
- every OpenSM row of `compare --opensm minhop,updn` is present, ok and valid (its read-back
  tables deliver every route under the dump's LIDs, which only holds if OpenSM kept them);
- `eval --lids` with a guid2lid from the other view (ibsim's GUIDs) fails naming the file, the
  port GUID it lacks and the likely cause, not the misleading "(give --lids)".
"""
import json
import os
import re

import sar_it
from sar_it import check


def main():
    args = sar_it.parse_args(__doc__)
    w, sr = args.workdir, args.sar_route
    topo = os.path.join(w, "real.topo")
    sar_it.run([sr, "gen", "--fabric", "ft2:4,4", "--style", "ibnetdiscover", "-o", topo],
               expect=0)
    text = open(topo).read()
    hcas = [int(g, 16) for g in re.findall(r"^caguid=0x([0-9a-f]+)", text, re.M)]
    check(len(hcas) == 16, f"expected 16 HCAs, found {len(hcas)}")
    for g in hcas:  # port 1's GUID: node GUID + 1 (ibsim's rule) -> node GUID (ConnectX)
        text = text.replace(f"({g + 1:x})", f"({g:x})")
    with open(topo, "w") as f:
        f.write(text)
    jobs = os.path.join(w, "jobs.map")
    with open(jobs, "w") as f:
        f.write("".join(f"h{i:05d} 1\n" for i in range(0, 16, 3)))

    res = sar_it.run([sr, "compare", "-t", topo, "--jobs", jobs, "--engines", "minhop",
                      "--opensm", "minhop,updn", "--workdir", os.path.join(w, "compare"),
                      "--testbed-script", os.path.join(sar_it.REPO, "scripts", "sar_testbed.py"),
                      "--json"], expect=0, timeout=300)
    rows = {e["engine"]: e for e in json.loads(res.stdout)["engines"]}
    for name in ("opensm:minhop", "opensm:updn"):
        check(name in rows, f"compare has no {name} row: {sorted(rows)}")
        check(rows[name].get("ok") and rows[name].get("valid"),
              f"{name} row failed or invalid: {rows[name]}")
    check(rows["opensm:minhop"]["effective_efi_max"] == rows["minhop"]["effective_efi_max"],
          "OpenSM minhop and ours differ in max effective EFI on an intact FT(2;4,4)")

    # The same fabric as ibsim sees it: its guid2lid is keyed by node GUID + 1.
    sim_lids = os.path.join(w, "compare", "guid2lid")
    bad = sar_it.run([sr, "eval", "-t", topo, "--lids", sim_lids, "--lfts",
                      os.path.join(w, "compare", "opensm-minhop", "switches.lfts")])
    check(bad.returncode == 3, f"eval with ibsim's guid2lid: exit {bad.returncode}: {bad.stderr}")
    check(sim_lids in bad.stderr and "port GUID" in bad.stderr and "give --lids" not in
          bad.stderr, f"eval's message does not say which GUID is missing: {bad.stderr}")
    print("compare on a dump with port GUID = node GUID: OpenSM rows present and valid")


if __name__ == "__main__":
    sar_it.main(main)
