#!/usr/bin/env python3
"""Every `sar-route`, `sar-filterd` and `sar-notify` command the docs show exists as written.

Reads README.md and docs/*.md. Takes every command line of their fenced code blocks (shell or
unlabelled; `\\` continuations joined, `# comments` and prompt/`sudo`/`VAR=value` prefixes
dropped, split at top-level `|`, `&&`, `||`, `;`) whose program is one of the three, and every
inline `code span` in the prose that starts with one of them. For each it checks, against the
--help of the built binaries (parsed here):
  - sar-route: the subcommand exists (`replay|study` names two), and every option it uses is one
    of that subcommand's options;
  - sar-filterd: every option is one of its options;
  - sar-notify: every option and the command word (job-start, status, ...) are in its usage.
Synopsis notation is read as such: `[--json]`, `(--swf H | --trace H)`, `...` and `<placeholder>`.
The repository's own Python scripts named with options (`bench/*.py`, `scripts/*.py`, in blocks
or prose) are checked the same way against their argparse --help.

Then it runs, in the docs' order, the sar-route commands of the fenced blocks that need only
files this test can make: placeholders (T, G, J, IN, A, B, fabric.topo, guid2lid, jobs.map,
opensm-lfts.dump, ...) are files made first by the built sar-route on the README's FT(2;20,18),
paths under /tmp are moved into the work directory, and optional `[...]` parts are kept. A run
must exit 0 (`diff-lfts`: 0 or 1, "identical" or "differ", never a usage error). Commands that
need a live OpenSM (`compare --opensm`) or SLURM (`--slurm-array`, `merge --resume`), a job
history file, a running sar-filterd, system paths (/etc, /var) or values only a reader can fill
in (N, DIR, ...) are checked for their subcommand and options only; the output says why for each.
sar-filterd and sar-notify commands are of that kind (a live daemon and socket; only their
`--version`/`--help` run here): docs/operations.md's walk (integration.operations_walk) runs
those on the test beds.

Fails on an unknown subcommand or option, on a run that fails, and if fewer commands than a
floor are found (the extraction itself broken). Usage:
  check_doc_commands.py SAR_ROUTE SAR_FILTERD notify=[SAR_NOTIFY] REPO WORKDIR
(an empty notify= where sar-notify is not built: its commands are then skipped, said so).
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

PROGRAMS = ("sar-route", "sar-filterd", "sar-notify")
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


# --- what the binaries accept, from their --help ---------------------------------------------
def help_text(argv):
    r = subprocess.run(argv + ["--help"], capture_output=True, text=True, timeout=30)
    return r.stdout


def options_of(text):
    """Long and short options of a CLI11 help text ('  -t,--topology TEXT', '  --once')."""
    opts = set(re.findall(r"^\s+(?:-\w,)?(--[\w-]+)", text, re.M))
    opts |= set(re.findall(r"^\s+(-\w),", text, re.M))
    opts |= set(re.findall(r"^\s+(-\w)\s", text, re.M))
    return opts


def accepted(sar_route, sar_filterd, sar_notify):
    top = help_text([sar_route])
    subs = re.findall(r"^  ([a-z][\w-]*)\s", top.split("Subcommands:", 1)[1], re.M)
    route = {s: options_of(help_text([sar_route, s])) for s in subs}
    filterd = options_of(help_text([sar_filterd]))
    if not sar_notify:
        return route, filterd, None
    usage = help_text([sar_notify]).split("\n", 1)[0]
    notify_opts = set(re.findall(r"\[(--[\w-]+)", usage))
    notify_words = set(re.findall(r"(?:\[|\|)([a-z][\w-]*)", usage))
    return route, filterd, (notify_opts, notify_words)


# --- commands from the docs ------------------------------------------------------------------
def doc_files(repo):
    return [os.path.join(repo, "README.md")] + sorted(glob.glob(os.path.join(repo, "docs", "*.md")))


def strip_comment(line):
    """Drops a trailing '# comment' (a '#' at a word start outside quotes and brackets)."""
    quote, depth = None, 0
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c in "([{<":
            depth += 1
        elif c in ")]}>" and depth:
            depth -= 1
        elif c == "#" and (i == 0 or line[i - 1].isspace()) and depth == 0:
            return line[:i].rstrip()
    return line


def split_top(line):
    """Splits at |, &&, ||, ; outside quotes and brackets (a '|' inside [..] or (..) is a
    synopsis alternative, not a pipe)."""
    parts, cur, quote, depth, i = [], "", None, 0, 0
    while i < len(line):
        c = line[i]
        if quote:
            cur += c
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
            cur += c
        elif c in "([{":
            depth += 1
            cur += c
        elif c in ")]}":
            depth = max(0, depth - 1)
            cur += c
        elif depth == 0 and line.startswith(("&&", "||"), i):
            parts.append(cur)
            cur = ""
            i += 1
        elif depth == 0 and c in "|;" and (i + 1 == len(line) or line[i + 1].isspace()):
            parts.append(cur)             # 'replay|study', 'pgft:3;4,4' are words, not pipes
            cur = ""
        else:
            cur += c
        i += 1
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


# Words that may come before the program: `sudo sar-filterd`, `DESTDIR=x cmake`, `setpriv
# --reuid=u -- sar-filterd`.
PREFIX_WORDS = {"sudo", "exec", "time", "--", "$", "setpriv"}


def program_start(words):
    """Index of the program word when the segment runs one of ours, else None."""
    setpriv = words[:1] == ["setpriv"]
    for i, w in enumerate(words):
        if os.path.basename(w) in PROGRAMS:
            return i
        if w in PREFIX_WORDS or re.match(r"^[A-Z_]+=\S*$", w) or (setpriv and w.startswith("-")):
            continue
        return None
    return None


def commands_in(path):
    """(line number, command text, fenced) of every command of ours in a page."""
    lines = open(path, encoding="utf-8").read().split("\n")
    found, prose, fence, i = [], [], None, 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^\s*```(\S*)", line)
        if m:
            fence = None if fence is not None else m.group(1)
            i += 1
            continue
        start = i
        if fence is not None and fence in ("", "sh", "bash", "shell", "console"):
            text = strip_comment(line)
            while text.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text.rstrip()[:-1] + " " + strip_comment(lines[i].strip())
            text = text.strip()
            if text.startswith("$ "):
                text = text[2:]
            for seg in split_top(text):
                words = seg.split()
                k = program_start(words)
                if k is not None:
                    found.append((start + 1, " ".join(words[k:]), True))
        elif fence is None:
            prose.append((i + 1, line))
        i += 1
    # Inline spans may run over a line break (a synopsis in prose): read each stretch of prose
    # between fences as one text.
    for stretch in stretches(prose):
        first, text = stretch[0][0], "\n".join(l for _, l in stretch)
        for m in re.finditer(r"`([^`]+)`", text):
            words = m.group(1).split()
            # `sar-route eval: [ 12.3 s] ...` quotes a log line, not a command
            if words and words[0] in PROGRAMS and len(words) > 1 and not words[1].endswith(":"):
                found.append((first + text.count("\n", 0, m.start()), " ".join(words), False))
    return sorted(found, key=lambda f: f[0])


def stretches(numbered):
    """Runs of consecutive (line number, text) pairs."""
    runs = []
    for n, line in numbered:
        if runs and runs[-1][-1][0] == n - 1:
            runs[-1].append((n, line))
        else:
            runs.append([(n, line)])
    return runs


def flags_and_words(cmd):
    """The options a command line uses, and its non-option words, synopsis marks removed."""
    text = re.sub(r"<[^>]*>", " PLACEHOLDER ", cmd)
    text = re.sub(r"[\[\]()|]", " ", text)
    opts, words = [], []
    for w in text.split()[1:]:
        if w.startswith("--") and len(w) > 2:
            opts.append(w.split("=", 1)[0])
        elif re.match(r"^-[A-Za-z]$", w):
            opts.append(w)
        else:
            words.append(w)
    return opts, words


def check_command(where, cmd, route, filterd, notify):
    prog = os.path.basename(cmd.split()[0])
    opts, words = flags_and_words(cmd)
    if prog == "sar-route":
        if not words and opts and set(opts) <= {"--help", "-h", "--version"}:
            check(True, f"{where}: `{cmd}`: sar-route's own options")
            return
        if words and words[0] == "PLACEHOLDER" and set(opts) <= {"--help", "-h"}:
            check(True, f"{where}: `{cmd}`: any subcommand's --help")
            return
        if not words or words[0] in ("...", "PLACEHOLDER"):
            check(False, f"{where}: `{cmd}` names no subcommand")
            return
        subs = cmd.split()[1].split("|")
        for sub in subs:
            if sub not in route:
                check(False, f"{where}: `{cmd}`: sar-route has no subcommand '{sub}'")
                continue
            bad = [o for o in opts if o not in route[sub]]
            check(not bad, f"{where}: sar-route {sub}: options {sorted(set(opts))} exist"
                           + (f" (unknown: {bad})" if bad else ""))
    elif prog == "sar-filterd":
        bad = [o for o in opts if o not in filterd]
        check(not bad, f"{where}: sar-filterd options {sorted(set(opts))} exist"
                       + (f" (unknown: {bad})" if bad else ""))
    elif notify is None:
        print(f"skip {where}: `{cmd}`: sar-notify is not built here (no slurm/spank.h)")
    else:
        notify_opts, notify_words = notify
        bad = [o for o in opts if o not in notify_opts]
        if words and not re.match(r"^[\dA-Z<]", words[0]) and words[0] not in ("...",):
            if words[0] not in notify_words:
                bad.append(words[0])
        check(not bad, f"{where}: sar-notify {' '.join(words[:1])} {sorted(set(opts))} exist"
                       + (f" (unknown: {bad})" if bad else ""))


# --- running what can run --------------------------------------------------------------------
# Why a command is checked for its options only (first match wins; regex on the command).
FLAGS_ONLY = [
    (r"\.\.\.|<|PLACEHOLDER", "synopsis: placeholders or '...'"),
    (r"\(.*\|.*\)|\[[^\]]*\|", "synopsis: alternatives"),
    (r"^\S+ \S*\|", "synopsis: alternative subcommands"),
    (r"--opensm\b", "needs OpenSM on ibsim (the integration tests run compare --opensm)"),
    (r"--slurm-array|--resume|--slurm-opt", "needs a SLURM cluster (integration.split_slurm)"),
    (r"--swf|--sacct|--trace\b", "needs a job history file (check_replay_report runs replay)"),
    (r"switches\.lfts", "tables read back from the switches of a live fabric"),
    (r"/etc/|/var/|(?<!/tmp)/run/",
     "system paths of a deployed host (integration.operations_walk)"),
    (r"\bmerge\b|--shard\b", "needs a split run's work directory (sar_route_split_runs)"),
    (r"(?<![\w/.-])(?!(?:T|G|J|L|IN|OUT|A|B)\b)[A-Z][A-Z0-9]*(?:/[A-Z0-9]+)?(?![\w.-])",
     "synopsis: a placeholder in capitals (N, M0, F, ID, DIR, ...)"),
    (r"^\S*sar-(filterd|notify)\b", "talks to a running sar-filterd (integration.operations_walk)"),
]
# Options whose value is a file the command writes (never read first).
OUTPUT_OPTS = {"-o", "--out", "--sl-out", "--schedule-out", "--html", "--csv", "--guid2lid",
               "--work-dir", "--json-out", "--lft-out", "--layers-out"}


# Options whose value is no file name even when it holds a '.' or '/' (`--fabric pgft:3;4,4`).
VALUE_OPTS = {"--fabric", "--engines", "-e", "--engine", "--links", "--title"}
# The capital placeholders the docs use for files; prepare() makes each.
PLACEHOLDER_FILES = {"T", "G", "J", "L", "IN", "A", "B", "OUT"}


def prepare(sar_route, work):
    """The files the docs' commands read, under every name they use, on a small fabric."""
    def run(*args):
        r = subprocess.run([sar_route] + list(args), cwd=work, capture_output=True, text=True,
                           timeout=60)
        if r.returncode != 0:
            raise SystemExit(f"setup failed: sar-route {' '.join(args)}\n{r.stderr}")
    # The README's own fabric (360 hosts): every command on it takes well under a second, but
    # `study` (about 3 s).
    run("gen", "--fabric", "ft2:20,18", "-o", "small.topo", "--guid2lid", "small.g2l")
    run("jobmix", "--topology", "small.topo", "--seed", "1", "-o", "small.jobs")
    run("route", "--engine", "minhop", "--topology", "small.topo", "--lids", "small.g2l",
        "-o", "small.lfts")
    aliases = {"small.topo": ["T", "fabric.topo", "ft.topo", "t.topo"],
               "small.g2l": ["G", "guid2lid"],
               "small.jobs": ["J", "jobs.map"],
               "small.lfts": ["L", "IN", "A", "B", "opensm-lfts.dump", "sar.lfts"]}
    for src, names in aliases.items():
        for n in names:
            shutil.copy(os.path.join(work, src), os.path.join(work, n))


def runnable_argv(cmd, work):
    """The argv to run a documented command in `work`, or (None, why not)."""
    for pattern, why in FLAGS_ONLY:
        if re.search(pattern, cmd):
            return None, why
    text = re.sub(r"[\[\]]", " ", cmd)            # optional parts are kept
    try:
        words = shlex.split(text)
    except ValueError as e:
        return None, f"not a shell line ({e})"
    argv, prev = [], None
    for w in words[1:]:
        if w.startswith("/tmp/"):
            w = os.path.join(work, "tmp_" + w[len("/tmp/"):].replace("/", "_"))
        is_file = not w.startswith("-") and ("." in w or "/" in w or w in PLACEHOLDER_FILES)
        is_value = prev in VALUE_OPTS or re.match(r"^[\d.,:;]+$", w)   # 0,2,4 / ft2:20,18 / sar,x
        if is_file and not is_value and prev not in OUTPUT_OPTS \
                and not os.path.exists(os.path.join(work, w)):
            return None, f"reads '{w}', which this test does not make"
        argv.append(w)
        prev = w
    return argv, None


def run_commands(sar_route, cmds, work, programs):
    """Runs what can run (see the module's docstring); returns how many ran."""
    ran = 0
    for where, cmd in cmds:
        if os.path.basename(cmd.split()[0]) != "sar-route":
            opts, words = flags_and_words(cmd)
            if opts and set(opts) <= {"--version", "--help"} and not words:
                r = subprocess.run([programs[os.path.basename(cmd.split()[0])]] + opts,
                                   capture_output=True, text=True, timeout=30)
                check(r.returncode == 0 and r.stdout,
                      f"ran {where}: `{cmd}` -> exit {r.returncode}")
                ran += 1
            continue
        argv, why = runnable_argv(cmd, work)
        if argv is None:
            print(f"flags only  {where}: `{cmd}`: {why}")
            continue
        r = subprocess.run([sar_route] + argv, cwd=work, capture_output=True, text=True,
                           timeout=120)
        # diff-lfts reports a finding with exit 1 (the tables differ): a run, not a failure of
        # the documented command line.
        ok = r.returncode == 0 or (r.returncode == 1 and argv[0] == "diff-lfts")
        check(ok, f"ran {where}: `{cmd}` -> exit {r.returncode}"
                  + ("" if ok else f"\n{r.stderr.strip()[-800:]}"))
        ran += 1
    return ran


SCRIPT_RE = re.compile(r"(?<![\w/.-])((?:bench|scripts)/\w+\.py)((?:[ \t]+[^`|;#]*)?)")


def check_scripts(repo, files):
    """The repository's Python scripts (bench/, scripts/) named in the docs with options: each
    option is one its argparse --help lists (of the subcommand, where one follows). Returns how
    many were checked."""
    helps, n = {}, 0
    for path in files:
        rel = os.path.relpath(path, repo)
        for number, line in enumerate(open(path, encoding="utf-8"), 1):
            for m in SCRIPT_RE.finditer(line):
                script, rest = m.group(1), m.group(2) or ""
                if not os.path.exists(os.path.join(repo, script)):
                    check(False, f"{rel}:{number}: {script} does not exist")
                    continue
                used = re.findall(r"(?<![\w-])(--[\w-]+)", rest)
                if not used:
                    continue
                words = rest.split()
                sub = [words[0]] if words and re.match(r"^[a-z][\w-]*$", words[0]) else []
                key = (script, tuple(sub))
                if key not in helps:
                    r = subprocess.run([sys.executable, os.path.join(repo, script)] + sub
                                       + ["--help"], capture_output=True, text=True, timeout=30)
                    helps[key] = set(re.findall(r"(?<![\w-])(--[\w-]+)", r.stdout))
                bad = [o for o in used if o not in helps[key]]
                check(helps[key] and not bad,
                      f"{rel}:{number}: {script} {' '.join(sub)} options {sorted(set(used))} exist"
                      + (f" (unknown: {bad})" if bad else ""))
                n += 1
    return n


def main():
    if len(sys.argv) != 6:
        print(__doc__)
        return 2
    sar_route, sar_filterd, sar_notify, repo, work = sys.argv[1:]
    sar_notify = sar_notify[len("notify="):] if sar_notify.startswith("notify=") else sar_notify
    sar_route, sar_filterd, repo, work = (os.path.abspath(p) for p in (sar_route, sar_filterd,
                                                                          repo, work))
    sar_notify = os.path.abspath(sar_notify) if sar_notify else ""
    route, filterd, notify = accepted(sar_route, sar_filterd, sar_notify)
    check(len(route) >= 10 and len(filterd) >= 5
          and (notify is None or notify[1] >= {"job-start", "status"}),
          f"--help parsed: {len(route)} sar-route subcommands, {len(filterd)} sar-filterd "
          f"options, sar-notify words {sorted(notify[1]) if notify else '(not built)'}")
    fenced, spans = [], []
    for path in doc_files(repo):
        rel = os.path.relpath(path, repo)
        for line, cmd, is_fenced in commands_in(path):
            (fenced if is_fenced else spans).append((f"{rel}:{line}", cmd))
    for where, cmd in fenced + spans:
        check_command(where, cmd, route, filterd, notify)
    scripts = check_scripts(repo, doc_files(repo))
    check(scripts >= 20, f"{scripts} bench/ and scripts/ commands with options (at least 20)")
    # Floors: the extraction finding far fewer than the pages hold means it broke.
    check(len(fenced) >= 40, f"{len(fenced)} commands in fenced blocks (at least 40)")
    check(len(spans) >= 50, f"{len(spans)} commands in inline code spans (at least 50)")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prepare(sar_route, work)
    programs = {"sar-route": sar_route, "sar-filterd": sar_filterd, "sar-notify": sar_notify}
    ran = run_commands(sar_route, fenced, work, programs)
    check(ran >= 12, f"{ran} documented commands ran (at least 12)")
    print("FAILED: " + "; ".join(f.split("\n")[0] for f in failures) if failures else "all ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
