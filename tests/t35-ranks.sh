#!/bin/sh
# t35-ranks.sh: a job of several ranks (tests/jobs/rankjob.py, no torch)
# under spotrun: each rank's environment (torchrun's variables, its own done
# marker), the GPUs of an inherited CUDA_VISIBLE_DEVICES one per rank and
# replaced, never appended to, gpu_type checked against the model NVML
# names (the fake NVML), launch = once leaving an outer launcher's
# variables alone, output prefixed on the terminal and logged per rank, a
# rank that fails stopping the others and the group restarting, a
# checkpoint of every rank's part committed once all have answered, a
# resume with fewer and with more ranks (SPOTRUN_PREV_WORLD_SIZE), a rank
# that never answers, ranks that answer at different steps, and a rank
# whose answer to a periodic request comes after a notice replaced it. Real
# processes and signals; nothing may be left running.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
t_python_module
job_cmd="$PY $JOBS/rankjob.py"

run() {	# run NAME: spotrun run, stdout and stderr to NAME.out/.err, status in $t_rc
	"$SPOTRUN" run "$t_tmp/$1.ini" > "$t_tmp/$1.out" 2> "$t_tmp/$1.err"
	t_rc=$?
}
# left NAME: the processes still running whose environment names the job's
# checkpoint directory (none may be).
left() {
	_d="SPOTRUN_CKPT_DIR=$t_tmp/local-$1/ckpt"
	for _p in /proc/[0-9]*; do
		{ tr '\0' '\n' < "$_p/environ"; } 2>/dev/null | grep -qxF -- "$_d" && echo "${_p#/proc/}"
	done
}
# signal_run NAME PROCS: start a job of PROCS ranks of rankjob.py with the
# signal provider in the background (its pid in $t_last), once every rank
# has looked for a request (its ctl/look.R says so): a notice before that
# would find the job still starting and stop it without a checkpoint.
signal_run() {
	t_jobfile "$1" "$job_cmd --steps 100000" "[resources]" "procs = $2" "[provider]" "name = signal" "grace = 20s"
	t_bg "$1" "$SPOTRUN" run "$t_tmp/$1.ini"
	_r=0
	while [ "$_r" -lt "$2" ]; do
		wait_for "$t_tmp/local-$1/ctl/look.$_r" '^looked$' 60 "$t_last"
		_r=$((_r + 1))
	done
}
# envof NAME RANK VAR: what rank RANK printed for VAR (its "env ..." line).
envof() {
	sed -n "s/^\[$2\] env .* $3=\([^ ]*\).*/\1/p; s/^\[$2\] env $3=\([^ ]*\).*/\1/p" "$t_tmp/$1.out" | head -n 1
}

# 1-16: three ranks, their variables, their output.
t_jobfile env "$job_cmd --env --steps 2" "[resources]" "procs = 3" "[provider]" "name = local"
CUDA_VISIBLE_DEVICES=GPU-kept run env
t_is "$t_rc" 0 "procs = 3: exit 0" || t_show "$t_tmp/env.err"
t_is "$(grep -c '^\[[0-2]\] env ' "$t_tmp/env.out")" 3 "each of the 3 ranks printed on the terminal after its prefix"
t_is "$(envof env 0 RANK) $(envof env 1 RANK) $(envof env 2 RANK)" "0 1 2" "RANK 0, 1, 2"
t_is "$(envof env 2 LOCAL_RANK) $(envof env 2 WORLD_SIZE) $(envof env 2 LOCAL_WORLD_SIZE)" "2 3 3" \
	"rank 2: LOCAL_RANK 2, WORLD_SIZE 3, LOCAL_WORLD_SIZE 3"
t_is "$(envof env 1 GROUP_RANK) $(envof env 1 ROLE_RANK) $(envof env 1 ROLE_NAME) $(envof env 1 ROLE_WORLD_SIZE) $(envof env 1 GROUP_WORLD_SIZE)" \
	"0 1 default 3 1" "rank 1: GROUP_RANK 0, ROLE_RANK 1, ROLE_NAME default, ROLE_WORLD_SIZE 3, GROUP_WORLD_SIZE 1"
port=$(sed -n 's/.*  started  .* (3 ranks: pids .*, MASTER_PORT \([0-9]*\))$/\1/p' "$t_tmp/env.err")
t_is "$(envof env 0 MASTER_PORT) $(envof env 2 MASTER_PORT) $(envof env 1 MASTER_ADDR)" "$port $port 127.0.0.1" \
	"every rank has the port the timeline names ($port), on 127.0.0.1"
t_is "$(envof env 0 TORCHELASTIC_RESTART_COUNT) $(envof env 0 TORCHELASTIC_MAX_RESTARTS) $(envof env 0 TORCHELASTIC_USE_AGENT_STORE)" \
	"0 0 False" "TORCHELASTIC_RESTART_COUNT 0, _MAX_RESTARTS 0, _USE_AGENT_STORE False"
t_like "$t_tmp/env.out" '^\[0\] env .* TORCHELASTIC_RUN_ID=[0-9]{8}T[0-9]{6}Z-[0-9]+ ' "TORCHELASTIC_RUN_ID: the run's id"
t_is "$(envof env 1 SPOTRUN_CKPT_DONE)" "$t_tmp/local-env/ctl/done.1" "rank 1's own done marker, ctl/done.1"
t_is "$(envof env 1 SPOTRUN_WORLD_SIZE) $(envof env 1 SPOTRUN_PREV_WORLD_SIZE) $(envof env 1 OMP_NUM_THREADS)" \
	"3  1" "SPOTRUN_WORLD_SIZE 3, SPOTRUN_PREV_WORLD_SIZE empty, OMP_NUM_THREADS 1 (as torchrun)"
t_is "$(envof env 2 CUDA_VISIBLE_DEVICES)" "GPU-kept" "a CPU job keeps an inherited CUDA_VISIBLE_DEVICES"
logs=$t_tmp/local-env/logs/latest
t_like "$logs/attempt-1.rank-1.log" '^\+[0-9]{4}\.[0-9]{3} out env RANK=1 ' "rank 1's log holds its output, without the prefix"
t_like "$logs/attempt-1.rank-2.log" '^\+[0-9]{4}\.[0-9]{3} out finished 2 steps$' "rank 2's log holds its last line"
t_unlike "$logs/attempt-1.log" ' out ' "the attempt's log has the timeline, not the ranks' output"
t_like "$t_tmp/env.err" '^[0-9:]+  ranks    ranks 0, 1, 2 exit 0$' "the end of each rank: all exit 0"
t_is "$(envof env 0 TORCHELASTIC_ERROR_FILE)" "$(cd "$logs" && pwd -P)/attempt-1.rank-0.error.json" \
	"TORCHELASTIC_ERROR_FILE: in the run's logs, per rank"

# 17-23: GPUs named by an inherited CUDA_VISIBLE_DEVICES: one per rank, by
# their names, replacing the inherited value; launch = once sees them all
# and keeps an outer launcher's RANK; too few is refused.
t_jobfile gpus "$job_cmd --env --steps 1" "[resources]" "gpus = 1-2" "[provider]" "name = local"
CUDA_VISIBLE_DEVICES=GPU-aa,GPU-bb,GPU-cc run gpus
t_is "$t_rc" 0 "gpus = 1-2 with three named: exit 0" || t_show "$t_tmp/gpus.err"
t_is "$(grep -c '^\[[0-9]\] env ' "$t_tmp/gpus.out")" 2 "two ranks, one per GPU"
t_is "$(envof gpus 0 CUDA_VISIBLE_DEVICES) $(envof gpus 1 CUDA_VISIBLE_DEVICES)" "GPU-aa GPU-bb" \
	"rank 0 sees GPU-aa alone, rank 1 GPU-bb: the inherited value replaced"
t_jobfile once "$job_cmd --env --steps 1" "[resources]" "gpus = 1-2" "launch = once" "[provider]" "name = local"
CUDA_VISIBLE_DEVICES=GPU-aa,GPU-bb,GPU-cc RANK=5 WORLD_SIZE=9 run once
t_is "$t_rc" 0 "launch = once: exit 0" || t_show "$t_tmp/once.err"
t_like "$t_tmp/once.out" '^env RANK=5 LOCAL_RANK=\(unset\) WORLD_SIZE=9 .* MASTER_PORT=\(unset\) ' \
	"launch = once: one process, unprefixed, with the launcher's RANK and WORLD_SIZE and none of spotrun's"
t_like "$t_tmp/once.out" ' CUDA_VISIBLE_DEVICES=GPU-aa,GPU-bb .*SPOTRUN_WORLD_SIZE=1 .*SPOTRUN_CKPT_DONE=[^ ]*/ctl/done$' \
	"launch = once: both GPUs, one process answering, with ctl/done"
t_jobfile few "$job_cmd --steps 1" "[resources]" "gpus = 4"
CUDA_VISIBLE_DEVICES=GPU-aa,GPU-bb run few
t_is "$t_rc:$(cat "$t_tmp/few.err")" \
	"69:spotrun: job few needs at least 4 GPUs; this machine has 2 (spotrun's CUDA_VISIBLE_DEVICES names them)" \
	"gpus = 4 with two named: exit 69, saying where they were counted"

# 24-29: gpu_type against the GPUs' model: NVML's (the fake one, on the
# library path as the driver's would be) names it; a mismatch is refused
# before anything runs; GPUs of no known model run, with a warning.
nvml=$top_builddir/tests/fake-nvml
t_jobfile h100 "$job_cmd --env --steps 1" "[resources]" "gpus = 1-2" "gpu_type = h100" "[provider]" "name = local"
LD_LIBRARY_PATH=$nvml FAKE_NVML_GPUS=2 run h100
t_is "$t_rc" 0 "gpu_type = h100 on NVML's two H100s: exit 0" || t_show "$t_tmp/h100.err"
t_is "$(envof h100 0 CUDA_VISIBLE_DEVICES) $(envof h100 1 CUDA_VISIBLE_DEVICES)" "0 1" \
	"... one rank per GPU, by NVML's index"
rec=$(cat "$t_tmp"/store/h100/attempts/*.json 2>/dev/null | tr -d '\n' | sed 's/": /":/g; s/, *"/,"/g')
t_is "$(printf '%s' "$rec" | grep -o '"gpu_model":"[^"]*","gpus":[0-9]*' )|$(printf '%s' "$rec" | grep -o '"ranks":[0-9]*')" \
	'"gpu_model":"NVIDIA H100 80GB HBM3","gpus":2|"ranks":2' "... the attempt's record has its GPUs, their model and its ranks"
t_jobfile a100 "$job_cmd --steps 1" "[resources]" "gpus = 1" "gpu_type = A100"
LD_LIBRARY_PATH=$nvml FAKE_NVML_GPUS=2 run a100
t_is "$t_rc:$(cat "$t_tmp/a100.err")" \
	"69:spotrun: job a100: gpu_type = A100, but GPU 0 of this machine is H100 (NVIDIA H100 80GB HBM3; as NVML names it): run it on a machine with A100 GPUs, or change or remove gpu_type in its [resources]" \
	"gpu_type = A100 on H100s: exit 69, naming what the machine has and the way out"
t_is "$(ls "$t_tmp/store" 2>/dev/null | grep -c a100)" 0 "... nothing of it in the store"
t_jobfile unknown "$job_cmd --steps 1" "[resources]" "gpus = 1" "gpu_type = A100" "[provider]" "name = local"
CUDA_VISIBLE_DEVICES=GPU-aa run unknown
t_is "$t_rc" 0 "gpu_type with GPUs of no known model (no NVML): runs" || t_show "$t_tmp/unknown.err"
t_like "$t_tmp/unknown.err" "^[0-9:]+  gpus     gpu_type = A100 not checked: the GPUs' model is not known \\(CUDA_VISIBLE_DEVICES found them; NVML: load libnvidia-ml.so.1: " \
	"... saying gpu_type was not checked, and why"

# 30-36: rank 1 fails: the others stop, the group restarts once, the end of
# each rank is reported; nothing is left running. Rank 1 fails only once
# every rank of its attempt has printed its variables (--ready).
mkdir "$t_tmp/crash-ready"
t_jobfile crash "$job_cmd --env --steps 400 --fail 1@4 --ready $t_tmp/crash-ready" "[resources]" "procs = 3" \
	"[provider]" "name = local" "[retry]" "max_restarts = 1" "backoff = 0"
run crash
t_is "$t_rc" 3 "a rank that exits 3: the job fails with 3" || t_show "$t_tmp/crash.err"
t_is "$(grep -cE '^[0-9:]+  stop     rank 1 failed first \(exit 3\), so the other 2 ranks stop; SIGTERM to the job$' "$t_tmp/crash.err")" 2 \
	"each attempt: rank 1 failed first, the other two are stopped"
t_is "$(grep -cE '^[0-9:]+  ranks    rank 1 exit 3 \(first\); ranks 0, 2 SIGTERM from spotrun$' "$t_tmp/crash.err")" 2 \
	"each attempt: how every rank ended, the first to fail first"
t_like "$t_tmp/crash.err" '^[0-9:]+  restart  exit 3; restart 1 of 1 in 0ms$' "the group restarts by [retry]"
t_like "$t_tmp/crash.err" '^[0-9:]+  failed   exit 3: 2 attempts, 0 preemptions, 1 restart, ' "then fails: 2 attempts"
t_is "$(grep -c "^\[0\] env .* TORCHELASTIC_RESTART_COUNT=1 " "$t_tmp/crash.out")" 1 "the restarted group has TORCHELASTIC_RESTART_COUNT 1"
t_is "$(left crash)" "" "nothing of the job left running"

# 37-45: a checkpoint of three ranks on a notice (the signal provider: spotrun
# gets SIGTERM), then the job resumed by two ranks and, from a copy of the
# same store, by four.
signal_run ck3 3
ck3_pid=$t_last
kill -TERM "$ck3_pid"
t_wait "$ck3_pid"
t_is "$t_rc" 75 "three ranks preempted: exit 75" || t_show "$t_tmp/ck3.err"
t_like "$t_tmp/ck3.err" '^[0-9:]+  ckpt     0 step 100: .* committed in ' "the notice's checkpoint of all three committed, at step 100"
t_is "$(sort "$t_tmp/ck3.out" | grep -c '^\[[0-2]\] answered request 1 at step 100$')" 3 "each rank answered it"
t_like "$t_tmp/store/ck3/manifests/0000000000.json" '"world_size": 3,' "the manifest records world_size 3"
cp -r "$t_tmp/store" "$t_tmp/store4"
for n in 2 4; do
	sed -e "s/name = ck3/name = ck3/; s/procs = 3/procs = $n/; s/name = signal/name = local/; s/steps 100000/steps 2/" \
		-e "s|local-ck3|local-ck$n|" "$t_tmp/ck3.ini" > "$t_tmp/ck$n.ini"
	[ "$n" = 4 ] && sed -i "s|$t_tmp/store\$|$t_tmp/store4|" "$t_tmp/ck$n.ini"
	run "ck$n"
	t_is "$t_rc" 0 "resumed by $n ranks: exit 0" || t_show "$t_tmp/ck$n.err"
	t_is "$(grep -c '^\[[0-3]\] resumed at step 100, previous world 3: rank 0 step 100 world 3; rank 1 step 100 world 3; rank 2 step 100 world 3$' "$t_tmp/ck$n.out")" \
		"$n" "each of the $n ranks learned the previous world size and read the 3 parts"
done
t_is "$(left ck3)$(left ck2)$(left ck4)" "" "nothing of the job left running"
t_is "$(grep -cE '^[0-9:]+  warning +resumed on 2 ranks from a checkpoint of 3: what rank 2 \(rank-2/ in the checkpoint directory\) wrote stays in every later checkpoint until the job removes it \(spotrun.torch does\)$' "$t_tmp/ck2.err")|$(grep -c 'resumed on' "$t_tmp/ck4.err")" \
	"1|0" "resumed by fewer ranks: the timeline says the parts of the ranks gone stay; by more, nothing" ||
	t_show "$t_tmp/ck2.err"

# 46-49: rank 2 never answers: no checkpoint, and the message says who; ranks
# that answer at different steps: no checkpoint, and the message says so.
t_jobfile mute "$job_cmd --steps 60 --mute 2" "interval = 1s" "write_timeout = 1s" "[resources]" "procs = 3" \
	"[provider]" "name = local"
run mute
t_is "$t_rc" 0 "a rank that never answers: the job still finishes" || t_show "$t_tmp/mute.err"
t_like "$t_tmp/mute.err" '^[0-9:]+  ckpt     the job did not write its periodic checkpoint within 1.0s \(rank 2 of 3 did not answer\); the previous checkpoint stays the newest$' \
	"the deadline's message names the rank that did not answer"
t_jobfile skew "$job_cmd --steps 40 --skew 1" "interval = 1s" "[resources]" "procs = 3" "[provider]" "name = local"
run skew
t_like "$t_tmp/skew.err" '^[0-9:]+  ckpt     the ranks answered at different steps \(rank 0 at 100, rank 1 at 101, rank 2 at 100\); their files do not make one checkpoint, so none is taken and the previous stays the newest: agree on the step before answering \(spotrun.torch.requested\(\) in Python, doc/python.md\)$' \
	"ranks at different steps: refused, saying which rank was where"
t_like "$t_tmp/skew.err" '^[0-9:]+  finished exit 0: 1 attempt, 0 preemptions, .*, 0 checkpoints$' "and nothing committed"

# 50-58: a notice replaces a periodic request that ranks 0 and 1 have
# answered and rank 2 is still answering (held until the notice's request
# is out): rank 2's answer names the periodic request, so it is ignored,
# not taken for the notice's at the old step; rank 2 is asked again and the
# notice's checkpoint of all three commits at one step, which the next
# attempt (the local provider's next machine) resumes from, every rank
# reading the parts before any writes its next (--ready).
mkdir "$t_tmp/late-ready"
# (rank 2 goes on once spotrun said it saw the late answer: under load its
# answer to the notice's request, at its next step, came before spotrun looked)
t_jobfile late "$job_cmd --steps 100000 --later-steps 2 --hold 2:$t_tmp/late-go --hold-seen $t_tmp/late.err --ready $t_tmp/late-ready" "interval = 1s" \
	"write_timeout = 60s" "[resources]" "procs = 3" "[provider]" "name = local" "notice_file = $t_tmp/late-notice"
t_bg late "$SPOTRUN" run "$t_tmp/late.ini"
late_pid=$t_last
wait_for "$t_tmp/late.out" '^\[2\] holding request 1 at step 100$' 60 "$late_pid" &&
	wait_for "$t_tmp/late.out" '^\[0\] answered request 1 at step 100$' 60 "$late_pid" &&
	wait_for "$t_tmp/late.out" '^\[1\] answered request 1 at step 100$' 60 "$late_pid"
t_is "$?" 0 "ranks 0 and 1 answered the periodic request; rank 2 holds its answer" || t_show "$t_tmp/late.err"
touch "$t_tmp/late-notice"
wait_for "$t_tmp/late.err" '^[0-9:]+  request  notice checkpoint, ' 60 "$late_pid"
touch "$t_tmp/late-go"
t_wait "$late_pid"
t_is "$t_rc" 0 "preempted once, then finished: exit 0" || t_show "$t_tmp/late.err"
t_like "$t_tmp/late.err" '^[0-9:]+  request  rank 2 answered request 1, which request 2 replaced: that answer is ignored; the request signal is sent again$' \
	"rank 2's late answer to the replaced request is ignored, and said so"
t_is "$(grep -c ' answered request 1, which request' "$t_tmp/late.err")" 1 "... once"
t_like "$t_tmp/late.err" '^[0-9:]+  ckpt     0 step 200: .* committed in ' "the notice's checkpoint of all three committed, at step 200"
t_is "$(grep -c '^\[[0-2]\] answered request 2 at step 200$' "$t_tmp/late.out")" 3 "each rank answered the notice's request"
t_like "$t_tmp/late.err" '^[0-9:]+  attempt  2 restored checkpoint 0 at step 200 ' "attempt 2 restored it"
t_is "$(grep -c '^\[[0-2]\] resumed at step 200, previous world 3: rank 0 step 200 world 3; rank 1 step 200 world 3; rank 2 step 200 world 3$' "$t_tmp/late.out")" \
	3 "each rank of attempt 2 resumed from the notice's checkpoint, every part at step 200" || t_show "$t_tmp/late.out"
t_is "$(left late)" "" "nothing of the job left running"

# 59-61: SIGTERM to spotrun and every rank at once (Slurm's scancel of a job
# step): the ranks' deaths came from outside, spotrun's own stop of the
# others afterwards does not hide that, and the run is preempted.
signal_run slurm 2
slurm_pid=$t_last
kill -TERM "$slurm_pid" $(left slurm)
t_wait "$slurm_pid"
t_is "$t_rc" 75 "SIGTERM to spotrun and the ranks: preempted, exit 75" || t_show "$t_tmp/slurm.err"
t_like "$t_tmp/slurm.err" "^[0-9:]+  killed   the job was killed by SIGTERM before it wrote the notice's checkpoint: spotrun did not send it, so it came from outside spotrun " \
	"the death is told as one from outside"
t_is "$(left slurm)" "" "nothing of the job left running"
# 62-64: the same when the ranks get it 0.1 s before spotrun (Slurm does not
# order them): a rank killed from outside stops the others only when no
# notice follows within 0.3 s, so the notice still wins.
signal_run slurm2 2
slurm_pid=$t_last
kill -TERM $(left slurm2)
sleep 0.1
kill -TERM "$slurm_pid"
t_wait "$slurm_pid"
t_is "$t_rc" 75 "SIGTERM to the ranks, then to spotrun: preempted, exit 75" || t_show "$t_tmp/slurm2.err"
t_unlike "$t_tmp/slurm2.err" "failed first" "... no rank is called the first to fail"
t_is "$(left slurm2)" "" "nothing of the job left running"
t_done
