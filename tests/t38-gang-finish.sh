#!/bin/sh
# t38-gang-finish.sh: a gang whose nodes' jobs end at different times, as
# when rank 0 alone writes the final model after the others exited. Node
# 1's job exits 0 at once; node 0's runs 3 s more (six looks of its gang
# watch). Node 1's agent ends its part done (its slot says so), not
# released, so node 0 does not take it for a node gone: no notice is
# passed to node 0's job (it used to be asked for a checkpoint and, past
# the 30 s a gone node leaves, stopped and put back in the queue: run
# again), which ends on its own; the job succeeds once, one run each.
# A member whose job failed still releases its slot: node 0 stops.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
. "$top_srcdir/tests/jobs/agent.sh"
Q=file://$t_tmp/q

# gang_start NAME [ARGS...]: an agent of no GPU on loopback, --once
gang_start() {
	_n=$1
	shift
	ag_start "$_n" 0 --queue "$Q" --label addr=127.0.0.1 --once "$@"
}

cat > "$t_tmp/gf.ini" <<EOF
[job]
name = gf
ship_workdir = no
command = sh -c 'if [ "\$SPOTRUN_NODE_RANK" = 0 ]; then sleep 3; fi; echo "node \$SPOTRUN_NODE_RANK done" >> $t_tmp/done'
[resources]
nodes = 2
[provider]
name = local
EOF
"$SPOTRUN" submit --create --queue "$Q" "$t_tmp/gf.ini" > /dev/null 2>&1 || t_bail "submit failed"
gang_start f0
a=$t_last
wait_for "$t_tmp/f0.err" "gang node 0, epoch 1: waiting for 2 nodes" 30 "$a" ||
    t_diag "the first agent did not lead"
gang_start f1
b=$t_last
ag_wait_bounded "$b" 60
rb=$t_rc
ag_wait_bounded "$a" 60
t_is "$t_rc|$rb" "0|0" "both agents exit 0" || { t_show "$t_tmp/f0.err"; t_show "$t_tmp/f1.err"; }
t_has "$t_tmp/f1.err" "spotrun agent: gf: gang node 1: succeeded (epoch 1; node 0 ends the lease)" \
    "node 1's job ends first, succeeded"
t_is "$(grep -cE 'is gone|notice' "$t_tmp/f0.err")" 0 \
    "node 0 takes node 1's end for no node gone: no notice passed to its job" || t_show "$t_tmp/f0.err"
t_has "$t_tmp/f0.err" "spotrun agent: gf: succeeded (epoch 1)" "node 0's job ends on its own; the job succeeded"
t_is "$(sort "$t_tmp/done" 2>/dev/null | tr '\n' '|')" "node 0 done|node 1 done|" \
    "each node's job ran once, to its end"
t_is "$(grep -c ': claimed' "$t_tmp/f0.err")|$(grep -c ': claimed' "$t_tmp/f1.err")" "1|1" \
    "one claim each: the job was not put back"

# a member whose job fails releases its slot: node 0 stops
sed -e 's/^name = gf$/name = gx/' \
    -e "s|^command = .*|command = sh -c 'if [ \"\$SPOTRUN_NODE_RANK\" = 0 ]; then sleep 30; else exit 3; fi'|" \
    "$t_tmp/gf.ini" > "$t_tmp/gx.ini"
"$SPOTRUN" submit --queue "$Q" "$t_tmp/gx.ini" > /dev/null 2>&1 || t_bail "submit failed"
gang_start x0
a=$t_last
wait_for "$t_tmp/x0.err" "gang node 0, epoch 1: waiting for 2 nodes" 30 "$a" ||
    t_diag "the first agent did not lead"
gang_start x1
ag_wait_bounded "$t_last" 60
wait_for "$t_tmp/x0.err" "node 1 of 2 is gone" 60 "$a"
t_like "$t_tmp/x0.err" "^spotrun agent: gx: gang node 0: gang of job gx: node 1 of 2 is gone \\(its slot is released or expired\\)\$" \
    "a member whose job failed: node 0 sees its node gone" || t_show "$t_tmp/x0.err"
kill -TERM "$a" 2>/dev/null
ag_wait_bounded "$a" 60
t_done
