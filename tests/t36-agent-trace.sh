#!/bin/sh
# t36-agent-trace.sh: an agent plays the local provider's machines one after
# another across its jobs, so a spot trace replays on where its last job
# left it: the agent's machine 1 lives the trace's first up-period from the
# agent's start, its job is preempted at that period's end and released;
# the agent, on its machine 2, claims the job again, which is preempted at
# the second period's end; machine 3's period reaches the trace's end and
# the job succeeds there. (Each claim used to start at the first period
# again.) Only the order of events is checked: on a loaded machine a
# notice may come at once, the machine's period spent before the claim.
# With --trace-node N the agent replays node N of a multi-node trace (its
# node in the gang without it, so node 1 alone), and a node the trace lacks fails the job, saying so.
# Runs of one job following each other within a second get log folders and
# run ids of their own.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
. "$top_srcdir/tests/jobs/agent.sh"
Q=file://$t_tmp/q

# 1 s ticks at trace_scale 10: periods of 1 s and 2 s, then one of 6 s
# that reaches the end (no notice); the job's 4 s of steps cannot end
# within the first two, however fast the machine
printf '{"metadata": {"gap_seconds": 10}, "data": [1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1]}\n' > "$t_tmp/trace.json"
cat > "$t_tmp/job.ini" <<EOF
[job]
name = @ID@
command = $PY $JOBS/workjob.py --log $t_tmp/wl --steps 40 --sleep 0.1
[checkpoint]
keep = 1000000
margin = 50ms
[provider]
name = local
trace = $t_tmp/trace.json
trace_scale = 10
window = 0.3s
EOF
"$QTOOL" add "$Q" tr1 "$t_tmp/job.ini" || t_bail "qtool add failed"
ag_start agt 0 --queue "$Q" --once
ag_wait_bounded "$t_last" 300
t_is "$t_rc" 0 "the agent drains the queue and exits 0" || t_show "$t_tmp/agt.err"
t_is "$(sed -n 's/.*simulated preemption (trace up-period \([0-9]*\) of 3).*/\1/p' "$t_tmp/agt.err" | tr '\n' ' ')" \
    "1 2 " "the job is preempted at period 1's end, then, claimed again, at period 2's: the trace goes on" ||
    t_show "$t_tmp/agt.err"
t_is "$(grep -E '^spotrun agent: tr1: (released|succeeded|failed)' "$t_tmp/agt.err" | sed 's/ (epoch [0-9]*)$//' | tr '\n' '|')" \
    "spotrun agent: tr1: released|spotrun agent: tr1: released|spotrun agent: tr1: succeeded|" \
    "released twice, then it succeeds on machine 3 (its period reaches the trace's end)" ||
    t_show "$t_tmp/agt.err"
t_is "$(cut -d' ' -f1 "$t_tmp/wl/tr1.final" 2>/dev/null | tr '\n' ' ')" \
    "$(seq 1 40 | tr '\n' ' ')" "every step of the job, once, in order"

# --trace-node N: the machine replays node N of a multi-node trace (up while
# a value is >= N), whatever its node in a gang. Node 1 of this 2-node
# trace is up throughout (one period to the end: no notice); node 2 is down
# at its second tick, so its machine 1 lives 1 s.
printf '{"metadata": {"gap_seconds": 10}, "data": [2, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2]}\n' > "$t_tmp/trace2.json"
sed "s|$t_tmp/trace.json|$t_tmp/trace2.json|" "$t_tmp/job.ini" > "$t_tmp/job2.ini"
"$QTOOL" add "$Q" n0 "$t_tmp/job2.ini" || t_bail "qtool add failed"
ag_start agn0 0 --queue "$Q" --once
ag_wait_bounded "$t_last" 300
t_is "$t_rc|$(grep -c 'simulated preemption' "$t_tmp/agn0.err")|$(grep -c '^spotrun agent: n0: succeeded' "$t_tmp/agn0.err")" \
    "0|0|1" "no --trace-node: the agent replays node 1, up throughout: no notice, the job succeeds" ||
    t_show "$t_tmp/agn0.err"
"$QTOOL" add "$Q" n1 "$t_tmp/job2.ini" || t_bail "qtool add failed"
ag_start agn1 0 --queue "$Q" --once --trace-node 2
ag_wait_bounded "$t_last" 300
t_is "$t_rc|$(sed -n 's/.*simulated preemption (trace up-period \([0-9]*\) of 2).*/\1/p' "$t_tmp/agn1.err" | tr '\n' ' ')|$(grep -c '^spotrun agent: n1: succeeded' "$t_tmp/agn1.err")" \
    "0|1 |1" "--trace-node 2: node 2's periods: preempted at the first's end, succeeds in the second" ||
    t_show "$t_tmp/agn1.err"
"$QTOOL" add "$Q" n3 "$t_tmp/job2.ini" || t_bail "qtool add failed"
ag_start agn3 0 --queue "$Q" --once --trace-node 4
ag_wait_bounded "$t_last" 300
t_like "$t_tmp/agn3.err" 'load trace .*trace2.json.*node 4 is not in it: it has 2 nodes' \
    "--trace-node 4 of a 2-node trace: the job's run says the trace has 2 nodes" || t_show "$t_tmp/agn3.err"
# Machines of 0.2 s, one after the other: the agent's runs of one job
# follow each other within a second, and each gets a log folder and a run
# id of its own (".N" after the second's for the Nth in that second);
# none writes into another's attempt log (they shared one before).
python3 -c 'import json; print(json.dumps({"metadata": {"gap_seconds": 1},
    "data": [1, 1, 0] * 3 + [1] * 40}))' > "$t_tmp/trace3.json"
sed -e "s|$t_tmp/trace.json|$t_tmp/trace3.json|" -e 's|--steps 40 --sleep 0.1|--steps 5 --sleep 0.1|' \
    -e 's|^window = .*|window = 0.1s|' "$t_tmp/job.ini" > "$t_tmp/job3.ini"
"$QTOOL" add "$Q" r3 "$t_tmp/job3.ini" || t_bail "qtool add failed"
ag_start agr 0 --queue "$Q" --once
ag_wait_bounded "$t_last" 300
runs=$(grep -c '^spotrun agent: r3: claimed' "$t_tmp/agr.err")
t_is "$t_rc|$runs|$(grep -c '^spotrun agent: r3: succeeded' "$t_tmp/agr.err")" "0|4|1" \
    "four machines of the job in a row: three preempted, the fourth's run succeeds" || t_show "$t_tmp/agr.err"
find "$t_tmp/agr.d" -path '*/logs/*' -name 'attempt-*.log' ! -path '*/latest/*' > "$t_tmp/r3.logs"
t_is "$(wc -l < "$t_tmp/r3.logs" | tr -d ' ')" "$runs" "... an attempt log in a folder of its own for each run"
t_is "$(xargs cat < "$t_tmp/r3.logs" | grep -c ' spotrun attempt 1 of run ')" "$runs" "... each with one run's lines"
t_is "$(xargs cat < "$t_tmp/r3.logs" | sed -nE 's/.* attempt 1 of run ([^ ]+) of r3: .*/\1/p' | sort -u | wc -l | tr -d ' ')" \
    "$runs" "... and its own run id" || t_show "$t_tmp/agr.err"
"$SPOTRUN" agent --queue "$Q" --once --trace-node 0 > "$t_tmp/bad.out" 2> "$t_tmp/bad.err"
t_is "$?|$(cat "$t_tmp/bad.err")" \
    "64|spotrun agent: --trace-node 0: not a node of a trace (1 to 4096)" \
    "--trace-node 0: refused, with the range (exit 64)"
t_done
