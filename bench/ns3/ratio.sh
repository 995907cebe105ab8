#!/usr/bin/env bash
# Issue 34's ns-3 ratio target: mesh8-jitter's packet workload in ns-3
# (bench/ns3/mesh8.cc, built here with g++ -O2 against the installed ns-3)
# and in chronosync with its default outputs on one core (GOMAXPROCS=1), each
# under /usr/bin/time -v, RUNS times (default 1). It prints a row per run of
# each: events, datagrams sent and delivered, CPU seconds (user + sys), CPU
# µs per packet and max RSS; then per run the two ratios against their targets:
# ns-3's CPU per packet ÷ chronosync's (≥ 10×) and chronosync's max RSS ÷
# ns-3's (≤ 2×). A packet is a UDP datagram sent (handed to the network:
# chronosync's network.packets, ns-3's SendTo calls) on both sides.
# Without ns-3 it says how to install it and exits 0.
# usage: bench/ns3/ratio.sh BIN [RUNS]
set -euo pipefail
bin=$1
runs=${2:-1}
mods=(ns3-core ns3-network ns3-internet ns3-point-to-point)
if ! command -v pkg-config >/dev/null || ! pkg-config --exists "${mods[@]}" ||
	[ ! -f "$(pkg-config --variable=includedir ns3-core)/ns3/core-module.h" ]; then
	echo "ns-3 not installed: apt-get install libns3-dev"
	exit 0
fi
for tool in g++ /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "ns3-ratio: $tool not found" >&2; exit 1; }
done
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ns3-ratio.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Debian's .pc files name unversioned libgsl/libsqlite3 .so files that only
# their -dev packages ship; the ns-3 libraries find their own dependencies,
# so only the -lns3-* flags are kept. Headers are under includedir/ns3.
read -r -a libs <<<"$(pkg-config --libs "${mods[@]}" | tr ' ' '\n' | grep '^-lns3-' | sort -u | tr '\n' ' ')"
g++ -O2 -std=c++17 -o "$tmp/mesh8" "$here/mesh8.cc" "${libs[@]}"

# cpu FILE: user + system seconds from a /usr/bin/time -v report.
cpu() { awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' "$1"; }
# rss FILE: maximum resident set size in MiB.
rss() { awk -F': ' '/Maximum resident/ {printf "%.1f", $2 / 1024}' "$1"; }
# field FILE KEY: the first integer value of "KEY": in a JSON file.
field() { awk -F'[:,]' -v k="\"$2\"" '$1 ~ k {gsub(/ /, "", $2); print $2; exit}' "$1"; }
# perpkt CPU PACKETS: CPU µs per packet.
perpkt() { awk -v c="$1" -v n="$2" 'BEGIN {printf "%.3f", c / n * 1e6}'; }

rows=()
ratios=()
for i in $(seq 1 "$runs"); do
	/usr/bin/time -v -o "$tmp/ns3.time" "$tmp/mesh8" >"$tmp/ns3.log"
	read -r nsent ndeliv < <(awk '/^datagrams sent/ {print $3, $5}' "$tmp/ns3.log")
	nev=$(awk '/^events/ {print $2}' "$tmp/ns3.log")
	ncpu=$(cpu "$tmp/ns3.time")
	nrss=$(rss "$tmp/ns3.time")
	nper=$(perpkt "$ncpu" "$nsent")

	rm -rf "$tmp/run"
	GOMAXPROCS=1 /usr/bin/time -v -o "$tmp/cs.time" "$bin" run mesh8-jitter --no-report --out "$tmp/run" >"$tmp/cs.log" 2>&1 ||
		{ echo "chronosync run failed:" >&2; tail "$tmp/cs.log" >&2; exit 1; }
	csent=$(field "$tmp/run/summary.json" packets)
	cdeliv=$(field "$tmp/run/summary.json" delivered)
	cev=$(field "$tmp/run/summary.json" events)
	ccpu=$(cpu "$tmp/cs.time")
	crss=$(rss "$tmp/cs.time")
	cper=$(perpkt "$ccpu" "$csent")
	rm -rf "$tmp/run"

	rows+=("$(printf '%-10s %3s %10s %10s %10s %8s %10s %8s' ns-3 "$i" "$nev" "$nsent" "$ndeliv" "$ncpu" "$nper" "$nrss")")
	rows+=("$(printf '%-10s %3s %10s %10s %10s %8s %10s %8s' chronosync "$i" "$cev" "$csent" "$cdeliv" "$ccpu" "$cper" "$crss")")
	ratios+=("$(awk -v np="$nper" -v cp="$cper" -v nr="$nrss" -v cr="$crss" -v i="$i" 'BEGIN {
		c = np / cp; m = cr / nr
		printf "%3s %14.2fx %-8s %14.2fx %s", i, c, (c >= 10 ? "met" : "not met"), m, (m <= 2 ? "met" : "not met")
	}')")
done

echo "mesh8-jitter packet workload; packet = UDP datagram sent; CPU = user + sys; chronosync GOMAXPROCS=1, default outputs"
printf '%-10s %3s %10s %10s %10s %8s %10s %8s\n' program run events sent delivered CPU-s CPU-us/pkt RSS-MiB
printf '%s\n' "${rows[@]}"
echo
printf '%3s %15s %-8s %15s %s\n' run "CPU/pkt ns3/cs" "(>=10x)" "RSS cs/ns3" "(<=2x)"
printf '%s\n' "${ratios[@]}"
