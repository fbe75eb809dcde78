#!/bin/sh
# t31-request.sh: how a checkpoint is asked of the job (the request file and
# the request signal) and what spotrun says when that goes wrong:
#  - a done file that lands after spotrun withdrew its request is not taken
#    as the answer to the next request;
#  - the request signal goes only to processes that catch it (SigCgt):
#    a Python job with no handler, one whose handler comes after a delay,
#    a launcher (sh -c 'python3 job.py') whose child catches it; one that
#    installs its handler after the request came and waits for the signal
#    alone is signalled as soon as it catches it;
#  - a job killed by spotrun's own request signal is told so, with the fix;
#  - a job killed from outside (SIGTERM to the whole Slurm step) before its
#    notice's checkpoint is told so, with the fix.
# Real processes and real signals throughout.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup

# job NAME COMMAND [EXTRA INI LINES...]: write $t_tmp/NAME.ini
job() {
	_jn=$1 _jc=$2
	shift 2
	t_jobfile "$_jn" "$_jc" "margin = 1s" "$@"
}
run() {	# run NAME: spotrun run, stdout and stderr to NAME.out/.err, status in $t_rc
	"$SPOTRUN" run "$t_tmp/$1.ini" > "$t_tmp/$1.out" 2> "$t_tmp/$1.err"
	t_rc=$?
}
# job_pid NAME PID: wait until job NAME (run by spotrun PID) wrote its pid
# to its local dir's job.pid, and print it.
job_pid() {
	wait_for "$t_tmp/local-$1/job.pid" '^[0-9]+$' 60 "$2" && cat "$t_tmp/local-$1/job.pid"
}

# 1-3: a late answer. The job lets request 1 pass its deadline (write_timeout
# 1s), answers it once spotrun withdrew it (done holds 999), then answers
# request 2 properly at step 2: the checkpoint is step 2, not the stale 999.
cat > "$t_tmp/late.sh" <<'EOF'
posted() { while [ ! -f "$SPOTRUN_CKPT_REQUEST" ]; do sleep 0.02; done; }
withdrawn() { while [ -f "$SPOTRUN_CKPT_REQUEST" ]; do sleep 0.02; done; }
answer() { echo "$1" > "$SPOTRUN_CKPT_DIR/state"; echo "$1" > "$SPOTRUN_CKPT_DONE.t"; mv "$SPOTRUN_CKPT_DONE.t" "$SPOTRUN_CKPT_DONE"; }
posted; withdrawn; answer 999; echo "answered request 1 late"
posted; sleep 0.2; answer 2; echo "answered request 2"
withdrawn
EOF
job late "/bin/sh $t_tmp/late.sh" "interval = 2s" "write_timeout = 1s" "signal = none" "[provider]" "name = local"
run late
t_is "$t_rc" 0 "late answer: the job finishes" || t_show "$t_tmp/late.err"
t_like "$t_tmp/late.err" '^[0-9:]+  ckpt     0 step 2: ' "the next request's checkpoint holds the job's answer to it (step 2)"
t_unlike "$t_tmp/late.err" 'step 999' "the late answer to the withdrawn request is not taken for it"

# said.py: said(WHAT), whether the timeline of the job's attempt (its log)
# has WHAT yet, for the jobs below.
cp "$top_srcdir/tests/jobs/said.py" "$t_tmp/said.py"

# A Python job answering N requests through the file alone, then ending
# once spotrun took the last answer (the request withdrawn). It catches the
# request signal WHEN: "now", "never", or "late": once the timeline said
# the first request did not signal it (as a job still importing torch). It counts the
# signals it gets and prints them at its end. With HOLD set (the pid of
# spotrun, which the launcher stopped) it lets spotrun go on once it
# catches the signal. It gives up after 2 minutes without its N requests.
cat > "$t_tmp/pyjob.py" <<'EOF'
import os, signal, sys, time
from said import said
when, n = sys.argv[1], int(sys.argv[2])
req, done = os.environ["SPOTRUN_CKPT_REQUEST"], os.environ["SPOTRUN_CKPT_DONE"]
got = [0]
def catch():
    signal.signal(signal.SIGUSR1, lambda s, f: got.__setitem__(0, got[0] + 1))
if when == "now":
    catch()
if "HOLD" in os.environ:
    os.kill(int(os.environ["HOLD"]), signal.SIGCONT)
start, step, answered, nanswered = time.time(), 0, None, 0
while nanswered < n or os.path.exists(req):
    if time.time() - start > 120:
        print("gave up", flush=True)
        break
    try:
        with open(req) as f:
            seq = f.read().split()[0]
    except FileNotFoundError:
        seq = None
    if seq is not None and seq != answered and nanswered < n:
        with open(done + ".t", "w") as f:
            f.write("%d\n" % step)
        os.rename(done + ".t", done)
        answered = seq
        nanswered += 1
    if when == "late" and said("SIGUSR1 not sent"):
        catch()
        when = "now"
    step += 1
    time.sleep(0.05)
print("signals %d" % got[0], flush=True)
EOF
sigs() { sed -n 's/^signals //p' "$t_tmp/$1.out"; }

# 4-7: a job with no handler for SIGUSR1 is not sent it: it runs to its end,
# answering from the request file; the timeline says so once.
job nohandler "$PY $t_tmp/pyjob.py never 3" "interval = 1s"
run nohandler
t_is "$t_rc" 0 "a job with no SIGUSR1 handler is not killed by the request signal" || t_show "$t_tmp/nohandler.err"
t_is "$(grep -c '  request  SIGUSR1 not sent' "$t_tmp/nohandler.err")" 1 "the timeline says once that the signal was not sent"
t_like "$t_tmp/nohandler.err" "^00:0[0-9]  request  SIGUSR1 not sent: the job does not catch it \\(pid [0-9]+, python3\\); the request file alone asks\$" \
	"... naming the process and that the request file alone asks"
t_like "$t_tmp/nohandler.err" '^[0-9:]+  ckpt     2 step [0-9]+: ' "its requests are answered through the file"

# 8-9: the handler comes once the timeline said the first request went
# without the signal (it did not catch it yet): the first
# request goes by the file alone, the later ones with the signal too.
job delayed "$PY $t_tmp/pyjob.py late 3" "interval = 1s"
run delayed
t_is "$t_rc" 0 "a job whose handler comes after the first request is not killed" || t_show "$t_tmp/delayed.err"
t_is "$(grep -c 'SIGUSR1 not sent' "$t_tmp/delayed.err"):$([ "$(sigs delayed)" -ge 1 ] 2>/dev/null && echo signalled)" \
	"1:signalled" "it is signalled once it catches the signal (got $(sigs delayed))"

# 10-12: a launcher that does not catch the signal, whose child does: the
# child is signalled, the launcher is not (it lives to print its line).
# The launcher stops spotrun (its parent) until the child catches the
# signal, so that the first request finds it catching however slowly
# Python starts.
job launcher "/bin/sh -c 'kill -STOP \$PPID; HOLD=\$PPID $PY $t_tmp/pyjob.py now 2; echo launcher done'" "interval = 1s"
run launcher
t_is "$t_rc:$(tail -n 1 "$t_tmp/launcher.out")" "0:launcher done" "a launcher (sh -c) that does not catch SIGUSR1 lives on" ||
	t_show "$t_tmp/launcher.err"
t_is "$([ "$(sigs launcher)" -ge 1 ] 2>/dev/null && echo yes)" "yes" "its child, which catches it, is signalled (got $(sigs launcher))"
t_like "$t_tmp/launcher.err" "^00:0[0-9]  request  SIGUSR1 sent to 1 of the job's 2 processes: pid [0-9]+ \\(sh\\) does not catch it; the request file alone asks it\$" \
	"the timeline names the launcher it skipped"

# 13-15: killed by spotrun's own request signal (its handler lets it go
# again, as at an interpreter's shutdown): said, with the fix. Its
# launcher stops spotrun until the handler is in, so that the request
# itself signals it.
cat > "$t_tmp/reraise.py" <<'EOF'
import os, signal, sys, time
from said import said
def lose_it(s, f):
    signal.signal(signal.SIGUSR1, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGUSR1)
if sys.argv[1] == "now":
    signal.signal(signal.SIGUSR1, lose_it)
    os.kill(int(os.environ["HOLD"]), signal.SIGCONT)
for _ in range(1200):	# until the request signal, at most 2 minutes
    if sys.argv[1] == "late" and said("SIGUSR1 not sent"):
        signal.signal(signal.SIGUSR1, lose_it)
        sys.argv[1] = "now"
    time.sleep(0.1)
EOF
reraise_is_told() {	# reraise_is_told NAME WHAT: tests 13-15 for job NAME
	t_is "$t_rc" 138 "a job killed by the request signal$2 exits 138" || t_show "$t_tmp/$1.err"
	t_has "$t_tmp/$1.err" "  killed   the job was killed by SIGUSR1, spotrun's checkpoint request signal: it does not handle it; handle SIGUSR1, \`import spotrun\` first thing (Python), or set signal = none in [checkpoint]" \
		"... the timeline says it was spotrun's request signal, and how to fix it"
	t_like "$t_tmp/$1.err" '^00:0[0-9]  failed   exit 138: 1 attempt, ' "... then the run fails with the job's code"
}
job reraise "/bin/sh -c 'kill -STOP \$PPID; HOLD=\$PPID exec $PY $t_tmp/reraise.py now'" "interval = 1s"
run reraise
reraise_is_told reraise ""
# 16-18: the same when its handler came after the request: the signal that
# spotrun sends it once it catches the signal is spotrun's too.
job relate "$PY $t_tmp/reraise.py late" "interval = 1s"
run relate
reraise_is_told relate " sent once it caught it"

# 19-20: a SIGUSR1 from someone else is not called spotrun's.
job other "sleep 10" "interval = 1h"
t_bg other "$SPOTRUN" run "$t_tmp/other.ini"
bgpid=$t_last
wait_for "$t_tmp/other.err" 'started  sleep 10 \(pid [0-9]+\)' 60 "$bgpid"
kill -USR1 "$(sed -n 's/.*started  sleep 10 (pid \([0-9]*\))$/\1/p' "$t_tmp/other.err")"
t_wait $bgpid
t_is "$t_rc" 138 "a job killed by a SIGUSR1 from outside exits 138" || t_show "$t_tmp/other.err"
t_unlike "$t_tmp/other.err" "killed   " "... and is not said to have died of spotrun's request signal"

# 21-23: Slurm's SIGTERM to the whole job step: spotrun (signal provider:
# the notice) and the job together. The job dies before its checkpoint;
# the timeline says which signal, that it came from outside spotrun, that
# the previous checkpoint stays the newest, and how to send it to spotrun
# alone.
cat > "$t_tmp/step.sh" <<'EOF'
echo $$ > "$SPOTRUN_CKPT_DIR/../job.pid"
while :; do sleep 0.1; done
EOF
job step "/bin/sh $t_tmp/step.sh" "[provider]" "name = signal" "grace = 5s"
t_bg step "$SPOTRUN" run "$t_tmp/step.ini"
bgpid=$t_last
kill -TERM "$bgpid" "$(job_pid step "$bgpid")"
t_wait $bgpid
t_is "$t_rc" 75 "SIGTERM to spotrun and the job at once: preempted, exit 75" || t_show "$t_tmp/step.err"
t_has "$t_tmp/step.err" "  killed   the job was killed by SIGTERM before it wrote the notice's checkpoint: spotrun did not send it, so it came from outside spotrun (Slurm sends it to the whole job step); the previous checkpoint stays the newest. Send the signal to spotrun alone: with Slurm, sbatch --signal=B:TERM@120 and \`exec spotrun run JOB.ini\` in the batch script (examples/slurm/)" \
	"the timeline says the job died of an outside SIGTERM before its checkpoint, and the fix"
t_like "$t_tmp/step.err" '^00:0[0-9]  preempted exit 75: 1 attempt, 1 preemption, ' "the run ends preempted"

# 24-25: the same when the job's death comes first and spotrun's SIGTERM a
# moment later (Slurm signals the processes of the step one by one).
# spotrun waits 0.3 s after such a death for its notice; so that this test
# does not depend on being that quick, spotrun is stopped while the job
# dies (until it is a zombie) and gets its SIGTERM only then.
job step2 "/bin/sh $t_tmp/step.sh" "[provider]" "name = signal" "grace = 5s"
t_bg step2 "$SPOTRUN" run "$t_tmp/step2.ini"
bgpid=$t_last
jpid=$(job_pid step2 "$bgpid")
kill -STOP "$bgpid"
kill -TERM "$jpid"
wait_for "/proc/$jpid/stat" "^$jpid \\(sh\\) Z " 60
kill -TERM "$bgpid"
kill -CONT "$bgpid"
t_wait $bgpid
t_is "$t_rc" 75 "the job's death first, spotrun's SIGTERM 0.1 s later: preempted, exit 75" || t_show "$t_tmp/step2.err"
t_has "$t_tmp/step2.err" "  killed   the job was killed by SIGTERM before it wrote the notice's checkpoint: spotrun did not send it, so it came from outside spotrun" \
	"... and the same line says why"
# 26-28: a job that ends on its own, exit 0, as the notice's request comes
# (its SIGUSR1 handler exits): finished, not preempted, and counted as no
# preemption.
cat > "$t_tmp/quit.sh" <<'EOF'
trap 'echo "asked; done anyway"; exit 0' USR1
echo $$ > "$SPOTRUN_CKPT_DIR/../job.pid"
while :; do sleep 0.05; done
EOF
job quit "/bin/sh $t_tmp/quit.sh" "[provider]" "name = signal" "grace = 5s"
t_bg quit "$SPOTRUN" run "$t_tmp/quit.ini"
bgpid=$t_last
job_pid quit "$bgpid" > /dev/null
sleep 0.3
kill -TERM "$bgpid"
t_wait $bgpid
t_is "$t_rc" 0 "a job that exits 0 as the notice's request comes: finished, exit 0" || t_show "$t_tmp/quit.err"
t_like "$t_tmp/quit.err" '^[0-9:]+  finished exit 0: 1 attempt, 0 preemptions, ' \
	"... and no preemption counted"
t_has "$t_tmp/quit.out" "asked; done anyway" "... the job did get the request"
# 29-31: a job that waits for the signal alone (it answers no request file) and
# installs its handler once the first request went out without the signal
# (the attempt's log says so): it is signalled once
# it catches it, and its answer is committed at once, not after the write
# timeout (2 minutes, longer than the job waits for the signal).
cat > "$t_tmp/sigonly.py" <<'EOF'
import os, signal, sys, time
from said import said
req, done = os.environ["SPOTRUN_CKPT_REQUEST"], os.environ["SPOTRUN_CKPT_DONE"]
got = []
while not said("SIGUSR1 not sent"):
    time.sleep(0.05)
signal.signal(signal.SIGUSR1, lambda s, f: got.append(1))
for step in range(1, 1200):	# at most a minute
    time.sleep(0.05)
    if got:
        with open(done + ".t", "w") as f:
            f.write("%d\n" % step)
        os.rename(done + ".t", done)
        print("answered at step %d" % step, flush=True)
        while os.path.exists(req):	# until spotrun took the answer
            time.sleep(0.05)
        break
EOF
job sigonly "$PY $t_tmp/sigonly.py" "interval = 1s" "write_timeout = 2m" "[provider]" "name = local"
run sigonly
t_is "$t_rc" 0 "a job whose handler comes after the request, waiting for the signal alone: exit 0" ||
	t_show "$t_tmp/sigonly.err"
t_like "$t_tmp/sigonly.err" "^[0-9:]+  request  SIGUSR1 sent to 1 more process, which began to catch it after the request\$" \
	"... it is signalled once it catches the signal, saying so"
t_like "$t_tmp/sigonly.err" '^[0-9:]+  ckpt     0 step [0-9]+: .*committed' "... and its answer is committed" ||
	t_show "$t_tmp/sigonly.err"
t_done
