#!/bin/sh
# idle.sh: what spotrun costs while the job just runs: CPU share of one core
# and peak RSS of the supervisor over a 10 s job with periodic checkpoints
# off. Target: < 1% of a core, RSS < 16 MiB.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
secs=${IDLE_SECONDS:-10}
cat >"$tmp/job.ini" <<INI
[job]
name = idle
command = sleep $secs
[checkpoint]
store = $tmp/store
local_dir = $tmp/local
[provider]
name = local
INI
"$SPOTRUN" run -q "$tmp/job.ini" 2>/dev/null &
pid=$!
sleep 1
t0=$(awk '{print $14 + $15}' /proc/$pid/stat)
sleep $((secs - 3))
t1=$(awk '{print $14 + $15}' /proc/$pid/stat)
hwm=$(awk '/^VmHWM/ {print $2}' /proc/$pid/status)
wait $pid
hz=$(getconf CLK_TCK)
awk -v a="$t0" -v b="$t1" -v hz="$hz" -v s="$((secs - 3))" -v hwm="$hwm" 'BEGIN {
	printf "idle supervisor: %.3f%% of a core over %d s, peak RSS %.1f MiB\n", (b - a) / hz / s * 100, s, hwm / 1024 }'
