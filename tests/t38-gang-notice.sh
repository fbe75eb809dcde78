#!/bin/sh
# t38-gang-notice.sh: a gang whose machines all get notices, one a few
# seconds after the other (a zone's reclaim): node A's machine gets its
# notice first and passes it to the gang; node B stops for it, and its
# own machine's notice comes while its run is still stopping (its job
# answers the notice's request only once the test saw that notice). Each
# agent then goes on its next machine (the local provider's: the trace's
# next up-period) and the gang forms there; neither takes the job again on
# the machine that is going (such a run got its notice again at once, a
# gang formed to be stopped). Two agents, --trace-node 1 and 2 of a
# 2-node trace whose nodes both go at its 41st second; B starts 10 s after
# A, so its machine's notice comes 10 s after A's, long after A's reached
# it through the slots (milliseconds; within a second at worst, loaded).
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
. "$top_srcdir/tests/jobs/agent.sh"
t_python_module
Q=file://$t_tmp/q

# 1 s ticks, real time: both nodes up 40 s, down, then up to the end
# (no notice there); window 20 s: a machine's notice 20 s after its start
python3 -c 'import json; print(json.dumps({"metadata": {"gap_seconds": 1},
    "data": [2] * 40 + [0] + [2] * 200}))' > "$t_tmp/trace.json"
# a rank that answers every request, a notice's only once $t_tmp/answer
# exists, and ends when $t_tmp/end does
cat > "$t_tmp/job.py" <<'EOF'
import os, sys, time
import spotrun
d = sys.argv[1]
while not os.path.exists(os.path.join(d, "end")):
    if spotrun.requested():
        req = spotrun.request()
        t0 = time.monotonic()
        while req.reason == "notice" and not os.path.exists(os.path.join(d, "answer")) and \
                time.monotonic() - t0 < 60:
            time.sleep(0.02)
        spotrun.done(100 * req.seq)
    time.sleep(0.02)
EOF
cat > "$t_tmp/gn.ini" <<EOF
[job]
name = gn
ship_workdir = no
command = $PY $t_tmp/job.py $t_tmp
[resources]
nodes = 2
[checkpoint]
interval = 1h
margin = 1s
[provider]
name = local
trace = $t_tmp/trace.json
trace_scale = 1
window = 20s
EOF
"$SPOTRUN" submit --create --queue "$Q" "$t_tmp/gn.ini" > /dev/null 2>&1 || t_bail "submit failed"
ag_start A 0 --queue "$Q" --label addr=127.0.0.1 --trace-node 1 --max-jobs 2 --idle-timeout 60s
A=$t_last
wait_for "$t_tmp/A.err" "gang node 0, epoch 1: waiting for 2 nodes" 60 "$A" || t_diag "A leads no gang"
sleep 10	# B's machine: its notice at least 10 s after A's
ag_start B 0 --queue "$Q" --label addr=127.0.0.1 --trace-node 2 --max-jobs 2 --idle-timeout 60s
B=$t_last
for n in A B; do
	wait_for "$t_tmp/$n.err" "gang of 2 nodes started" 60 || t_diag "$n: no gang"
done
wait_for "$t_tmp/A.err" "notice   simulated preemption \\(trace up-period 1 of 2\\), deadline in" 60 "$A" ||
    t_diag "A: no notice"
wait_for "$t_tmp/B.err" "this machine goes too" 60 "$B" || t_diag "B: its machine's notice not seen"
touch "$t_tmp/answer"
t_has "$t_tmp/B.err" "spotrun agent: gn: gang node 1: another node got a notice: this one checkpoints and stops too" \
    "B stops for A's notice"
t_like "$t_tmp/B.err" "^[0-9:]+  notice   simulated preemption \\(trace up-period 1 of 2\\): this machine goes too \\(at [0-9:]+\\)\$" \
    "... and its run, stopping, says that its own machine's notice came too"
i=0
while [ "$(cat "$t_tmp/A.err" "$t_tmp/B.err" | grep -c "gang of 2 nodes started")" -lt 4 ] && [ $i -lt 1200 ]; do
	sleep 0.1
	i=$((i + 1))
done
t_is "$(grep -c "gang of 2 nodes started" "$t_tmp/A.err") $(grep -c "gang of 2 nodes started" "$t_tmp/B.err")" "2 2" \
    "the gang forms again: each agent's second gang" || { t_show "$t_tmp/A.err"; t_show "$t_tmp/B.err"; }
touch "$t_tmp/end"
ag_wait_bounded "$A" 120
ra=$t_rc
ag_wait_bounded "$B" 120
t_is "$ra $t_rc" "0 0" "the job ends there, succeeded; both agents exit 0" || { t_show "$t_tmp/A.err"; t_show "$t_tmp/B.err"; }
for n in A B; do
	t_is "$(grep -c "trace up-period 1 of 2" "$t_tmp/$n.err")" 1 \
	    "$n: one notice of its first machine: no run on it after it (the next run on machine 2)" ||
	    t_show "$t_tmp/$n.err"
done
t_is "$(grep -c "simulated preemption (trace up-period 2" "$t_tmp/A.err" "$t_tmp/B.err" | awk -F: '{ s += $2 } END { print s }')" 0 \
    "... whose period lasts to the trace's end: no notice there"
t_is "$("$QTOOL" lease "$Q/ckpt" gn | awk '{print $1, $2}')" "succeeded 2" "its lease: succeeded at epoch 2"
t_done
