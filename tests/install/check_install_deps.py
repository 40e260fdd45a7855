#!/usr/bin/env python3
"""scripts/install-deps.sh starts no service (issue 34: installing opensm, slurmctld, slurmd and
munge started them on the host). Runs the script with stand-ins for dpkg-query (every package
missing) and apt-get (records what /usr/sbin/policy-rc.d answers while it "installs"), the
policy file at a temporary path (POLICY_RC_D). Checks that the policy forbids starting (exit
101) during apt-get install, and that afterwards the file is gone, or the one that was there is
back, also when apt-get fails; and that the units the new packages enabled (a stand-in systemctl
on a file of enabled units) are disabled again, and only those. Exit 0 if all hold."""
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts",
                      "install-deps.sh")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def stub(path, body):
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, 0o755)


def run(tmp, apt_install_rc, old_policy=None):
    bin_dir = os.path.join(tmp, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    log = os.path.join(tmp, "apt.log")
    policy = os.path.join(tmp, "policy-rc.d")
    if os.path.exists(log):
        os.unlink(log)
    if os.path.lexists(policy):
        os.unlink(policy)
    if old_policy is not None:
        with open(policy, "w") as f:
            f.write(old_policy)
        os.chmod(policy, 0o755)
    # systemctl on a file of enabled units: the "installed" package enables opensm.service,
    # ssh.service was enabled before (install-deps must leave it alone).
    units = os.path.join(tmp, "enabled-units")
    disabled = os.path.join(tmp, "disabled")
    with open(units, "w") as f:
        f.write("ssh.service enabled enabled\n")
    if os.path.exists(disabled):
        os.unlink(disabled)
    stub(os.path.join(bin_dir, "systemctl"),
         f'if [ "$1" = list-unit-files ]; then cat "{units}"; exit 0; fi\n'
         f'if [ "$1" = disable ]; then shift; [ "$1" = --quiet ] && shift; '
         f'echo "$1" >> "{disabled}"; grep -v "^$1 " "{units}" > "{units}.new"; '
         f'mv "{units}.new" "{units}"; exit 0; fi\nexit 1')
    stub(os.path.join(bin_dir, "dpkg-query"), "exit 1")  # nothing installed
    stub(os.path.join(bin_dir, "sudo"), 'exec "$@"')
    # apt-get install asks the policy what invoke-rc.d would: may opensm start?
    stub(os.path.join(bin_dir, "apt-get"),
         f'[ "$1" = install ] || exit 0\n'
         f'echo "opensm.service enabled enabled" >> "{units}"\n'
         f'if [ -x "{policy}" ]; then "{policy}" opensm start; echo "policy $?" >> "{log}"; '
         f'else echo "no policy" >> "{log}"; fi\n'
         f'exit {apt_install_rc}')
    env = dict(os.environ, PATH=bin_dir + ":" + os.environ["PATH"], POLICY_RC_D=policy)
    proc = subprocess.run(["bash", SCRIPT], env=env, capture_output=True, text=True, timeout=60)
    seen = open(log).read().strip() if os.path.exists(log) else "apt-get install not run"
    after = open(policy).read() if os.path.lexists(policy) else None
    run.disabled = open(disabled).read().split() if os.path.exists(disabled) else []
    run.enabled = [ln.split()[0] for ln in open(units)]
    return proc.returncode, seen, after


def main():
    with tempfile.TemporaryDirectory() as tmp:
        rc, seen, after = run(tmp, 0)
        check(rc == 0, f"install-deps succeeds (exit {rc})")
        check(seen == "policy 101", f"while apt-get installs, policy-rc.d forbids starts ({seen})")
        check(after is None, "the policy file is removed afterwards")
        check(run.disabled == ["opensm.service"],
              f"the unit the new package enabled is disabled, only it ({run.disabled})")
        check(run.enabled == ["ssh.service"], f"units enabled before stay enabled ({run.enabled})")

        rc, seen, after = run(tmp, 100)
        check(rc != 0, f"a failed apt-get install fails the script (exit {rc})")
        check(seen == "policy 101", f"policy in place for the failed install too ({seen})")
        check(after is None, "the policy file is removed after a failure too")

        own = "#!/bin/sh\n# the site's own policy\nexit 0\n"
        rc, seen, after = run(tmp, 0, old_policy=own)
        check(rc == 0 and seen == "policy 101", f"an existing policy is set aside ({seen})")
        check(after == own, "and put back unchanged")
        check(not [n for n in os.listdir(tmp) if ".install-deps." in n], "no backup left behind")
    print("FAILED: " + "; ".join(failures) if failures else "all ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
