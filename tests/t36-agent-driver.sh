#!/bin/sh
# t36-agent-driver.sh: an agent on a machine whose GPUs have no working
# driver, and why an agent skips the jobs it cannot take. The fake NVML
# (tests/fake-nvml.c) and device nodes that are empty files in a folder of
# the test's (SPOTRUN_GPU_DEV_DIR):
#
# 1. 4 device nodes, NVML failing to start (FAKE_NVML_INIT=9): the agent
#    says so in one warning (the nodes, NVML's words, the fix), offers 0
#    GPUs: it runs the job that needs none and skips the 4-GPU one, saying
#    why once however often it polls (until SIGTERM ends it); `spotrun status` (table and --json)
#    shows the machine's record while it runs, written again every lease
#    TTL (3 s), and none once it ended.
# 2. 4 device nodes, no NVML at all: the same, in the loader's words.
# 3. Two agents of one machine (one lock folder): while one runs a 6-GPU
#    job (one process: launch = once), the other skips an 8-GPU one and a
#    4-GPU one: 2 free, 6 held by the first's pid.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
. "$top_srcdir/tests/jobs/agent.sh"
Q=file://$t_tmp/q
DEV=$t_tmp/dev
mkdir -p "$DEV"
for n in nvidia0 nvidia1 nvidia2 nvidia3 nvidiactl nvidia-uvm; do : > "$DEV/$n"; done
nodes="$DEV/nvidia0, $DEV/nvidia1, $DEV/nvidia2, $DEV/nvidia3"
fix="install or load the NVIDIA driver (nvidia-smi must list the GPUs), then restart the agent"
printf '[job]\nname = @ID@\ncommand = true\n' > "$t_tmp/true.ini"

# 1. NVML failing
"$QTOOL" add "$Q" gpu4 "$t_tmp/true.ini" 4 4 H100 || t_bail "qtool add failed"
"$QTOOL" add "$Q" c0 "$t_tmp/true.ini" || t_bail "qtool add failed"
why="nvmlInit_v2: Driver Not Loaded (NVML code 9)"
# the agent runs until the test has read status and seen it poll a while
SPOTRUN_GPU_DEV_DIR=$DEV FAKE_NVML_INIT=9 ag_start nd 4 --queue "$Q"
nd=$t_last
wait_for "$t_tmp/nd.err" "c0: succeeded" 60 "$nd" || t_diag "the agent ran no c0"
"$SPOTRUN" status --queue "$Q" > "$t_tmp/st1.out" 2> "$t_tmp/st1.err"
t_like "$t_tmp/st1.out" "^$host: 4 GPU device nodes, driver not working: $(printf '%s' "$why" | sed 's/[()]/\\&/g') \\(agent $host-$nd since [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z; it claims only jobs that need no GPU\\)\$" \
    "status, while the agent runs: the machine's GPU device nodes and why the driver does not work"
"$SPOTRUN" status --json --queue "$Q" > "$t_tmp/st1.json" 2>&1
t_is "$(python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["agents"]; print(len(a), a[0]["agent"], a[0]["host"], a[0]["gpu_nodes"], a[0]["gpus"], a[0]["no_driver"], a[0]["time"] > 0)' "$t_tmp/st1.json" 2>&1)" \
    "1 $host-$nd $host 4 0 $why True" "status --json: the record under \"agents\"" || t_show "$t_tmp/st1.json"
wait_for "$t_tmp/nd.err" "skip job gpu4" 60 "$nd" || t_diag "the agent said nothing of gpu4"
# more polls (a second each with nothing to run): the skip is not said again
sleep 4
# the record is written again every lease TTL (3 s here; 5 min at most),
# so that status tells a live agent from one killed without a word
rtime() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["time"])' "$t_tmp/q/agents/$host-$nd" 2>/dev/null; }
t0=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["agents"][0]["time"])' "$t_tmp/st1.json" 2>/dev/null)
_i=0
while [ "$(rtime)" = "$t0" ] && [ $_i -lt 600 ] && kill -0 "$nd" 2>/dev/null; do sleep 0.1; _i=$((_i + 1)); done
t_is "$(python3 -c 'import sys; print(float(sys.argv[2]) > float(sys.argv[1]))' "$t0" "$(rtime)" 2>&1)" True \
    "the idle agent writes its record again (its time advances)"
kill -TERM "$nd"
t_wait "$nd"
t_is "$t_rc" 143 "SIGTERM ends the agent, exit 143 (128+15)" || t_show "$t_tmp/nd.err"
t_like "$t_tmp/nd.err" "^spotrun agent: $host-[0-9]+ on local local-vm-1, 0 GPUs, queue $Q \\(from --queue\\), lease TTL 3s\$" \
    "its first line: 0 GPUs"
t_is "$(grep -c 'warning' "$t_tmp/nd.err")" 1 "one warning" || t_show "$t_tmp/nd.err"
t_has "$t_tmp/nd.err" "spotrun agent: warning: 4 GPU device nodes ($nodes), but the NVIDIA driver is not working: $why; this agent claims only jobs that need no GPU: $fix" \
    "... naming the device nodes, NVML's reason and the fix"
t_has "$t_tmp/nd.err" "spotrun agent: c0: succeeded (epoch 1)" "it runs the job that needs no GPU"
t_is "$(grep -c ': claimed ' "$t_tmp/nd.err")" 1 "... and claims no other"
t_is "$(grep -c '^spotrun agent: skip job' "$t_tmp/nd.err")" 1 "it says why it skips the 4-GPU job once, polling 4 s more" ||
    t_show "$t_tmp/nd.err"
t_has "$t_tmp/nd.err" "spotrun agent: skip job gpu4: needs 4 GPUs of type H100, this machine has 0 working (driver not working: $why)" \
    "... naming what it needs and why this machine has none working"
t_is "$(ag_status "$Q" gpu4 | awk '{print $1}')" queued "the 4-GPU job is still queued"
"$SPOTRUN" status --queue "$Q" > "$t_tmp/st2.out" 2> "$t_tmp/st2.err"
t_unlike "$t_tmp/st2.out" "device node" "status, once the agent ended: its record is gone"
t_is "$(ls "$t_tmp/q/agents" 2>/dev/null | wc -l)" 0 "... no object under agents/"

# 2. no NVML at all (where the machine has none of its own)
if LD_LIBRARY_PATH= ldconfig -p 2>/dev/null | grep -q 'libnvidia-ml\.so\.1 '; then
	for _i in 1 2 3; do t_skip "this machine has an NVML of its own"; done
else
	SPOTRUN_GPU_DEV_DIR=$DEV LD_LIBRARY_PATH= ag_run nn 0 --queue "$Q" --once
	why="load libnvidia-ml.so.1: libnvidia-ml.so.1: cannot open shared object file: No such file or directory"
	t_is "$t_rc" 0 "no NVML: --once ends, exit 0" || t_show "$t_tmp/nn.err"
	t_has "$t_tmp/nn.err" "spotrun agent: warning: 4 GPU device nodes ($nodes), but the NVIDIA driver is not working: $why; this agent claims only jobs that need no GPU: $fix" \
	    "... the warning in the loader's words"
	t_has "$t_tmp/nn.err" "spotrun agent: skip job gpu4: needs 4 GPUs of type H100, this machine has 0 working (driver not working: $why)" \
	    "... and so is the skip"
fi

# 3. GPUs held by another run of the machine
printf '[job]\nname = @ID@\ncommand = touch %s/a6.started; sleep 6\nshell = yes\n[resources]\ngpus = 6\nlaunch = once\n[provider]\nname = local\n' \
    "$t_tmp" > "$t_tmp/a6.ini"
"$QTOOL" add "$Q" a6 "$t_tmp/a6.ini" 6 6 || t_bail "qtool add failed"
ag_machine=$t_tmp/m.gpus
# A lease no load lets lapse: a takeover of a6 by the second agent is not
# what this part is about (under ASan at load 18 a 3 s one lapsed before
# a6 had started).
SPOTRUN_LEASE_TTL=60s
# (labelled A100, so that it takes a6, not gpu4 queued before it)
ag_start h6 8 --queue "$Q" --max-jobs 1 --label gpu_type=A100
h6=$t_last
_i=0
while [ ! -e "$t_tmp/a6.started" ] && [ $_i -lt 1200 ] && kill -0 "$h6" 2>/dev/null; do sleep 0.1; _i=$((_i + 1)); done
[ -e "$t_tmp/a6.started" ] || t_diag "a6 did not start"
"$QTOOL" add "$Q" big "$t_tmp/true.ini" 8 8 || t_bail "qtool add failed"
ag_run h8 8 --queue "$Q" --once
t_has "$t_tmp/h8.err" "spotrun agent: skip job big: needs 8 GPUs, 2 free (6 held by spotrun pid $h6)" \
    "an 8-GPU job while another run holds 6 of the 8: skipped, saying who holds them"
t_has "$t_tmp/h8.err" "spotrun agent: skip job gpu4: needs 4 GPUs of type H100, 2 free (6 held by spotrun pid $h6)" \
    "... and a 4-GPU one as well"
t_wait "$h6"
t_has "$t_tmp/h6.err" "spotrun agent: a6: succeeded (epoch 1)" "the 6-GPU job ran"
ag_machine=
t_done
