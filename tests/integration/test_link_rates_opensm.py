#!/usr/bin/env python3
"""A cable trained down to 4xDDR among 4xEDR, through ibsim and real OpenSM (issue 20 item 3).

On the issue's production fabric (4 leaves of 24 hosts, 2 spines, 6 cables per leaf-spine pair),
written in ibnetdiscover's live form at 4xEDR with one leaf-spine cable at 4xDDR on both ends,
and a job mix with jobs across leaves:
- `compare --opensm dfsssp` hands ibsim the rates; ibsim trains the links to them, and the
  topology ibnetdiscover reads back from the simulated fabric has exactly that cable at 4xDDR
  (both ends) and every other at 4xEDR: what we hand ibsim keeps the degraded link;
- `eval` of OpenSM's read-back tables on that read-back topology sees the slow cable
  (slow_channels 2) and gives the same per-capacity figures as compare's row;
- our capacity-weighted SAR has a lower max effective EFI per unit of capacity than OpenSM's
  dfsssp on the same job mix, and lower than our capacity-blind SAR (the same engine routing
  the all-4xEDR fabric, judged on the real rates).
"""
import json
import os
import re

import sar_it
from sar_it import check
from fabric_edit import slow_first_uplink


def main():
    args = sar_it.parse_args(__doc__)
    w, sr = args.workdir, args.sar_route
    full = os.path.join(w, "full.topo")
    sar_it.run([sr, "gen", "--fabric", "pgft:2;24,4;1,2;1,6", "--style", "ibnetdiscover", "-o",
                full], expect=0)
    text = open(full).read().replace("4xHDR", "4xEDR")
    with open(full, "w") as f:
        f.write(text)
    # The first switch-to-switch cable of the first leaf, both of its lines.
    try:
        slow, (leaf, port, spine, sport) = slow_first_uplink(text)
    except ValueError as e:
        check(False, str(e))
    topo = os.path.join(w, "slow.topo")
    with open(topo, "w") as f:
        f.write(slow)
    jobs = os.path.join(w, "jobs.map")
    sar_it.run([sr, "jobmix", "--topology", topo, "--seed", "6", "--min-size", "8", "--max-size",
                "48", "-o", jobs], expect=0)

    cmp_dir = os.path.join(w, "compare")
    res = sar_it.run([sr, "compare", "-t", topo, "--jobs", jobs, "--engines", "sar,dfsssp",
                      "--opensm", "dfsssp", "--workdir", cmp_dir, "--testbed-script",
                      os.path.join(sar_it.REPO, "scripts", "sar_testbed.py"), "--json"],
                     expect=0, timeout=300)
    out = json.loads(res.stdout)
    check(out["nominal_rate"] == "4xEDR", f"nominal rate {out['nominal_rate']}")
    rows = {e["engine"]: e for e in out["engines"]}
    for name in ("sar", "dfsssp", "opensm:dfsssp"):
        check(rows.get(name, {}).get("ok") and rows[name].get("valid"), f"{name}: {rows.get(name)}")

    # What ibsim made of it, as ibnetdiscover reads it back.
    live = os.path.join(cmp_dir, "opensm-dfsssp", "live.topo")
    live_text = open(live).read()
    ddr = [l for l in live_text.splitlines() if l.startswith("[") and l.endswith("4xDDR")]
    check(len(ddr) == 2, f"ibsim read back {len(ddr)} 4xDDR port lines, not 2: {ddr}")
    check(any(f'"{spine}"' in l for l in ddr) and any(f'"{leaf}"' in l for l in ddr),
          f"the 4xDDR lines are not the degraded cable {leaf}[{port}]-{spine}[{sport}]: {ddr}")
    rates = re.findall(r"^\[.* (\d+x[A-Z0-9]+)$", live_text, re.M)
    check(set(rates) == {"4xEDR", "4xDDR"}, f"rates read back: {sorted(set(rates))}")
    ev = json.loads(sar_it.run([sr, "eval", "-t", live, "--lfts",
                                os.path.join(cmp_dir, "opensm-dfsssp", "switches.lfts"),
                                "--jobs", jobs, "--json"], expect=0).stdout)
    check(ev["slow_channels"] == 2 and ev["nominal_rate"] == "4xEDR",
          f"eval on the read-back topology: slow_channels {ev['slow_channels']}")
    osm = rows["opensm:dfsssp"]
    check(abs(ev["effective_efi_per_capacity"]["max"] - osm["effective_efi_per_capacity_max"])
          < 1e-9, f"eval {ev['effective_efi_per_capacity']} vs compare {osm}")

    # Capacity-blind SAR: the same engine on the all-4xEDR fabric, judged on the real rates.
    lids = os.path.join(cmp_dir, "guid2lid")
    blind_lfts = os.path.join(w, "blind.lfts")
    sar_it.run([sr, "route", "-t", full, "--lids", lids, "--engine", "sar", "--jobs", jobs,
                "-o", blind_lfts], expect=0)
    blind = json.loads(sar_it.run([sr, "eval", "-t", topo, "--lids", lids, "--lfts", blind_lfts,
                                   "--jobs", jobs, "--json"], expect=0).stdout)
    ours = rows["sar"]["effective_efi_per_capacity_max"]
    theirs = osm["effective_efi_per_capacity_max"]
    blind_max = blind["effective_efi_per_capacity"]["max"]
    print(f"max effective EFI per capacity: sar {ours:.2f}, opensm dfsssp {theirs:.2f}, "
          f"capacity-blind sar {blind_max:.2f}; raw max effective EFI sar "
          f"{rows['sar']['effective_efi_max']}, opensm dfsssp {osm['effective_efi_max']}")
    check(ours < theirs, f"SAR per capacity {ours} not below OpenSM dfsssp's {theirs}")
    check(ours < blind_max, f"SAR per capacity {ours} not below capacity-blind SAR's {blind_max}")


if __name__ == "__main__":
    sar_it.main(main)
