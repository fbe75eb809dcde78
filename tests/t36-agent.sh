#!/bin/sh
# t36-agent.sh: `spotrun agent` on a file:// queue, with the fake NVML
# (tests/fake-nvml.c) giving it 0, 1 or 8 GPUs and a 3 s lease TTL:
#
# 1. A job through the queue: the agent's first line (its GPUs as NVML
#    names them, the model, the queue), the claim in 3 requests, the run,
#    the lease and the status marker at the end (succeeded, 1 attempt,
#    GPU-seconds, the last checkpoint's step, this host), the job's output
#    shipped to the queue (logs/ID/), every step once; a marker left saying
#    running over the ended lease is repaired by the next agent's scan.
# 2. What an agent may claim: a CPU agent only jobs without GPUs, a 1-GPU
#    H100 agent neither an 8-GPU job nor an A100 one (each skip said once,
#    with why), an 8-GPU one the first, --label gpu_type=A100 the second.
# 3. A malformed lease object and a job file that does not parse, in the
#    queue with a good job: the lease reported once and its job skipped
#    (still queued), the bad job reported with its file and line (also in
#    its log) and marked failed, the good one run; the agent goes on.
# 4. --idle-timeout with --idle-command, --max-jobs.
# 5. 32 agents started together for one job: one runs it, once.
# 6. Cancel during a checkpoint (its commit delayed 2 s by
#    SPOTRUN_FAULT=ckpt-pointer:delay=2), asking for a final checkpoint:
#    the save in flight commits, a final one follows, the job is stopped
#    and ends cancelled (lease and status), within a heartbeat.
# 7. An agent stopped (SIGSTOP, it and its job) in the middle of a
#    checkpoint, past its lease: another agent takes the job over once the
#    lease expired and finishes it; the first, resumed, cannot commit its
#    checkpoint (fenced) nor write the job's state: the lease stays the
#    second's, succeeded.
# 8. SIGTERM to an agent running a job (systemd stopping it): the job is
#    checkpointed as for a notice and released, the agent exits 143, and
#    another agent resumes the job from that checkpoint.
# 9. Permanent errors end the retries: a lease that is a FIFO, a store
#    registration (stores/HASH) too large to be one: each job is marked
#    failed, saying why, and --once ends; a queue whose folder cannot be
#    made: exit 74 with the reason. --once waits for a dead agent's lease
#    (its holder SIGKILLed right after a renewal) and takes the job over.
# 10. A dead machine's job ahead of a backlog: an agent takes it over before
#     the jobs pending, not after all of them.
# 11. A cancel asked while a preempted job is being released (after the
#     agent's last heartbeat): the job ends cancelled, not back in the queue.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
. "$top_srcdir/tests/jobs/agent.sh"
Q=file://$t_tmp/q

# 1. one job
ag_spec "$t_tmp/a.ini" 20 0.05 "[resources]" "gpus = 1" "gpu_type = H100"
"$QTOOL" add "$Q" a1 "$t_tmp/a.ini" 1 1 H100 || t_bail "qtool add failed"
ag_run ag1 1 --queue "$Q" --once
t_is "$t_rc" 0 "an agent with --once drains the queue and exits 0" || t_show "$t_tmp/ag1.err"
t_like "$t_tmp/ag1.err" "^spotrun agent: $host-[0-9]+ on local local-vm-1, 1 GPU \\(NVIDIA H100 80GB HBM3\\), model H100, queue $Q \\(from --queue\\), lease TTL 3s\$" \
    "its first line: its id, provider, GPUs as NVML names them, the model, the queue"
t_has "$t_tmp/ag1.err" "spotrun agent: a1: claimed (epoch 1, 3 requests), store $Q/ckpt" \
    "it claims the job in 3 requests; its checkpoints go to the queue's ckpt/"
t_has "$t_tmp/ag1.err" "spotrun agent: a1: succeeded (epoch 1)" "the job succeeded"
t_has "$t_tmp/ag1.err" "spotrun agent: ends: 1 job (1 succeeded, 0 failed, 0 released, 0 cancelled, 0 lost)" \
    "its last line counts the jobs"
t_is "$(ag_steps a1)" "ok 20" "every step of the job once"
step=$(sed -nE 's/^[0-9:]+  ckpt     [0-9]+ step ([0-9]+): .* committed.*/\1/p' "$t_tmp/ag1.err" | tail -n 1)
st=$(ag_status "$Q" a1)
t_like_s() { printf '%s\n' "$1" > "$t_tmp/s.txt"; t_like "$t_tmp/s.txt" "$2" "$3"; }
# GPU-seconds: the job's own life (its log: its process's start to its
# done line, 1 s of steps and the interpreter's start, seconds on a loaded
# machine), whole seconds, with up to 1 s more of spotrun's around it
lo=$(awk '$1 == "start" { s = $2 } $1 == "done" { d = $2 } END { printf "%d", d - s }' "$t_tmp/wl/a1.log")
gs=$(printf '%s\n' "$st" | awk '{ print $5 }')
t_like_s "$st" "^succeeded 1 1 0 [0-9]+ 0 $step $host\$" \
    "its status: succeeded, epoch 1, 1 attempt, no preemption, step $step, this host ($st)"
t_is "$([ "${gs:-0}" -ge "$lo" ] && [ "${gs:-0}" -le $((lo + 2)) ]; echo $?)" 0 \
    "... $gs GPU-seconds: the job's life of $lo-$((lo + 1)) s (its log), 1 s more at most"
t_is "$("$QTOOL" lease "$Q/ckpt" a1 | awk '{print $1, $2, $4}')" "succeeded 1 $(sed -nE 's/^spotrun agent: ([^ ]+) on .*/\1/p' "$t_tmp/ag1.err")" \
    "its lease: succeeded, by the agent"
t_has "$t_tmp/q/logs/a1/000000000001-0001-000000" " out step 20" "its output went to the queue (logs/a1/)"
t_like "$t_tmp/q/logs/a1/000000000001-0001-000000" "^\\+[0-9]{4}\\.[0-9]{3} spotrun [0-9:]+  finished exit 0: 1 attempt" \
    "... with the timeline, to the run's last line"

# a job of two ranks: each rank's lines go to the queue's log with its
# "[R] " after the tag, as the terminal shows them
printf '[job]\nname = @ID@\ncommand = echo rank $RANK says hi\nshell = yes\n[resources]\nprocs = 2\n[provider]\nname = local\n' \
    > "$t_tmp/r2.ini"
"$QTOOL" add "$Q" r2 "$t_tmp/r2.ini" 0 0 || t_bail "qtool add failed"
ag_run agr 0 --queue "$Q" --once
t_is "$t_rc" 0 "a job of two ranks through the queue: exit 0" || t_show "$t_tmp/agr.err"
t_is "$(cat "$t_tmp"/q/logs/r2/* 2>/dev/null | sed -nE 's/^\+[0-9]{4}\.[0-9]{3} out (\[[01]\] rank [01] says hi)$/\1/p' | sort | tr '\n' '|')" \
    "[0] rank 0 says hi|[1] rank 1 says hi|" "... each rank's line in its shipped log, after its [R]" ||
    { t_show "$t_tmp/agr.err"; cat "$t_tmp"/q/logs/r2/* 2>&1 | sed 's/^/#   /'; }

# an ended job whose status marker was left saying running (its agent
# killed between its lease and its marker): the next scan repairs it
"$QTOOL" status-set "$Q" a1 running
sleep 2		# scans read leases not written for TTL / 2, as a dead holder's
t_is "$(ag_status "$Q" a1 | awk '{print $1}')" running "(a marker left saying running over an ended lease)"
ag_run ag1b 0 --queue "$Q" --once
t_is "$(ag_status "$Q" a1 | awk '{print $1, $2, $3}')" "succeeded 1 1" \
    "an agent's scan for dead agents' leases repairs it from the lease, counts kept"

# 2. what an agent may claim
printf '[job]\nname = @ID@\ncommand = true\n' > "$t_tmp/true.ini"
"$QTOOL" add "$Q" g8 "$t_tmp/true.ini" 8 8
"$QTOOL" add "$Q" t100 "$t_tmp/true.ini" 1 1 A100
"$QTOOL" add "$Q" c0 "$t_tmp/true.ini"
ag_run ag2 0 --queue "$Q" --once
t_is "$(grep -c ': claimed ' "$t_tmp/ag2.err")|$(grep -c 'c0: claimed' "$t_tmp/ag2.err")" "1|1" \
    "a CPU agent (NVML: no GPU) claims only the job without GPUs" || t_show "$t_tmp/ag2.err"
t_has "$t_tmp/ag2.err" "spotrun agent: skip job g8: needs 8 GPUs, this machine has 0" \
    "... saying why it skips the 8-GPU job"
t_has "$t_tmp/ag2.err" "spotrun agent: skip job t100: needs 1 GPU of type A100, this machine has 0" \
    "... and the A100 one"
ag_run ag3 1 --queue "$Q" --once
t_has "$t_tmp/ag3.err" "spotrun agent: ends: 0 jobs" "a 1-GPU H100 agent claims neither the 8-GPU job nor the A100 one"
t_is "$(grep '^spotrun agent: skip job' "$t_tmp/ag3.err" | sort | tr '\n' '|')" \
    "spotrun agent: skip job g8: needs 8 GPUs, this machine has 1|spotrun agent: skip job t100: needs 1 GPU of type A100, this machine's are H100|" \
    "... saying why, once each" || t_show "$t_tmp/ag3.err"
ag_run ag4 8 --queue "$Q" --once
t_is "$(grep -c ': claimed ' "$t_tmp/ag4.err")|$(grep -c 'g8: claimed' "$t_tmp/ag4.err")" "1|1" \
    "an 8-GPU agent claims the 8-GPU job" || t_show "$t_tmp/ag4.err"
t_like "$t_tmp/ag4.err" "8 GPUs \\(NVIDIA H100 80GB HBM3\\)" "... counting 8 GPUs"
ag_run ag5 1 --queue "$Q" --once --label gpu_type=A100 --labels rack=r7,zone=lab
t_is "$(grep -c ': claimed ' "$t_tmp/ag5.err")|$(grep -c 't100: claimed' "$t_tmp/ag5.err")" "1|1" \
    "--label gpu_type=A100: the A100 job" || t_show "$t_tmp/ag5.err"
t_has "$t_tmp/ag5.err" "spotrun agent: label zone=lab" "labels that only describe are shown"

# 3. malformed objects
printf '[job]\nname = @ID@\ncommand = true\nfrobnicate = 1\n' > "$t_tmp/bad.ini"
"$QTOOL" add "$Q" m1 "$t_tmp/true.ini"
"$QTOOL" add "$Q" bad "$t_tmp/bad.ini"
"$QTOOL" add "$Q" ok1 "$t_tmp/true.ini"
printf 'this is not a lease\n' > "$t_tmp/junk"
"$QTOOL" put "$Q/ckpt" _leases/m1 "$t_tmp/junk"
ag_run ag6 0 --queue "$Q" --once
t_is "$t_rc" 0 "malformed objects in the queue: the agent goes on and exits 0" || t_show "$t_tmp/ag6.err"
t_is "$(grep -c "^spotrun agent: warning: claim lease _leases/m1 in $Q/ckpt: malformed: not JSON" "$t_tmp/ag6.err")" 1 \
    "a malformed lease is reported once" || t_show "$t_tmp/ag6.err"
t_like "$t_tmp/ag6.err" "^$Q/jobs/bad/spec.ini:4: .*frobnicate" "a bad job file is reported with its file and line"
t_has "$t_tmp/ag6.err" "spotrun agent: bad: not run: its job file in the queue is not valid; it is marked failed" \
    "... and marked failed"
t_has "$t_tmp/ag6.err" "spotrun agent: ok1: succeeded (epoch 1)" "the good job runs"
t_is "$(ag_status "$Q" m1 | awk '{print $1}')|$(ag_status "$Q" bad | awk '{print $1}')" "queued|failed" \
    "status: the job of the malformed lease still queued, the bad one failed"
t_has "$t_tmp/q/logs/bad/000000000001-0000-000000" "spotrun agent: bad: not run" "the bad job's log says why"

# 4. idle timeout and command; max jobs
ag_run ag7 0 --queue "$Q" --idle-timeout 1s --idle-command "echo idle >$t_tmp/idle.txt"
t_is "$t_rc|$(cat "$t_tmp/idle.txt" 2>/dev/null)" "0|idle" "--idle-timeout 1s: it runs the idle command and exits 0" ||
    t_show "$t_tmp/ag7.err"
t_has "$t_tmp/ag7.err" "spotrun agent: idle for 1s: running the idle command: echo idle" "... saying so"
"$QTOOL" add "$Q" x1 "$t_tmp/true.ini"
"$QTOOL" add "$Q" x2 "$t_tmp/true.ini"
ag_run ag8 0 --queue "$Q" --max-jobs 1
t_is "$t_rc|$(grep -c ': claimed ' "$t_tmp/ag8.err")" "0|1" "--max-jobs 1: one job, then exit 0"

# 5. 32 agents for one job
ag_race "$Q-race" file

# 6. cancel during a checkpoint
ag_spec "$t_tmp/cx.ini" 200 0.05
for c in 1 0; do
	id=cx$c
	"$QTOOL" add "$Q" "$id" "$t_tmp/cx.ini"
	SPOTRUN_FAULT=ckpt-pointer:delay=2 ag_start "ag-$id" 0 --queue "$Q" --once
	a=$t_last
	wait_for "$t_tmp/ag-$id.err" "fault injected at ckpt-pointer: delaying" 30 "$a" ||
	    t_diag "$id: no checkpoint was delayed"
	t_is "$("$QTOOL" cancel "$Q" "$id" "$c")" asked "cancel($c) of a running job: its agent is asked"
	t_wait "$a"
	t_is "$t_rc" 0 "cancel($c) during a checkpoint: the agent goes on (and drains the queue)" ||
	    t_show "$t_tmp/ag-$id.err"
	t_has "$t_tmp/ag-$id.err" "spotrun agent: $id: cancelled (epoch 1)" "cancel($c): the job ends cancelled"
	t_is "$("$QTOOL" lease "$Q/ckpt" "$id" | awk '{print $1}')|$(ag_status "$Q" "$id" | awk '{print $1}')" \
	    "cancelled|cancelled" "cancel($c): lease and status cancelled"
	n=$(grep -cE '^[0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed' "$t_tmp/ag-$id.err")
	if [ "$c" = 1 ]; then
		t_has "$t_tmp/ag-$id.err" "is cancelled: a final checkpoint first" \
		    "cancel(1): a final checkpoint is asked for"
		t_is "$n" 2 "cancel(1): the save in flight commits, then the final one"
		t_like "$t_tmp/ag-$id.err" "stop     checkpoint committed; SIGTERM to the job" \
		    "cancel(1): the job is stopped once the final one is committed"
	else
		# the save in flight commits; under load the cancel may land after
		# a periodic one (interval 1s) has begun too, which commits as well
		t_is "$([ "$n" -ge 1 ] && echo yes)|$(grep -c 'a final checkpoint first' "$t_tmp/ag-$id.err")" \
		    "yes|0" "cancel(0): the save in flight still commits, no final one is asked for" ||
		    t_show "$t_tmp/ag-$id.err"
		t_like "$t_tmp/ag-$id.err" "stop     cancelled; SIGTERM to the job" "cancel(0): the job is stopped at once"
	fi
	"$SPOTRUN" ls "$id" -s "$Q/ckpt" > "$t_tmp/ls-$id.txt" 2>&1
	t_is "$?|$(grep -cE '^[0-9]+ ' "$t_tmp/ls-$id.txt")" "0|$n" "cancel($c): its $n checkpoint(s) are listed, intact" ||
	    t_show "$t_tmp/ls-$id.txt"
done

# 7. an agent stopped past its lease: fenced
ag_fenced "$Q-fence" "$Q-fence/ckpt" file

# 8. SIGTERM to an agent (systemd stopping its unit): checkpoint, release, exit
ag_spec "$t_tmp/term.ini" 60 0.05
"$QTOOL" add "$Q-term" term "$t_tmp/term.ini"
ag_start agt 0 --queue "$Q-term"
a=$t_last
wait_for "$t_tmp/wl/term.log" '^step 10 ' 30 "$a" || t_diag "term: the job did not start"
kill -TERM "$a"
t_wait "$a"
t_is "$t_rc" 143 "SIGTERM to an agent running a job: it exits 143 (128+15)" || t_show "$t_tmp/agt.err"
t_like "$t_tmp/agt.err" "notice   SIGTERM: this machine's agent is stopping, deadline in" \
    "... its job's notice"
t_like "$t_tmp/agt.err" "^[0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed" "... the job is checkpointed"
t_has "$t_tmp/agt.err" "spotrun agent: term: released (epoch 1)" "... and released"
# the newest committed: under load a periodic one may come before the notice's
k=$(sed -nE 's/^[0-9:]+  ckpt     [0-9]+ step ([0-9]+): .* committed.*/\1/p' "$t_tmp/agt.err" | tail -n 1)
ag_run agt2 0 --queue "$Q-term" --once
t_is "$t_rc|$(awk '$1 == "start" { k = $3 } END { print k }' "$t_tmp/wl/term.log")|$(ag_steps term)" \
    "0|$k|ok 60" "another agent resumes it from that checkpoint (step $k) and finishes it"

# 9. permanent errors: the job failed, or the agent ends, never retried
QP=file://$t_tmp/qp
"$QTOOL" add "$QP" fifo "$t_tmp/true.ini" || t_bail "qtool add failed"
mkdir -p "$t_tmp/qp/ckpt/_leases"
mkfifo "$t_tmp/qp/ckpt/_leases/fifo"
printf '[job]\nname = big\ncommand = true\n[checkpoint]\nstore = file://%s/bigstore\n' "$t_tmp" \
    > "$t_tmp/big.ini"
SPOTRUN_QUEUE=$QP "$SPOTRUN" submit "$t_tmp/big.ini" > "$t_tmp/submit.out" 2>&1 ||
    t_show "$t_tmp/submit.out"
for f in "$t_tmp"/qp/stores/*; do head -c 5000 /dev/zero | tr '\0' x > "$f"; done
ag_run_bounded agp 0 --queue "$QP" --once
t_is "$t_rc" 0 "a lease that is a FIFO, a store registration too large: --once ends, exit 0" ||
    t_show "$t_tmp/agp.err"
t_has "$t_tmp/agp.err" "spotrun agent: warning: job fifo: claim lease: get _leases/fifo: $t_tmp/qp/ckpt/_leases/fifo is a FIFO, not a regular file: the file store keeps objects as regular files; remove it; a permanent error: the job is marked failed" \
    "... the FIFO's job failed, saying why" || t_show "$t_tmp/agp.err"
t_like "$t_tmp/agp.err" "^spotrun agent: warning: job big: queue $QP: job store [0-9a-f]{16}: get stores/[0-9a-f]{16}: 5000 bytes, more than the [0-9]+ allowed; a permanent error: the job is marked failed\$" \
    "... the big registration's job failed, saying why" || t_show "$t_tmp/agp.err"
t_is "$(ag_status "$QP" fifo | awk '{print $1}')|$(ag_status "$QP" big | awk '{print $1}')" "failed|failed" \
    "... both marked failed in the index"
: > "$t_tmp/plain"
ag_run_bounded agu 0 --queue "file://$t_tmp/plain/q"
t_is "$t_rc" 74 "a queue whose folder cannot be made (a file in its path): exit 74, no retry" ||
    t_show "$t_tmp/agu.err"
t_like "$t_tmp/agu.err" "^spotrun agent: .*$t_tmp/plain.*Not a directory" "... saying why" ||
    t_show "$t_tmp/agu.err"

# --once and a dead agent's lease: it waits for the lease to expire and
# takes the job over (it used to end up to a TTL before)
QD=file://$t_tmp/qd
ag_spec "$t_tmp/dead.ini" 40 0.05
"$QTOOL" add "$QD" dead "$t_tmp/dead.ini" || t_bail "qtool add failed"
ag_start agd1 0 --queue "$QD"
a=$t_last
wait_for "$t_tmp/wl/dead.log" '^step 5 ' 30 "$a" || t_diag "dead: the job did not start"
# stopped, not killed: its pid lives on, so only the lease's expiry frees
# the job (a dead pid on this machine would free it at once)
jp=$(awk '$1 == "start" { p = $4 } END { print p }' "$t_tmp/wl/dead.log")
d=$a
kill -STOP "$d"
[ -n "$jp" ] && kill -STOP "$jp"
ag_run_bounded agd2 0 --queue "$QD" --once
rc=$t_rc
[ -n "$jp" ] && kill -KILL "$jp"
kill -KILL "$d"
t_wait "$d"
t_is "$rc|$(grep -c 'dead: claimed (epoch 2, taken over' "$t_tmp/agd2.err")" "0|1" \
    "--once with a dead agent's lease live yet: it waits, takes the job over, exits 0" ||
    t_show "$t_tmp/agd2.err"
t_has "$t_tmp/agd2.err" "spotrun agent: dead: succeeded" "... and the job succeeds"

# 10. a dead machine's job before the backlog
ag_spec "$t_tmp/bdead.ini" 200 0.05
"$QTOOL" add "$Q-bl" bdead "$t_tmp/bdead.ini"
ag_start agd 0 --queue "$Q-bl"
a=$t_last
wait_for "$t_tmp/wl/bdead.log" '^step 5 ' 30 "$a" || t_diag "backlog: the job did not start"
kill -KILL "$a"
t_wait "$a"
for i in 1 2 3 4; do
	ag_spec "$t_tmp/bl$i.ini" 5 0.05
	"$QTOOL" add "$Q-bl" "bl$i" "$t_tmp/bl$i.ini"
done
ag_run agb 0 --queue "$Q-bl" --once --max-jobs 1
t_like "$t_tmp/agb.err" "^spotrun agent: bdead: claimed \\(epoch 2, taken over, [0-9]+ requests\\)" \
    "a dead machine's job is taken over ahead of 4 pending jobs" || t_show "$t_tmp/agb.err"
t_unlike "$t_tmp/agb.err" "bl[0-9]: claimed" "... which wait for the next job"

# 11. cancel while a preempted job is released
ag_spec "$t_tmp/rl.ini" 400 0.05 "after = 1s"
"$QTOOL" add "$Q-rl" rl "$t_tmp/rl.ini"
SPOTRUN_FAULT=agent-end:delay=3 ag_start agrl 0 --queue "$Q-rl" --once --max-jobs 1
a=$t_last
wait_for "$t_tmp/agrl.err" "fault injected at agent-end: delaying" 60 "$a" ||
    t_diag "release: the job did not end"
t_is "$("$QTOOL" cancel "$Q-rl" rl 0)" asked "a cancel while the preempted job is released: asked"
t_wait "$a"
t_has "$t_tmp/agrl.err" "spotrun agent: rl: cancel requested: not put back in the queue" \
    "... the agent reads it at the release" || t_show "$t_tmp/agrl.err"
t_is "$("$QTOOL" lease "$Q-rl/ckpt" rl | awk '{print $1}')|$(ag_status "$Q-rl" rl | awk '{print $1}')" \
    "cancelled|cancelled" "... lease and status cancelled, not released to the queue"
t_done
