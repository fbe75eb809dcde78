#!/bin/sh
# t30-run.sh: the supervisor loop of `spotrun run` end to end: exit codes
# through run, the restart policy, the signal provider (SIGTERM -> notice ->
# checkpoint -> exit 75 -> the next run resumes), signals from the user,
# the per-attempt log (the whole timeline of its attempt, from its restore to
# the run's last line, with wall-clock times), the wall-clock times of the
# timeline, the local-dir lock and the GPU requirement; a damaged newest
# manifest: the next run restores the checkpoint committed before it.
set -u
. "$top_srcdir/tests/jobs/lib.sh"	# wait_for; no-cloud.sh: name = auto
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; [ -f "$tmp/err" ] && sed 's/^/# /' "$tmp/err" | tail -n 15; }
check() { if [ "$1" = "$2" ]; then ok "$3"; else nok "$3: got '$1', want '$2'"; fi; }
# job NAME COMMAND [EXTRA INI LINES...]: write $tmp/NAME.ini
job() {
	name=$1 cmd=$2; shift 2
	{
		printf '[job]\nname = %s\ncommand = %s\n' "$name" "$cmd"
		printf '[checkpoint]\nstore = %s/store\nlocal_dir = %s/local-%s\nmargin = 1s\n' "$tmp" "$tmp" "$name"
		for l in "$@"; do printf '%s\n' "$l"; done
	} >"$tmp/$name.ini"
}
echo "1..52"

# 1-5: exit codes pass through run; a job that failed for good leaves no
# local copy of its checkpoint
for code in 0 1 42 255; do
	job code$code "/bin/sh -c 'exit $code'"
	"$SPOTRUN" run -q "$tmp/code$code.ini" >/dev/null 2>"$tmp/err"
	check $? $code "run passes exit code $code through"
done
check "$(ls "$tmp/local-code42")" "lock
logs" "failed for good (exit 42): only the logs and the lock stay"
# 6: name = auto (the default) on this machine: local, decided within 0.5 s
# (no-cloud.sh points the three clouds at a closed loopback port), and the
# header line says so.
job auto "/bin/sh -c 'exit 0'"
"$SPOTRUN" run -q "$tmp/auto.ini" >/dev/null 2>"$tmp/err"
secs=$(sed -n 's/^spotrun: auto on local (auto, detected in \([0-9.]*\) s), .*, store file:.*/\1/p' "$tmp/err")
if [ -n "$secs" ] && awk -v s="$secs" 'BEGIN { exit !(s < 0.5) }'; then
	ok "auto picks local here in $secs s, and the header line says so"
else
	nok "auto: header '$(head -n 1 "$tmp/err")'"
fi
# 7: killed by a signal
printf '[job]\nname = sig\ncommand = /bin/sh -c %s\nshell = no\n[checkpoint]\nstore = %s/store\nlocal_dir = %s/l-sig\n' \
	"'kill -SEGV \$\$'" "$tmp" "$tmp" >"$tmp/sig.ini"
"$SPOTRUN" run -q "$tmp/sig.ini" >/dev/null 2>"$tmp/err"
check $? 139 "a job killed by SIGSEGV gives 128+11"
# 8-9: exec failures
job nf "$tmp/no-such-program"
"$SPOTRUN" run -q "$tmp/nf.ini" >/dev/null 2>"$tmp/err"
check $? 127 "a missing command gives 127"
grep -q "spotrun: run $tmp/no-such-program: No such file or directory; exit 127" "$tmp/err" &&
	ok "and says which command and why" || nok "message for a missing command"
# 10: not executable
printf '#!/bin/sh\nexit 0\n' >"$tmp/noexec"; chmod 644 "$tmp/noexec"
job nx "$tmp/noexec"
"$SPOTRUN" run -q "$tmp/nx.ini" >/dev/null 2>"$tmp/err"
check $? 126 "a command that is not executable gives 126"

# 11-13: restart policy: fails twice (counter file), then succeeds
cat >"$tmp/flaky.sh" <<'SH'
c=$(cat "$1" 2>/dev/null || echo 0); c=$((c + 1)); echo $c >"$1"
[ $c -ge 3 ] && exit 0
exit 3
SH
job flaky "/bin/sh $tmp/flaky.sh $tmp/flaky.count" "[retry]" "max_restarts = 5" "on_exit_codes = 3" "backoff = 100ms"
"$SPOTRUN" run "$tmp/flaky.ini" >/dev/null 2>"$tmp/err"
check $? 0 "a job failing twice with a restartable code succeeds on the third attempt"
check "$(grep -c 'restart  exit 3; restart' "$tmp/err")" 2 "two restarts were announced"
grep -q 'finished exit 0: 3 attempts, 0 preemptions, 2 restarts' "$tmp/err" && ok "the final line counts them" || nok "final line"
# 14: a code not in on_exit_codes is not restarted
rm -f "$tmp/flaky.count"
job flaky2 "/bin/sh -c 'exit 4'" "[retry]" "max_restarts = 5" "on_exit_codes = 3" "backoff = 100ms"
"$SPOTRUN" run "$tmp/flaky2.ini" >/dev/null 2>"$tmp/err"
check "$?:$(grep -c restart "$tmp/err")" "4:0" "exit 4 is not in on_exit_codes: no restart, code 4"
# 15: max_restarts bounds the attempts
job always "/bin/sh -c 'exit 5'" "[retry]" "max_restarts = 2" "backoff = 50ms"
"$SPOTRUN" run "$tmp/always.ini" >/dev/null 2>"$tmp/err"
check "$?:$(grep -c 'restart  exit 5' "$tmp/err")" "5:2" "max_restarts = 2: three attempts, then the job's code"

# 16-21: signal provider: SIGTERM is the notice; checkpoint; exit 75; resume;
# the local copy of the checkpoint stays after the preemption, goes once the
# job finished
cat >"$tmp/sigjob.sh" <<'SH'
step=${SPOTRUN_RESUME_STEP:-0}
[ -n "$SPOTRUN_RESUME_STEP" ] && step=$(cat "$SPOTRUN_CKPT_DIR/step") && echo "resumed at $step"
while [ "$step" -lt 30 ]; do
	if [ -f "$SPOTRUN_CKPT_REQUEST" ]; then
		echo "$step" >"$SPOTRUN_CKPT_DIR/step"; echo "$step" >"$SPOTRUN_CKPT_DONE.t"; mv "$SPOTRUN_CKPT_DONE.t" "$SPOTRUN_CKPT_DONE"
	fi
	step=$((step + 1)); echo "step $step"; sleep 0.1
done
echo "done at $step"
SH
# The notice comes once the job is at step 5 (an event, not a time: a
# loaded machine starts the job late).
job sigp "/bin/sh $tmp/sigjob.sh" "signal = none" "[provider]" "name = signal" "grace = 5s"
"$SPOTRUN" run "$tmp/sigp.ini" >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for "$tmp/out" '^step 5$' 120 $pid
kill -TERM $pid
wait $pid
check $? 75 "SIGTERM with the signal provider: checkpoint, then exit 75"
[ -d "$tmp/local-sigp/ckpt" ] && [ -d "$tmp/local-sigp/ctl" ] && ok "preempted: the local copy of the checkpoint stays" ||
	nok "preempted: local dir: $(ls "$tmp/local-sigp")"
grep -q 'notice   SIGTERM' "$tmp/err" && grep -q 'ckpt     0 step [0-9]' "$tmp/err" &&
	ok "the notice and the committed checkpoint are on the timeline" || nok "timeline of the notice"
"$SPOTRUN" run "$tmp/sigp.ini" >"$tmp/out2" 2>"$tmp/err"
check $? 0 "the next run finishes"
check "$(cd "$tmp/local-sigp" && ls -d ckpt ctl lock logs logs/latest/attempt-1.log 2>&1)" \
	"ls: cannot access 'ckpt': No such file or directory
ls: cannot access 'ctl': No such file or directory
lock
logs
logs/latest/attempt-1.log" "finished: the local copy of the checkpoint and the markers go, the logs and the lock stay"
step=$(sed -n 's/^resumed at //p' "$tmp/out2")
[ -n "$step" ] && [ "$step" -ge 5 ] && ok "and resumed from the notice's checkpoint (step $step)" || nok "resume step '$step'"

# 22: the job finished: running it again starts afresh, not from its end
"$SPOTRUN" run "$tmp/sigp.ini" >"$tmp/out3" 2>"$tmp/err"
if grep -q 'attempt  1 starts afresh: sigp finished in an earlier run' "$tmp/err" && ! grep -q '^resumed' "$tmp/out3" &&
    grep -q '^done at 30$' "$tmp/out3"; then
	ok "a finished job runs afresh the next time"
else
	nok "a finished job run again: $(cat "$tmp/out3")"
fi

# 23-24: the attempts of the job, with their runs, machines and outcomes:
# three runs of one attempt each, oldest first, each named by its run id
run='[0-9]{8}T[0-9]{6}Z-[0-9]+ +1 '
"$SPOTRUN" ls -a "$tmp/sigp.ini" >"$tmp/ls" 2>"$tmp/err"
if sed -n 1p "$tmp/ls" | grep -qE '^RUN +ATTEMPT +STARTED ' &&
    sed -n 2p "$tmp/ls" | grep -qE "^$run.* fresh +1 +[0-9]+ +preempted +signal " &&
    sed -n 3p "$tmp/ls" | grep -qE "^$run.* step [0-9]+ +1 +0 +exit 0 +signal " &&
    sed -n 4p "$tmp/ls" | grep -qE "^$run.* fresh +1 +0 +exit 0 +signal " && [ "$(wc -l <"$tmp/ls")" -eq 4 ] &&
    [ "$(sed -n '2,4p' "$tmp/ls" | awk '{print $1}' | sort -u | wc -l)" -eq 3 ]; then
	ok "ls -a: three runs: preempted after a checkpoint, resumed to exit 0, afresh to exit 0"
else
	nok "ls -a: $(cat "$tmp/ls")"
fi
check "$("$SPOTRUN" ls -a -s "file://$tmp/store" nosuchjob)" "no attempts of job nosuchjob in file://$tmp/store" "ls -a of an unknown job"

# 25: SIGINT is forwarded and stops restarts
job intr "/bin/sh -c 'trap \"exit 9\" INT; echo trapped; while :; do sleep 0.05; done'" "[retry]" "max_restarts = 5"
"$SPOTRUN" run -q "$tmp/intr.ini" >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for "$tmp/out" '^trapped$' 120 $pid
kill -INT $pid
wait $pid
check $? 9 "SIGINT reaches the job, whose code comes back, and no restart follows"

# 26-28: the timeline's times are elapsed, and say so: the first line gives
# the wall-clock time of 00:00; a request's deadline is a duration and a
# wall-clock time (write_timeout = 10m: 600 s after 00:00 plus the request's
# elapsed time); the notice's deadline too (grace = 5s).
wall='[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3} [+-][0-9]{4}'
job sigw "/bin/sh $tmp/sigjob.sh" "signal = none" "interval = 1s" "[provider]" "name = signal" "grace = 5s"
"$SPOTRUN" run "$tmp/sigw.ini" >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for "$tmp/err" '  request  periodic' 120 $pid
kill -TERM $pid
wait $pid
head -n 1 "$tmp/err" | grep -qE "^spotrun: sigw on signal, .*, store file://$tmp/store; the timeline's 00:00 is $wall\$" &&
	ok "the first line gives the wall-clock time of the timeline's 00:00" || nok "first line: $(head -n 1 "$tmp/err")"
t0=$(head -n 1 "$tmp/err" | sed 's/.* 00:00 is \(.*\)\.[0-9]* \([+-][0-9]*\)$/\1 \2/')
req=$(grep -m 1 '  request  ' "$tmp/err")
by=$(printf '%s\n' "$req" | sed -n 's/^00:\(0[0-9]\)  request  periodic checkpoint, answer within 10m00s (by \([0-9:]*\))$/\1 \2/p')
if [ -n "$by" ] && [ -n "$t0" ]; then
	d=$(( $(date -d "${t0% *}" +%s) + ${by% *} + 600 - $(date -d "$(echo "$t0" | cut -d' ' -f1) ${by#* }" +%s) ))
	# HH:MM:SS carries no date: a run that straddles midnight reads a day off.
	d=$(( ((d % 86400) + 86400 + 43200) % 86400 - 43200 ))
	[ "$d" -ge -1 ] && [ "$d" -le 1 ] && ok "a request says 'answer within 10m00s (by HH:MM:SS)', 00:00 + elapsed + 600 s" ||
		nok "request line '$req': off by $d s from 00:00 = $t0"
else
	nok "request line '$req' (00:00 = '$t0')"
fi
grep -qE '^00:0[0-9]  notice   SIGTERM, deadline in 5\.0s \(at [0-9]{2}:[0-9]{2}:[0-9]{2}\)$' "$tmp/err" &&
	ok "the notice's deadline is a duration and a wall-clock time" || nok "notice line: $(grep notice "$tmp/err")"

# 29-34: the attempt's log has its whole timeline, with the wall-clock time
# of its zero: the restore and the next machine (local provider), the
# restart, and the run's last line.
log() { echo "$tmp/local-$1/logs/latest/attempt-$2.log"; }
has() { grep -qE -- "$2" "$1" && ok "$3" || nok "$3: $(cat "$1")"; }
job locp "/bin/sh $tmp/sigjob.sh" "signal = none" "[provider]" "name = local" "after = 1s" "window = 4s" "preemptions = 1"
"$SPOTRUN" run "$tmp/locp.ini" >"$tmp/out" 2>"$tmp/err"
has "$(log locp 1)" "^\+0000\.[0-9]{3} spotrun attempt 1 of run [0-9]{8}T[0-9]{6}Z-[0-9]+ of locp: this log's \+0000\.000 is $wall; the timeline's 00:00 is $wall\$" \
	"the log opens with its attempt, its run and the wall-clock time of its zero"
has "$(log locp 1)" '^\+[0-9.]+ spotrun 00:0[0-9]  preempted next machine$' "the next machine is in the preempted attempt's log"
has "$(log locp 2)" '^\+[0-9.]+ spotrun 00:0[0-9]  attempt  2 restored checkpoint 0 at step [0-9]+ ' "the restore is in the log of the attempt it starts"
has "$(log locp 2)" '^\+[0-9.]+ spotrun 00:[0-9]{2}  finished exit 0: 2 attempts, 1 preemption, ' "the run's last line is in the last attempt's log"
has "$(log sigw 1)" '^\+[0-9.]+ spotrun 00:0[0-9]  preempted exit 75: 1 attempt, 1 preemption, ' "a preempted run's last line is in its log"
has "$(log flaky 1)" '^\+[0-9.]+ spotrun 00:[0-9]{2}  restart  exit 3; restart 1 of 5 in 100ms$' "the restart is in the log of the attempt that failed"

# 35-36: the attempt log
job logged "/bin/sh -c 'echo to-out; echo to-err >&2'"
"$SPOTRUN" run -q "$tmp/logged.ini" >"$tmp/out" 2>"$tmp/err"
log="$tmp/local-logged/logs/latest/attempt-1.log"
grep -qE '^\+[0-9]{4}\.[0-9]{3} out to-out$' "$log" && grep -qE '^\+[0-9]{4}\.[0-9]{3} err to-err$' "$log" &&
	ok "stdout and stderr lines are in the attempt log with timestamps" || nok "attempt log: $(cat "$log")"
check "$(cat "$tmp/out")" "to-out" "the job's stdout passes through unchanged"

# 37: a second run of the same job from the same local dir is refused
job busy "/bin/sh -c 'echo started; exec sleep 300'"
"$SPOTRUN" run -q "$tmp/busy.ini" >"$tmp/out" 2>&1 &
pid=$!
wait_for "$tmp/out" '^started$' 120 $pid	# its lock is taken before the job starts
"$SPOTRUN" run -q "$tmp/busy.ini" >/dev/null 2>"$tmp/err"
rc=$?
kill $pid; wait $pid 2>/dev/null
check "$rc" 69 "a second run from the same local dir exits 69"

# 38: a job needing more GPUs than the machine has
if ls /dev/nvidia[0-9]* >/dev/null 2>&1; then
	ok "# SKIP this machine has GPUs"
else
	job gpu "true" "[resources]" "gpus = 1"
	"$SPOTRUN" run -q "$tmp/gpu.ini" >/dev/null 2>"$tmp/err"
	check "$?:$(cat "$tmp/err")" "69:spotrun: job gpu needs at least 1 GPU; this machine has 0" "gpus = 1 on a machine without GPUs"
fi

# 39-43: spotrun killed outright: the job's leader dies with it (parent death
# signal) and a setsid'd child too (the run's keeper kills the run's cgroup,
# or what carries its SPOTRUN_CKPT_DIR); with the keeper stopped and killed
# as well, the child survives, and the next run stops it.
# until_ok SECONDS CMD...: CMD every 0.1 s until it succeeds; 1 after SECONDS.
until_ok() { _n=$(($1 * 10)); shift; while [ "$_n" -gt 0 ]; do "$@" && return 0; sleep 0.1; _n=$((_n - 1)); done; return 1; }
running() { pgrep -f "$1" >/dev/null; }
stopped() { ! pgrep -f "$1" >/dev/null; }
job crashed "/bin/sh -c 'setsid sleep 97.25 & exec sleep 96.25'"
"$SPOTRUN" run -q "$tmp/crashed.ini" >/dev/null 2>&1 &
pid=$!
until_ok 30 running 'sleep 97.25'
kill -KILL $pid
wait $pid 2>/dev/null
until_ok 30 stopped 'sleep 96.25' && ok "the leader died with spotrun" || nok "the leader outlived a killed spotrun"
until_ok 30 stopped 'sleep 97.25' && ok "a setsid'd child of the job died too: the run's keeper" ||
    { nok "a setsid'd child outlived a killed spotrun"; pkill -f 'sleep 97.25'; }
"$SPOTRUN" run -q "$tmp/crashed.ini" >/dev/null 2>&1 &
pid=$!
until_ok 30 running 'sleep 97.25'
kp=$(pgrep -f "__keeper .*SPOTRUN_CKPT_DIR=$tmp/local-crashed/ckpt")
[ -n "$kp" ] && kill -STOP $kp
kill -KILL $pid
wait $pid 2>/dev/null
[ -n "$kp" ] && kill -KILL $kp
until_ok 30 stopped 'sleep 96.25'
running 'sleep 97.25' && ok "with its keeper killed too, a setsid'd child survives" ||
    nok "setsid'd child missing: the next case cannot be tested"
job crashed "true"
"$SPOTRUN" run -q "$tmp/crashed.ini" >/dev/null 2>"$tmp/err"
if grep -q 'spotrun: stopped 1 process left running by an earlier, killed run of crashed' "$tmp/err" && ! pgrep -f 'sleep 97.25' >/dev/null; then
	ok "the next run stops the leftover and says so"
else
	nok "leftover after the next run"
	pkill -f 'sleep 97.25'
fi

# 42-44: the newest manifest damaged (truncated): the next run restores
# the checkpoint committed before it, by its commit record, and says so
job dmg "/bin/sh $tmp/sigjob.sh" "signal = none" "[provider]" "name = signal" "grace = 5s"
for i in 0 1; do
	"$SPOTRUN" run "$tmp/dmg.ini" >"$tmp/out" 2>"$tmp/err$i" &
	pid=$!
	wait_for "$tmp/out" '^step [3-9]$' 120 $pid
	kill -TERM $pid
	wait $pid
done
s0=$(sed -nE 's/^[0-9:]+  ckpt     0 step ([0-9]+):.*/\1/p' "$tmp/err0")
m1=$tmp/store/dmg/manifests/0000000001.json
head -c 100 "$m1" >"$tmp/m1" && cat "$tmp/m1" >"$m1"
"$SPOTRUN" run "$tmp/dmg.ini" >"$tmp/out" 2>"$tmp/err"
check "$?|$(sed -n 's/^resumed at //p' "$tmp/out")" "0|$s0" \
	"manifest 1 truncated: the run resumes from checkpoint 0 (step $s0) and finishes"
grep -qE "^[0-9:]+  ckpt     warning: restored checkpoint 0 \(step $s0\) instead of checkpoint 1, whose manifest dmg/manifests/0000000001\.json cannot be read \(JSON .*\): checkpoint 0 is the newest older one committed, as the commit record of 1 says\$" "$tmp/err" &&
	ok "... with a warning naming the manifest and the step restored" || nok "the warning"
grep -q 'no older checkpoint' "$tmp/err" && nok "it said no older checkpoint" || ok "... never 'no older checkpoint'"

# 46: periodic checkpoints with keep = 1: each retention line comes after the
# line of the checkpoint it followed (the retention runs after the commit,
# and was said before the commit was).
job ret "python3 $top_srcdir/tests/jobs/workjob.py --steps 20 --sleep 0.2 --log $tmp" \
	"interval = 1s" "keep = 1" "[provider]" "name = local"
"$SPOTRUN" run "$tmp/ret.ini" >"$tmp/out" 2>"$tmp/err"
order=$(sed -nE 's/^[0-9:]+  ckpt     ([0-9]+) step .*/c\1/p; s/^[0-9:]+  ckpt     retention: .*/r/p' "$tmp/err" | tr '\n' ' ')
case "$order" in
"c0 c1 r c2 r"*) ok "retention lines follow their checkpoints' ($order)" ;;
*) nok "retention lines out of order: $order"; sed 's/^/# /' "$tmp/err" ;;
esac

# 47-49: notices on the local provider with keep = 1: each notice's
# retention runs beside the next machine's restore and start (as the old
# machine's would on a cloud), so its line is said once it is joined (at
# the next save, or here at the run's end): after the next attempt's
# start, where a retention done before the next machine would come before
# "preempted next machine". It did run: one checkpoint is left.
want=$("$top_builddir/tests/cjob" 150 20 | sed -n 's/^result: //p')
job retn "$top_builddir/tests/cjob 150 20" "signal = none" "keep = 1" "[provider]" "name = local" \
	"after = 1s" "window = 4s" "preemptions = 2"
"$SPOTRUN" run "$tmp/retn.ini" >"$tmp/out" 2>"$tmp/err"
rc=$?
order=$(sed -nE -e 's/^[0-9:]+  ckpt     ([0-9]+) step .*/c\1/p' -e 's/^[0-9:]+  ckpt     retention: .*/r/p' \
	-e 's/^[0-9:]+  preempted next machine$/p/p' -e 's/^[0-9:]+  started  .*/s/p' \
	-e 's/^[0-9:]+  finished .*/f/p' "$tmp/err" | tr '\n' ' ')
check "$rc|$order" "0|s c0 p s c1 p s r f " \
	"a notice's retention runs beside the next machine, said when joined ($order)"
[ "$rc|$order" = "0|s c0 p s c1 p s r f " ] || sed 's/^/# /' "$tmp/err"
left=$("$SPOTRUN" ls "$tmp/retn.ini" 2>&1 | grep -cE '^ *[0-9]+ ')
check "$left" 1 "keep = 1: one checkpoint left by the retention run beside"
got=$(sed -n 's/^result: //p' "$tmp/out")
check "${got:-none}" "${want:-no result alone}" "the preempted job's result equals an uninterrupted run's"

# 50: a preempted attempt's record (with its end) is written once the next
# machine's job has started, not between the stop and the next start. A
# file where the job's attempts/ folder goes makes every record's write
# fail with a warning in the timeline, at the moment of the write: the
# end of attempt 1 after attempt 2's start and its own start record.
job recl "$top_builddir/tests/cjob 150 20" "signal = none" "[provider]" "name = local" \
	"after = 1s" "window = 4s" "preemptions = 2"
mkdir -p "$tmp/store/recl"
: >"$tmp/store/recl/attempts"
"$SPOTRUN" run "$tmp/recl.ini" >"$tmp/out" 2>"$tmp/err"
rc=$?
order=$(sed -nE -e 's/^[0-9:]+  warning  record attempt ([0-9]+): .*/w\1/p' \
	-e 's/^[0-9:]+  started  .*/s/p' -e 's/^[0-9:]+  finished .*/f/p' "$tmp/err" | tr '\n' ' ')
check "$rc|$order" "0|s w1 s w2 w1 s w3 w2 w3 f " \
	"a preempted attempt's record is written after the next machine's job started ($order)"

# 51-52: a notice's commit record (doc/format.md) is written after the
# job's stop, beside the next machine: checkpoint 1 of the run above has
# its record; and where the record cannot be written (a folder in its
# place) the warning comes after the next machine's start, not before the
# stop as a record written inside the save would.
check "$(cat "$tmp/store/retn/manifests/0000000001.commit" 2>&1)" "commit 1 parent 0 epoch 1" \
	"the notice's checkpoint has its commit record"
job recw "$top_builddir/tests/cjob 150 20" "signal = none" "[provider]" "name = local" \
	"after = 1s" "window = 4s" "preemptions = 1"
mkdir -p "$tmp/store/recw/manifests/0000000000.commit"
"$SPOTRUN" run "$tmp/recw.ini" >"$tmp/out" 2>"$tmp/err"
rc=$?
order=$(sed -nE -e 's/^[0-9:]+  ckpt     ([0-9]+) step .*/c\1/p' -e 's/^[0-9:]+  stop     .*/t/p' \
	-e 's/^[0-9:]+  ckpt     warning: write the commit record of checkpoint 0: .*/w/p' \
	-e 's/^[0-9:]+  started  .*/s/p' -e 's/^[0-9:]+  finished .*/f/p' "$tmp/err" | tr '\n' ' ')
check "$rc|$order" "0|s c0 t s w f " "the commit record is written after the stop, beside the next machine ($order)"
