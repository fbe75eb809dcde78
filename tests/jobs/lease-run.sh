# lease-run.sh: the lease of `spotrun run` (doc/fleet.md, spotrun(1) LEASES),
# sourced by tests/t37-run-lease.sh (file://) and tests/t86-s3-lease.sh
# (Ceph RGW) after lib.sh: lease_run_cases STORE TAG runs every case against
# the store URL STORE, naming its jobs with TAG. Each run is another
# "machine" by its own local_dir; the job is tests/jobs/workjob.py, whose
# log outside the checkpoints says which steps ran where.
#
# 1. Two runs of one job (a 6 s TTL): the second is refused (exit 69) at
#    once, the holder's `expires` being ahead, naming the holder's pid and
#    until when.
# 2. The first killed with SIGKILL: a run on this machine takes the job over
#    at once (its owner's pid is gone), saying so, resumes from the first
#    run's checkpoint and finishes it: every step once in the job's list.
# 3. A run stopped (SIGSTOP, spotrun and its job: a paused VM) in the middle
#    of a checkpoint, just before it commits (SPOTRUN_FAULT=ckpt-pointer:stop),
#    with a 2 s TTL: a second run is refused while the holder's `expires`
#    is ahead, then watches the lease unchanged for the TTL, takes it
#    over, saying it expired, and finishes the job; the
#    first, resumed, cannot commit (its checkpoint is fenced), ends "lost"
#    with exit 69, and wrote nothing: the lease is the second run's,
#    succeeded, and the job's list is 1..N.

# lr_ini FILE JOB STORE LOCALDIR STEPS: a job file for workjob.py
lr_ini() {
	cat > "$1" <<EOF
[job]
name = $2
command = $PY $JOBS/workjob.py --log $t_tmp/wl --steps $5 --sleep 0.1
workdir = $t_tmp
[checkpoint]
store = $3
local_dir = $4
interval = 1s
keep = 1000000
margin = 1s
[provider]
name = local
EOF
}

# lr_steps JOB: "ok" when JOB's final list is 1..N each once, in order (N
# its length), else what is wrong.
lr_steps() {
	awk 'BEGIN { n = 0; bad = "" } { n++; if ($1 != n && bad == "") bad = "line " n " is step " $1 }
	END { if (n == 0) print "no steps"; else if (bad != "") print bad; else print "ok " n }' \
	    "$t_tmp/wl/$1.final" 2>/dev/null || echo "no final list"
}

# lr_wait_log JOB REGEX SECONDS PID: wait for a line of JOB's work log
lr_wait_log() {
	wait_for "$t_tmp/wl/$1.log" "$2" "$3" "$4"
}

lease_run_cases() {
	_st=$1
	_tag=$2
	mkdir -p "$t_tmp/wl"
	host=$(hostname)

	# 1. refused
	j=lr1-$_tag
	lr_ini "$t_tmp/$j-a.ini" "$j" "$_st" "$t_tmp/$j-la" 50
	lr_ini "$t_tmp/$j-b.ini" "$j" "$_st" "$t_tmp/$j-lb" 50
	# TTL 30 s: long enough that "taken over at once" (before it expired)
	# holds on a loaded machine, and shows when it is not
	SPOTRUN_LEASE_TTL=30s t_bg "$j-a" "$SPOTRUN" run "$t_tmp/$j-a.ini"
	a=$t_last
	wait_for "$t_tmp/$j-a.err" "^[0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed" 20 "$a" ||
	    t_diag "$_tag: run a committed no checkpoint"
	# the holder's "expires" is ahead: refused at once
	"$SPOTRUN" run "$t_tmp/$j-b.ini" > "$t_tmp/$j-b.out" 2> "$t_tmp/$j-b.err"
	t_is "$?" 69 "$_tag: a second run of a running job exits 69" || t_show "$t_tmp/$j-b.err"
	t_like "$t_tmp/$j-b.err" "^spotrun: run $j: not started: its lease in .* is held by spotrun run \\(host $host, pid $a, local\\) until [0-9-]+T[0-9:]+Z \\(in [0-9.]+s\\); one run of a job at a time: wait for that run to end \\(a lease whose machine died expires by itself\\)\$" \
	    "$_tag: ... naming the holder (host, pid $a) and until when"
	t_unlike "$t_tmp/$j-b.err" "started " "$_tag: ... and started nothing"

	# 2. killed: taken over at once on this machine; the checkpoint it
	# committed last is the store's newest once it is dead (its timeline
	# may not have said the last commit yet when it was killed)
	kill -KILL "$a"
	t_wait "$a"
	k=$("$SPOTRUN" ls "$j" -s "$_st" 2>/dev/null | awk '$NF == "latest" { print $2 }')
	t0=$(date +%s.%N)
	t_bg "$j-c" "$SPOTRUN" run "$t_tmp/$j-a.ini"
	c=$t_last
	lr_wait_log "$j" "^start [0-9.]+ [0-9]+ [0-9]+\$" 10 "$c"
	t_wait "$c"
	t_is "$t_rc" 0 "$_tag: the run after a SIGKILL exits 0" || t_show "$t_tmp/$j-c.err"
	t_like "$t_tmp/$j-c.err" "lease    took job $j over \\(epoch 2\\) from spotrun run \\(host $host, pid $a, local\\) until .*: its process on this machine is gone\$" \
	    "$_tag: ... taking the job over from the killed run, saying so"
	# at once: before the killed run's lease would have expired (the
	# "until" the takeover names), not after waiting out its TTL; an
	# order of events, so a loaded machine's pace does not matter
	started=$(awk '$1 == "start" { t = $2 } END { print t }' "$t_tmp/wl/$j.log")
	until=$(sed -nE 's/.*lease    took job .* until ([0-9-]+T[0-9:]+Z) \((in|expired) .*: its process on this machine is gone$/\1/p' "$t_tmp/$j-c.err")
	until_s=$(date -d "$until" +%s 2>/dev/null)
	t_result "$(awk -v a="$t0" -v b="$started" -v u="${until_s:-0}" 'BEGIN { exit !(b != "" && b - a > 0 && b < u + 1) }'; echo $?)" \
	    "$_tag: ... at once: its job started $(awk -v a="$t0" -v b="$started" 'BEGIN { printf "%.1f", b - a }') s after it, before the killed run's lease expired ($until, TTL 30 s)"
	t_is "$(awk '$1 == "start" { k = $3 } END { print k }' "$t_tmp/wl/$j.log")|$([ "$k" -gt 0 ]; echo $?)" "$k|0" \
	    "$_tag: ... resuming after step $k, the killed run's last checkpoint"
	t_is "$(lr_steps "$j")" "ok 50" "$_tag: ... and every step of the job is done once"

	# 3. stopped past its lease in the middle of a checkpoint: fenced
	j=lr3-$_tag
	lr_ini "$t_tmp/$j-a.ini" "$j" "$_st" "$t_tmp/$j-la" 40
	lr_ini "$t_tmp/$j-b.ini" "$j" "$_st" "$t_tmp/$j-lb" 40
	SPOTRUN_LEASE_TTL=2s SPOTRUN_FAULT=ckpt-pointer:stop t_bg "$j-a" "$SPOTRUN" run "$t_tmp/$j-a.ini"
	a=$t_last
	wait_for "$t_tmp/$j-a.err" "fault injected at ckpt-pointer: stopping" 20 "$a" ||
	    t_diag "$_tag: run a did not stop at its checkpoint"
	jp=$(awk '$1 == "start" { p = $4 } END { print p }' "$t_tmp/wl/$j.log")
	[ -n "$jp" ] && kill -STOP "$jp"
	# A second run is refused at once while the holder's "expires" is
	# ahead (exit 69: the user runs it again later); once it has passed,
	# the run watches the lease: unchanged for its TTL, it is taken over
	# (by this run's own monotonic clock, not by "expires").
	t0=$(date +%s.%N)
	_i=0
	while :; do
		SPOTRUN_LEASE_TTL=2s "$SPOTRUN" run "$t_tmp/$j-b.ini" > "$t_tmp/$j-b.out" 2> "$t_tmp/$j-b.err"
		_rc=$?
		[ "$_rc" = 69 ] && [ "$_i" -lt 60 ] || break
		grep -q "not started: its lease in .* is held by" "$t_tmp/$j-b.err" || break
		_i=$((_i + 1))
		sleep 0.5
	done
	t_is "$_rc" 0 "$_tag: a stopped run's lease: another run takes the job over and finishes it" ||
	    t_show "$t_tmp/$j-b.err"
	took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	t_result "$(awk -v t="$took" 'BEGIN { exit !(t >= 2) }'; echo $?)" \
	    "$_tag: ... once it saw the lease unchanged for its TTL of 2 s (the run took $took s)"
	t_like "$t_tmp/$j-b.err" "lease    took job $j over \\(epoch 2\\) from spotrun run \\(host $host, pid $a, local\\) until .* \\(expired [0-9.]+(ms|s) ago\\): its lease expired\$" \
	    "$_tag: ... saying the lease expired"
	[ -n "$jp" ] && kill -CONT "$jp"
	kill -CONT "$a"
	t_wait "$a"
	t_is "$t_rc" 69 "$_tag: the stopped run, resumed, exits 69" || t_show "$t_tmp/$j-a.err"
	t_like "$t_tmp/$j-a.err" "^[0-9:]+  lost     the lease of $j is lost \\(" "$_tag: ... saying its lease is lost"
	t_unlike "$t_tmp/$j-a.err" "^[0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed" \
	    "$_tag: ... and it committed no checkpoint (fenced)"
	t_like "$t_tmp/$j-a.err" "^[0-9:]+  lost     exit 69: 1 attempt" "$_tag: ... its last line: lost, exit 69"
	t_is "$("$top_builddir/tests/qtool" lease "$_st" "$j" | awk '{print $1, $2}')" "succeeded 2" \
	    "$_tag: the lease is the second run's (epoch 2), succeeded: the first wrote nothing"
	t_is "$(lr_steps "$j")" "ok 40" "$_tag: every step of the job once, in order"
}
