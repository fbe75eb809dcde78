#!/bin/sh
# t32-interrupt.sh: a signal from the user (^C) during a checkpoint that
# takes seconds (tests/jobs/slowsave.py, zstd level 19): the first lets the
# save finish, says so, and stops the job only then; a second abandons the
# save (nothing committed); the last line says what happened instead of
# "failed exit 130". And ^C outside a checkpoint, and during a restart's
# backoff.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup

# job NAME COMMAND [EXTRA INI LINES...]: on the local provider
job() {
	_jn=$1 _jc=$2
	shift 2
	t_jobfile "$_jn" "$_jc" "$@" "[provider]" "name = local"
}
mib=$(t_save_mib 3)
t_diag "a save of $mib MiB takes about 3 s here"
# the job runs until its ^C
slow() { job "$1" "$PY $JOBS/slowsave.py $mib 0" "interval = 1s" "level = 19" "chunk_size = 2MiB"; }
# interrupt NAME N: start NAME, send N (1 or 2) ^C once its save runs: the first
# once spotrun took the job's answer (it withdraws the request file as it
# starts the save), the second once the first was acknowledged.
interrupt() {
	t_bg "$1" "$SPOTRUN" run "$t_tmp/$1.ini"
	_p=$t_last
	wait_for "$t_tmp/$1.out" '^answered$' 60 "$_p" || t_diag "$1: the job never answered"
	_i=0
	while [ -e "$t_tmp/local-$1/ctl/request" ] && [ $_i -lt 600 ]; do sleep 0.1; _i=$((_i + 1)); done
	kill -INT "$_p"
	if [ "$2" -gt 1 ]; then
		wait_for "$t_tmp/$1.err" '  \^C       finishing the checkpoint' 60 "$_p"
		kill -INT "$_p"
	fi
	t_wait "$_p"
}
err() { echo "$t_tmp/$1.err"; }

# 1-5: one ^C: the save goes on to its commit while the job runs on, then
# the job gets the ^C.
slow once
interrupt once 1
t_is "$t_rc" 130 "one ^C during a checkpoint: exit 130 (the job's, killed by SIGINT)" || t_show "$(err once)"
t_has "$(err once)" "  ^C       finishing the checkpoint; ^C again to abandon it" "the ^C is acknowledged at once"
t_like "$(err once)" '^00:[0-9]{2}  ckpt     0 step [0-9]+: .* committed in ' "the checkpoint is committed"
step=$(sed -n 's/^00:[0-9]*  ckpt     0 step \([0-9]*\): .*/\1/p' "$(err once)")
t_has "$(err once)" "  interrupted exit 130: ^C during a checkpoint, which was committed first; the newest checkpoint is 0 (step $step); 1 attempt, 0 preemptions, " \
	"the last line says the checkpoint was committed first, and which it is"
log=$t_tmp/local-once/logs/latest/attempt-1.log
t_is "$(awk '/spotrun [0-9:]+  \^C /{c=1} /spotrun [0-9:]+  ckpt /{c=0} c && / out working /{n++} END {print (n >= 2) ? "yes" : n+0}' "$log")" yes \
	"the job runs on while the checkpoint finishes (its output between the ^C and the commit)"

# 6-9: two ^C: the save is abandoned, nothing is committed.
slow twice
interrupt twice 2
t_is "$t_rc" 130 "two ^C: exit 130" || t_show "$(err twice)"
t_has "$(err twice)" "  ^C       abandoning the checkpoint" "the second ^C abandons the checkpoint"
t_has "$(err twice)" "  interrupted exit 130: ^C twice: the checkpoint was abandoned; no checkpoint committed; 1 attempt, 0 preemptions, 0ms of work lost, 0 checkpoints" \
	"the last line says so, and that none is committed"
t_is "$("$SPOTRUN" ls -s "file://$t_tmp/store" twice 2>&1)" "no checkpoints of job twice in file://$t_tmp/store" "the store holds no checkpoint of it"

# 10-11: ^C with no checkpoint running: passed on at once.
job plain "sleep 30"
t_bg plain "$SPOTRUN" run "$t_tmp/plain.ini"
_p=$t_last
wait_for "$(err plain)" 'started  sleep 30' 60 "$_p"
kill -INT "$_p"
t_wait "$_p"
t_is "$t_rc" 130 "^C outside a checkpoint: exit 130"
t_like "$(err plain)" '^00:0[0-9]  interrupted exit 130: \^C; no checkpoint committed; 1 attempt, 0 preemptions, 0ms of work lost, 0 checkpoints$' \
	"the last line says the run was interrupted, not that the job failed"

# 12-13: ^C during a restart's backoff: no restart, and a last line.
job backoff "/bin/sh -c 'exit 3'" "[retry]" "max_restarts = 3" "backoff = 30s"
t_bg backoff "$SPOTRUN" run "$t_tmp/backoff.ini"
_p=$t_last
wait_for "$(err backoff)" 'restart  exit 3; restart 1 of 3 in 30.0s' 60 "$_p"
kill -INT "$_p"
t_wait "$_p"
t_is "$t_rc" 3 "^C during the backoff: no restart, the job's last code"
t_like "$(err backoff)" '^00:0[0-9]  interrupted exit 3: \^C; no checkpoint committed; 1 attempt, 0 preemptions, 0ms of work lost, 0 checkpoints$' \
	"the last line says so (and counts no restart)"
t_done
