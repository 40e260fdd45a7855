"""The check of a master/standby OpenSM pair with the plugin, shared by
tests/integration/test_sm_failover.py (replay source, FT(2;4,4)) and bench/sm_failover_day.py
(a real SLURM, the day demo's fabric): after each step the tables read back from the switches
must equal `sar-route route` for the mapping on disk, as the pass that put them there ran it,
and pass the independent checks (sar_it.check_tables_valid: lft_truth's walk, no libsar).

Both OpenSMs run the shipped config/osmsar.conf (`delta true`): a pass starts from the tables
the switches hold and the plugin's last job set, so on a running master "what offline routing
gives" is `sar-route route --previous <tables held before> --previous-jobs <their mapping>`.
A new master (the standby that took over) has no tables or job set of its own: its takeover
pass is a full recompute, for the mapping as it is then; a signal that reaches it afterwards
adds a delta pass from those tables. The mapping may change before or after the takeover pass
(the job starts while the standby waits for its missed polls), so the takeover pass may have
routed the job set held before.
"""

import sar_it
from sar_it import check


def wanted_tables(offline, tag, mapping, held, new_master):
    """{how the pass ran: LFT file offline routing gives} for the mapping file `mapping`.
    `offline(tag, mapping, previous=None, previous_jobs=None)` runs `sar-route route` and returns
    its LFT file; `held` = (tables read back before, the mapping they were routed for)."""
    wants = {"delta": offline(f"{tag}.delta", mapping, *held)}
    if new_master:
        full = offline(f"{tag}.full", mapping)
        wants["full"] = full
        wants["full, then delta"] = offline(f"{tag}.full2", mapping, full, mapping)
        before = held[1]
        full_before = offline(f"{tag}.fullbefore", before)
        wants["full for the jobs before, then delta"] = offline(
            f"{tag}.fullbefore2", mapping, full_before, before)
    return wants


def check_switches(offline, topo, lids, got, mapping, held, new_master, what, tag):
    """The switches' tables `got` (LFT file read back) equal one of wanted_tables() and pass the
    independent checks; returns how the pass ran (the first that matches)."""
    wants = wanted_tables(offline, tag, mapping, held, new_master)
    switches = sar_it.parse_lfts(got)
    diffs = {k: sar_it.diff_tables(sar_it.parse_lfts(f), switches) for k, f in wants.items()}
    same = [k for k, d in diffs.items() if not d]
    diff = min(diffs.values(), key=len)
    check(same, f"{what}: switches differ from sar-route route ({', '.join(wants)}) in "
                f"{len(diff)} entries or more, e.g. {diff[:5]}")
    sar_it.check_tables_valid(topo, lids, got, what)
    return same[0]
