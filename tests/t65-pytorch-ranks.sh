#!/bin/sh
# t65-pytorch-ranks.sh: real PyTorch jobs of several ranks (Debian's
# python3-torch, gloo on the CPU) under spotrun:
#  - examples/pytorch/ddp.py (DistributedDataParallel, AdamW state sharded
#    across the ranks, ZeRO-1) on 4 ranks, preempted twice by the local
#    provider, ends bit-identical to an uninterrupted 4-rank run started by
#    Debian's torchrun;
#  - the same job checkpointed at 4 ranks (a notice to spotrun) resumes at 2
#    and at 3 ranks, resharding its optimizer state, and its loss curve goes
#    on as the 4-rank run's does (same losses at the same steps, to 1e-4);
#  - each rank's environment against what Debian's torchrun gives the same
#    layout (--nproc_per_node 2), variable by variable;
#  - a rank that hangs instead of meeting the others at a barrier, a rank
#    that crashes before it: what spotrun says, and nothing left running;
#  - launch = once with Debian's torchrun as the job's own launcher: its two
#    ranks share one done marker (spotrun.torch.save answers after a
#    barrier), the checkpoint holds both ranks' files, and both resume.
# Debian's torchrun (torch 1.13 on Python 3.11) needs --redirects 1 --tee 1:
# its default of 0 is no member of its Std enum on 3.11 and it fails.
# Skipped when /usr/bin/python3 has no torch.
. "$top_srcdir/tests/jobs/lib.sh"
"$PY" -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
	t_skip_all "python3-torch with gloo not installed"
t_setup
t_python_module
ex=$top_srcdir/examples/pytorch
steps=200
GLOO_SOCKET_IFNAME=lo
export GLOO_SOCKET_IFNAME

# free_port: a port free on 127.0.0.1 now, for a torchrun of this test:
# torchrun's default, 29500, may be another test's (make -j check).
free_port() {
	"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
torchrun() {	# torchrun NAME NPROC SCRIPT ARGS...: Debian's, output to NAME.out/.err
	_n=$1 _p=$2
	shift 2
	"$PY" -m torch.distributed.run --nproc_per_node "$_p" --master_port "$(free_port)" \
		--redirects 1 --tee 1 \
		--log_dir "$t_tmp/trlog-$_n" "$@" > "$t_tmp/$_n.out" 2> "$t_tmp/$_n.err"
}
# losses FILE: "STEP LOSS" for each loss line of rank 0 (spotrun's [0] or
# torchrun's [default0]: prefix).
losses() {
	sed -nE 's/^\[(0|default0)\]:? ?step ([0-9]+) loss ([0-9.e+-]+)$/\2 \3/p' "$1"
}
# left NAME: processes still running with the job's checkpoint directory.
left() {
	_d="SPOTRUN_CKPT_DIR=$t_tmp/local-$1/ckpt"
	for _p in /proc/[0-9]*; do
		{ tr '\0' '\n' < "$_p/environ"; } 2>/dev/null | grep -qxF -- "$_d" && echo "${_p#/proc/}"
	done
}
# ddpjob NAME PROCS [LINE...]: examples/pytorch/ddp.ini for this test.
ddpjob() {
	_n=$1
	sed -e "s|^command = .*|command = $PY $ex/ddp.py --steps $steps --sleep 0.02|" \
	    -e "s|^procs = .*|procs = $2|" -e "s|^name = pytorch-ddp|name = ddp|" \
	    -e "s|^interval = .*|interval = 5s\nstore = file://$t_tmp/store-$_n\nlocal_dir = $t_tmp/local-$_n|" \
	    "$ex/ddp.ini" > "$t_tmp/$_n.ini"
	shift 2
	for _l in "$@"; do
		ini_set "$t_tmp/$_n.ini" "${_l%%.*}" "$(echo "${_l#*.}" | cut -d= -f1)" "${_l#*=}"
	done
}

# 1-9: preempted twice at 4 ranks (a notice when rank 0 has printed step 60,
# another at step 120 after the resume), against torchrun's uninterrupted run.
ddpjob pre 4 "provider.after=0" "provider.window=20s" "provider.preemptions=unlimited" \
	"provider.notice_file=$t_tmp/preempt-now"
torchrun ref 4 "$ex/ddp.py" --steps "$steps" &
ref_pid=$!
t_bg pre "$SPOTRUN" run "$t_tmp/pre.ini"
pre_pid=$t_last
wait_for "$t_tmp/pre.out" '^\[0\] step 60 loss ' 120 "$pre_pid" && touch "$t_tmp/preempt-now"
wait_for "$t_tmp/pre.out" '^\[0\] resumed from step ' 120 "$pre_pid" &&
	wait_for "$t_tmp/pre.out" '^\[0\] step 120 loss ' 120 "$pre_pid" && touch "$t_tmp/preempt-now"
t_wait "$pre_pid"
pre_rc=$t_rc
wait "$ref_pid"
t_is "$?" 0 "torchrun --nproc_per_node 4 ddp.py: exit 0" || t_show "$t_tmp/ref.err"
t_is "$pre_rc" 0 "4 ranks preempted twice: exit 0" || t_show "$t_tmp/pre.err"
t_is "$(grep -cE '^[0-9:]+  notice ' "$t_tmp/pre.err")" 2 "two notices"
t_like "$t_tmp/pre.err" '^[0-9:]+  finished exit 0: 3 attempts, 2 preemptions, ' "3 attempts"
restored=$(restored_steps "$t_tmp/pre.err")
resumed=$(sed -nE 's/^\[0\] resumed from step ([0-9]+): 4 ranks, the optimizer state resharded from 4$/\1/p' "$t_tmp/pre.out" | tr '\n' ' ')
t_is "$resumed" "$restored" "4 ranks resumed twice at the restored steps ($restored), the slices of 4 read"
t_unlike "$t_tmp/pre.out" '^\[0\] resumed from step 0:' "each attempt made progress"
ref_res=$(sed -nE 's/^\[default0\]:(result: [0-9a-f]{64})$/\1/p' "$t_tmp/ref.out")
t_like "$t_tmp/ref.out" '^\[default0\]:result: [0-9a-f]{64}$' "torchrun's run printed its result"
t_is "$(sed -nE 's/^\[0\] (result: [0-9a-f]{64})$/\1/p' "$t_tmp/pre.out")" "$ref_res" \
	"the preempted run's final parameters: the same SHA-256 as torchrun's uninterrupted run"
t_like "$t_tmp/store-pre/ddp/manifests/$(ls "$t_tmp/store-pre/ddp/manifests" | tail -n 1)" '"world_size": 4,' \
	"its checkpoints record world_size 4"

# 10-18: checkpointed at 4 ranks, resumed at 2 and at 3.
ddpjob four 4 "provider.name=signal" "provider.grace=20s" "provider.after=0" "provider.window=30s" \
	"provider.preemptions=unlimited"
t_bg four "$SPOTRUN" run "$t_tmp/four.ini"
four_pid=$t_last
wait_for "$t_tmp/four.out" '^\[0\] step 60 loss ' 120 "$four_pid"
kill -TERM "$four_pid"
t_wait "$four_pid"
t_is "$t_rc" 75 "4 ranks, a notice: checkpointed and preempted, exit 75" || t_show "$t_tmp/four.err"
at=$(sed -nE 's/^[0-9:]+  ckpt     [0-9]+ step ([0-9]+): .* committed in .*/\1/p' "$t_tmp/four.err" | tail -n 1)
t_like "$t_tmp/four.err" '^[0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed in ' "the notice's checkpoint of 4 ranks committed (step $at)"
cp -r "$t_tmp/store-four" "$t_tmp/store-two"
cp -r "$t_tmp/store-four" "$t_tmp/store-three"
ddpjob two 2 "provider.preemptions=0"
ddpjob three 3 "provider.preemptions=0"
t_bg two "$SPOTRUN" run "$t_tmp/two.ini"
two_pid=$t_last
t_bg three "$SPOTRUN" run "$t_tmp/three.ini"
three_pid=$t_last
t_wait "$two_pid"
two_rc=$t_rc
t_wait "$three_pid"
three_rc=$t_rc
losses "$t_tmp/ref.out" > "$t_tmp/ref.loss"
for n in two three; do
	k=$( [ $n = two ] && echo 2 || echo 3)
	rc=$( [ $n = two ] && echo "$two_rc" || echo "$three_rc")
	t_is "$rc" 0 "resumed at $k ranks: exit 0" || t_show "$t_tmp/$n.err"
	t_has "$t_tmp/$n.out" "[0] resumed from step $at: $k ranks, the optimizer state resharded from 4" \
		"$k ranks resumed at step $at, resharding the 4 slices of the optimizer state"
	losses "$t_tmp/$n.out" > "$t_tmp/$n.loss"
	"$PY" - "$t_tmp/ref.loss" "$t_tmp/$n.loss" "$at" > "$t_tmp/$n.cmp" 2>&1 <<'EOF'
import sys
ref = dict(l.split() for l in open(sys.argv[1]))
got = [l.split() for l in open(sys.argv[2])]
at = int(sys.argv[3])
after = [(s, float(v)) for s, v in got if int(s) > at]
if len(after) < 5:
    sys.exit("only %d losses after step %d" % (len(after), at))
worst = max(abs(v - float(ref[s])) / float(ref[s]) for s, v in after)
first = float(ref["10"])
print("%d losses after step %d, worst relative difference %.1e; step %s: %.4g (the run's "
      "step 10: %.4g)" % (len(after), at, worst, after[0][0], after[0][1], first))
sys.exit(0 if worst < 1e-4 and after[0][1] < first else 1)
EOF
	t_is "$?" 0 "at $k ranks the loss goes on as at 4: $(cat "$t_tmp/$n.cmp")" || t_show "$t_tmp/$n.cmp"
done
t_is "$(left four)$(left two)$(left three)" "" "nothing of the jobs left running"

# 19-23: each rank's environment against Debian's torchrun's, 2 ranks.
mkdir -p "$t_tmp/env-tr" "$t_tmp/env-sr"
torchrun envtr 2 "$JOBS/printenv.py" "$t_tmp/env-tr"
t_is "$?" 0 "torchrun --nproc_per_node 2 printenv.py: exit 0" || t_show "$t_tmp/envtr.err"
t_jobfile envsr "$PY $JOBS/printenv.py $t_tmp/env-sr" "[resources]" "procs = 2" "[provider]" "name = local"
"$SPOTRUN" run "$t_tmp/envsr.ini" > "$t_tmp/envsr.out" 2> "$t_tmp/envsr.err"
t_is "$?" 0 "spotrun with procs = 2: exit 0" || t_show "$t_tmp/envsr.err"
"$PY" - "$t_tmp" > "$t_tmp/envcmp.out" 2>&1 <<'EOF'
import json, os, sys
t = sys.argv[1]
parent = dict(os.environ)
# Where spotrun differs, and why (doc/spotrun.1, RANKS): its own port and
# run id; no agent holds a store, so rank 0 does; its error files are in the
# run's logs.
differs = {"MASTER_PORT", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_USE_AGENT_STORE",
           "TORCHELASTIC_ERROR_FILE"}
bad = []
for r in ("0", "1"):
    tr = json.load(open(os.path.join(t, "env-tr", "env.%s.json" % r)))
    sr = json.load(open(os.path.join(t, "env-sr", "env.%s.json" % r)))
    set_by_tr = {k: v for k, v in tr.items() if parent.get(k) != v and k != "_"}
    set_by_sr = {k: v for k, v in sr.items() if parent.get(k) != v and not k.startswith("SPOTRUN_")
                 and k not in ("PYTHONPATH", "_")}
    for k in sorted(set_by_tr):
        if k not in sr:
            bad.append("rank %s: %s=%s not set by spotrun" % (r, k, set_by_tr[k]))
        elif k not in differs and sr[k] != set_by_tr[k]:
            bad.append("rank %s: %s: torchrun %r, spotrun %r" % (r, k, set_by_tr[k], sr[k]))
    extra = sorted(set(set_by_sr) - set(set_by_tr))
    print("rank %s: torchrun sets %d: %s" % (r, len(set_by_tr), " ".join(sorted(set_by_tr))))
    print("rank %s: spotrun also sets %s" % (r, " ".join(extra)))
    if extra != ["TORCH_NCCL_ASYNC_ERROR_HANDLING"]:
        bad.append("rank %s: spotrun's other variables: %s" % (r, extra))
    if sr["TORCHELASTIC_USE_AGENT_STORE"] != "False" or tr["TORCHELASTIC_USE_AGENT_STORE"] != "True":
        bad.append("rank %s: TORCHELASTIC_USE_AGENT_STORE: torchrun %s, spotrun %s"
                   % (r, tr["TORCHELASTIC_USE_AGENT_STORE"], sr["TORCHELASTIC_USE_AGENT_STORE"]))
print("\n".join(bad) if bad else "every variable of torchrun's is spotrun's, equal but for "
      + ", ".join(sorted(differs)))
sys.exit(1 if bad else 0)
EOF
t_is "$?" 0 "every variable torchrun sets, spotrun sets alike (but for port, run id, agent store, error file)" ||
	t_show "$t_tmp/envcmp.out"
t_has "$t_tmp/envcmp.out" "rank 1: torchrun sets 18: GROUP_RANK GROUP_WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT NCCL_ASYNC_ERROR_HANDLING OMP_NUM_THREADS RANK ROLE_NAME ROLE_RANK ROLE_WORLD_SIZE TORCHELASTIC_ERROR_FILE TORCHELASTIC_MAX_RESTARTS TORCHELASTIC_RESTART_COUNT TORCHELASTIC_RUN_ID TORCHELASTIC_USE_AGENT_STORE WORLD_SIZE" \
	"the comparison covered torchrun's 18 variables" || t_show "$t_tmp/envcmp.out"
t_has "$t_tmp/envcmp.out" "rank 0: spotrun also sets TORCH_NCCL_ASYNC_ERROR_HANDLING" \
	"spotrun adds only today's name of NCCL_ASYNC_ERROR_HANDLING (and its SPOTRUN_ variables)"

# 24-31: a rank that hangs instead of meeting the others at a barrier (their
# gloo timeout is 3 s, once all have started), and a rank that crashes
# before it.
t_jobfile hang "$PY $JOBS/hangjob.py hang 1" "[resources]" "procs = 3" "[provider]" "name = local"
t_jobfile crash "$PY $JOBS/hangjob.py crash 1" "[resources]" "procs = 3" "[provider]" "name = local"
t_bg hang "$SPOTRUN" run "$t_tmp/hang.ini"
hang_pid=$t_last
"$SPOTRUN" run "$t_tmp/crash.ini" > "$t_tmp/crash.out" 2> "$t_tmp/crash.err"
t_is "$?" 1 "a rank that crashes: the job fails with its exit 1" || t_show "$t_tmp/crash.err"
t_like "$t_tmp/crash.err" '^[0-9:]+  ranks    rank 1 exit 1 \(first\); ' "rank 1 is named the first to fail"
t_like "$t_tmp/crash.err" '^\[1\] RuntimeError: rank 1 crashes before the barrier$' "its error on the terminal, after its prefix"
t_like "$t_tmp/crash.err" "^[0-9:]+  ranks    rank 1's last line on stderr: RuntimeError: rank 1 crashes before the barrier\$" \
	"and its last line in the timeline: how it failed"
t_wait "$hang_pid"
t_is "$t_rc" 1 "a rank that hangs: the others time out, the job fails with exit 1" || t_show "$t_tmp/hang.err"
t_like "$t_tmp/hang.err" '^[0-9:]+  ranks    rank [02] exit 1 \(first\); (.*; )?ranks? (0, |2, )?1(, 2)? SIGTERM from spotrun' \
	"a rank that timed out is the first to fail; the hanging rank was stopped by spotrun"
t_like "$t_tmp/hang.err" "^[0-9:]+  ranks    rank [02]'s last line on stderr: RuntimeError: .*Timed out waiting 3000ms for (send|recv) operation to complete\$" \
	"how it failed: gloo's timeout"
t_is "$(left hang)$(left crash)" "" "nothing of either job left running"

# 32-37: launch = once, torchrun inside: a notice's checkpoint of its two
# ranks, then a run that resumes them.
trcmd="$PY -m torch.distributed.run --nproc_per_node 2 --master_port $(free_port) --redirects 1 --tee 1 --log_dir $t_tmp/trlog-once $JOBS/oncejob.py"
t_jobfile once "$trcmd 100000" "[resources]" "launch = once" "[provider]" "name = signal" "grace = 20s"
t_bg once "$SPOTRUN" run "$t_tmp/once.ini"
once_pid=$t_last
wait_for "$t_tmp/once.out" '^\[default0\]:rank 0 training$' 120 "$once_pid"
wait_for "$t_tmp/once.out" '^\[default1\]:rank 1 training$' 120 "$once_pid"
kill -TERM "$once_pid"
t_wait "$once_pid"
t_is "$t_rc" 75 "launch = once with torchrun: the notice's checkpoint, exit 75" || t_show "$t_tmp/once.err"
saved=$(sed -nE 's/^\[default([01])\]:rank [01] saved step ([0-9]+)$/\1 \2/p' "$t_tmp/once.out" | sort | tr '\n' ' ')
at=$(echo "$saved" | cut -d' ' -f2)
t_is "$saved" "0 $at 1 $at " "both of torchrun's ranks saved at one step ($at)"
t_like "$t_tmp/once.err" "^[0-9:]+  ckpt     0 step $at: .* committed in " "one checkpoint, committed once both had written"
t_is "$(grep -o '"path": "rank-[01]/spotrun-torch.pt"' "$t_tmp/store/once/manifests/0000000000.json" | tr '\n' ' ')" \
	'"path": "rank-0/spotrun-torch.pt" "path": "rank-1/spotrun-torch.pt" ' "it holds both ranks' files"
sed -e 's/name = signal/name = local/' -e 's/oncejob.py 100000/oncejob.py 3/' "$t_tmp/once.ini" > "$t_tmp/once2.ini"
"$SPOTRUN" run "$t_tmp/once2.ini" > "$t_tmp/once2.out" 2> "$t_tmp/once2.err"
t_is "$?" 0 "launch = once: the next run finishes" || t_show "$t_tmp/once2.err"
t_is "$(grep -c "^\[default[01]\]:rank [01] resumed at step $at (RANK [01], SPOTRUN_WORLD_SIZE 1)$" "$t_tmp/once2.out")" 2 \
	"both ranks resumed at step $at, with torchrun's RANK and one process answering" || t_show "$t_tmp/once2.out"
t_done
