#!/usr/bin/env python3
"""config/bash-completion/sar completes what the programs accept: for sar-route every subcommand
(as its --help lists them), and in each subcommand every long option of that subcommand's
--help and nothing else; for sar-filterd every long option. The expected words are parsed here
from the programs' --help, independently of the completion script's own sed. Runs the real
completion functions in bash. Usage: check_completion.py SAR_ROUTE SAR_FILTERD. Exit 0 if all hold."""
import os
import re
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCRIPT = os.path.join(ROOT, "config", "bash-completion", "sar")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def complete(func, words):
    """COMPREPLY of `func` with COMP_WORDS = words (the last one being completed)."""
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    prog = f"""source '{SCRIPT}'
COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; COMP_LINE="${{COMP_WORDS[*]}}"
{func}
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    r = subprocess.run(["bash", "--norc", "-c", prog], capture_output=True, text=True, timeout=60)
    return set(w for w in r.stdout.split("\n") if w)


def long_options(argv):
    out = subprocess.run(argv + ["--help"], capture_output=True, text=True, timeout=30).stdout
    return set(re.findall(r"^\s+(?:-\w,)?(--[\w-]+)", out, re.M))


def main():
    sar_route, sar_filterd = sys.argv[1], sys.argv[2]
    top = subprocess.run([sar_route, "--help"], capture_output=True, text=True).stdout
    subs = set(re.findall(r"^  ([a-z][\w-]*)\s", top.split("Subcommands:", 1)[1], re.M))
    check(len(subs) >= 10, f"sar-route lists {len(subs)} subcommands")
    got = complete("_sar_route", [sar_route, ""])
    check(got == subs, f"sar-route <TAB>: the subcommands (missing {sorted(subs - got)}, "
                       f"extra {sorted(got - subs)})")
    for sub in sorted(subs):
        want = long_options([sar_route, sub])
        got = {w for w in complete("_sar_route", [sar_route, sub, "--"])}
        check(want and got == want, f"sar-route {sub} --<TAB>: its {len(want)} long options "
                                    f"(missing {sorted(want - got)}, extra {sorted(got - want)})")
    got = complete("_sar_route", [sar_route, "eval", "-t", "x", "--sch"])
    check(got == {"--schedules", "--schedules-of"}, f"sar-route eval ... --sch<TAB>: {sorted(got)}")
    want = long_options([sar_filterd])
    got = complete("_sar_filterd", [sar_filterd, "--"])
    check(want and got == want, f"sar-filterd --<TAB>: {len(want)} long options "
                                f"(missing {sorted(want - got)}, extra {sorted(got - want)})")
    got = complete("_sar_notify", ["sar-notify", "job-"])
    check(got == {"job-start", "job-end"}, f"sar-notify job-<TAB>: {sorted(got)}")
    print("FAILED: " + "; ".join(failures) if failures else "all ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
