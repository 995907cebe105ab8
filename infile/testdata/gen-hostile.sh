#!/bin/bash
# gen-hostile.sh DIR: the hostile inputs of issue 30's resource findings
# (B1-B4): Kineto gzip bombs, whitespace .json.gz, FIFOs, a sparse key.
# Then cases.sh BIN before|after DIR measures a binary on them; delete DIR
# after (about 7 MB, and a sparse 4 GiB key file).
set -euo pipefail
dir=${1:?usage: gen-hostile.sh DIR}
mkdir -p "$dir"
ev='{"ph":"X","cat":"kernel","name":"k","pid":1,"tid":1,"ts":1,"dur":1},'
# events: N events in one traceEvents array, gzip -9.
events() { python3 -c '
import sys
n, ev = int(sys.argv[1]), sys.argv[2].encode()
w = sys.stdout.buffer
w.write(b"{\"traceEvents\":[")
chunk = ev * 10000
for _ in range(n // 10000 - 1): w.write(chunk)
w.write(ev * 9999 + ev[:-1] + b"]}")
' "$1" "$ev" | gzip -9 > "$2"; }
events 20000000 "$dir/events20M.json.gz"
events 1000000 "$dir/events1M.json.gz"
# one string of 1 GiB
python3 -c '
import sys
w = sys.stdout.buffer
w.write(b"{\"traceEvents\":[{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"name\":\"")
c = b"a" * (1 << 20)
for _ in range(1024): w.write(c)
w.write(b"\"}]}")
' | gzip -9 > "$dir/string1G.json.gz"
# whitespace: a valid trace with N MiB of spaces inside traceEvents
for m in 16 64 1024; do
  python3 -c '
import sys
m = int(sys.argv[1]); w = sys.stdout.buffer
w.write(b"{\"traceEvents\":[")
c = b" " * (1 << 20)
for _ in range(m): w.write(c)
w.write(b"{\"ph\":\"X\",\"name\":\"k\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1}]}")
' $m | gzip -9 > "$dir/space${m}M.json.gz"
done
rm -f "$dir/fifo" "$dir/fifo.json" && mkfifo -m 600 "$dir/fifo" "$dir/fifo.json"
rm -f "$dir/big.key" && truncate -s 4G "$dir/big.key" && chmod 600 "$dir/big.key"
ls -la "$dir"
