#!/bin/sh
# t60-quickstart.sh: examples/quickstart.ini end to end, as a new user runs
# it: the local provider preempts the job twice, spotrun checkpoints, plays
# the next machine and resumes; the final result must be bit-identical to an
# uninterrupted run's (the same job file with preemptions = 0, run at the
# same time, and the script run without spotrun at all). Only the store and
# the local directory are moved into a temp dir.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup

# The shipped job file, pointed at temp dirs.
mk_ini() {	# mk_ini FILE TAG PREEMPTIONS
	cp "$top_srcdir/examples/quickstart.ini" "$1"
	ini_set "$1" job workdir "$top_srcdir/examples"
	ini_set "$1" checkpoint store "file://$t_tmp/store-$2"
	ini_set "$1" checkpoint local_dir "$t_tmp/local-$2"
	ini_set "$1" provider preemptions "$3"
}
mk_ini "$t_tmp/q.ini" q 2
mk_ini "$t_tmp/ref.ini" ref 0

t_bg q "$SPOTRUN" run "$t_tmp/q.ini"
q_pid=$t_last
t_bg ref "$SPOTRUN" run "$t_tmp/ref.ini"
ref_pid=$t_last
# Without spotrun: no SPOTRUN_* variables, no checkpoints, no sleeping.
(cd "$top_srcdir/examples" && "$PY" quickstart/train.py --sleep 0) > "$t_tmp/plain.out" 2>&1
t_wait "$q_pid"
q_rc=$t_rc
t_wait "$ref_pid"
ref_rc=$t_rc

t_is "$q_rc" 0 "preempted run: exit 0" || t_show "$t_tmp/q.err"
t_is "$ref_rc" 0 "uninterrupted run: exit 0" || t_show "$t_tmp/ref.err"

# The timeline (stderr): two notices, two restores, the summary line.
t_like "$t_tmp/q.err" '^spotrun: quickstart on local, .*, store file://' "header names job, provider and store"
t_is "$(grep -cE '^[0-9:]+  notice ' "$t_tmp/q.err")" 2 "two notices"
t_like "$t_tmp/q.err" '^[0-9:]+  attempt  2 restored checkpoint [0-9]+ at step [0-9]+ ' "attempt 2 restored a checkpoint"
t_like "$t_tmp/q.err" '^[0-9:]+  attempt  3 restored checkpoint [0-9]+ at step [0-9]+ ' "attempt 3 restored a checkpoint"
t_is "$(grep -cE '^[0-9:]+  preempted next machine$' "$t_tmp/q.err")" 2 "two 'next machine' lines"
t_like "$t_tmp/q.err" '^[0-9:]+  finished exit 0: 3 attempts, 2 preemptions, [^,]+ of work lost, [0-9]+ checkpoints$' \
	"summary: 3 attempts, 2 preemptions"
t_like "$t_tmp/ref.err" '^[0-9:]+  finished exit 0: 1 attempt, 0 preemptions, ' "reference summary: 1 attempt, 0 preemptions"

# The job's own output (stdout): it resumed where the checkpoints were.
ckpts=$(grep -cE '^[0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed in ' "$t_tmp/q.err")
t_like "$t_tmp/q.err" "finished exit 0: .*, $ckpts checkpoints\$" "summary counts the $ckpts committed checkpoints"
steps=$(sed -nE 's/^[0-9:]+  attempt  [23] restored checkpoint [0-9]+ at step ([0-9]+) .*/\1/p' "$t_tmp/q.err" | tr '\n' ' ')
resumed=$(sed -nE 's/^resumed from step ([0-9]+) \(attempt [23]\)$/\1/p' "$t_tmp/q.out" | tr '\n' ' ')
t_is "$resumed" "$steps" "the job resumed at the restored steps ($steps)"
t_has "$t_tmp/q.out" "starting fresh: 200 steps" "attempt 1 started fresh"

q_res=$(result_of "$t_tmp/q.out")
ref_res=$(result_of "$t_tmp/ref.out")
plain_res=$(result_of "$t_tmp/plain.out")
t_like "$t_tmp/q.out" '^result: [0-9a-f]{64}$' "preempted run printed a result"
t_is "$q_res" "$ref_res" "result identical to the uninterrupted run under spotrun"
t_is "$ref_res" "$plain_res" "result identical to the run without spotrun"

# `spotrun ls` lists the kept checkpoints (keep = 3); the newest is the one
# the last "ckpt" line committed.
"$SPOTRUN" ls "$t_tmp/q.ini" > "$t_tmp/ls.out" 2> "$t_tmp/ls.err"
t_is "$?" 0 "spotrun ls: exit 0" || t_show "$t_tmp/ls.err"
t_like "$t_tmp/ls.out" '^SEQ +STEP +CREATED +FILES +RAW +STORED +RATIO$' "ls prints its header"
want_rows=$((ckpts < 3 ? ckpts : 3))
t_is "$(grep -cE '^[0-9]+ ' "$t_tmp/ls.out")" "$want_rows" "ls lists min(keep=3, $ckpts) checkpoints" || t_show "$t_tmp/ls.out"
last_step=$(sed -nE 's/^[0-9:]+  ckpt     [0-9]+ step ([0-9]+): .* committed in .*/\1/p' "$t_tmp/q.err" | tail -n 1)
t_like "$t_tmp/ls.out" "^[0-9]+ +$last_step +.* latest\$" "the latest checkpoint is step $last_step" \
	|| t_show "$t_tmp/ls.out"
t_like "$t_tmp/ls.out" '^[0-9]+ +[0-9]+ +[-0-9]+ [0-9:]+ +3 ' "each checkpoint holds the job's 3 files"

t_done
