#!/bin/sh
# t49-setup.sh: a job's [job] setup (doc/fleet.md, "Setup"), on a file://
# queue:
# 1. a sweep's two trials share one shipped snapshot: setup runs once, in
#    the set-up tree both copies are made from (its .venv in each), the
#    cache stays pristine; the second says it was done before; its log is
#    in `spotrun logs` under "setup", its time in the agent's log.
# 2. ship_workdir = no: once per workdir path and setup text; again when
#    the text changes.
# 3. a failed setup: the job failed, its exit status and the last lines of
#    its output in the agent's log and the job's, no .done, not retried.
# 4. SIGTERM to the agent during setup: the job is released (pending
#    again), no .done; the next agent runs setup again and the job.
# 5. spotrun run says it does not run setup, and does not.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/jobs/fleet.sh"
t_setup
S=$SPOTRUN
T=$t_tmp
export HOME=$T/home XDG_DATA_HOME=$T/data XDG_CONFIG_HOME=$T/config XDG_STATE_HOME=$T/state
unset SPOTRUN_QUEUE
mkdir -p "$HOME" "$T/out" "$T/L"

# --- 1. a sweep's trials: one setup -----------------------------------------
cat > "$T/L/job.ini" <<EOF2
[job]
name = sw
command = sh -c "cat .venv/marker > $T/out/sw.\${seed}"
setup = echo run >> $T/count; mkdir -p .venv; echo venv > .venv/marker; echo set up out; echo set up err >&2
[provider]
name = local
[sweep]
seed = 1..2
EOF2
setup_text="echo run >> $T/count; mkdir -p .venv; echo venv > .venv/marker; echo set up out; echo set up err >&2"
run s "$S" submit --create --queue "$T/q" "$T/L/job.ini"
t_is "$rc" 0 "a sweep with a setup is submitted" || t_show "$T/s.err"
run ag "$S" agent --queue "$T/q" --once --dir "$T/ag"
t_is "$rc|$(cat "$T/count")|$(cat "$T/out/sw.1" "$T/out/sw.2")" "0|run|venv
venv" "setup ran once for two jobs of one snapshot; what it wrote is in each job's copy" ||
    t_show "$T/ag.err"
first=$(sed -nE 's/^spotrun agent: (sw\.[12]): claimed .*/\1/p' "$T/ag.err" | head -n 1)
second=$(sed -nE 's/^spotrun agent: (sw\.[12]): claimed .*/\1/p' "$T/ag.err" | tail -n 1)
t_like "$T/ag.err" "^spotrun agent: $first: setup: .*: [0-9]+\\.[0-9] s, exit 0\$" \
    "the agent's log says setup's time and exit status"
t_like "$T/ag.err" "^spotrun agent: $second: setup: done before on this machine \\(took [0-9]+\\.[0-9] s\\)\$" \
    "... and that the second job found it done"
h=$(ls "$T/ag/setup" | sed -n 's/\.done$//p')
t_is "$(ls "$T/ag/setup" | tr '\n' ' ')|$(ls -A "$T"/ag/workdirs/*/ | tr '\n' ' ')" \
    "$h $h.done $h.lock $h.log |job.ini " "the marker, lock, log and set-up tree; the cache stays pristine"
run lg "$S" logs --queue "$T/q" "$first"
t_is "$(sed -E 's/^\+[0-9.]+ /+T /; s/[0-9]+\.[0-9] s, exit/N s, exit/' "$T/lg.out" | sed -n 1,5p)" "==> $first: run 1, setup <==
+T spotrun setup: $setup_text: started in $T/ag/setup/$h (its log: $T/ag/setup/$h.log)
+T out set up out
+T err set up err
+T spotrun setup: $setup_text: N s, exit 0" "spotrun logs shows setup's log, marked as setup"
t_is "$(sed -E 's/^\+[0-9.]+ /+T /' "$T/ag/setup/$h.log")" "$(sed -E 's/^\+[0-9.]+ /+T /' "$T/lg.out" | sed -n 2,5p)" \
    "... as the local log has it"

# the same code submitted again (--again): the same tree, so the same
# snapshot id; setup is not run again on this machine
run s "$S" submit --again --queue "$T/q" "$T/L/job.ini"
run ag "$S" agent --queue "$T/q" --once --dir "$T/ag"
t_is "$rc|$(cat "$T/count")|$(grep -c ': setup: done before on this machine' "$T/ag.err")" "0|run|2" \
    "unchanged code submitted again: both new jobs find setup done" || t_show "$T/ag.err"

# --- 2. ship_workdir = no: path + text ----------------------------------------
mkdir -p "$T/vm"
for n in p1 p2 p3; do
	s="echo run >> $T/count2"
	[ $n = p3 ] && s="echo other >> $T/count2"
	printf '[job]\nname = %s\ncommand = true\nworkdir = %s/vm\nship_workdir = no\nsetup = %s\n[provider]\nname = local\n' \
	    "$n" "$T" "$s" > "$T/$n.ini"
	run s "$S" submit --create --queue "$T/q2" "$T/$n.ini"
done
run ag2 "$S" agent --queue "$T/q2" --once --dir "$T/ag2"
t_is "$rc|$(sort "$T/count2" | tr '\n' ' ')" "0|other run " \
    "ship_workdir = no: once for the same path and setup, again for another setup" ||
    t_show "$T/ag2.err"

# --- 3. a failed setup --------------------------------------------------------
printf '[job]\nname = bad\ncommand = touch %s/out/bad-ran\nworkdir = %s/vm\nship_workdir = no\nsetup = echo one; echo two >&2; exit 3\n[provider]\nname = local\n' \
    "$T" "$T" > "$T/bad.ini"
run s "$S" submit --create --queue "$T/q3" "$T/bad.ini"
run ag3 "$S" agent --queue "$T/q3" --once --dir "$T/ag3"
t_is "$(grep -E '^spotrun agent: bad: (setup|failed)' "$T/ag3.err" | sed -E 's/[0-9]+\.[0-9] s/N s/; s/started in .*/started/')" \
    "spotrun agent: bad: setup: echo one; echo two >&2; exit 3: started
spotrun agent: bad: setup: echo one; echo two >&2; exit 3: N s, exit 3
spotrun agent: bad: setup failed (exit 3)
spotrun agent: bad: setup: the last 2 lines of its log:
spotrun agent: bad: setup: | one
spotrun agent: bad: setup: | two
spotrun agent: bad: failed (epoch 1)" "a failed setup fails the job: its exit status and last lines" ||
    t_show "$T/ag3.err"
t_is "$([ -e "$T/out/bad-ran" ] && echo ran)|$(ls "$T/ag3/setup" | grep -c done)" "|0" \
    "... the job did not run, no .done"
run lg "$S" logs --queue "$T/q3" bad
t_is "$(sed -E 's/^\+[0-9.]+ /+T /; s/[0-9]+\.[0-9] s/N s/' "$T/lg.out" | sed -n '1p;3,6p')" "==> bad: run 1, setup <==
+T out one
+T err two
+T spotrun setup: echo one; echo two >&2; exit 3: N s, exit 3
+T spotrun setup failed (exit 3)" "... said in the job's log too"
run ag3b "$S" agent --queue "$T/q3" --once --dir "$T/ag3"
t_is "$(grep -c 'claimed' "$T/ag3b.err")" 0 "... and not retried"

# --- 4. SIGTERM during setup: released ----------------------------------------
printf '[job]\nname = slow\ncommand = touch %s/out/slow-ran\nworkdir = %s/vm\nship_workdir = no\nsetup = touch %s/slow-started; sleep 30\n[provider]\nname = local\n' \
    "$T" "$T" "$T" > "$T/slow.ini"
run s "$S" submit --create --queue "$T/q4" "$T/slow.ini"
"$S" agent --queue "$T/q4" --once --dir "$T/ag4" > "$T/ag4.out" 2> "$T/ag4.err" &
agpid=$!
wait_for "$T/ag4.err" "^spotrun agent: slow: setup: .*: started in" 20 "$agpid"
wait_for_file=0
while [ ! -e "$T/slow-started" ] && [ $wait_for_file -lt 100 ]; do sleep 0.1; wait_for_file=$((wait_for_file + 1)); done
kill -TERM "$agpid"
t_wait "$agpid"
t_is "$([ -e "$T/out/slow-ran" ] && echo ran)|$(ls "$T/ag4/setup" | grep -c done)" "|0" \
    "SIGTERM during setup: the job did not run, no .done"
t_like "$T/ag4.err" "^spotrun agent: slow: released \\(epoch 1\\)\$" "... the job is released as after a preemption" ||
    t_show "$T/ag4.err"
sed -i 's/sleep 30/true/' "$T/slow.ini"
run ag4b "$S" agent --queue "$T/q4" --once --dir "$T/ag4"
t_is "$rc|$([ -e "$T/out/slow-ran" ] && echo ran)" "0|ran" "... and the next agent runs it" || t_show "$T/ag4b.err"

# --- 5. spotrun run -----------------------------------------------------------
printf '[job]\nname = loc\ncommand = true\nsetup = touch %s/loc-setup\n' "$T" > "$T/L/loc.ini"
run r "$S" run "$T/L/loc.ini"
t_is "$rc|$(head -n 1 "$T/r.err")|$([ -e "$T/loc-setup" ] && echo ran)" \
    "0|spotrun: loc: setup not run: spotrun run runs the job in $T/L as it is (an agent runs setup once per machine before the job)|" \
    "spotrun run says it does not run setup, and does not"
t_done
