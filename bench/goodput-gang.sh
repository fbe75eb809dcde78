#!/bin/sh
# goodput-gang.sh: goodput of a gang (a job of several machines) under
# `spotrun agent`s replaying a real multi-node spot trace, time-scaled:
# one agent per node of the trace, each replaying its own node's periods
# throughout (--trace-node), the gang stopped when any of its machines gets
# its notice, checkpointed, released and formed again on the machines that
# come next.
#
# Usage: goodput-gang.sh TRACE... (multi-node traces of the
# skypilot-org/spot-traces format, e.g. that repository's
# preemption/4-node/*/*.json; a value is the count of nodes up). Without
# one it says so and exits 0.
#
# The job (bench/gangjob.py, a rank per node, steps of 20 ms on a clock
# that does not drift) is first timed alone, unsupervised. Per trace:
#   paid      wall time from the agents' start to the job's success, the
#             time its status marker gives (the gang's forming, restores
#             and relaunches are paid; the local provider plays no down
#             time between machines);
#   goodput   work / paid, the work being steps x 20 ms;
#   starts    the job's own start-ups past the first: each rank's "ready"
#             times (gangjob.py: its process's start to its first step)
#             summed over its attempts, the largest sum (the job ends with
#             its slowest rank), less the alone run's; a rank a notice
#             stopped before it was ready counts its start-up up to the
#             notice (bench/gang-phases.py --starts);
#   w/o job   (alone + starts) / paid: the job's own start-ups and overrun
#             taken out;
#   spotrun   paid - alone - starts;
#   pre       notices the agents got (each stops the gang);
#   lost      the work node 0's runs lost at their ends, from their last
#             lines (a notice whose checkpoint came too late loses the
#             work since the previous one);
#   cpu       the agents' own CPU seconds (user + system: each supervises
#             its node's runs in its own process), all nodes together;
#   ranks     their ranks' CPU seconds (the job's processes they waited
#             for). The keepers (a small process per run) are in neither.
# Under each row, bench/gang-phases.py's line: where the time between the
# gang's runs went (the forming, each run's setup and restore, the job's
# start-up), means over the gang's epochs.
# Settings: GOODPUT_SCALE trace seconds per real second (300), GOODPUT_WORK
# seconds of work (40); interval = 30 min of trace, window = 120 s of trace;
# GOODPUT_KEEP=1 keeps the agents' folders and logs (the last trace's).
set -eu
: "${SPOTRUN:=$top_builddir/spotrun}"
if [ $# -eq 0 ]; then
	echo "goodput-gang: no trace given (multi-node traces, e.g. skypilot-org/spot-traces'" \
	    "preemption/4-node/*/*.json): skipped"
	exit 0
fi
. "$top_srcdir/bench/lib.sh"
# no cloud's metadata address asked (each agent's probe of its machine:
# tens of milliseconds of its start, and a request beyond loopback)
. "$top_srcdir/tests/jobs/no-cloud.sh"
goodput_settings goodput-gang "$@"
job=$top_srcdir/bench/gangjob.py
# the interpreter itself, as a job's venv names it: not a launcher such as
# a pyenv shim (bash scripts that cost 0.3-1.3 s a start on 2 CPUs, paid by
# every rank of every attempt)
py=$(python3 -c 'import sys; print(sys.executable)')
tmp=$(mktemp -d)
agents=
cleanup() {
	for p in $agents; do kill -TERM "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ -n "${GOODPUT_KEEP:-}" ]; then echo "goodput-gang: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

mkdir "$tmp/b0"
t0=$(date +%s.%N)
PYTHONPATH=$top_srcdir/python${PYTHONPATH:+:$PYTHONPATH} "$py" "$job" --steps "$steps" \
    --step-ms "$step_ms" --barrier "$tmp/b0" 2>"$tmp/alone.err" ||
    { echo "goodput-gang: the job alone failed:"; tail -n 5 "$tmp/alone.err"; exit 1; }
alone=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
ready1=$(sed -nE 's/^gangjob: rank 0 ready ([0-9.]+) s .*/\1/p' "$tmp/alone.err")
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "scale $scale (1 h of trace = $(awk -v s="$scale" 'BEGIN{printf "%.1f", 3600/s}') s), interval $interval, window $window"
echo "the job alone: $steps steps of $step_ms ms = $work s of work in $alone s (ready after ${ready1:-?} s)"
printf '%-44s %5s %6s %7s %7s %7s %7s %8s %4s %7s %6s %6s\n' trace nodes work paid goodput starts "w/o job" spotrun \
    pre lost cpu ranks

for trace; do
	name=$(basename "$trace" .json)
	nodes=$(python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))
print(t.get("metadata", {}).get("nodes") or max(t["data"]))' "$trace")
	rm -rf "$tmp/q" "$tmp/b" "$tmp"/ag*
	mkdir "$tmp/b"
	cat >"$tmp/gang.ini" <<INI
[job]
name = gang
ship_workdir = no
command = $py $job --steps $steps --step-ms $step_ms --barrier $tmp/b
[resources]
nodes = $nodes
[checkpoint]
interval = $interval
margin = 50ms
[provider]
name = local
trace = $trace
trace_scale = $scale
window = $window
INI
	"$SPOTRUN" submit --create --queue "file://$tmp/q" "$tmp/gang.ini" >/dev/null
	t0=$(date +%s.%N)
	echo "$t0" >"$tmp/t0"	# for gang-phases.py's "first"
	agents=
	k=1
	while [ "$k" -le "$nodes" ]; do
		SPOTRUN_GPU_LOCK_DIR=$tmp/ag$k.gpus "$SPOTRUN" agent --queue "file://$tmp/q" \
		    --dir "$tmp/ag$k.d" --label addr=127.0.0.1 --provider local --trace-node "$k" \
		    --idle-timeout 30s -q \
		    >"$tmp/ag$k.out" 2>"$tmp/ag$k.err" &
		agents="$agents $!"
		k=$((k + 1))
	done
	# the job's end: node 0's agent says it succeeded (or failed); looked
	# for twice a second (a grep and a sleep 20 times a second took 5-6%
	# of the 2 CPUs the agents and ranks share)
	while ! grep -qE '^spotrun agent: gang: (succeeded|failed)' "$tmp"/ag*.err 2>/dev/null; do
		alive=0
		for p in $agents; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ "$alive" = 1 ] || { echo "goodput-gang: $name: the agents ended without the job's end:"; tail -n 5 "$tmp"/ag*.err; exit 1; }
		sleep 0.5
	done
	grep -qE '^spotrun agent: gang: succeeded' "$tmp"/ag*.err ||
	    { echo "goodput-gang: $name: the job failed:"; tail -n 20 "$tmp"/ag*.err; exit 1; }
	# paid: to the time the job's status marker says it succeeded (its
	# name's T in milliseconds, doc/fleet.md "index/"), not to when the
	# loop above saw it
	end=$(ls "$tmp/q/index" | awk -F'~' '$4 == "succeeded" { printf "%.3f\n", $3 / 1000 }' | tail -n 1)
	[ -n "$end" ] || { echo "goodput-gang: $name: no status marker says the job succeeded"; exit 1; }
	paid=$(awk -v a="$t0" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
	pre=$(cat "$tmp"/ag*.err | grep -c 'simulated preemption' || true)
	# the work node 0's runs lost to their ends (checkpoints that came too
	# late for a notice's deadline show here), from their last lines
	lost=$(awk '/this is node 0,/ { n0 = 1 } /this is node [1-9]/ { n0 = 0 }
	    n0 && / of work lost, / {
	        v = $0; sub(/ of work lost.*/, "", v); sub(/.*, /, "", v)
	        if (v ~ /ms$/) t += v / 1000; else if (v ~ /s$/) t += v + 0
	    } END { printf "%.2f", t }' "$tmp"/ag*.err)
	# the job's own start-ups: a rank's, one per attempt, summed; the
	# slowest rank's sum (4 interpreters starting on 2 CPUs are ready
	# 0.1-0.25 s apart, and the end waits for the last)
	starts=$("$py" "$top_srcdir/bench/gang-phases.py" --starts "$tmp" "${ready1:-0}") ||
	    { echo "goodput-gang: $name: the job's start-ups could not be told"; exit 1; }
	# the agents' own CPU (each the supervisor of its node's runs, in its
	# process) and their ranks' (their children, waited for), from /proc
	# while they still idle
	cpu=$(for p in $agents; do cat "/proc/$p/stat" 2>/dev/null; done | awk -v hz="$(getconf CLK_TCK)" '
	    { sub(/.*\) /, ""); own += $12 + $13; kids += $14 + $15 }
	    END { printf "%.2f %.2f", own / hz, kids / hz }')
	for p in $agents; do kill -TERM "$p" 2>/dev/null || true; done
	wait
	agents=
	awk -v w="$work" -v a="$alone" -v n="$name" -v N="$nodes" -v p="$pre" -v paid="$paid" \
	    -v l="$lost" -v st="$starts" -v cpu="$cpu" 'BEGIN {
	    split(cpu, c, " ")
	    printf "%-44s %5d %5.1fs %6.1fs %6.2f%% %6.2fs %6.2f%% %7.2fs %4d %6.2fs %5.2fs %5.2fs\n", n, N,
	        w, paid, w / paid * 100, st, (a + st) / paid * 100, paid - a - st, p, l, c[1], c[2] }'
	"$py" "$top_srcdir/bench/gang-phases.py" "$tmp"
done
