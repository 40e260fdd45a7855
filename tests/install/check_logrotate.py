#!/usr/bin/env python3
"""config/logrotate/sar-filterd fits what it rotates: the log path lies in the unit's
LogsDirectory (/var/log/<dir>), `su` names the unit's User=, the postrotate reloads the unit and
the unit's ExecReload sends SIGHUP (on which the daemon reopens its log: filterd's
DaemonLoop.SighupReopensAMovedLogFile), and the sample config says where log_file should go.
logrotate itself is not installed for the test (its package enables a timer). Exit 0 if all hold."""
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def unit_value(unit, key):
    m = re.search(rf"^{key}=(.*)$", unit, re.M)
    return m.group(1).strip() if m else None


def main():
    rot = open(os.path.join(ROOT, "config", "logrotate", "sar-filterd")).read()
    unit = open(os.path.join(ROOT, "systemd", "sar-filterd.service.in")).read()
    sample = open(os.path.join(ROOT, "config", "sar-filterd.yaml")).read()
    paths = re.findall(r"^(/\S+)\s*\{", rot, re.M)
    check(len(paths) == 1, f"one log path ({paths})")
    logs_dir = unit_value(unit, "LogsDirectory")
    check(logs_dir is not None, f"the unit has LogsDirectory= ({logs_dir})")
    if paths and logs_dir:
        check(os.path.dirname(paths[0]) == "/var/log/" + logs_dir,
              f"{paths[0]} is in the unit's LogsDirectory /var/log/{logs_dir}")
        check(paths[0] in sample, f"config/sar-filterd.yaml names {paths[0]} for log_file")
    user = unit_value(unit, "User")
    check(re.search(rf"^\s*su {re.escape(user or '?')} ", rot, re.M) is not None,
          f"rotates as the unit's user {user}")
    check(re.search(r"systemctl reload sar-filterd\.service", rot) is not None,
          "postrotate reloads the unit")
    reload = unit_value(unit, "ExecReload") or ""
    check("-HUP" in reload and "$MAINPID" in reload, f"the unit's reload sends SIGHUP ({reload})")
    print("FAILED: " + "; ".join(failures) if failures else "all ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
