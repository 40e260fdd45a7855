#!/usr/bin/env python3
"""Makes the man(5) page of a configuration file from its shipped, commented sample
(config/sar-filterd.yaml, config/osmsar.conf): the sample's opening comment is the description,
`# --- title ---` lines are sections, and each key is listed with the default the sample gives
and the comment above it. The sample is the one list of keys with their meaning (unit tests
check that it names every key its parser accepts), so the page cannot drift from it.
  make_config_man.py --sample FILE --format yaml|kv --name NAME --section 5 --version V
                     --what "one line" [--see-also "page(N) /path ..."] -o PAGE.gz"""
import argparse
import gzip
import re
import sys


def roff(text):
    """Plain text as roff: escaped backslashes and hyphens, no control character at line start."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return re.sub(r"^([.'])", r"\\&\1", text, flags=re.M)


def parse(lines, fmt):
    """-> (description lines, [(section or None, [keys], default, [comment lines])])."""
    key_re = (re.compile(r"^([A-Za-z_][A-Za-z0-9_]*):\s*(.*)$") if fmt == "yaml"
              else re.compile(r"^#?([a-z_][a-z0-9_]*)\s+(\S.*)$"))
    description, entries, pending = [], [], []
    section, in_head, last_was_key, last_was_heading = None, True, False, False
    for raw in lines:
        line = raw.rstrip("\n").rstrip("\r")
        if in_head:
            if line.startswith("#"):
                description.append(line[1:].strip())
                continue
            in_head = False
        heading = re.match(r"^#\s*---+\s*(.*?)[\s-]*$", line)
        if heading:
            # Consecutive heading lines are one long title.
            text = heading.group(1)
            section = f"{section} {text}" if last_was_heading and section else text
            pending, last_was_key, last_was_heading = [], False, True
            continue
        last_was_heading = False
        m = key_re.match(line)
        if m and not (fmt == "kv" and line.startswith("# ")):
            key, default = m.group(1), m.group(2).strip()
            if fmt == "yaml":
                default = default.split(" #", 1)[0].strip()
            commented = fmt == "kv" and line.startswith("#")
            if not pending and last_was_key and entries:
                entries[-1][1].append((key, default, commented))
            else:
                entries.append((section, [(key, default, commented)], pending))
            pending, last_was_key = [], True
            continue
        if line.startswith("#"):
            pending.append(line[1:].strip())
        elif not line.strip():
            pending = pending if pending else []
        last_was_key = False
    return description, entries


def page(args, description, entries):
    out = [f'.TH {args.name.upper()} {args.section} "" "sar {args.version}" "sar configuration"',
           ".SH NAME", f"{roff(args.name)} \\- {roff(args.what)}", ".SH DESCRIPTION"]
    out += [roff(" ".join(description))]
    out.append(".SH OPTIONS")
    section = object()
    for sec, keys, comment in entries:
        if sec != section and sec:
            out.append(f".SS {roff(sec)}")
        section = sec
        out.append(".TP")
        shown = []
        for key, default, commented in keys:
            value = "(none)" if commented else (default if default not in ('""', "") else '""')
            shown.append(f"\\fB{roff(key)}\\fR {roff(value)}")
        out.append(", ".join(shown))
        text = " ".join(comment)
        if any(c for _, _, c in keys):
            text += (" " if text else "") + "Not set by default; the sample shows an example value."
        out.append(roff(text) if text else "See above.")
    if args.see_also:  # "opensm(8) /usr/share/doc/sar/opensm-plugin.md": pages and files
        out.append(".SH SEE ALSO")
        for word in args.see_also.split():
            m = re.match(r"^(.+)\((\d)\)$", word)
            out.append(f".BR {roff(m.group(1))} ({m.group(2)})" if m else roff(word))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--sample", "--name", "--what", "--version", "-o"):
        ap.add_argument(flag, required=True)
    ap.add_argument("--format", choices=("yaml", "kv"), required=True)
    ap.add_argument("--section", default="5")
    ap.add_argument("--see-also", default="")
    args = ap.parse_args()
    with open(args.sample) as f:
        description, entries = parse(f, args.format)
    if not entries:
        sys.exit(f"make_config_man: no keys found in {args.sample}")
    with gzip.GzipFile(args.o, "wb", mtime=0) as f:  # mtime 0: reproducible packages
        f.write(page(args, description, entries).encode())


if __name__ == "__main__":
    main()
