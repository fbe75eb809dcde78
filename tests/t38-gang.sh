#!/bin/sh
# t38-gang.sh: jobs of several machines (nodes = N or MIN-MAX), each node an
# agent process on loopback, on a file:// queue (doc/fleet.md, "Gangs").
# The job files say ship_workdir = no: their folder is the test's scratch
# folder, which holds the agents' own (t48-workdir tests shipping):
#
# 1. nodes = 2, procs = 2, a shell job: two agents form the gang (node 0
#    leads: the lease, slot 0; node 1 joins), their four ranks get
#    torchrun's variables of --nnodes 2 exactly (RANK, GROUP_RANK,
#    WORLD_SIZE 4, ...) with node 0's MASTER_ADDR and MASTER_PORT; node 0
#    ends the lease succeeded, node 1 writes no state of the job.
# 2. A real PyTorch job (examples/pytorch/ddp.py, gloo on the CPU, 1 rank
#    per node) on a gang of 2 with interval = 2s: node 0 times the periodic
#    checkpoints and asks node 1 through slot 0; each is committed with
#    node 1's part of the same step; its result is bit-identical to
#    Debian's torchrun --nproc_per_node 2 running the same script.
# 3. nodes = 2-3, three agents: a gang of 3, its own port; SIGTERM to the
#    agent of node 1: its notice reaches the other nodes through the slots,
#    every node's rank saves its part at one step S, node 0 commits the
#    three parts as one checkpoint (world 3) and the job goes back to the
#    queue; the two agents left form a gang of 2 (the fill time passed)
#    that resumes from step S (SPOTRUN_PREV_WORLD_SIZE 3: the optimizer
#    state resharded from 3 slices), no step lost or repeated, and its
#    losses are those of the 2-rank reference to 1e-4.
# 4. (before 2-3, which need torch) An early warning, AWS's rebalance
#    recommendation from tests/mdemu, on both nodes of a gang: node 0 asks
#    its ranks for an early checkpoint, node 1 does not ask its own but
#    gets node 0's through slot 0, once; the job runs to its end.
# 5. (before 2-3 too) A node lost without a notice: SIGKILL to node 1's
#    agent and its job; node 0's rank (tests/jobs/rankjob.py behind a
#    stand-in for a collective) fails at once; node 0 finds node 1's slot
#    no longer renewed and releases the job (pending again), which a gang
#    with a new agent resumes from its last committed checkpoint at epoch 2
#    and runs to its end. And a rank's own exit 3, both nodes alive: failed.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
. "$top_srcdir/tests/jobs/agent.sh"
t_python_module
Q=file://$t_tmp/q
SPOTRUN_GANG_FILL=4s
export SPOTRUN_GANG_FILL

# gang_start NAME QUEUE [ARGS...]: an agent of no GPU on loopback, in the
# background (--once unless ARGS say otherwise)
gang_start() {
	_n=$1 _q=$2
	shift 2
	[ $# -eq 0 ] && set -- --once
	ag_start "$_n" 0 --queue "$_q" --label addr=127.0.0.1 "$@"
}
# node_of NAME: the node the agent NAME's last gang made it
node_of() {
	sed -nE 's/^spotrun agent: [^ ]+: gang of [0-9]+ nodes started: this is node ([0-9]+),.*/\1/p' \
	    "$t_tmp/$1.err" | tail -n 1
}
# gang_pair A B QUEUE [ARGS...]: agent A (ARGS, else --once) leads the
# gang of a job of 2 nodes, then agent B (--once) joins; their pids in $A
# and $B
gang_pair() {
	_a=$1 _b=$2 _pq=$3
	shift 3
	gang_start "$_a" "$_pq" "$@"
	eval "$_a=\$t_last"
	wait_for "$t_tmp/$_a.err" "gang node 0, epoch 1: waiting for 2 nodes" 30 "$t_last" ||
	    t_diag "the first agent did not lead"
	gang_start "$_b" "$_pq"
	eval "$_b=\$t_last"
}
port_of() {
	sed -nE 's/^spotrun agent: [^ ]+: gang of [0-9]+ nodes started: .*, MASTER_PORT ([0-9]+)$/\1/p' \
	    "$t_tmp/$1.err" | tail -n 1
}

# 1. the ranks' variables
vars='RANK|LOCAL_RANK|GROUP_RANK|ROLE_RANK|LOCAL_WORLD_SIZE|WORLD_SIZE|GROUP_WORLD_SIZE'
vars="$vars|ROLE_WORLD_SIZE|MASTER_ADDR|MASTER_PORT|SPOTRUN_NODES|SPOTRUN_NODE_RANK|SPOTRUN_WORLD_SIZE"
cat > "$t_tmp/env.ini" <<EOF
[job]
name = genv
ship_workdir = no
command = sh -c 'sleep 2; env | grep -E "^($vars)=" | sort | tr "\\n" " " > $t_tmp/env-\$RANK'
[resources]
nodes = 2
procs = 2
[provider]
name = local
EOF
"$SPOTRUN" check "$t_tmp/env.ini" > "$t_tmp/check.out" 2>&1
t_is "$?|$(cat "$t_tmp/check.out")" "0|$t_tmp/env.ini: ok: a gang of 2 nodes" \
    "spotrun check shows the gang's nodes"
"$SPOTRUN" submit --create --queue "$Q" "$t_tmp/env.ini" > /dev/null 2>&1 || t_bail "submit failed"
gang_pair e0 e1 "$Q"
t_wait "$e0"
r0=$t_rc
t_wait "$e1"
t_is "$r0|$t_rc" "0|0" "two agents run a job of 2 nodes and exit 0" || { t_show "$t_tmp/e0.err"; t_show "$t_tmp/e1.err"; }
t_has "$t_tmp/e0.err" "spotrun agent: genv: claimed (epoch 1, 5 requests), store $Q/ckpt" \
    "the first claims it in 5 requests: slot 0, the lease, the spec"
t_has "$t_tmp/e1.err" "spotrun agent: genv: claimed (epoch 1, 4 requests), store $Q/ckpt" \
    "the second joins in 4: slot 0 read, slot 1 written, the spec"
t_is "$(node_of e0) $(node_of e1)" "0 1" "... as node 0 and node 1"
p=$(port_of e0)
t_is "$(port_of e1)" "$p" "both know node 0's MASTER_PORT ($p)"
for r in 0 1 2 3; do
	n=$((r / 2)) l=$((r % 2))
	t_is "$(cat "$t_tmp/env-$r" 2>/dev/null)" "GROUP_RANK=$n GROUP_WORLD_SIZE=2 LOCAL_RANK=$l LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p RANK=$r ROLE_RANK=$r ROLE_WORLD_SIZE=4 SPOTRUN_NODES=2 SPOTRUN_NODE_RANK=$n SPOTRUN_WORLD_SIZE=4 WORLD_SIZE=4 " \
	    "rank $r (node $n, local rank $l): torchrun's variables of --nnodes 2 --nproc_per_node 2"
done
t_has "$t_tmp/e0.err" "spotrun agent: genv: succeeded (epoch 1)" "node 0 ends the lease succeeded"
t_has "$t_tmp/e1.err" "spotrun agent: genv: gang node 1: succeeded (epoch 1; node 0 ends the lease)" \
    "node 1 leaves it to node 0"
t_is "$("$QTOOL" lease "$Q/ckpt" genv | awk '{print $1, $2}')|$(ag_status "$Q" genv | awk '{print $1, $2}')" \
    "succeeded 1|succeeded 1" "lease and status: succeeded, epoch 1"
t_is "$(find "$t_tmp/q" -path '*/pending/*' | wc -l)" 0 "no pending marker left"

# 4. an early warning (AWS's rebalance recommendation, tests/mdemu on
# loopback) on a gang's nodes: node 0 asks for a checkpoint (the job, a
# shell, never answers: the request stands until its end), node 1 passes
# its own up and is asked by node 0's
"$top_builddir/tests/mdemu" -p "$t_tmp/emu.port" -l "$t_tmp/emu.log" -R 0.5 &
emu=$!
t_pids="$t_pids $emu"
i=0
while [ ! -s "$t_tmp/emu.port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
printf '[job]\nname = gearly\nship_workdir = no\ncommand = sleep 4\n[resources]\nnodes = 2\n[provider]\nname = aws\n' \
    > "$t_tmp/early.ini"
"$SPOTRUN" submit --create --queue "$Q-e" "$t_tmp/early.ini" > /dev/null 2>&1 || t_bail "submit failed"
SPOTRUN_AWS_ENDPOINT=http://127.0.0.1:$(cat "$t_tmp/emu.port") gang_start w0 "$Q-e"
w0=$t_last
SPOTRUN_AWS_ENDPOINT=http://127.0.0.1:$(cat "$t_tmp/emu.port") gang_start w1 "$Q-e"
w1=$t_last
t_wait "$w0"
r0=$t_rc
t_wait "$w1"
kill "$emu" 2>/dev/null
t_is "$r0|$t_rc" "0|0" "a gang whose nodes get an early warning: the job runs to its end" ||
    { t_show "$t_tmp/w0.err"; t_show "$t_tmp/w1.err"; }
lw=w0 mw=w1
[ "$(node_of w1)" = 0 ] && lw=w1 mw=w0
t_like "$t_tmp/$lw.err" "^[0-9:]+  warning  aws rebalance recommendation \\([0-9T:Z-]+\\)\$" \
    "node 0: the early warning is said"
t_like "$t_tmp/$lw.err" "^[0-9:]+  request  early checkpoint, answer within [0-9hms.]+ \\(by " \
    "... and node 0 asks its ranks for an early checkpoint"
t_like "$t_tmp/$mw.err" "^[0-9:]+  warning  aws rebalance recommendation \\([0-9T:Z-]+\\); no checkpoint \\(a gang's checkpoints are node 0's to ask\\)\$" \
    "node 1: its own early warning takes no checkpoint"
t_like "$t_tmp/$mw.err" "^[0-9:]+  request  periodic checkpoint, answer within [0-9hms.]+ \\(by " \
    "... node 0's request reaches its ranks instead"
t_is "$(grep -cE '  request  [a-z]+ checkpoint' "$t_tmp/$mw.err")" 1 "... once"

# 5. a node lost without a notice (SIGKILL to node 1's agent and its
# job): node 0's rank fails at once, as at a collective, long before node
# 1's slot expires; node 0 sees the slot no longer renewed and puts the job
# back in the queue; with a new agent, a gang of 2 resumes it from its last
# committed checkpoint. The ranks are tests/jobs/rankjob.py behind
# peer.sh: rank 0 fails when rank 1's process is gone without finishing.
cat > "$t_tmp/peer.sh" <<'PEER'
#!/bin/sh
T=$1
shift
if [ "$RANK" = 1 ]; then
	echo $$ > "$T/peer.tmp" && mv "$T/peer.tmp" "$T/peer"
	"$@"
	rc=$?
	: > "$T/peer-done"
	exit $rc
fi
"$@" &
p=$!
while [ ! -s "$T/peer" ] && kill -0 $p 2>/dev/null; do sleep 0.1; done
peer=$(cat "$T/peer" 2>/dev/null)
while kill -0 $p 2>/dev/null; do
	if ! kill -0 "$peer" 2>/dev/null && [ ! -e "$T/peer-done" ]; then
		echo "rank 1 is gone: the collective fails"
		kill $p
		wait $p
		exit 1
	fi
	sleep 0.1
done
wait $p
PEER
# rankgang NAME ARGS...: a job file for a gang of 2 of rankjob.py (200
# steps of 0.05 s) behind peer.sh, a checkpoint every 3 s
rankgang() {
	_n=$1
	shift
	{
		printf '[job]\nname = %s\nship_workdir = no\ncommand = sh %s/peer.sh %s %s %s/rankjob.py --steps 200 --sleep 0.05 %s\n' \
		    "$_n" "$t_tmp" "$t_tmp" "$PY" "$JOBS" "$*"
		printf '[resources]\nnodes = 2\nprocs = 1\n[checkpoint]\ninterval = 3s\nmargin = 1s\n'
		printf '[provider]\nname = local\n'
	} > "$t_tmp/$_n.ini"
}
rankgang glost
"$SPOTRUN" submit --create --queue "$Q-l" "$t_tmp/glost.ini" > /dev/null 2>&1 || t_bail "submit failed"
gang_pair l0 l1 "$Q-l" --max-jobs 2 --idle-timeout 60s
# right after a commit: no checkpoint in flight, whose part node 0 would
# wait for (90 s)
wait_for "$t_tmp/l0.err" "ckpt     0 step [0-9]+: .* committed in" 60 "$l0" ||
    t_diag "node 0 committed no checkpoint"
S=$(sed -nE 's/^[0-9:]+  ckpt     [0-9]+ step ([0-9]+): .* committed in .*/\1/p' "$t_tmp/l0.err" | tail -n 1)
pg=$(ps -o pgid= -p "$(cat "$t_tmp/peer")" | tr -d ' ')
kill -KILL "$l1"
[ -n "$pg" ] && kill -KILL -- "-$pg"
t_wait "$l1"
rm -f "$t_tmp/peer" "$t_tmp/peer-done"
# (150 s: on a loaded machine the kill can land in a checkpoint after all,
# and node 0's save then waits its 90 s for node 1's part)
wait_for "$t_tmp/l0.err" "glost: (released|failed) \\(epoch 1\\)" 150 "$l0" || t_diag "node 0 did not end epoch 1"
t_has "$t_tmp/l0.out" "rank 1 is gone: the collective fails" "SIGKILL to node 1: node 0's rank fails at once"
t_like "$t_tmp/l0.err" "^spotrun agent: glost: gang node 1 \\($host\\) stopped renewing its slot at [0-9]{2}:[0-9]{2}:[0-9]{2} UTC: lost, so the job goes back to the queue\$" \
    "node 0 finds node 1's slot no longer renewed: lost"
t_has "$t_tmp/l0.err" "spotrun agent: glost: released (epoch 1)" "... and releases the job"
t_unlike "$t_tmp/l0.err" "glost: failed" "... not failed"
t_is "$(ag_status "$Q-l" glost | awk '{print $1}')|$(find "$t_tmp/q-l" -path '*/pending/*' | wc -l | tr -d ' ')" \
    "released|1" "the job is back in the queue: its status released, its pending marker"
# the new agent joins once node 0 leads again (epoch 2): a --once agent
# that polled before would end with 0 jobs
wait_for "$t_tmp/l0.err" "glost: gang node 0, epoch 2: waiting for 2 nodes" 120 "$l0" ||
    t_diag "node 0 did not lead epoch 2"
gang_start l2 "$Q-l"
l2=$t_last
# Bounded: a gang that never forms again made node 0 claim, wait 300 s and
# release for ever (an hour under a loaded sanitizer run): a failure, not
# a hang.
# (its output to /dev/null: a sleep left holding the TAP pipe would keep
# the harness waiting after the test ended)
( sleep 900; kill -KILL "$l0" "$l2" ) >/dev/null 2>&1 &
guard=$!
t_wait "$l0"
r0=$t_rc
t_wait "$l2"
kill -KILL "$guard" 2>/dev/null	# not TERM: see ag_wait_bounded
wait "$guard" 2>/dev/null
t_is "$r0|$t_rc" "0|0" "with a new agent, the gang of 2 runs it to its end" || { t_show "$t_tmp/l0.err"; t_show "$t_tmp/l2.err"; }
t_is "$(node_of l0) $(node_of l2)" "0 1" "... the first agent as node 0 again, the new one as node 1"
t_has "$t_tmp/l0.err" "spotrun agent: glost: claimed (epoch 2," "... at epoch 2"
t_like "$t_tmp/l0.err" "attempt  1 restored checkpoint [0-9]+ at step $S " \
    "it resumes from the last committed checkpoint (step $S)"
t_has "$t_tmp/l0.out" "resumed at step $S, previous world 2" "... which the rank finds"
t_has "$t_tmp/l0.out" "finished 200 steps" "... and runs to its end"
t_is "$("$QTOOL" lease "$Q-l/ckpt" glost | awk '{print $1, $2}')|$(ag_status "$Q-l" glost | awk '{print $1}')" \
    "succeeded 2|succeeded" "lease and status: succeeded at epoch 2"

# ... but a rank's own failure, every node alive, fails the job
rankgang gfail --fail 0@40
"$SPOTRUN" submit --create --queue "$Q-f" "$t_tmp/gfail.ini" > /dev/null 2>&1 || t_bail "submit failed"
gang_pair f0 f1 "$Q-f"
t_wait "$f0"
r0=$t_rc
t_wait "$f1"
rm -f "$t_tmp/peer" "$t_tmp/peer-done"
t_is "$r0|$t_rc" "0|0" "a rank of node 0 exits 3, node 1 alive: both agents exit 0" || { t_show "$t_tmp/f0.err"; t_show "$t_tmp/f1.err"; }
t_has "$t_tmp/f0.out" "failing at step 40" "(rank 0 fails on its own)"
t_like "$t_tmp/f0.err" "^[0-9:]+  failed   exit 3: 1 attempt, " "node 0's run reports its exit 3"
t_has "$t_tmp/f0.err" "spotrun agent: gfail: failed (epoch 1)" "... and ends the job failed"
t_unlike "$t_tmp/f0.err" "lost, so the job goes back" "... no node taken for lost"
t_is "$("$QTOOL" lease "$Q-f/ckpt" gfail | awk '{print $1, $2}')|$(ag_status "$Q-f" gfail | awk '{print $1}')|$(find "$t_tmp/q-f" -path '*/pending/*' | wc -l | tr -d ' ')" \
    "failed 1|failed|0" "lease and status: failed, not pending"

# 2-3: PyTorch
if ! "$PY" -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null; then
	t_skip "python3-torch with gloo not installed: the PyTorch gangs"
	t_done
fi
GLOO_SOCKET_IFNAME=lo
export GLOO_SOCKET_IFNAME
ex=$top_srcdir/examples/pytorch
steps=120
# ddpgang NAME NODES [LINE...]: ddp.py on a gang, one rank per node; the
# LINEs go to [checkpoint]
ddpgang() {
	_n=$1 _nodes=$2
	shift 2
	{
		printf '[job]\nname = %s\nship_workdir = no\ncommand = %s %s/ddp.py --steps %s --sleep 0.05\n' \
		    "$_n" "$PY" "$ex" "$steps"
		printf '[resources]\nnodes = %s\nprocs = 1\n[checkpoint]\nmargin = 1s\n' "$_nodes"
		for _l in "$@"; do printf '%s\n' "$_l"; done
		printf '[provider]\nname = local\n'
	} > "$t_tmp/$_n.ini"
}
# losses FILE: "STEP LOSS" of each loss line (rank 0's)
losses() {
	sed -nE 's/^(\[default0\]:)?step ([0-9]+) loss ([0-9.e+-]+)$/\2 \3/p' "$1"
}
# a port of its own: torchrun's default, 29500, is t65's (make -j check)
refport=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$PY" -m torch.distributed.run --nproc_per_node 2 --master_port "$refport" --redirects 1 --tee 1 \
    --log_dir "$t_tmp/trlog" "$ex/ddp.py" --steps "$steps" > "$t_tmp/ref.out" 2> "$t_tmp/ref.err" &
ref=$!

# 2. a gang of 2
ddpgang g2 2 "interval = 2s"
"$SPOTRUN" submit --create --queue "$Q-2" "$t_tmp/g2.ini" > /dev/null 2>&1 || t_bail "submit failed"
gang_start d0 "$Q-2"
d0=$t_last
gang_start d1 "$Q-2"
d1=$t_last
t_wait "$d0"
r0=$t_rc
t_wait "$d1"
wait "$ref"
t_is "$?" 0 "torchrun --nproc_per_node 2 ddp.py: exit 0" || t_show "$t_tmp/ref.err"
# rank 0's own output, as it wrote it: torchrun's --tee copy on its stdout
# reads the file a line at a time and can print a line it caught half
# written as two, which then match nothing
refout=$(find "$t_tmp/trlog" -path '*/attempt_*/0/stdout.log' | head -n 1)
[ -n "$refout" ] || { t_show "$t_tmp/ref.err"; t_bail "torchrun left no rank 0 stdout.log under $t_tmp/trlog"; }
t_is "$r0|$t_rc" "0|0" "ddp.py on a gang of 2 agents: both exit 0" || { t_show "$t_tmp/d0.err"; t_show "$t_tmp/d1.err"; }
lead=d0
[ "$(node_of d1)" = 0 ] && lead=d1
t_is "$(result_of "$t_tmp/$lead.out")" "$(grep '^result' "$refout")" \
    "its result is bit-identical to torchrun's on one machine"
other=d1
[ "$lead" = d1 ] && other=d0
# interval = 2s: node 0 times them, node 1 is asked through slot 0
sed -nE 's/^[0-9:]+  ckpt     ([0-9]+) step ([0-9]+): .* committed in .*/\1 \2/p' "$t_tmp/$lead.err" \
    > "$t_tmp/commits.txt"
sed -nE 's/^[0-9:]+  ckpt     [0-9]+ step ([0-9]+): .* stored as this node.s part .*/\1/p' \
    "$t_tmp/$other.err" > "$t_tmp/parts.txt"
n=$(wc -l < "$t_tmp/commits.txt" | tr -d ' ')
t_is "$([ "$n" -ge 2 ] && echo yes)" yes "interval = 2s: node 0 commits periodic checkpoints ($n)" ||
    t_show "$t_tmp/$lead.err"
t_is "$(awk '{ print $1 }' "$t_tmp/commits.txt" | tr '\n' ' ')" "$(seq 0 $((n - 1)) | tr '\n' ' ')" \
    "... numbered 0 to $((n - 1)), none missed"
t_is "$(awk '{ print $2 }' "$t_tmp/commits.txt" | tr '\n' ' ')" "$(tr '\n' ' ' < "$t_tmp/parts.txt")" \
    "... each with node 1's part of the same step" || t_show "$t_tmp/$other.err"
t_unlike "$t_tmp/$other.err" "^[0-9:]+  request  periodic checkpoint, answer within 10m00s" \
    "(node 1 times none of its own: its requests carry node 0's deadline)"
t_like "$t_tmp/$other.err" "^[0-9:]+  request  periodic checkpoint, answer within [0-9hms.]+ \\(by " \
    "node 1's ranks are asked by node 0's requests"
t_unlike "$t_tmp/$lead.err" "missed|did not come within" "no part was late"

# 3. a gang of 3; a notice on node 1; back as a gang of 2
ddpgang g3 2-3
"$SPOTRUN" submit --create --queue "$Q-3" "$t_tmp/g3.ini" > /dev/null 2>&1 || t_bail "submit failed"
for i in 0 1 2; do
	# not --once: the queue is empty for a moment after the gang is released
	gang_start "h$i" "$Q-3" --max-jobs 2 --idle-timeout 60s
	eval "h$i=\$t_last"
	sleep 0.3
done
for i in 0 1 2; do
	eval "pid=\$h$i"
	wait_for "$t_tmp/h$i.err" "gang of 3 nodes started" 60 "$pid" || t_diag "h$i: no gang of 3"
done
t_is "$(for i in 0 1 2; do node_of "h$i"; done | sort | tr '\n' ' ')" "0 1 2 " \
    "three agents for nodes = 2-3: a gang of 3"
for i in 0 1 2; do eval "n$(node_of "h$i")=h$i"; done	# n0 n1 n2: the agents by node
eval "pid0=\$$n0 pid1=\$$n1 pid2=\$$n2"
p3=$(port_of h0)
t_is "$(port_of h1) $(port_of h2)" "$p3 $p3" "... on its own port ($p3; the gang of 2 had $p)"
wait_for "$t_tmp/$n0.out" "^step 20 loss" 120 "$pid0" || t_diag "node 0 did not reach step 20"
kill -TERM "$pid1"
t_wait "$pid1"
t_is "$t_rc" 143 "SIGTERM to node 1's agent: it exits 143" || t_show "$t_tmp/$n1.err"
t_like "$t_tmp/$n1.err" "notice   SIGTERM: this machine's agent is stopping" "... its run's notice"
t_has "$t_tmp/$n1.err" "spotrun agent: g3: gang node 1: its notice is passed to the gang" \
    "... written into its slot"
S=$(sed -nE 's/^[0-9:]+  ckpt     [0-9]+ step ([0-9]+): .* stored as this node.s part.*/\1/p' "$t_tmp/$n1.err")
t_like "$t_tmp/$n1.err" "ckpt     [0-9]+ step $S: .* stored as this node's part \\(node 0 commits it\\)" \
    "node 1 stores its part at step $S"
for n in $n0 $n2; do
	wait_for "$t_tmp/$n.err" "gang of 2 nodes started" 120 || t_diag "$n: no gang of 2"
done
t_has "$t_tmp/$n0.err" "spotrun agent: g3: gang node 0: another node got a notice: this one checkpoints and stops too" \
    "node 0 reads the notice from node 1's slot"
t_has "$t_tmp/$n2.err" "spotrun agent: g3: gang node 2: another node got a notice: this one checkpoints and stops too" \
    "node 2 reads it from slot 0"
t_like "$t_tmp/$n2.err" "ckpt     [0-9]+ step $S: .* stored as this node's part" "node 2 stores its part at step $S"
t_like "$t_tmp/$n0.err" "ckpt     0 step $S: .* committed in" "node 0 commits the gang's checkpoint 0 at step $S"
t_has "$t_tmp/$n0.err" "spotrun agent: g3: released (epoch 1)" "... and releases the job"
t_wait "$pid0"
r0=$t_rc
t_wait "$pid2"
t_is "$r0|$t_rc" "0|0" "the two agents left run it to its end and exit 0" || { t_show "$t_tmp/$n0.err"; t_show "$t_tmp/$n2.err"; }
t_is "$(cat "$t_tmp/$n0.err" "$t_tmp/$n2.err" | grep -c "^spotrun agent: g3: claimed (epoch 2,")" 2 \
    "both claim the job again at epoch 2 (a lease and a slot)"
t_is "$(grep -c "gang of 2 nodes started" "$t_tmp/$n0.err")$(grep -c "gang of 2 nodes started" "$t_tmp/$n2.err")" "11" \
    "... by a gang of 2 (the third node never came back)"
l2=$n0
[ "$(node_of "$n2")" = 0 ] && l2=$n2
t_like "$t_tmp/$l2.err" "attempt  1 restored checkpoint 0 at step $S " "the gang of 2 restores checkpoint 0 (step $S)"
t_has "$t_tmp/$l2.out" "resumed from step $S: 2 ranks, the optimizer state resharded from 3" \
    "the job reshards the 3 nodes' optimizer slices for 2"
losses "$t_tmp/$l2.out" | awk -v s="$S" '$1 > s' > "$t_tmp/after.txt"
first=$(( (S / 10 + 1) * 10 ))
t_is "$(awk 'NR == 1 { f = $1 } { n++ } END { print f, n }' "$t_tmp/after.txt")" "$first $(( (steps - first) / 10 + 1 ))" \
    "its loss lines go on from step $first to $steps, none lost or repeated"
losses "$refout" > "$t_tmp/refl.txt"
t_is "$(awk 'NR == FNR { r[$1] = $2; next } ($1 in r) { d = $2 - r[$1]; if (d < 0) d = -d; if (d > 1e-4) bad++; n++ }
    END { print n + 0, bad + 0 }' "$t_tmp/refl.txt" "$t_tmp/after.txt")" "$(wc -l < "$t_tmp/after.txt" | tr -d ' ') 0" \
    "... each within 1e-4 of the 2-rank reference's at the same step"
t_has "$t_tmp/$l2.out" "finished $steps steps" "the job finishes its $steps steps"
t_is "$("$QTOOL" lease "$Q-3/ckpt" g3 | awk '{print $1, $2}')" "succeeded 2" "its lease: succeeded at epoch 2"
t_done
