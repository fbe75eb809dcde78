#!/bin/sh
# goodput-run.sh: goodput (useful work / time paid) of a real job under
# `spotrun run` replaying real spot traces, time-scaled, with checkpoints on
# notices against the same job answering periodic requests only; and what
# of the time paid is spotrun's own, apart from the job's.
#
# Usage: goodput-run.sh [TRACE...] (default: ../shared's AWS trace). Any
# trace of the skypilot-org/spot-traces format; a multi-node one replays
# its node 0 (up while any node is: a gang's leader).
#
# The job (tests/cjob, 20 ms steps) is first timed alone, unsupervised: its
# steps overrun their 20 ms (the sleep's wake-up, the state update), which
# is the job's, not spotrun's. Then per trace and mode:
#   paid      the whole run's wall time (the local provider plays no down
#             time between machines, and none is paid on a cloud either;
#             restores and relaunches are paid);
#   goodput   work / paid, the work being steps x 20 ms;
#   w/o job   alone / paid: goodput with the job's own overrun taken out
#             (what spotrun and the preemptions cost), as the alone run
#             measured it;
#   in-run    kept / paid, kept being what the job's kept steps took in this
#             very run (cjob times each step's work and keeps the sum with
#             its state, so a step done again after a restore counts once):
#             the same figure without the alone run's drift (its steps'
#             overrun varies by 0.4-0.5% between runs on a VM, more than
#             the gap between spotrun's share and 99% on a dense trace);
#   starts    the job's own start-ups: its attempts times what one costs
#             it alone (the median of 31 starts of `cjob 0`, each spawned,
#             run to its end and waited for: the kernel's exec, the
#             loader, its reading of its arguments, its exit), which a
#             job pays at every restart whoever restarts it;
#   w/o st    kept / (paid - starts): in-run with the job's start-ups
#             taken out too (as bench/goodput-gang.sh's `w/o job`);
#   spotrun   paid - kept - starts: the supervisor's share, its
#             checkpoints, restores, relaunches and the work lost to
#             preemptions;
#   cpu       user + system CPU seconds of the run (spotrun and the job).
# Settings: GOODPUT_SCALE trace seconds per real second (300), GOODPUT_WORK
# seconds of work (40), GOODPUT_MODES the modes run, in order ("notices
# periodic-only"), interval = 30 min of trace, window = 120 s of trace.
set -eu
: "${SPOTRUN:=$top_builddir/spotrun}"
if [ $# -eq 0 ]; then
	set -- "$top_srcdir/../shared/data/spot-traces/aws-p3.2xlarge-us-east-1c-2023-04-22.json"
	[ -f "$1" ] || { echo "goodput-run: no trace at $1 (../shared is absent): skipped"; exit 0; }
fi
. "$top_srcdir/bench/lib.sh"
goodput_settings goodput-run "$@"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# timed OUT CMD...: CMD run, its wall seconds and its CPU seconds (user +
# system, its children's included) into OUT as "wall cpu".
timed() {
	_out=$1
	shift
	/usr/bin/time -f '%e %U %S' -o "$tmp/time" "$@"
	_rc=$?
	awk '{ printf "%s %.2f\n", $1, $2 + $3 }' "$tmp/time" >"$_out"
	return $_rc
}

# kept_of FILE: what the job's kept steps took, from its last line saying
# so in FILE (tests/cjob.c), or nothing.
kept_of() {
	sed -nE 's/^cjob: [0-9]+ steps kept, their work took ([0-9.]+) s$/\1/p' "$1" | tail -n 1
}

timed "$tmp/alone" "$top_builddir/tests/cjob" "$steps" "$step_ms" >"$tmp/alone.out" 2>&1 ||
    { echo "goodput-run: the job alone failed:"; cat "$tmp/alone.out"; exit 1; }
alone=$(cut -d' ' -f1 "$tmp/alone")
# one start of the job alone, in seconds: the median of 31
start1=$("${PYTHON:-/usr/bin/python3}" -c '
import os, sys, time
ts = []
for i in range(31):
    t = time.monotonic()
    pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ,
        file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                      (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)])
    if os.waitpid(pid, 0)[1] != 0:
        sys.exit("the job alone, 0 steps: it failed")
    ts.append(time.monotonic() - t)
print("%.4f" % sorted(ts)[len(ts) // 2])' "$top_builddir/tests/cjob" 0 "$step_ms") ||
    { echo "goodput-run: timing the job's start-up failed"; exit 1; }
echo "machine: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "scale $scale (1 h of trace = $(awk -v s="$scale" 'BEGIN{printf "%.1f", 3600/s}') s), interval $interval, window $window"
akept=$(kept_of "$tmp/alone.out")
echo "the job alone: $steps steps of $step_ms ms = $work s of work in $alone s (its own overrun $(awk -v a="$alone" -v w="$work" 'BEGIN { printf "%.1f%%", (a - w) / a * 100 }'); its steps took $akept s); a start of it $(awk -v s="$start1" 'BEGIN { printf "%.1f", s * 1000 }') ms"
printf '%-44s %-13s %6s %7s %7s %7s %7s %7s %7s %8s %6s %4s\n' trace mode work paid goodput "w/o job" \
    in-run starts "w/o st" spotrun cpu pre

# run TRACE MODE: one supervised run, its line.
run() {
	name=$(basename "$1" .json)
	cat >"$tmp/$2.ini" <<INI
[job]
name = goodput-$2
command = $top_builddir/tests/cjob $steps $step_ms $2
[checkpoint]
signal = none
interval = $interval
store = $tmp/store
local_dir = $tmp/local-$2
margin = 50ms
[provider]
name = local
trace = $1
trace_scale = $scale
window = $window
INI
	rm -rf "$tmp/store" "$tmp/local-$2"
	timed "$tmp/t" "$SPOTRUN" run -q "$tmp/$2.ini" >"$tmp/$2.out" 2>"$tmp/$2.err" ||
	    { echo "goodput-run: $name $2 failed:"; cat "$tmp/$2.err"; exit 1; }
	pre=$(grep -cE '^[0-9:]+  notice ' "$tmp/$2.err" || true)
	kept=$(kept_of "$tmp/$2.err")
	[ -n "$kept" ] || { echo "goodput-run: $name $2: the job did not say what its steps took:"
	    tail -n 5 "$tmp/$2.err"; exit 1; }
	# the attempts, from the run's last line ("finished exit 0: N attempts, ...")
	att=$(sed -nE 's/.* finished exit 0: ([0-9]+) attempts?,.*/\1/p' "$tmp/$2.err" | tail -n 1)
	[ -n "$att" ] || { echo "goodput-run: $name $2: no last line with its attempts:"
	    tail -n 5 "$tmp/$2.err"; exit 1; }
	awk -v w="$work" -v a="$alone" -v n="$name" -v m="$2" -v p="$pre" -v t="$(cat "$tmp/t")" \
	    -v k="$kept" -v st="$(awk -v n="$att" -v s="$start1" 'BEGIN { print n * s }')" '
	    BEGIN { split(t, x, " "); paid = x[1]
	        printf "%-44s %-13s %5.1fs %6.1fs %6.2f%% %6.2f%% %6.2f%% %6.3fs %6.2f%% %7.3fs %5.1fs %4d\n",
	            n, m, w, paid, w / paid * 100, a / paid * 100, k / paid * 100, st,
	            k / (paid - st) * 100, paid - k - st, x[2], p }'
}
for trace; do
	for mode in ${GOODPUT_MODES:-notices periodic-only}; do
		case $mode in
		notices|periodic-only) run "$trace" "$mode" ;;
		*) echo "goodput-run: GOODPUT_MODES: $mode is not a mode (notices, periodic-only)"; exit 1 ;;
		esac
	done
done
