# agent.sh: what the tests of `spotrun agent` share (t36-agent.sh on
# file://, t87-s3-fleet.sh on Ceph RGW), sourced after lib.sh: the fake NVML
# (tests/fake-nvml.c, built by `make check`) on the agents' library path, a
# short lease TTL, job files for tests/jobs/workjob.py, and tests/qtool to
# fill a queue and read it.

: "${top_builddir:=$(dirname "$SPOTRUN")}"
QTOOL=$top_builddir/tests/qtool
[ -x "$QTOOL" ] || t_bail "no $QTOOL (make check builds it)"
[ -f "$top_builddir/tests/fake-nvml/libnvidia-ml.so.1" ] ||
    t_bail "no tests/fake-nvml/libnvidia-ml.so.1 in $top_builddir (make check builds it)"
LD_LIBRARY_PATH=$top_builddir/tests/fake-nvml${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
SPOTRUN_LEASE_TTL=3s
export SPOTRUN_LEASE_TTL
unset SPOTRUN_QUEUE 2>/dev/null
host=$(hostname)
mkdir -p "$t_tmp/wl"

# ag_spec FILE STEPS SLEEP [EXTRA LINES...]: a workjob.py job file for the
# queue (its name is the queue's id: @ID@), gpus = 1 unless EXTRA says.
ag_spec() {
	_f=$1 _steps=$2 _sleep=$3
	shift 3
	{
		printf '[job]\nname = @ID@\n'
		printf 'command = %s %s/workjob.py --log %s/wl --steps %s --sleep %s\n' "$PY" "$JOBS" \
		    "$t_tmp" "$_steps" "$_sleep"
		printf '[checkpoint]\ninterval = 1s\nkeep = 1000000\nmargin = 1s\n'
		printf '[provider]\nname = local\n'
		for _l in "$@"; do printf '%s\n' "$_l"; done
	} > "$_f"
}

# ag_start NAME GPUS ARGS...: start an agent with GPUS fake GPUs in the
# background (stdout $t_tmp/NAME.out, stderr .err, jobs in $t_tmp/NAME.d);
# its pid in $t_last. Each agent is a machine of its own, its GPUs' locks
# (runner/gpulock.h) in $t_tmp/NAME.gpus, unless $ag_machine names one
# lock folder for agents that share a machine.
ag_start() {
	_n=$1 _g=$2
	shift 2
	t_bg "$_n" env FAKE_NVML_GPUS="$_g" SPOTRUN_GPU_LOCK_DIR="${ag_machine:-$t_tmp/$_n.gpus}" \
	    "$SPOTRUN" agent --dir "$t_tmp/$_n.d" "$@"
}

# ag_run NAME GPUS ARGS...: an agent in the foreground; its status in $t_rc.
ag_run() {
	ag_start "$@"
	t_wait "$t_last"
}

# ag_wait_bounded PID SECONDS: t_wait for agent PID, but one that has not
# ended after SECONDS is killed (SIGKILL: $t_rc 137), so that a test of an
# agent that must end fails instead of hanging. A hang guard, not a
# timing assertion. The guard is ended with SIGKILL: bash resets a
# subshell's traps only once it runs, so a SIGTERM to a guard just forked
# (the agent had ended already) ran the test's own TERM and EXIT traps in
# it, whose cleanup removed the test's folder while the test went on.
ag_wait_bounded() {
	( sleep "$2"; kill -KILL "$1" ) >/dev/null 2>&1 &	# not holding the TAP pipe
	_guard=$!
	t_wait "$1"
	kill -KILL "$_guard" 2>/dev/null
	wait "$_guard" 2>/dev/null	# reaped quietly (no "Killed" line)
}

# ag_run_bounded NAME GPUS ARGS...: ag_run, with a hang guard of 60 s.
ag_run_bounded() {
	ag_start "$@"
	ag_wait_bounded "$t_last" 60
}

# ag_steps ID: "ok N" when job ID's final list is 1..N each once, in order.
ag_steps() {
	awk 'BEGIN { n = 0; bad = "" } { n++; if ($1 != n && bad == "") bad = "line " n " is step " $1 }
	END { if (n == 0) print "no steps"; else if (bad != "") print bad; else print "ok " n }' \
	    "$t_tmp/wl/$1.final" 2>/dev/null || echo "no final list"
}

# ag_status Q ID: the job's status line from qtool, without its id
ag_status() {
	"$QTOOL" status "$1" | awk -v id="$2" '$1 == id { $1 = ""; sub(/^ /, ""); print }'
}

# ag_race QUEUE TAG: 32 agents started together for one job: one runs it,
# once; the 31 others end without a job.
ag_race() {
	_q=$1 _tag=$2 _id=race-$2
	ag_spec "$t_tmp/$_id.ini" 10 0.05 "[resources]" "gpus = 1"
	"$QTOOL" add "$_q" "$_id" "$t_tmp/$_id.ini" 1 1 || t_bail "qtool add failed"
	_pids=
	_i=0
	# A 30 s lease: the race is for the claim, and with 3 s 32 agents
	# starting at once under a sanitizer build kept the winner from
	# renewing in time, so that others took the job over (fenced: it
	# still ran once, but "one claims it" is what this case checks).
	SPOTRUN_LEASE_TTL=30s
	while [ $_i -lt 32 ]; do
		ag_start "$_id-$_i" 1 --queue "$_q" --once -q
		_pids="$_pids $t_last"
		_i=$((_i + 1))
	done
	SPOTRUN_LEASE_TTL=3s
	for _p in $_pids; do t_wait "$_p"; done
	t_is "$(cat "$t_tmp/$_id"-*.err | grep -c ": $_id: claimed ")" 1 "$_tag: 32 agents for one job: one claims it"
	t_is "$(grep -c '^start ' "$t_tmp/wl/$_id.log")|$(ag_steps "$_id")" "1|ok 10" "$_tag: ... and it ran once"
	t_is "$(cat "$t_tmp/$_id"-*.err | grep -c 'spotrun agent: ends: 0 jobs')" 31 \
	    "$_tag: ... the 31 others claimed nothing" ||
	    for _f in "$t_tmp/$_id"-*.err; do grep -q ": $_id: claimed \\|ends: 0 jobs" "$_f" || t_show "$_f"; done
}

# ag_fenced QUEUE STORE TAG: an agent stopped, with its job, in the middle
# of a checkpoint (before its commit: SPOTRUN_FAULT=ckpt-pointer:stop) past
# its lease; another takes the job over and finishes it; the first,
# resumed, commits nothing and writes no state of the job.
ag_fenced() {
	_q=$1 _st=$2 _tag=$3 _id=fz-$3
	ag_spec "$t_tmp/$_id.ini" 40 0.1
	"$QTOOL" add "$_q" "$_id" "$t_tmp/$_id.ini" || t_bail "qtool add failed"
	SPOTRUN_FAULT=ckpt-pointer:stop ag_start "$_id-a" 0 --queue "$_q" --once
	_a=$t_last
	wait_for "$t_tmp/$_id-a.err" "fault injected at ckpt-pointer: stopping" 30 "$_a" ||
	    t_diag "$_tag: agent a did not stop in its checkpoint"
	_jp=$(awk '$1 == "start" { p = $4 } END { print p }' "$t_tmp/wl/$_id.log")
	[ -n "$_jp" ] && kill -STOP "$_jp"
	sleep 3.5	# the TTL: the lease expires
	ag_run "$_id-b" 0 --queue "$_q" --once
	t_is "$t_rc" 0 "$_tag: a stopped agent's job is taken over once its lease expired" ||
	    t_show "$t_tmp/$_id-b.err"
	t_like "$t_tmp/$_id-b.err" "^spotrun agent: $_id: claimed \\(epoch 2, taken over, [0-9]+ requests\\)" \
	    "$_tag: ... by another agent, at epoch 2"
	t_has "$t_tmp/$_id-b.err" "spotrun agent: $_id: succeeded (epoch 2)" "$_tag: ... which finishes it"
	[ -n "$_jp" ] && kill -CONT "$_jp"
	kill -CONT "$_a"
	t_wait "$_a"
	t_like "$t_tmp/$_id-a.err" "^[0-9:]+  lost     the lease of $_id is lost \\(" \
	    "$_tag: the first agent, resumed, finds its lease lost"
	t_unlike "$t_tmp/$_id-a.err" "^[0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed" \
	    "$_tag: ... and cannot commit its checkpoint (fenced)"
	t_has "$t_tmp/$_id-a.err" "spotrun agent: $_id: lost its lease: nothing more is written for it here" \
	    "$_tag: ... nor write the job's state"
	t_is "$("$QTOOL" lease "$_st" "$_id" | awk '{print $1, $2, $4}')" \
	    "succeeded 2 $(sed -nE 's/^spotrun agent: ([^ ]+) on .*/\1/p' "$t_tmp/$_id-b.err")" \
	    "$_tag: the lease is the second agent's, succeeded"
	t_is "$(ag_status "$_q" "$_id" | awk '{print $1, $2}')" "succeeded 2" "$_tag: so is the status"
	t_is "$(ag_steps "$_id")" "ok 40" "$_tag: every step of the job once"
}
