#!/usr/bin/env bash
# make accept: the step scan's statistical tests, the whole-scenario
# acceptance runs and the property tests, as three go test processes at
# once (each is one test binary that runs its tests one after another, so
# together they use both cores of a 2-core machine). Prints the summary
# lines of each (the whole log of one that fails) and fails if any does.
set -u
GO=${GO:-go}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$GO" test -count=1 -run 'TestScan|TestMissSigma' ./estimate/ >"$dir/scan" 2>&1 &
scan=$!
"$GO" test -count=1 -run 'TestAccept' -v ./harness/ >"$dir/accept" 2>&1 &
accept=$!
"$GO" test -count=1 -run 'TestProperty|TestAsymmetry' -v ./harness/ >"$dir/property" 2>&1 &
property=$!
rc=0
for job in scan:$scan accept:$accept property:$property; do
	name=${job%%:*}
	if wait "${job#*:}"; then
		grep -E '^(---|ok|FAIL|PASS)|accept_|property_' "$dir/$name"
	else
		rc=1
		echo "accept: $name failed; its whole log:"
		cat "$dir/$name"
	fi
done
exit "$rc"
