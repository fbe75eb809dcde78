#!/bin/sh
# t34-lost.sh: work lost (the run's last line, "N of work lost"; a
# record's `lost`; the LOST of `spotrun status`) is counted for every
# cause, once: the job below logs when it did each step and when its state
# went to spotrun, and the seconds counted must lie between what its own
# log allows (see each test).
#
# 1. A job that crashes (exit 3) past its checkpoint and is restarted by
#    [retry]: its time since that checkpoint is lost.
# 2. A crash under the local provider after its simulated notice: a
#    restart, not a preemption.
# 3. `spotrun run` killed by SIGKILL past its checkpoint (its job too, as a
#    machine that vanished), then run again: the second run takes the
#    lease over and counts the first attempt's work up to the lease's last
#    renewal, on a `vanished` line and in its last line, and marks its record
#    vanished with that much lost; a third run counts nothing again.
# 4. An agent killed (with its job) and the job taken over by another: the
#    status marker's lost GPU-seconds are more than 0.
# 5. An agent stopped just after its claim (a paused VM, before its run
#    reported anything) and the job taken over by another: the status
#    counts both claims as attempts.
# 6. An agent stopped between its claim and its first status marker
#    (longer than its lease's give-up time, as a claim slowed past it on a
#    loaded machine) and the job taken over and finished by another: the
#    status counts the claim that left no marker as an attempt; the first
#    agent, let go on, writes nothing for the job and runs nothing of it.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
t_python_module
. "$top_srcdir/tests/jobs/agent.sh"	# SPOTRUN_LEASE_TTL=3s: renewed every second

# lost.py LOG ANSWER STEPS CRASH: steps of 0.1 s; the first ANSWER requests
# are answered (the state: the step), the later ones not, though it looks
# at every step (a job that never looks is one still starting to a
# notice); attempt 1 exits 3 after step CRASH (0: never); it ends after
# STEPS.
# LOG gets "step N T", "ckpt N T" (T: epoch seconds) and "crash T".
cat > "$t_tmp/lost.py" <<'PY'
import os, sys, time, spotrun
log, answer, steps, crash = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def note(s):
    with open(log, "a") as f:
        f.write(s + "\n")
d = spotrun.ckpt_dir()
state = os.path.join(d, "step")
step = int(open(state).read()) if os.path.exists(state) else 0
first = os.environ.get("SPOTRUN_ATTEMPT") == "1"
answered = 0
note("start %d %.6f" % (step, time.time()))
while step < steps:
    time.sleep(0.1)
    step += 1
    note("step %d %.6f" % (step, time.time()))
    if spotrun.requested() and answered < answer:
        with open(state, "w") as f:
            f.write(str(step))
        note("ckpt %d %.6f" % (step, time.time()))
        spotrun.done(step)
        answered += 1
    if first and step == crash:
        note("crash %.6f" % time.time())
        sys.exit(3)
PY

# secs D: a duration as spotrun prints it (850ms, 2.3s, 1m02s) in seconds
secs() {
	echo "$1" | awk '/ms$/ { sub(/ms$/, ""); print $0 / 1000; next }
	    /^[0-9]+m[0-9]+s$/ { split($0, a, /[ms]/); print a[1] * 60 + a[2]; next }
	    { sub(/s$/, ""); print $0 + 0 }'
}
# last_lost FILE: the seconds of work lost on the run's last line
last_lost() {
	secs "$(sed -nE 's/^[0-9:]+  (finished|failed|preempted|interrupted|lost) .*, ([0-9.ms]+) of work lost, .*/\2/p' "$1" | tail -n 1)"
}
# within X LO HI: X in [LO, HI]
within() {
	awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x != "" && x + 0 >= lo && x + 0 <= hi) }'
}
# log_t LOG WHAT: the time of the first WHAT line ("spawn", "ckpt", "crash")
# (the log is the job's over all its attempts); last_t: of the last one
log_t() {
	awk -v w="$2" '$1 == w && t == "" { t = $NF } END { print t }' "$1"
}
last_t() {
	awk -v w="$2" '$1 == w { t = $NF } END { print t }' "$1"
}
# lost_job NAME ANSWER STEPS CRASH [LINES...]: a job file NAME running
# lost.py, its log $t_tmp/NAME.log, which a shell line opens as the attempt
# is spawned ("spawn T", before python starts)
lost_job() {
	_n=$1 _a="$2 $3 $4"
	shift 4
	t_jobfile "$_n" "/bin/sh -c 'echo spawn \$(date +%s.%N) >> $t_tmp/$_n.log; exec $PY $t_tmp/lost.py $t_tmp/$_n.log $_a'" "$@"
}

# kill_past_ckpt LOG PID: once the job logging to LOG committed its
# checkpoint and did 50 steps past it, SIGKILL to PID (spotrun, or an
# agent) and to the job, as to a machine that vanished; t_rc: PID's status
kill_past_ckpt() {
	wait_for "$1" '^ckpt ' 60 "$2" || t_diag "$1: no checkpoint"
	_k=$(awk '$1 == "ckpt" { print $2; exit }' "$1")
	wait_for "$1" "^step $((_k + 50)) " 60 "$2" || t_diag "$1: no 50 steps past it"
	_jp=$(pgrep -f "lost.py $1" | head -n 1)
	kill -KILL "$2"
	[ -n "$_jp" ] && kill -KILL "$_jp"
	t_wait "$2"
}

# 1. a crash restarted: lost = from the committed state (the job's ckpt
# line, which spotrun sees after it) to the job's end (after its crash
# line): the log's difference, within 1.5 s less and 2 s more (spotrun
# seeing the answer and the exit on a loaded machine); the crash comes 24
# steps of 0.1 s after the checkpoint, so a count of 0 fails.
lost_job crash 1 30 25 "interval = 1s" \
    "[retry]" "max_restarts = 1" "on_exit_codes = 3" "backoff = 100ms"
"$SPOTRUN" run "$t_tmp/crash.ini" > "$t_tmp/crash.out" 2> "$t_tmp/crash.err"
t_is "$?" 0 "a job that crashed once past its checkpoint is restarted and finishes" ||
    t_show "$t_tmp/crash.err"
t_like "$t_tmp/crash.err" '^[0-9:]+  finished exit 0: 2 attempts, 0 preemptions, 1 restart, ' \
    "its last line: 2 attempts, 1 restart"
want=$(awk -v c="$(log_t "$t_tmp/crash.log" crash)" -v k="$(log_t "$t_tmp/crash.log" ckpt)" \
    'BEGIN { printf "%.3f", c - k }')
got=$(last_lost "$t_tmp/crash.err")
within "$got" "$(awk -v w="$want" 'BEGIN { print w - 1.5 }')" "$(awk -v w="$want" 'BEGIN { print w + 2 }')"
t_is "$?" 0 "the restart counts the work since the checkpoint as lost: $got s (the job's log: $want s)" ||
    t_show "$t_tmp/crash.err"

# 2. under the local provider, a crash after its simulated notice, before
# the job answered it: a restart, not a preemption (nothing but spotrun saw
# the notice), and the work lost from the attempt's start (just before its
# spawn line) to its end (after its crash line): their difference, within
# 0.5 s less and 2 s more (the spawn and spotrun seeing the exit on a
# loaded machine)
lost_job crashl 0 30 15 \
    "[retry]" "max_restarts = 1" "on_exit_codes = 3" "backoff = 100ms" \
    "[provider]" "name = local" "after = 1s" "preemptions = 1"
"$SPOTRUN" run "$t_tmp/crashl.ini" > "$t_tmp/crashl.out" 2> "$t_tmp/crashl.err"
t_is "$?" 0 "local provider: the crash is restarted and the job finishes" || t_show "$t_tmp/crashl.err"
t_like "$t_tmp/crashl.err" '^[0-9:]+  finished exit 0: 2 attempts, 0 preemptions, 1 restart, ' \
    "... counted as a restart, not a preemption" || t_show "$t_tmp/crashl.err"
"$SPOTRUN" ls -a "$t_tmp/crashl.ini" > "$t_tmp/crashl.ls" 2>&1
t_is "$(sed -n 2p "$t_tmp/crashl.ls" | grep -c ' exit 3 ')|$(grep -c preempted "$t_tmp/crashl.ls")" "1|0" \
    "... and ls -a says exit 3, no preemption" || t_show "$t_tmp/crashl.ls"
t_like "$t_tmp/crashl.err" '^[0-9:]+  notice   simulated preemption \(after 1 s\)' \
    "... which came after the notice" || t_show "$t_tmp/crashl.err"
want=$(awk -v c="$(log_t "$t_tmp/crashl.log" crash)" -v k="$(log_t "$t_tmp/crashl.log" spawn)" \
    'BEGIN { printf "%.3f", c - k }')
got=$(last_lost "$t_tmp/crashl.err")
within "$got" "$(awk -v w="$want" 'BEGIN { print w - 0.5 }')" "$(awk -v w="$want" 'BEGIN { print w + 2 }')"
t_is "$?" 0 "... with its work lost counted: $got s (the job's log: $want s)" || t_show "$t_tmp/crashl.err"

# 3. spotrun killed: the next run counts the vanished attempt's work once.
# It answers one checkpoint, then works on (5 s of steps at least) without
# another; the count runs from that checkpoint's commit to the lease's last
# renewal: at most the job's last step past its ckpt line, + 1 s (the job
# starved a moment before its spotrun was killed), at least 1 s (renewed
# every 2 s, 5 s of steps).
# (a TTL of 6 s here: renewals every 2 s, which a loaded machine keeps)
SPOTRUN_LEASE_TTL=6s
lost_job kill 1 90 0 "interval = 1s"
t_bg kill1 "$SPOTRUN" run "$t_tmp/kill.ini"
p=$t_last
kill_past_ckpt "$t_tmp/kill.log" "$p"
t_is "$t_rc" 137 "spotrun killed by SIGKILL past its checkpoint"
sleep 0.3
"$SPOTRUN" ls -a "$t_tmp/kill.ini" > "$t_tmp/kill.ls1" 2>&1
run1=$(sed -n 2p "$t_tmp/kill.ls1" | awk '{ print $1 }')
hi=$(awk -v s="$(last_t "$t_tmp/kill.log" step)" -v k="$(log_t "$t_tmp/kill.log" ckpt)" \
    'BEGIN { printf "%.3f", s - k + 1 }')
"$SPOTRUN" run "$t_tmp/kill.ini" > "$t_tmp/kill2.out" 2> "$t_tmp/kill2.err"
t_is "$?" 0 "run again: it takes the lease over and finishes" || t_show "$t_tmp/kill2.err"
t_is "$(grep -c '  vanished ' "$t_tmp/kill2.err")" 1 "one vanished line" || t_show "$t_tmp/kill2.err"
said=$(secs "$(sed -nE "s/^[0-9:]+  vanished attempt 1 of run $run1 has no end; its lease was last renewed at .*: ([0-9.ms]+) of its work after the checkpoint restored is done again\$/\\1/p" "$t_tmp/kill2.err")")
got=$(last_lost "$t_tmp/kill2.err")
within "$said" 1 "$hi"
t_is "$?" 0 "it names run 1's attempt 1 and its work lost: $said s, from 1 s to $hi s (the job's log)" ||
    t_show "$t_tmp/kill2.err"
t_is "$got" "$said" "the last line counts that, once"
"$SPOTRUN" ls -a "$t_tmp/kill.ini" > "$t_tmp/kill.ls" 2>&1
t_like "$t_tmp/kill.ls" "^$run1 +1 .* vanished " "ls -a: run 1's attempt is marked vanished" ||
    t_show "$t_tmp/kill.ls"
rec=$(grep -l "\"run\": \"$run1\"" "$t_tmp"/store/kill/attempts/*.json 2>/dev/null | head -n 1)
t_is "$(secs "$(sed -nE 's/^ *"lost": ([0-9.]+),?$/\1/p' "$rec" | awk '{ printf "%.1fs", $1 }')")" "${said:-none}" \
    "its record holds the seconds lost"
"$SPOTRUN" run "$t_tmp/kill.ini" > "$t_tmp/kill3.out" 2> "$t_tmp/kill3.err"
t_is "$?|$(grep -c '  vanished ' "$t_tmp/kill3.err")|$(last_lost "$t_tmp/kill3.err")" "0|0|0" \
    "a third run counts nothing again" || t_show "$t_tmp/kill3.err"

# 4. an agent killed with its job, another takes the job over: LOST > 0
SPOTRUN_LEASE_TTL=3s
Q=file://$t_tmp/q
{
	printf '[job]\nname = @ID@\ncommand = %s %s/lost.py %s/agent.log 1 90 0\n' "$PY" "$t_tmp" "$t_tmp"
	printf '[checkpoint]\ninterval = 1s\n[provider]\nname = local\n[resources]\ngpus = 1\n'
} > "$t_tmp/ag.ini"
"$QTOOL" add "$Q" aj "$t_tmp/ag.ini" 1 1 || t_bail "qtool add failed"
ag_start agk 1 --queue "$Q"
a=$t_last
kill_past_ckpt "$t_tmp/agent.log" "$a"
ag_run_bounded agt 1 --queue "$Q" --once
t_is "$t_rc|$(grep -c 'aj: claimed (epoch 2, taken over' "$t_tmp/agt.err")" "0|1" \
    "another agent takes the job over and ends" || t_show "$t_tmp/agt.err"
"$SPOTRUN" status --json --queue "$Q" aj > "$t_tmp/st.json" 2>&1
lost=$("$PY" -c 'import json, sys; print([j for j in json.load(open(sys.argv[1]))["jobs"] if j["id"] == "aj"][0]["lost_gpu_seconds"])' "$t_tmp/st.json" 2>/dev/null)
within "$lost" 1 100000
t_is "$?" 0 "spotrun status: the job's lost GPU-seconds are more than 0 ($lost)" || t_show "$t_tmp/st.json"

# 5. an agent paused just after its claim: its claim is an attempt
"$QTOOL" add "$Q" ap "$t_tmp/ag.ini" 1 1 || t_bail "qtool add failed"
SPOTRUN_FAULT=agent-claimed:stop ag_start agp 1 --queue "$Q" --once
a=$t_last
wait_for "$t_tmp/agp.err" 'fault injected at agent-claimed: stopping' 60 "$a" ||
    t_diag "agp: no stop at agent-claimed"
ag_run_bounded agq 1 --queue "$Q" --once
rq=$t_rc
kill -KILL "$a"
t_wait "$a"
t_is "$rq|$t_rc|$(grep -c 'ap: claimed (epoch 2, taken over' "$t_tmp/agq.err")" "0|137|1" \
    "a job whose holder paused after its claim is taken over and ends" || t_show "$t_tmp/agq.err"
"$SPOTRUN" status --json --queue "$Q" ap > "$t_tmp/sp.json" 2>&1
t_is "$("$PY" -c 'import json, sys; j = json.load(open(sys.argv[1]))["jobs"][0]; print(j["state"], j["attempts"])' "$t_tmp/sp.json" 2>&1)" \
    "succeeded 2" "spotrun status: the paused claim and the one that ran are 2 attempts" ||
    t_show "$t_tmp/sp.json"

# 6. an agent stopped before its first marker: the claim is still an attempt
{
	printf '[job]\nname = @ID@\ncommand = %s %s/lost.py %s/as.log 1 20 0\n' "$PY" "$t_tmp" "$t_tmp"
	printf '[checkpoint]\ninterval = 1s\n[provider]\nname = local\n[resources]\ngpus = 1\n'
} > "$t_tmp/as.ini"
"$QTOOL" add "$Q" as "$t_tmp/as.ini" 1 1 || t_bail "qtool add failed"
SPOTRUN_FAULT=agent-status-read:stop ag_start ags 1 --queue "$Q" --once
a=$t_last
wait_for "$t_tmp/ags.err" 'fault injected at agent-status-read: stopping' 60 "$a" ||
    t_diag "ags: no stop at agent-status-read"
ag_run_bounded agu 1 --queue "$Q" --once
ru=$t_rc
t_is "$ru|$(grep -c 'as: claimed (epoch 2, taken over' "$t_tmp/agu.err")" "0|1" \
    "a job whose holder stopped before its first marker is taken over and ends" ||
    t_show "$t_tmp/agu.err"
"$SPOTRUN" status --json --queue "$Q" as > "$t_tmp/ss.json" 2>&1
t_is "$("$PY" -c 'import json, sys; j = json.load(open(sys.argv[1]))["jobs"][0]; print(j["state"], j["attempts"], j["epoch"])' "$t_tmp/ss.json" 2>&1)" \
    "succeeded 2 2" "spotrun status: the claim that left no marker and the one that ran are 2 attempts" ||
    t_show "$t_tmp/ss.json"
kill -CONT "$a"
ag_wait_bounded "$a" 60
t_is "$t_rc|$(grep -c '^start ' "$t_tmp/as.log")|$(grep -c 'as: lost its lease' "$t_tmp/ags.err")" "0|1|1" \
    "the stopped agent, let go on, ends (exit 0) saying it lost its lease, and the job ran once" ||
    { t_show "$t_tmp/ags.err"; t_show "$t_tmp/as.log"; }
"$SPOTRUN" status --json --queue "$Q" as > "$t_tmp/ss2.json" 2>&1
t_is "$("$PY" -c 'import json, sys; j = json.load(open(sys.argv[1]))["jobs"][0]; print(j["state"], j["attempts"], j["epoch"])' "$t_tmp/ss2.json" 2>&1)" \
    "succeeded 2 2" "... and its status stays as the one that ran wrote it" || t_show "$t_tmp/ss2.json"
t_done
