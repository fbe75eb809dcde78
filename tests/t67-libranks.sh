#!/bin/sh
# t67-libranks.sh: library mode with launch = ranks. Two ranks of a C job
# (tests/jobs/libranks.c: rows of a sharded tensor each, a replicated one
# and a step counter) run under `spotrun run` with mode = library while
# the local provider preempts them twice: every rank reads the request
# (both answer each notice at the same step), each checkpoint is one
# collective save committed once (the timeline's commits, `spotrun ls`),
# the done marker is rank 0's alone, and both ranks resume from the
# library's restore to a state equal to an uninterrupted run's. (Restores
# onto another number of ranks: tests/t-reshard.c.)
set -u
. "$top_srcdir/tests/jobs/no-cloud.sh"
job="$top_builddir/tests/jobs/libranks"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..10"
mkdir "$tmp/bar"
cat >"$tmp/job.ini" <<INI
[job]
name = libranks
command = $job 150 40 $tmp/bar
[resources]
procs = 2
launch = ranks
[checkpoint]
mode = library
store = $tmp/store
local_dir = $tmp/local
margin = 1s
[provider]
name = local
after = 2s
window = 3s
preemptions = 2
INI
"$SPOTRUN" run "$tmp/job.ini" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && echo "ok 1 - spotrun run of 2 ranks exits 0" ||
	{ echo "not ok 1 - spotrun run exits $rc"; tail -n 20 "$tmp/err" | sed 's/^/# /'; }
n=$(grep -cE '^\[[01]\] rank [01]: state of step 149 matches an uninterrupted run$' "$tmp/out")
[ "$n" -eq 2 ] && echo "ok 2 - both ranks end in an uninterrupted run's state" ||
	{ echo "not ok 2 - $n ranks match"; sed 's/^/# /' "$tmp/out" | tail -n 20; }
n0=$(grep -c '^\[0\] rank 0 saving at step' "$tmp/out")
n1=$(grep -c '^\[1\] rank 1 saving at step' "$tmp/out")
[ "$n0" -eq 2 ] && [ "$n1" -eq 2 ] && echo "ok 3 - each notice reached both ranks: both saved twice" ||
	echo "not ok 3 - rank 0 saved $n0 times, rank 1 $n1"
s0=$(sed -n 's/^\[0\] rank 0 saving at step //p' "$tmp/out" | tr '\n' ' ')
s1=$(sed -n 's/^\[1\] rank 1 saving at step //p' "$tmp/out" | tr '\n' ' ')
[ -n "$s0" ] && [ "$s0" = "$s1" ] && echo "ok 4 - at the same steps ($s0)" ||
	echo "not ok 4 - rank 0 at '$s0', rank 1 at '$s1'"
n=$(grep -cE '^\[[01]\] rank [01] resumed from step' "$tmp/out")
[ "$n" -eq 4 ] && echo "ok 5 - both ranks resumed twice, by the library's restore" ||
	echo "not ok 5 - resumed $n times"
grep -q 'finished exit 0: 3 attempts, 2 preemptions' "$tmp/err" &&
	echo "ok 6 - timeline: 3 attempts, 2 preemptions" ||
	{ echo "not ok 6 - final timeline line"; tail -n 3 "$tmp/err" | sed 's/^/# /'; }
n=$(grep -c 'ckpt.* committed in ' "$tmp/err")
[ "$n" -eq 2 ] && echo "ok 7 - two commits on the timeline: one done marker a notice" ||
	{ echo "not ok 7 - $n commits on the timeline"; grep ckpt "$tmp/err" | sed 's/^/# /'; }
"$SPOTRUN" ls "$tmp/job.ini" >"$tmp/ls" 2>&1
n=$(grep -cE '^ *[01] ' "$tmp/ls")
[ "$n" -eq 2 ] && echo "ok 8 - spotrun ls lists checkpoints 0 and 1, one a save of both ranks" ||
	{ echo "not ok 8 - spotrun ls"; sed 's/^/# /' "$tmp/ls"; }
n=$(ls "$tmp/store/libranks/parts" 2>/dev/null | wc -l)
[ "$n" -eq 0 ] && echo "ok 9 - no rank's part is left in the store" ||
	{ echo "not ok 9 - $n parts left"; ls "$tmp/store/libranks/parts" | sed 's/^/# /'; }
grep -q 'libranks [0-9]:' "$tmp/err" && { echo "not ok 10 - a rank reported a library error";
	grep 'libranks [0-9]:' "$tmp/err" | sed 's/^/# /'; } ||
	echo "ok 10 - no library error on the ranks' stderr"

