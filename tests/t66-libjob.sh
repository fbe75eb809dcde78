#!/bin/sh
# t66-libjob.sh: library mode end to end. A C training loop that
# checkpoints through libspotrun (tests/jobs/libtrain.c: Adam on f32
# weights, a bf16 copy, i64 and u64 counters) runs under `spotrun run`
# with mode = library while the local provider preempts it twice: each
# notice reaches the job as a request with its deadline, the library
# commits the buffers itself and says so in its done marker, spotrun
# packs nothing, and the job resumes from the library's restore. Its
# final state is bit-identical to an uninterrupted run's, and `spotrun ls`
# lists the library's checkpoints. A second job is asked every second
# (periodic requests) and keeps 2: each request is answered by a commit
# the timeline shows, and the library's retention keeps the job file's 2.
# The first job again with spotrun_save_async (libtrain's "async"):
# training goes on while each save lands, preempted twice all the same,
# bit-identical, and the timeline says how long each save blocked it.
set -u
. "$top_srcdir/tests/jobs/no-cloud.sh"
job="$top_builddir/tests/jobs/libtrain"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..27"
want=$(SPOTRUN_STORE="file://$tmp/ref" SPOTRUN_JOB=ref "$job" 150 0 "$tmp/want.bin" |
    sed -n 's/^result: //p')
[ -n "$want" ] && echo "ok 1 - uninterrupted result $want" ||
	echo "not ok 1 - no result from an uninterrupted run"
cat >"$tmp/job.ini" <<INI
[job]
name = libjob
command = $job 150 40 $tmp/got.bin
[checkpoint]
mode = library
store = $tmp/store
local_dir = $tmp/local
margin = 1s
[provider]
name = local
after = 2s
window = 30s
preemptions = 2
INI
"$SPOTRUN" check "$tmp/job.ini" >"$tmp/check" 2>&1 && echo "ok 2 - spotrun check accepts mode = library" ||
	{ echo "not ok 2 - spotrun check refuses mode = library"; sed 's/^/# /' "$tmp/check"; }
"$SPOTRUN" run "$tmp/job.ini" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 0 ] && echo "ok 3 - spotrun run exits 0" ||
	{ echo "not ok 3 - spotrun run exits $rc"; sed 's/^/# /' "$tmp/err"; }
got=$(sed -n 's/^result: //p' "$tmp/out")
[ "$got" = "$want" ] && echo "ok 4 - preempted result equals the uninterrupted one" ||
	echo "not ok 4 - result '$got', want '$want'"
cmp -s "$tmp/want.bin" "$tmp/got.bin" && echo "ok 5 - the final state is bit-identical" ||
	echo "not ok 5 - the final state differs"
n=$(grep -c '^resumed from step' "$tmp/out")
[ "$n" -eq 2 ] && echo "ok 6 - resumed twice, by the library's restore" || echo "not ok 6 - resumed $n times"
grep -q 'finished exit 0: 3 attempts, 2 preemptions' "$tmp/err" &&
	echo "ok 7 - timeline: 3 attempts, 2 preemptions" ||
	{ echo "not ok 7 - final timeline line"; tail -n 3 "$tmp/err" | sed 's/^/# /'; }
n=$(grep -c '^saving at step' "$tmp/out")
[ "$n" -eq 2 ] && echo "ok 8 - two notice requests reach spotrun_save" ||
	echo "not ok 8 - $n notice requests reach spotrun_save"
n=$(grep -c 'ckpt.* committed in ' "$tmp/err")
[ "$n" -eq 2 ] && echo "ok 9 - the supervisor reports the library's two commits" ||
	{ echo "not ok 9 - $n commits on the timeline"; grep ckpt "$tmp/err" | sed 's/^/# /'; }
"$SPOTRUN" ls "$tmp/job.ini" >"$tmp/ls" 2>&1
n=$(grep -cE '^ *[01] ' "$tmp/ls")
[ "$n" -eq 2 ] && echo "ok 10 - spotrun ls lists checkpoints 0 and 1" ||
	{ echo "not ok 10 - spotrun ls"; sed 's/^/# /' "$tmp/ls"; }

# Periodic requests, keep = 2 (SPOTRUN_CKPT_KEEP): no preemption.
cat >"$tmp/per.ini" <<INI
[job]
name = libper
command = $job 150 40 $tmp/per.bin
[checkpoint]
mode = library
store = $tmp/store
local_dir = $tmp/local-per
interval = 1s
keep = 2
[provider]
name = local
preemptions = 0
INI
"$SPOTRUN" run "$tmp/per.ini" >"$tmp/pout" 2>"$tmp/perr"
rc=$?
got=$(sed -n 's/^result: //p' "$tmp/pout")
[ $rc -eq 0 ] && [ "$got" = "$want" ] && echo "ok 11 - periodic run exits 0 with the uninterrupted result" ||
	{ echo "not ok 11 - periodic run: exit $rc, result '$got'"; tail -n 5 "$tmp/perr" | sed 's/^/# /'; }
nreq=$(grep -c 'request  periodic checkpoint, answer within' "$tmp/perr")
[ "$nreq" -ge 3 ] && echo "ok 12 - $nreq periodic requests over 6 s" || echo "not ok 12 - $nreq periodic requests"
nsave=$(grep -c '^checkpoint at step' "$tmp/pout")
ncommit=$(grep -c 'ckpt.* committed in ' "$tmp/perr")
[ "$nsave" -ge 3 ] && [ "$nsave" -eq "$ncommit" ] &&
	echo "ok 13 - every save of the job ($nsave) is a commit on the timeline" ||
	echo "not ok 13 - $nsave saves, $ncommit commits on the timeline"
"$SPOTRUN" ls "$tmp/per.ini" >"$tmp/pls" 2>&1
n=$(grep -cE '^ *[0-9]+ ' "$tmp/pls")
[ "$n" -eq 2 ] && echo "ok 14 - the library's retention keeps the job file's 2" ||
	{ echo "not ok 14 - spotrun ls lists $n"; sed 's/^/# /' "$tmp/pls"; }
grep -q 'libtrain:' "$tmp/err" "$tmp/perr" && echo "not ok 15 - the job reported a library error" ||
	echo "ok 15 - no library error on the job's stderr"
# The supervisor does not read the library's data: its restore line says
# who does, with no time or rate of its own ("0ms, 0 B/s" before).
n=$(grep -cE 'attempt  [23] resumes from checkpoint [01] at step [0-9]+ \([^)]+ -> [^)]+\): the job reads it \(library mode\)$' "$tmp/err")
[ "$n" -eq 2 ] && ! grep -q 'restored checkpoint' "$tmp/err" &&
	echo "ok 16 - attempts 2 and 3 say the job reads the checkpoint, without a rate" ||
	{ echo "not ok 16 - the restore lines"; grep 'attempt  [23]' "$tmp/err" | sed 's/^/# /'; }

# The preempted job with async saves.
sed -e "s|^name = libjob|name = libasync|" -e "s|got.bin|agot.bin async|" \
    -e "s|local_dir = .*|local_dir = $tmp/local-async|" "$tmp/job.ini" >"$tmp/async.ini"
"$SPOTRUN" run "$tmp/async.ini" >"$tmp/aout" 2>"$tmp/aerr"
rc=$?
got=$(sed -n 's/^result: //p' "$tmp/aout")
[ $rc -eq 0 ] && [ "$got" = "$want" ] &&
	echo "ok 17 - async saves, preempted: exit 0 with the uninterrupted result" ||
	{ echo "not ok 17 - async run: exit $rc, result '$got'"; tail -n 5 "$tmp/aerr" | sed 's/^/# /'; }
cmp -s "$tmp/want.bin" "$tmp/agot.bin" && echo "ok 18 - its final state is bit-identical" ||
	echo "not ok 18 - its final state differs"
n=$(grep -c '^resumed from step' "$tmp/aout")
grep -q 'finished exit 0: 3 attempts, 2 preemptions' "$tmp/aerr" && [ "$n" -eq 2 ] &&
	echo "ok 19 - 3 attempts, 2 preemptions, resumed twice" ||
	{ echo "not ok 19 - resumed $n times"; tail -n 3 "$tmp/aerr" | sed 's/^/# /'; }
n=$(grep -c 'ckpt.* the job saved step [0-9]* in the background: its training was blocked [0-9.]* s of the save.s [0-9.]* s' "$tmp/aerr")
[ "$n" -eq 2 ] && echo "ok 20 - the timeline says how long each of the 2 saves blocked training" ||
	{ echo "not ok 20 - $n lines on blocked training"; grep ckpt "$tmp/aerr" | sed 's/^/# /'; }

# Saves the job makes unasked (own=20: after steps 19, 39, 59) reach the
# timeline and the run's count through SPOTRUN_CKPT_SAVES; so does a save
# that fails (world=2 with no rank 1: the collective save's wait, cut to
# 1 s through env(1), since spotrun keeps SPOTRUN_ names for itself).
for kind in own ownasync; do
	extra=own=20
	[ $kind = ownasync ] && extra="own=20 async"
	cat >"$tmp/$kind.ini" <<INI
[job]
name = lib$kind
command = $job 60 10 $tmp/$kind.bin $extra
[checkpoint]
mode = library
store = $tmp/store
local_dir = $tmp/local-$kind
keep = 2
[provider]
name = local
preemptions = 0
INI
	"$SPOTRUN" run "$tmp/$kind.ini" >"$tmp/$kind.out" 2>"$tmp/$kind.err"
done
n=$(grep -cE '  ckpt     [012] step (19|39|59): [^,]+ -> [^,]+ \(0\.[0-9]+\), [^,]+ new, committed by the job unasked in ' "$tmp/own.err")
[ "$n" -eq 3 ] && grep -q 'finished exit 0: 1 attempt, 0 preemptions, .*, 3 checkpoints$' "$tmp/own.err" &&
	echo "ok 21 - the job's 3 unasked commits are on the timeline and counted" ||
	{ echo "not ok 21 - $n unasked commits on the timeline"; sed 's/^/# /' "$tmp/own.err"; }
n=$(grep -cE '  ckpt     [012] step (19|39|59): .* committed by the job unasked in ' "$tmp/ownasync.err")
[ "$n" -eq 3 ] && grep -q ', 3 checkpoints$' "$tmp/ownasync.err" &&
	echo "ok 22 - and so are 3 unasked async ones" ||
	{ echo "not ok 22 - $n unasked async commits on the timeline"; sed 's/^/# /' "$tmp/ownasync.err"; }
"$SPOTRUN" ls "$tmp/own.ini" >"$tmp/own.ls" 2>&1
n=$(grep -cE '^ *[0-9]+ ' "$tmp/own.ls")
[ "$n" -eq 2 ] && echo "ok 23 - and kept by the job's retention (keep 2 of 3)" ||
	{ echo "not ok 23 - spotrun ls lists $n"; sed 's/^/# /' "$tmp/own.ls"; }
cat >"$tmp/fail.ini" <<INI
[job]
name = libfail
command = env SPOTRUN_RANK_WAIT=1 $job 30 10 $tmp/fail.bin own=10 world=2
[checkpoint]
mode = library
store = $tmp/store
local_dir = $tmp/local-fail
[provider]
name = local
preemptions = 0
INI
"$SPOTRUN" run "$tmp/fail.ini" >"$tmp/fail.out" 2>"$tmp/fail.err"
rc=$?
n=$(grep -cE "  error    the job's checkpoint of step (9|19|29) failed: checkpoint of libfail: rank 1 did not save step (9|19|29) within 1s \(no part libfail/parts/1-(9|19|29)-rank1\.json\); nothing committed; the previous checkpoint stays the newest$" "$tmp/fail.err")
[ "$n" -eq 3 ] && echo "ok 24 - each failed unasked save is an error on the timeline, with the library's words" ||
	{ echo "not ok 24 - $n failures on the timeline"; sed 's/^/# /' "$tmp/fail.err"; }
[ $rc -eq 0 ] && grep -q 'finished exit 0: 1 attempt, 0 preemptions, .*, 0 checkpoints' "$tmp/fail.err" &&
	echo "ok 25 - the job went on: exit 0, no checkpoint counted" ||
	{ echo "not ok 25 - exit $rc"; tail -n 2 "$tmp/fail.err" | sed 's/^/# /'; }
n=$(grep -c 'committed by the job unasked' "$tmp/err" "$tmp/perr" "$tmp/aerr" | awk -F: '{ s += $2 } END { print s }')
[ "$n" -eq 0 ] && echo "ok 26 - saves that answered requests are not reported again as unasked" ||
	{ echo "not ok 26 - $n answers reported as unasked too"; grep unasked "$tmp/err" "$tmp/perr" "$tmp/aerr" | sed 's/^/# /'; }
# A job that writes lines of its own into the saves file: one warning
# for them all, and its real reports still counted.
cat >"$tmp/junk.ini" <<INI
[job]
name = libjunk
command = sh -c 'for i in 1 2 3; do echo "junk \$i" >>"\$SPOTRUN_CKPT_SAVES"; done; exec $job 20 10 $tmp/junk.bin own=10'
[checkpoint]
mode = library
store = $tmp/store
local_dir = $tmp/local-junk
[provider]
name = local
preemptions = 0
INI
"$SPOTRUN" run "$tmp/junk.ini" >"$tmp/junk.out" 2>"$tmp/junk.err"
n=$(grep -c "warning  read .*/ctl/saves: 'junk 1' is not a libspotrun report of a save (ignored, and any more such lines)$" "$tmp/junk.err")
m=$(grep -c 'is not a libspotrun report' "$tmp/junk.err")
[ "$n" -eq 1 ] && [ "$m" -eq 1 ] && grep -q ', 2 checkpoints$' "$tmp/junk.err" &&
	echo "ok 27 - foreign lines in the saves file: one warning, the job's 2 commits still counted" ||
	{ echo "not ok 27 - foreign lines: $n/$m warnings"; sed 's/^/# /' "$tmp/junk.err"; }
