# loop.sh: the body of issue 24's loop tests (t16-loop-gcp.sh,
# t17-loop-azure.sh, t18-loop-aws.sh), sourced after lib.sh, s3-env.sh
# and vm.sh; loop_setup first, then once the test has its cloud's emulator booting each
# instance as a VM (tests/jobs/vm-boot.sh, which appends "PID HOST.N" to
# $T/boots a boot). The test provides $T, $QU (the
# queue, also $SPOTRUN_QUEUE), $T/gce.log or $cloud_log (the emulator's
# log: "instance ID: booted, pid P", "instance ID: exited CODE"), and
#   cloud_state: the emulator's resources on one line;
#   cloud_preempt ID: the instance ID (as the log names it) preempted;
#   loop_up_norm FILE (optional): up's output in FILE made constant where
#   the cloud chose ids;
#   $loop_token (optional): what the emulator's log says for each token
#   the metadata server gave a VM, whose count is checked against the
#   scalers' leases.
# loop_run CLOUD POOL UP_OUT STATE_AT_0 DOWN_OUT STATE_AFTER runs the loop
# (see t16's head comment) and checks each step; UP_OUT is what `up`
# prints, DOWN_OUT the last line of `down --drain` (the deletion),
# STATE_AT_0 the emulator's state once the scaler set the pool to 0,
# STATE_AFTER after `down`. Then a second job raises the pool again
# (submit), and `down --drain` puts it back in the queue from its
# checkpoint before deleting the pool.

# loop_setup LOG: what every loop test does after t_setup and before its
# cloud: the skips (no yaml, no namespaces, no ip), a bucket on the tests'
# RGW and the queue in it ($QU, also $SPOTRUN_QUEUE; $ep and $port the S3
# endpoint's, HTTPS when RGW serves it), $T, $cloud_log ($T/LOG, which the
# test's emulator writes), a home of its own, the keys; at exit every VM's
# process group killed (by the log's boot lines) and the bucket removed.
loop_setup() {
	"$PY" -c 'import yaml' 2>/dev/null || t_skip_all "no yaml for $PY (python3-yaml)"
	unshare -n -u true 2>/dev/null ||
	    t_skip_all "unshare -n -u fails here (needs root or user namespaces): $(unshare -n -u true 2>&1)"
	command -v ip > /dev/null || t_skip_all "no ip(8) to bring a namespace's loopback up"
	bucket=$(s3_bucket_new) || t_bail "cannot create a bucket on $SPOTRUN_TEST_S3_ENDPOINT"
	T=$t_tmp
	cloud_log=$T/$1
	trap '_loop_vms_kill; s3_bucket_rm "$bucket"; t_cleanup' EXIT
	s3_spotrun_keys
	export HOME=$T/home XDG_DATA_HOME=$T/data XDG_CONFIG_HOME=$T/config XDG_STATE_HOME=$T/state
	unset SPOTRUN_QUEUE PYTHONPATH SPOTRUN_SCALE_INTERVAL SPOTRUN_SCALE_IDLE
	mkdir -p "$HOME" "$T/marks" "$T/vmud"
	if [ -n "${SPOTRUN_TEST_S3_TLS_ENDPOINT:-}" ]; then
		ep=$SPOTRUN_TEST_S3_TLS_ENDPOINT
		export AWS_CA_BUNDLE=$SPOTRUN_TEST_S3_CA CURL_CA_BUNDLE=$SPOTRUN_TEST_S3_CA
	else
		ep=$SPOTRUN_TEST_S3_ENDPOINT
	fi
	port=${ep##*:}
	QU="s3://$bucket/q?endpoint=$ep"
	export SPOTRUN_QUEUE=$QU
}
# loop_vm CLOUD_PORT ENV: the VMs reach RGW and the cloud's emulator (at
# CLOUD_PORT) on their loopback (relays), and $T/vm.conf is what
# tests/jobs/vm-boot.sh reads: the keys, the relays, the VM's own
# environment ENV (lines VAR=VALUE: the cloud's endpoints) with the
# scaler quick (a step a second, 0 after 2 s drained)
loop_vm() {
	vm_relay "$T/rgw.sock" "$port"
	vm_relay "$T/cloud.sock" "$1"
	cat > "$T/vm.conf" <<EOF
T=$T PY=$PY top_srcdir=$top_srcdir
SPOTRUN_TEST_S3_ACCESS_KEY=$SPOTRUN_TEST_S3_ACCESS_KEY SPOTRUN_TEST_S3_SECRET_KEY=$SPOTRUN_TEST_S3_SECRET_KEY
${AWS_CA_BUNDLE:+AWS_CA_BUNDLE=$AWS_CA_BUNDLE CURL_CA_BUNDLE=$CURL_CA_BUNDLE}
vm_relays="$port $T/rgw.sock $1 $T/cloud.sock"
vm_env="$2
SPOTRUN_SCALE_INTERVAL=1
SPOTRUN_SCALE_IDLE=2"
EOF
}
# the VMs' agents, by the emulator's log (each is in a session of its own)
_loop_vms_kill() {
	for _p in $(sed -n 's/^instance .*: booted, pid \([0-9]*\)$/\1/p' "$cloud_log" 2>/dev/null); do
		kill -KILL -- "-$_p" 2>/dev/null
	done
}

# loop_until SECONDS DESC CMD...: wait for CMD to succeed (an event; the
# bound only ends a test that would hang)
loop_until() {
	_n=$(($1 * 10)) _d=$2
	shift 2
	while ! "$@" > /dev/null 2>&1; do
		_n=$((_n - 1))
		[ "$_n" -gt 0 ] || { t_diag "timed out waiting for: $_d"; return 1; }
		sleep 0.1
	done
}
_loop_state_is() { [ "$(cloud_state)" = "$1" ]; }
# every VM booted has exited
_loop_all_exited() {
	[ "$(grep -c ': booted, pid ' "$cloud_log")" = "$(grep -c ': exited ' "$cloud_log")" ]
}
_loop_booted_twice() { [ "$(grep -c . "$T/boots")" -ge 2 ]; }
# _loop_boot N: the Nth boot's "PID HOST.N" into $_pid and $_x, and the
# instance the emulator booted as that pid into $_id
_loop_boot() {
	_l=$(sed -n "$1p" "$T/boots")
	_pid=${_l%% *} _x=${_l#* }
	_id=$(sed -n "s|^instance \([^ ]*\): booted, pid $_pid\$|\1|p" "$cloud_log")
}

# _loop_bench: bench/loop.sh's figures of this run, one line: spotrun's
# time from up to the job's start less the VM's boot (the emulator's
# instance made to the agent started: the install script), and the
# cloud's requests the agents' scalers made (the emulator's log after
# up, the test's hooks aside; and of them the writes, token grants and
# the reads by POST aside: GCP's listManagedInstances, EC2's Describe*
# and Get*)
# per scaling decision that moved the target
_loop_bench() {
	_b=$(sed -n 's/^boot start //p' "$T/boot-$x1")
	_e=$(sed -n 's/^booted [^ ]* //p' "$T/boot-$x1")
	_r=$(sed -n "$((_gl_up + 1)),\$p" "$cloud_log" | grep -E '^(GET|POST|PUT|PATCH|DELETE) /' | grep -vc ' /emu/')
	_w=$(sed -n "$((_gl_up + 1)),\$p" "$cloud_log" | grep -E '^(POST|PUT|PATCH|DELETE) /' | grep -vc ' /emu/\|/oauth2/\|/listManagedInstances \|?Action=Describe\|?Action=Get')
	_d=$(cat "$T"/agent-*.err | grep -c '^spotrun agent: pool [^ ]*: target [0-9]* -> ')
	awk -v u="$_t_up" -v s="$(cat "$T/marks/started")" -v b="$_b" -v e="$_e" -v r="$_r" -v d="$_d" -v w="$_w" \
	    'BEGIN { printf "up_to_job %.2f boot %.2f spotrun %.2f requests %d decisions %d writes %d\n", s - u, e - b, s - u - (e - b), r, d, w }'
}

loop_run() {
	_pool=$2
	L=$T/laptop
	mkdir -p "$L"
	# the job: 10 steps; its first attempt holds at step 5 until a
	# checkpoint request (the preemption's), saves by the file protocol
	# and waits to be stopped
	cat > "$L/job.sh" <<EOF
step=0
[ -n "\$SPOTRUN_RESUME_STEP" ] && step=\$(cat "\$SPOTRUN_CKPT_DIR/step")
echo "start at step \$step"
[ -e "$T/marks/started" ] || date +%s.%N > "$T/marks/started"
save() {
	echo \$step > "\$SPOTRUN_CKPT_DIR/step"
	echo \$step > "\$SPOTRUN_CKPT_DONE.t" && mv "\$SPOTRUN_CKPT_DONE.t" "\$SPOTRUN_CKPT_DONE"
}
while [ \$step -lt 10 ]; do
	step=\$((step + 1))
	if [ \$step = 5 ] && [ -z "\$SPOTRUN_RESUME_STEP" ]; then
		echo "\$(hostname) \$step" > "$T/marks/held.t" && mv "$T/marks/held.t" "$T/marks/held"
		i=0
		while [ ! -f "\$SPOTRUN_CKPT_REQUEST" ]; do
			i=\$((i + 1))
			[ \$i -lt 3000 ] || { echo "no checkpoint request in 300 s"; exit 3; }
			sleep 0.1
		done
		save
		sleep 300
		echo "not stopped 300 s after the checkpoint"
		exit 3
	fi
	[ -f "\$SPOTRUN_CKPT_REQUEST" ] && save
done
echo "\$(hostname) done" >> "$T/marks/done"
echo "result: 10 steps"
EOF
	printf '[job]\nname = loop\ncommand = sh job.sh\n[checkpoint]\nsignal = none\ninterval = 1h\n' > "$L/loop.ini"
	"$SPOTRUN" submit "$L/loop.ini" > "$T/submit.out" 2> "$T/submit.err"
	t_is "$?|$(tail -n 1 "$T/submit.out")" "0|1 queued, 0 already in the queue: $QU (from \$SPOTRUN_QUEUE)" \
	    "the job is queued" || { t_show "$T/submit.out"; t_show "$T/submit.err"; }

	# ---- up: one VM for the one job ----
	_t_up=$(date +%s.%N)
	"$SPOTRUN" up "$_pool" --queue "$QU" > "$T/up.out" 2> "$T/up.err"
	_up_rc=$?
	_gl_up=$(grep -c . "$cloud_log")
	# ids the cloud chose (AWS: the fleet's, the template's), made constant
	! command -v loop_up_norm > /dev/null || loop_up_norm "$T/up.out"
	t_is "$_up_rc|$(cat "$T/up.out")|$(cat "$T/up.err")" "0|$3|" "up makes the pool at the queue's demand, 1 VM" ||
	    t_show "$T/up.err"
	wait_for "$T/marks/held" '^[-a-z0-9]+ 5$' 180 ""
	t_result $? "the VM boots (spotrun fetched from the bucket), its agent claims the job, which reaches step 5" ||
	    { for f in "$T"/boot-* "$T"/agent-*.err; do t_show "$f"; done; t_bail "no VM ran the job"; }
	host=$(cut -d' ' -f1 "$T/marks/held")
	_loop_boot 1
	id=$_id x1=$_x
	t_is "$(grep -c ': booted, pid ' "$cloud_log")|$x1|$(grep -cE '^spotrun agent: loop: claimed' "$T/agent-$x1.err")" \
	    "1|$host.1|1" "one instance booted, $id; its agent (host $host) claimed the job" || t_show "$T/agent-$x1.err"

	# ---- the instance preempted, made again, the job resumed ----
	cloud_preempt "$id"
	wait_for "$cloud_log" "^instance $id: exited" 120 ""
	t_is "$(sed -n "s|^instance $id: exited ||p" "$cloud_log")|$(grep -E '^spotrun agent: loop: (released|succeeded|failed)' "$T/agent-$x1.err")" \
	    "143|spotrun agent: loop: released (epoch 1)" \
	    "preempted: the emulator stops the agent, which checkpoints and releases the job, exit 143" ||
	    t_show "$T/agent-$x1.err"
	# a scaler on a machine that got its notice steps no more (fleet.md,
	# "Pool scaling"): it lets the pool's lease go if it sees the notice
	# before its agent ends (a scaler step in that window asked for a
	# third VM under load: t17 under ASan, 2026-12-04)
	t_diag "the preempted VM's scaler: $(grep -c 'its lease let go: this machine is going' "$T/agent-$x1.err") lease(s) let go"
	# the cloud makes a VM again: GCP's group the instance of that name,
	# Azure's Try & Restore a VM of its own name
	loop_until 300 "a second VM boots" _loop_booted_twice || t_show "$cloud_log"
	_loop_boot 2
	id2=$_id x2=$_x host2=${_x%.*}
	wait_for "$T/agent-$x2.err" '^spotrun agent: loop: (succeeded|failed)' 300 ""
	t_is "$(grep -c ': booted, pid ' "$cloud_log")|$(grep -E '^spotrun agent: loop: (claimed|succeeded|failed)' "$T/agent-$x2.err" | sed 's/: claimed .*/: claimed/; s/ (took [0-9.]* s)$//; s/ (epoch [0-9]*)$//')" \
	    "2|spotrun agent: loop: claimed
spotrun agent: loop: succeeded" "the cloud makes a VM again ($id2), a fresh one; its agent claims the job and it succeeds" ||
	    t_show "$T/agent-$x2.err"

	# ---- the queue drained: the scaler takes the pool to 0 ----
	loop_until 120 "the emulator at: $4" _loop_state_is "$4"
	t_is "$(cloud_state)" "$4" "the queue drained, the agent's scaler sets the target to 0: no instance left"
	loop_until 60 "every VM's agent gone" _loop_all_exited
	t_is "$(sed -n 's/^instance .*: exited //p' "$cloud_log" | tr '\n' ' ')" "143 143 " \
	    "both VMs' agents exited on the emulator's SIGTERM (no hard power-off)" || t_show "$cloud_log"
	# a scaler keeps its cloud's client from step to step: one token
	# (and project or subscription) per lease it held, not one a step; a
	# step that failed closes it and the next opens another
	if [ -n "${loop_token:-}" ]; then
		_tok=$(grep -c "$loop_token" "$cloud_log")
		_cl=$(cat "$T"/agent-*.err | grep -c '^spotrun agent: pool loop: scaling it ')
		_wa=$(cat "$T"/agent-*.err | grep -c '^spotrun agent: warning: pool loop: .*; trying again in ')
		_st=$(sed -n "$((_gl_up + 1)),\$p" "$cloud_log" | grep -cE "$loop_step_request")
		[ "$_cl" -ge 1 ] && [ "$_tok" -ge "$_cl" ] && [ "$_tok" -le $((_cl + _wa)) ] &&
		    [ "$_st" -gt "$_tok" ]
		t_result $? "the VMs' scalers fetched $_tok token(s) for $_cl lease(s) held ($_wa step(s) failed) over $_st listings: one per lease, not per step" ||
		    { t_show "$cloud_log"; for f in "$T"/agent-*.err; do t_show "$f"; done; }
	fi
	"$SPOTRUN" status --no-cloud > "$T/st.out" 2> "$T/st.err"
	t_like "$T/st.out" "^pool loop on $1 in .*, target 0 VMs \\(queue drained, by [^)]*\\)" \
	    "status: the pool at 0, queue drained, by an agent" || t_show "$T/st.out"

	# ---- the job ran twice, finished once ----
	"$SPOTRUN" status --json loop > "$T/st.json" 2>&1
	t_is "$("$PY" -c 'import json, sys
for j in json.load(open(sys.argv[1]))["jobs"]:
    print(j["id"], j["state"], j["attempts"], j["host"])' "$T/st.json" 2>&1)" "loop succeeded 2 $host2" \
	    "status: the job succeeded in 2 attempts" || t_show "$T/st.json"
	"$SPOTRUN" logs loop > "$T/logs.out" 2>&1
	t_is "$(sed -n 's/^+[0-9.]* out \(start at step [0-9]*\|result: .*\)$/\1/p' "$T/logs.out" | tr '\n' ' ')" \
	    "start at step 0 start at step 5 result: 10 steps " "the job started at step 0, resumed at step 5, finished" ||
	    t_show "$T/logs.out"
	t_is "$(cat "$T/marks/done")" "$host2 done" "the job's end reached once, never twice"

	[ -z "${LOOP_BENCH_OUT:-}" ] || _loop_bench >> "$LOOP_BENCH_OUT"

	# ---- a second job raises the pool; down --drain puts it back ----
	sed -e "s|marks/held|marks/held2|g" -e "s|marks/done|marks/done2|g" "$L/job.sh" > "$L/job2.sh"
	printf '[job]\nname = loop2\ncommand = sh job2.sh\n[checkpoint]\nsignal = none\ninterval = 1h\n' > "$L/loop2.ini"
	"$SPOTRUN" submit "$L/loop2.ini" > "$T/submit2.out" 2> "$T/submit2.err"
	t_is "$?|$(tail -n 1 "$T/submit2.out")" "0|pool loop: target 1 (demand 1 VM)" \
	    "a second job queued: submit raises the pool from 0 to 1" || { t_show "$T/submit2.out"; t_show "$T/submit2.err"; }
	wait_for "$T/marks/held2" '^[-a-z0-9]+ 5$' 180 ""
	t_result $? "a third VM boots, its agent claims the second job, which reaches step 5" ||
	    { for f in "$T"/boot-* "$T"/agent-*.err; do t_show "$f"; done; t_bail "no VM ran the second job"; }
	host3=$(cut -d' ' -f1 "$T/marks/held2")
	"$SPOTRUN" down "$_pool" --queue "$QU" --drain --drain-timeout 5m > "$T/down.out" 2> "$T/down.err"
	t_is "$?|$(sed 's/^\(pool loop: drained in \).*/\1T/' "$T/down.out")|$(cat "$T/down.err")" "0|pool loop: draining: target 0; 1 job running on its VMs: loop2 ($host3)
pool loop: loop2 back in the queue, from its checkpoint at step 5
pool loop: drained in T
$5|" "down --drain: the VM ends, its agent checkpoints the job and puts it back; then the pool is deleted" ||
	    { t_show "$T/down.err"; t_show "$T/agent-$host3.1.err"; }
	t_is "$(cloud_state)" "$6" "nothing left on the emulator"
	"$SPOTRUN" status --json loop2 > "$T/st2.json" 2>&1
	t_is "$("$PY" -c 'import json, sys
for j in json.load(open(sys.argv[1]))["jobs"]:
    print(j["id"], j["state"], j["attempts"], j["step"])' "$T/st2.json" 2>&1)|$(cat "$T/marks/done2" 2>/dev/null)" \
	    "loop2 released 1 5|" "status: the second job back in the queue after 1 attempt, its checkpoint at step 5; it never ended" ||
	    t_show "$T/st2.json"
}
