#!/usr/bin/env python3
"""The derived production-like dump through real OpenSM on ibsim (issue 20 item 6).

tests/data/derived-edr.ibnetdiscover (see tests/data/PROVENANCE.md) has HCA port GUID = node
GUID, parallel cables, LIDs in no order with holes, and one cable at 4xDDR among 4xEDR.
- `compare --opensm minhop,dfsssp` gives every OpenSM row, ok and valid: OpenSM kept the dump's
  LIDs (else the read-back tables would not deliver the dump's LIDs), and our rows are valid too;
- ibsim trained the one cable down: the topology read back has 4xDDR on its two ends only, and
  `eval` of OpenSM's tables on that read-back topology (its own LIDs and rates) is valid, with
  the two slow channels and the same per-capacity maximum as compare's row.
"""
import json
import os

import sar_it
from sar_it import check


def main():
    args = sar_it.parse_args(__doc__)
    w, sr = args.workdir, args.sar_route
    topo = os.path.join(sar_it.REPO, "tests", "data", "derived-edr.ibnetdiscover")
    jobs = os.path.join(w, "jobs.map")
    with open(jobs, "w") as f:  # two jobs across the leaves (hosts cn001..cn012, 4 per leaf)
        f.write("".join(f"cn{i:03d} a\n" for i in (1, 2, 5, 6, 9, 10)))
        f.write("".join(f"cn{i:03d} b\n" for i in (3, 7, 11, 12)))
    cmp_dir = os.path.join(w, "compare")
    res = sar_it.run([sr, "compare", "-t", topo, "--jobs", jobs, "--engines", "minhop,sar",
                      "--opensm", "minhop,dfsssp", "--workdir", cmp_dir, "--testbed-script",
                      os.path.join(sar_it.REPO, "scripts", "sar_testbed.py"), "--json"],
                     expect=0, timeout=300)
    out = json.loads(res.stdout)
    rows = {e["engine"]: e for e in out["engines"]}
    for name in ("minhop", "sar", "opensm:minhop", "opensm:dfsssp"):
        check(rows.get(name, {}).get("ok") and rows[name].get("valid"),
              f"{name} row missing, failed or invalid: {rows.get(name)}")
    check(out["nominal_rate"] == "4xEDR", f"nominal rate {out['nominal_rate']}")

    live = os.path.join(cmp_dir, "opensm-dfsssp", "live.topo")
    ddr = [l for l in open(live).read().splitlines() if l.startswith("[") and l.endswith("4xDDR")]
    check(len(ddr) == 2, f"read back {len(ddr)} 4xDDR port lines, not 2: {ddr}")
    ev = json.loads(sar_it.run([sr, "eval", "-t", live, "--lfts",
                                os.path.join(cmp_dir, "opensm-dfsssp", "switches.lfts"),
                                "--jobs", jobs, "--json"], expect=0).stdout)
    check(ev["valid"] and ev["slow_channels"] == 2, f"eval on the read-back topology: {ev}")
    check(abs(ev["effective_efi_per_capacity"]["max"] -
              rows["opensm:dfsssp"]["effective_efi_per_capacity_max"]) < 1e-9,
          f"eval {ev['effective_efi_per_capacity']} vs compare {rows['opensm:dfsssp']}")
    print("derived dump: OpenSM rows present and valid, the 4xDDR cable survives ibsim")


if __name__ == "__main__":
    sar_it.main(main)
