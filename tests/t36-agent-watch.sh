#!/bin/sh
# t36-agent-watch.sh: an agent watches its machine between its runs, with
# the provider settings of the last job it ran (fleet/agent-watch.c), so a
# machine whose notice came is given no job and no node of a gang. The
# local provider replays a trace of three machines (1 s ticks): 12 s, 12 s,
# then one that reaches the trace's end.
# 1. Agent X runs a short job on machine 1 and idles; machine 1's notice
#    comes between jobs: X says so and goes on to machine 2 at once.
# 2. A job of 2 nodes is submitted: X claims it and waits for the gang to
#    form, alone; machine 2's notice comes meanwhile: X leaves the forming
#    gang (its slot and the lease released) and claims the job again on
#    machine 3. A second agent then joins; the gang runs on machine 3 with
#    no notice, and the job succeeds in one run of each node.
# Before, X's next run started on a machine whose period was spent, its
# notice came at once, and the gang was stopped as it started.
# Waits are for the lines the agent writes, bounded as hang guards.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
. "$top_srcdir/tests/jobs/agent.sh"
Q=file://$t_tmp/q

python3 -c 'import json; print(json.dumps({"metadata": {"gap_seconds": 10},
    "data": [1] * 12 + [0] + [1] * 12 + [0] + [1] * 30}))' > "$t_tmp/trace.json"
prov="[provider]
name = local
trace = $t_tmp/trace.json
trace_scale = 10
window = 2s"
ag_spec "$t_tmp/a.ini" 3 0.1 "trace = $t_tmp/trace.json" "trace_scale = 10" "window = 2s"
"$QTOOL" add "$Q" wa "$t_tmp/a.ini" || t_bail "qtool add failed"
ag_start wx 0 --queue "$Q" --label addr=127.0.0.1
x=$t_last
wait_for "$t_tmp/wx.err" '^spotrun agent: wa: succeeded' 60 "$x" ||
    { t_show "$t_tmp/wx.err"; t_bail "the first job did not succeed"; }
t_is "$(grep -c 'simulated preemption' "$t_tmp/wx.err")" 0 \
    "1: the short job ran on machine 1 with no notice" || t_show "$t_tmp/wx.err"
wait_for "$t_tmp/wx.err" 'notice came between jobs' 60 "$x"
t_like "$t_tmp/wx.err" '^spotrun agent: this machine.s notice came between jobs: simulated preemption \(trace up-period 1 of 3\), deadline in [0-9.]+m?s; on to machine 2$' \
    "1: machine 1's notice, idle: the agent says so and goes on to machine 2" || t_show "$t_tmp/wx.err"

cat > "$t_tmp/g.ini" <<EOF
[job]
name = wg
ship_workdir = no
command = sleep 1
[checkpoint]
margin = 1s
[resources]
nodes = 2
$prov
EOF
"$SPOTRUN" submit --queue "$Q" "$t_tmp/g.ini" > /dev/null 2>&1 || t_bail "submit failed"
wait_for "$t_tmp/wx.err" 'notice came as the gang formed' 60 "$x"
t_like "$t_tmp/wx.err" '^spotrun agent: this machine.s notice came as the gang formed: simulated preemption \(trace up-period 2 of 3\), deadline in [0-9.]+m?s; on to machine 3$' \
    "2: machine 2's notice as its gang formed: on to machine 3" || t_show "$t_tmp/wx.err"
t_like "$t_tmp/wx.err" '^spotrun agent: wg: gang node 0: its slot is released$' \
    "2: ... its node leaves the forming gang" || t_show "$t_tmp/wx.err"
wait_for "$t_tmp/wx.err" 'wg: gang node 0, epoch 2: waiting for 2 nodes' 60 "$x" ||
    t_diag "the agent did not claim the job again"
ag_start wy 0 --queue "$Q" --label addr=127.0.0.1 --once
y=$t_last
wait_for "$t_tmp/wx.err" '^spotrun agent: wg: succeeded' 60 "$x"
ag_wait_bounded "$y" 60
t_is "$t_rc" 0 "2: the second agent joins, runs its node and exits 0" || t_show "$t_tmp/wy.err"
kill -TERM "$x" 2>/dev/null
ag_wait_bounded "$x" 60
t_is "$(grep -E '^spotrun agent: wg: (claimed|succeeded)' "$t_tmp/wx.err" | sed -E 's/ \(epoch ([0-9]+).*/ \1/' | tr '\n' '|')" \
    "spotrun agent: wg: claimed 1|spotrun agent: wg: claimed 2|spotrun agent: wg: succeeded 2|" \
    "2: claimed again at epoch 2 (the lease released), which succeeds" || t_show "$t_tmp/wx.err"
t_is "$(grep -c 'simulated preemption' "$t_tmp/wx.err")|$(grep -c 'simulated preemption' "$t_tmp/wy.err")" \
    "2|0" "2: no run got a notice (the two came between runs): the gang ran on machine 3 to its end" ||
    { t_show "$t_tmp/wx.err"; t_show "$t_tmp/wy.err"; }
t_like "$t_tmp/wx.err" '^[0-9:]+  finished exit 0: 1 attempt, 0 preemptions' \
    "2: node 0's run: one attempt, no preemption" || t_show "$t_tmp/wx.err"
t_done
