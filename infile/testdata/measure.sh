#!/bin/bash
# measure.sh BIN LABEL CMD...: wall time, peak RSS, exit status and the last
# line of output; the command is killed after $TMO seconds (default 20) or
# once its RSS passes $RSSMAX MB (default 3072), so that a "before" run
# cannot take the machine down.
bin=$1; label=$2; shift 2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
tmo=${TMO:-20}; rssmax=${RSSMAX:-3072}
start=$(date +%s.%N)
/usr/bin/time -o $tmp/time -f '%e %M %x' "$bin" "$@" > $tmp/out 2>&1 &
tpid=$!
sleep 0.05
cpid=$(pgrep -P $tpid | head -1)
why=""
while kill -0 $tpid 2>/dev/null; do
  now=$(date +%s.%N)
  if [ -n "$cpid" ] && [ -r /proc/$cpid/status ]; then
    rss=$(awk '/VmRSS/{print int($2/1024)}' /proc/$cpid/status 2>/dev/null)
    if [ -n "$rss" ] && [ "$rss" -gt "$rssmax" ]; then why="KILLED: RSS passed $rssmax MB"; kill -9 $cpid; break; fi
  fi
  if (( $(echo "$now - $start > $tmo" | bc) )); then why="KILLED: still running at ${tmo} s"; [ -n "$cpid" ] && kill -9 $cpid; break; fi
  sleep 0.05
done
wait $tpid
read secs kb rc < <(grep -v '^Command' $tmp/time | tail -1)
last=$(grep -v '^\s*$' $tmp/out | tail -1 | cut -c1-300)
[ -n "$why" ] && last="$why; last output: ${last:-(none)}"
printf '%s | %ss | %d MB | rc %s | %s\n' "$label" "$secs" $((kb/1024)) "$rc" "$last"
