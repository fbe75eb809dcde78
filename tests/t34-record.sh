#!/bin/sh
# t34-record.sh: an attempt's record counts its checkpoints as they commit,
# not only when the attempt ends: a spotrun killed by SIGKILL after three
# periodic checkpoints (as a machine that vanishes) leaves a record that
# `spotrun ls -a` shows with those three, and no end.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
t_python_module
cat > "$t_tmp/count.py" <<'PY'
import os, time, spotrun
step = 0
while True:
    time.sleep(0.02)
    step += 1
    if spotrun.requested():
        with open(os.path.join(spotrun.ckpt_dir(), "step"), "w") as f:
            f.write(str(step))
        spotrun.done(step)
PY
t_jobfile rec "$PY $t_tmp/count.py" "interval = 1s" "[provider]" "name = local"
t_bg run "$SPOTRUN" run "$t_tmp/rec.ini"
pid=$t_last
wait_for "$t_tmp/run.err" ' ckpt +2 step ' 30 "$pid"
t_is "$?" 0 "three periodic checkpoints committed" || t_show "$t_tmp/run.err"
kill -KILL "$pid"
t_wait "$pid"
t_is "$t_rc" 137 "spotrun killed by SIGKILL"
"$SPOTRUN" ls -a "$t_tmp/rec.ini" > "$t_tmp/ls" 2>&1
t_is "$?" 0 "ls -a of the job" || t_show "$t_tmp/ls"
row=$(sed -n 2p "$t_tmp/ls")
t_is "$(printf '%s\n' "$row" | awk '{ print $2 }')" 1 "one attempt, attempt 1" || t_show "$t_tmp/ls"
t_is "$(printf '%s\n' "$row" | awk '{ print $8 }')" 3 "its record counts the three checkpoints it committed" || t_show "$t_tmp/ls"
sed -n 2p "$t_tmp/ls" > "$t_tmp/row"
t_like "$t_tmp/row" 'no end \(running, or the machine vanished\)' "and says it has no end"
t_done
