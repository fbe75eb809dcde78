#!/bin/sh
# goodput-run.sh: goodput (useful work / time paid) of a real job under
# `spotrun run` replaying the shared AWS spot trace, time-scaled, with
# checkpoints on notices against the same job answering periodic requests
# only. Time paid = the whole run's wall time (the local provider plays no
# down time between machines, and none is paid on a cloud either).
# Settings: GOODPUT_SCALE trace seconds per real second (300), GOODPUT_WORK
# seconds of work (40), interval = 30 min of trace, window = 120 s of trace.
set -eu
trace="$top_srcdir/../shared/data/spot-traces/aws-p3.2xlarge-us-east-1c-2023-04-22.json"
[ -f "$trace" ] || { echo "goodput-run: no trace at $trace (../shared is absent): skipped"; exit 0; }
scale=${GOODPUT_SCALE:-300}
work=${GOODPUT_WORK:-40}
step_ms=20
steps=$((work * 1000 / step_ms))
interval=$(awk -v s="$scale" 'BEGIN { printf "%.0fms", 1800 / s * 1000 }')
window=$(awk -v s="$scale" 'BEGIN { printf "%.0fms", 120 / s * 1000 }')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() { # mode
	cat >"$tmp/$1.ini" <<INI
[job]
name = goodput-$1
command = $top_builddir/tests/cjob $steps $step_ms $1
[checkpoint]
signal = none
interval = $interval
store = $tmp/store
local_dir = $tmp/local-$1
margin = 50ms
[provider]
name = local
trace = $trace
trace_scale = $scale
window = $window
INI
	t0=$(date +%s.%N)
	"$SPOTRUN" run -q "$tmp/$1.ini" >"$tmp/$1.out" 2>"$tmp/$1.err"
	t1=$(date +%s.%N)
	pre=$(grep -cE '^[0-9:]+  notice ' "$tmp/$1.err" || true)
	awk -v w="$work" -v a="$t0" -v b="$t1" -v m="$1" -v p="$pre" \
	    'BEGIN { printf "%-14s work %5.1f s, paid %6.1f s, goodput %5.1f%%, preemptions %d\n", m, w, b - a, w / (b - a) * 100, p }'
}
echo "trace $(basename "$trace"), scale $scale (1 h of trace = $(awk -v s="$scale" 'BEGIN{printf "%.1f", 3600/s}') s), interval $interval, window $window"
run notices
run periodic-only
