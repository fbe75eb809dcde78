#!/bin/sh
# t72-pytorch-callbacks.sh: spotrun.hf.SpotrunCallback and
# spotrun.lightning.SpotrunCallback in examples/pytorch/hf_train.py and
# pl_train.py (doc/python.md), each preempted by a notice of the local
# provider once it has printed step 30, under `spotrun run`:
#  - the callback has the trainer save into the checkpoint directory and
#    answers at the trainer's step; the checkpoint holds the trainer's files;
#  - the second attempt resumes from that step (the trainer's global step,
#    the step spotrun restored), goes on with the next steps to the end, and
#    ends with the weights of an uninterrupted run (result: SHA-256).
# Where transformers or Lightning cannot be imported (Debian has neither),
# the jobs run on the stand-ins in tests/standins, whose trainers call the
# callbacks as the libraries' training loops do.
# Skipped when /usr/bin/python3 has no torch.
. "$top_srcdir/tests/jobs/lib.sh"
"$PY" -c 'import torch' 2>/dev/null || t_skip_all "python3-torch not installed"
t_setup
t_python_module
standins=
for lib in transformers lightning.pytorch; do
	if "$PY" -c "import $lib" 2>/dev/null; then
		t_diag "$lib: the real one"
	else
		standins=$top_srcdir/tests/standins:
		t_diag "$lib cannot be imported: the stand-in in tests/standins"
	fi
done
PYTHONPATH=$standins$PYTHONPATH
ex=$top_srcdir/examples/pytorch
steps=200

# trained NAME SCRIPT FILE: the script preempted once under spotrun (FILE: a
# file its checkpoint must hold), against its run without spotrun.
trained() {
	_n=$1 _s=$2 _f=$3
	(cd "$t_tmp" && "$PY" "$ex/$_s" --steps "$steps" > "$t_tmp/$_n-ref.out" 2> "$t_tmp/$_n-ref.err")
	t_is "$?" 0 "$_s without spotrun: exit 0" || t_show "$t_tmp/$_n-ref.err"
	t_jobfile "$_n" "$PY $ex/$_s --steps $steps --sleep 0.05" "interval = 1h" \
		"[provider]" "name = local" "after = 0" "window = 30s" "preemptions = 1" \
		"notice_file = $t_tmp/$_n-notice"
	t_bg "$_n" "$SPOTRUN" run "$t_tmp/$_n.ini"
	_pid=$t_last
	wait_for "$t_tmp/$_n.out" '^step 30$' 180 "$_pid" && touch "$t_tmp/$_n-notice"
	t_wait "$_pid"
	t_is "$t_rc" 0 "$_s preempted once: exit 0" || t_show "$t_tmp/$_n.err"
	t_like "$t_tmp/$_n.err" '^[0-9:]+  finished exit 0: 2 attempts, 1 preemption, ' "... 2 attempts"
	_at=$(restored_steps "$t_tmp/$_n.err" | tr -d ' ')
	t_is "$(sed -n 's/^resumed from step \([0-9]*\)$/\1/p' "$t_tmp/$_n.out")" "${_at:-none}" \
		"... the second resumed from the step spotrun restored ($_at)"
	[ -n "$_at" ] && [ "$_at" -ge 30 ] && [ "$_at" -lt "$steps" ]
	t_is "$?" 0 "... a step after 30 and before the end"
	_want=$(seq $(( (_at / 10 + 1) * 10 )) 10 "$steps" | tr '\n' ' ')
	_got=$(sed -n '/^resumed from step /,$s/^step \([0-9]*\)$/\1/p' "$t_tmp/$_n.out" | tr '\n' ' ')
	t_is "$_got" "$_want" "... and went on from there: the steps after $_at, none again"
	t_has "$t_tmp/$_n.out" "finished at step $steps" "... to step $steps"
	_man=$(ls "$t_tmp/store/$_n/manifests/"* | tail -n 1)
	t_like "$_man" "\"path\": \"$(printf %s "$_f" | sed "s/STEP/$_at/")\"" \
		"the checkpoint holds the trainer's $(printf %s "$_f" | sed "s/STEP/$_at/")"
	t_is "$(result_of "$t_tmp/$_n.out")" "$(result_of "$t_tmp/$_n-ref.out")" \
		"the final weights: those of the run never stopped"
}

# 1-9: the Hugging Face Trainer.
trained hf hf_train.py checkpoint-STEP/trainer_state.json
# 10-18: Lightning.
trained pl pl_train.py spotrun-lightning.ckpt

# 19-20: the HF callback refuses a Trainer that would save elsewhere, or on
# its own, rather than answer requests with files spotrun never sees.
cat > "$t_tmp/hfbad.py" <<'PYEOF'
import sys
import spotrun
from spotrun.hf import SpotrunCallback
from transformers import TrainingArguments
cb, state = SpotrunCallback(), None
for kw in ({"output_dir": "elsewhere", "save_strategy": "no"},
           {"output_dir": spotrun.ckpt_dir(), "save_strategy": "steps"}):
    try:
        cb.on_train_begin(TrainingArguments(**kw), state, None)
        print("accepted %r" % kw)
    except ValueError as e:
        print(e)
PYEOF
t_jobfile hfbad "$PY $t_tmp/hfbad.py" "[provider]" "name = local" "preemptions = 0"
"$SPOTRUN" run "$t_tmp/hfbad.ini" > "$t_tmp/hfbad.out" 2> "$t_tmp/hfbad.err"
t_has "$t_tmp/hfbad.out" "spotrun.hf: TrainingArguments(output_dir='elsewhere') is not spotrun's checkpoint directory: pass output_dir=spotrun.ckpt_dir()" \
	"SpotrunCallback refuses an output_dir not spotrun's" || t_show "$t_tmp/hfbad.err"
t_has "$t_tmp/hfbad.out" "spotrun.hf: TrainingArguments(save_strategy='steps'): pass \"no\"; spotrun asks for the saves" \
	"... and the Trainer's own saves"
t_done
