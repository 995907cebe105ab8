#!/usr/bin/env bash
# Runs issue 34's scale scenarios (bench/scale/scale-*.yaml but the 10,000-
# node one, or the files given) under /usr/bin/time -v with --no-event-log
# --no-report and prints one row per run: nodes, events, CPU seconds
# (user + sys) and max RSS. scale-rr10k.yaml (over an hour of one core,
# about 5.5 GiB) runs only when named:
#   bench/scale/run.sh BIN OUTDIR bench/scale/scale-rr10k.yaml
# usage: bench/scale/run.sh BIN OUTDIR [SCENARIO...]
set -euo pipefail
bin=$1; out=$2; shift 2
if [ $# -eq 0 ]; then
	for f in "$(dirname "$0")"/scale-*.yaml; do
		case $f in */scale-rr10k.yaml) ;; *) set -- "$@" "$f" ;; esac
	done
fi
mkdir -p "$out"
printf '%-14s %6s %14s %8s %10s\n' scenario nodes events CPU-s maxRSS-MiB
for f in "$@"; do
	n=$(basename "$f" .yaml)
	rm -rf "${out:?}/$n"
	/usr/bin/time -v -o "$out/$n.time" "$bin" run "$f" --out "$out/$n" --no-event-log --no-report >"$out/$n.log" 2>&1 ||
		{ echo "$n: exit $? (see $out/$n.log)" >&2; continue; }
	nodes=$(awk '/^nodes:/ {print $2}' "$f")
	events=$(grep -o '[0-9,]* events' "$out/$n.log" | head -1 | tr -d ', events')
	cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.1f", s}' "$out/$n.time")
	rss=$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2 / 1024}' "$out/$n.time")
	printf '%-14s %6s %14s %8s %10s\n' "$n" "$nodes" "$events" "$cpu" "$rss"
done
