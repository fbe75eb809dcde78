#!/bin/sh
# t62-cjob.sh: a C job using the public header spotrun.h (request polling,
# atomic done marker, resume step) survives two simulated preemptions under
# `spotrun run` and ends with the result of an uninterrupted run.
set -u
cjob="$top_builddir/tests/cjob"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..6"
want=$("$cjob" 150 0 | sed -n 's/^result: //p')
[ -n "$want" ] && echo "ok 1 - uninterrupted result $want" || echo "not ok 1 - no result from an uninterrupted run"
cat >"$tmp/job.ini" <<INI
[job]
name = cjob
command = $cjob 150 40
[checkpoint]
signal = none
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
[ $rc -eq 0 ] && echo "ok 2 - spotrun run exits 0" || { echo "not ok 2 - spotrun run exits $rc"; sed 's/^/# /' "$tmp/err"; }
got=$(sed -n 's/^result: //p' "$tmp/out")
[ "$got" = "$want" ] && echo "ok 3 - preempted result equals the uninterrupted one" || echo "not ok 3 - result '$got', want '$want'"
n=$(grep -c '^resumed from step' "$tmp/out")
[ "$n" -eq 2 ] && echo "ok 4 - resumed twice" || echo "not ok 4 - resumed $n times"
grep -q 'finished exit 0: 3 attempts, 2 preemptions' "$tmp/err" && echo "ok 5 - timeline: 3 attempts, 2 preemptions" ||
	{ echo "not ok 5 - final timeline line"; tail -n 3 "$tmp/err" | sed 's/^/# /'; }
n=$(grep -c '^checkpoint [0-9]* (notice)' "$tmp/out")
[ "$n" -eq 2 ] && echo "ok 6 - two notice checkpoints answered through spotrun.h" || echo "not ok 6 - $n notice checkpoints"
