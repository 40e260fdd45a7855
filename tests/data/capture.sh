#!/bin/bash
# Re-creates the captured samples in this directory from a real ibsim + OpenSM run.
# Usage: capture.sh <ibsim topology> <SIM_HOST hca name> <output prefix> [extra opensm args]
#   capture.sh small.topo h0101 small
#   capture.sh small.topo h0101 small-lmc1 -l 1
#   capture.sh dual.topo hdual dual
# Writes <prefix>.ibnetdiscover, .dump_fts (read back from the switches), .opensm-lfts.dump and
# .guid2lid (OpenSM's own files) for one OpenSM run (ftree, routes once and exits).
set -euo pipefail
topo=$1 host=$2 out=$3
shift 3
d=$(mktemp -d)
export IBSIM_SOCKNAME=sar-capture-$$ SIM_HOST=$host OSM_CACHE_DIR=$d/cache OSM_TMP_DIR=$d/dump
mkdir -p "$d/cache" "$d/dump"
mkfifo "$d/ibsim.ctl"
timeout 120 ibsim -s "$topo" <>"$d/ibsim.ctl" >"$d/ibsim.out" 2>&1 &
sim=$!
trap 'kill $sim 2>/dev/null || true' EXIT
sleep 0.5
printf 'force_log_flush TRUE\nsweep_interval 0\ndump_files_dir %s\nconsole off\n' "$d/dump" \
  >"$d/opensm.conf"
LD_PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so timeout 20 \
  opensm -F "$d/opensm.conf" -f "$d/opensm.log" -o -D 0x43 -R ftree "$@" >/dev/null
timeout 10 ibsim-run ibnetdiscover >"$out.ibnetdiscover"
timeout 10 ibsim-run dump_fts >"$out.dump_fts"
cp "$d/dump/opensm-lfts.dump" "$out.opensm-lfts.dump"
cp "$d/cache/guid2lid" "$out.guid2lid"
echo "captured $out.* (scratch in $d)"
