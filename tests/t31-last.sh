#!/bin/sh
# t31-last.sh: the job's last checkpoint (spotrun.done(step, last=True), a
# done marker "N seq=S last"). A job whose final step answers a notice,
# and whose end (writing its results) comes after that checkpoint:
#  - plain done(): spotrun stops it once the checkpoint commits, the
#    attempt is preempted and the next one does the end again (2 ends);
#  - done(last=True): once committed, the job is left to end on its own:
#    1 attempt, not preempted, the end once, no SIGTERM;
#  - last, but the job does not end before the notice's deadline: the
#    machine goes away, the next attempt resumes at the last step;
#  - a periodic checkpoint said to be the last: no request follows it,
#    neither periodic nor the notice's, and the notice lets the job end;
#  - a done marker with something else after the seq is refused, naming
#    the file and the fix;
#  - library mode: spotrun_set_last(ctx, 1) before the final save, blocking
#    or async, does the same; and a C job's spotrun_ckpt_answer_last.
# Real processes and the local provider's simulated notices.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup

# The job: python3 lastjob.py MODE LOG NOTICE. A fresh start makes the notice
# come (creates NOTICE, the local provider's notice_file) where MODE needs
# one, so that it comes once the job runs, on any machine; works until
# spotrun asks (REASON: notice or periodic), answers at step 5 (MODE last: with
# last=True), then ends as MODE says; a resumed one (at step 5) ends at
# once. LOG gets "start K", "req REASON" for each request seen, "end".
# Every wait gives up after 2 minutes (exit 9), so nothing hangs.
cp "$top_srcdir/tests/jobs/said.py" "$t_tmp/said.py"
cat > "$t_tmp/lastjob.py" <<'EOF'
import os, sys, time
import spotrun
from said import said
mode, log = sys.argv[1], sys.argv[2]
def put(line):
    with open(log, "a") as f:
        f.write(line + "\n")
def wait(cond):
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > 120:
            put("gave up")
            sys.exit(9)
        time.sleep(0.02)
def answered_with(reason, last):
    if reason == "notice":
        spotrun.requested()               # a first look: past its start
        open(sys.argv[3], "w").close()    # the notice comes (notice_file)
    wait(lambda: spotrun.requested() and spotrun.reason() == reason)
    put("req " + reason)
    with open(os.path.join(spotrun.ckpt_dir(), "state"), "w") as f:
        f.write("5\n")
    spotrun.done(5, last=last)
step = spotrun.resume_step() or 0
put("start %d" % step)
if step == 0 and mode == "plain":
    answered_with("notice", False)
    put("end")                    # its results, then a moment to exit
    wait(lambda: False)           # the stop comes first
elif step == 0 and mode == "last":
    answered_with("notice", True)
    wait(lambda: said("it may end on its own"))
    put("end")
    time.sleep(1)
elif step == 0 and mode == "slow":
    answered_with("notice", True)
    wait(lambda: False)           # until the machine goes away
elif step == 0 and mode == "periodic":
    answered_with("periodic", True)
    wait(lambda: said("is the job's last checkpoint"))
    open(sys.argv[3], "w").close()    # the notice comes (notice_file)
    wait(lambda: said("it may end on its own"))
    if spotrun.requested():
        put("req " + str(spotrun.reason()))
    put("end")
else:
    put("end")
EOF

# run NAME MODE [INI LINES...]: the job run; status in $t_rc
run() {
	_n=$1 _m=$2
	shift 2
	t_jobfile "$_n" "python3 $t_tmp/lastjob.py $_m $t_tmp/$_n.log $t_tmp/$_n.notice" "margin = 1s" \
	    "write_timeout = 2m" "$@"
	"$SPOTRUN" run "$t_tmp/$_n.ini" > "$t_tmp/$_n.out" 2> "$t_tmp/$_n.err"
	t_rc=$?
}
# what the job's log says, one line
said_log() { tr '\n' ',' < "$t_tmp/$1.log"; }

# 1-3: plain done() at the last step: stopped, preempted, the end twice.
run plain plain "interval = 0" "[provider]" "name = local" "notice_file = $t_tmp/plain.notice" \
    "window = 60s"
t_is "$t_rc" 0 "plain done(): the job finishes" || t_show "$t_tmp/plain.err"
t_is "$(said_log plain)" "start 0,req notice,end,start 5,end," \
    "... but its end ran twice: the attempt after the notice resumed at step 5" ||
    t_show "$t_tmp/plain.err"
t_like "$t_tmp/plain.err" 'checkpoint committed; SIGTERM to the job' \
    "... stopped once the notice's checkpoint committed"

# 4-8: done(step, last=True): left to end, one attempt, the end once.
run last last "interval = 0" "[provider]" "name = local" "notice_file = $t_tmp/last.notice" \
    "window = 60s"
t_is "$t_rc" 0 "done(last=True): the job finishes" || t_show "$t_tmp/last.err"
t_is "$(said_log last)" "start 0,req notice,end," "... its end ran once, in the noticed attempt" ||
    t_show "$t_tmp/last.err"
t_like "$t_tmp/last.err" '^[0-9:]+  ckpt     step 5 is the job.s last checkpoint: no other is asked' \
    "... the timeline says the checkpoint is the last" || t_show "$t_tmp/last.err"
t_unlike "$t_tmp/last.err" 'SIGTERM' "... and no SIGTERM went to the job"
t_like "$t_tmp/last.err" '^[0-9:]+  finished exit 0: 1 attempt, 0 preemptions' \
    "... 1 attempt, not counted preempted" || t_show "$t_tmp/last.err"

# 9-11: last, but the machine goes before the job ends.
run slow slow "interval = 0" "[provider]" "name = local" "notice_file = $t_tmp/slow.notice" \
    "window = 10s"
t_is "$t_rc" 0 "last, job too slow to end: the job finishes" || t_show "$t_tmp/slow.err"
t_is "$(said_log slow)" "start 0,req notice,start 5,end," \
    "... the next attempt resumed at the last checkpoint's step and ended" || t_show "$t_tmp/slow.err"
t_like "$t_tmp/slow.err" 'the machine is going away; SIGTERM to the job' \
    "... stopped when the machine went away, at the deadline" || t_show "$t_tmp/slow.err"

# 12-14: a periodic checkpoint said to be the last, then the notice (the
# job makes it come, through notice_file, once the commit is on the
# timeline).
run per periodic "interval = 1s" "[provider]" "name = local" "notice_file = $t_tmp/per.notice" \
    "window = 60s"
t_is "$t_rc" 0 "a periodic last checkpoint: the job finishes" || t_show "$t_tmp/per.err"
t_is "$(said_log per)" "start 0,req periodic,end," \
    "... no request after it (periodic or the notice's), the end once" || t_show "$t_tmp/per.err"
t_like "$t_tmp/per.err" '^[0-9:]+  finished exit 0: 1 attempt, 0 preemptions' \
    "... 1 attempt, not counted preempted" || t_show "$t_tmp/per.err"

# 15-20: library mode (libspotrun): tests/jobs/libtrain answers the notice
# at its final step after spotrun_set_last(ctx, 1), blocking and async;
# then takes a second over its end: left to end, one attempt.
for how in sync async; do
	a=
	[ "$how" = async ] && a=async
	t_jobfile "lib$how" "$top_builddir/tests/jobs/libtrain 30 10 $t_tmp/lib$how.out $a last=$t_tmp/lib$how.notice" \
	    "mode = library" "interval = 0" "margin = 1s" "write_timeout = 2m" \
	    "[provider]" "name = local" "notice_file = $t_tmp/lib$how.notice" "window = 60s"
	"$SPOTRUN" run "$t_tmp/lib$how.ini" > "$t_tmp/lib$how.o" 2> "$t_tmp/lib$how.err"
	t_is "$?|$(grep -c '^result: ' "$t_tmp/lib$how.o")" "0|1" \
	    "library ($how save), spotrun_set_last: the job finishes, its end once" || t_show "$t_tmp/lib$how.err"
	t_like "$t_tmp/lib$how.err" '^[0-9:]+  ckpt     step 29 is the job.s last checkpoint' \
	    "... its notice's checkpoint at step 29 is the last" || t_show "$t_tmp/lib$how.err"
	t_like "$t_tmp/lib$how.err" '^[0-9:]+  finished exit 0: 1 attempt, 0 preemptions' \
	    "... 1 attempt, no SIGTERM, not counted preempted" || t_show "$t_tmp/lib$how.err"
done

# 21-23: a C job through spotrun.h: spotrun_ckpt_answer_last at its final
# step (tests/cjob's last=PATH).
t_jobfile cj "$top_builddir/tests/cjob 30 10 last=$t_tmp/cj.notice" "interval = 0" "margin = 1s" \
    "write_timeout = 2m" "[provider]" "name = local" "notice_file = $t_tmp/cj.notice" "window = 60s"
"$SPOTRUN" run "$t_tmp/cj.ini" > "$t_tmp/cj.o" 2> "$t_tmp/cj.err"
t_is "$?|$(grep -c '^result: ' "$t_tmp/cj.o")" "0|1" \
    "C job, spotrun_ckpt_answer_last: the job finishes, its end once" || t_show "$t_tmp/cj.err"
t_like "$t_tmp/cj.err" '^[0-9:]+  ckpt     step 29 is the job.s last checkpoint' \
    "... its notice's checkpoint at step 29 is the last" || t_show "$t_tmp/cj.err"
t_like "$t_tmp/cj.err" '^[0-9:]+  finished exit 0: 1 attempt, 0 preemptions' \
    "... 1 attempt, not counted preempted" || t_show "$t_tmp/cj.err"

# 24-25: a done marker with a word after the seq other than "last".
cat > "$t_tmp/bad.sh" <<'EOF'
while [ ! -f "$SPOTRUN_CKPT_REQUEST" ]; do sleep 0.02; done
seq=$(sed -n 's/^seq=\([0-9]*\) .*/\1/p' "$SPOTRUN_CKPT_REQUEST")
echo "3 seq=$seq lastly" > "$SPOTRUN_CKPT_DONE.t"
mv "$SPOTRUN_CKPT_DONE.t" "$SPOTRUN_CKPT_DONE"
while [ -f "$SPOTRUN_CKPT_REQUEST" ]; do sleep 0.02; done
EOF
t_jobfile bad "/bin/sh $t_tmp/bad.sh" "interval = 1s" "signal = none"
"$SPOTRUN" run "$t_tmp/bad.ini" > "$t_tmp/bad.out" 2> "$t_tmp/bad.err"
t_is "$?" 0 "a marker '3 seq=N lastly': the job finishes" || t_show "$t_tmp/bad.err"
t_like "$t_tmp/bad.err" "warning  read .*/done: '3 seq=[0-9]+ lastly' is not a step, the request's seq and 'last'; write them \(e.g. 120 seq=3, or 120 seq=3 last" \
    "... the timeline names the file, what it holds and the fix" || t_show "$t_tmp/bad.err"

t_done
