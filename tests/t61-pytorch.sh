#!/bin/sh
# t61-pytorch.sh: examples/pytorch/job.ini end to end: a real PyTorch job
# (MLP, AdamW, dropout, CPU) preempted twice by the local provider and
# resumed from its checkpoints must end with a state_dict bit-identical to
# an uninterrupted run's: torch.equal on every tensor, and the same SHA-256
# over the tensors' bytes. The job speaks the protocol through the spotrun
# Python module (spotrun.torch); a second run with `signal = none` has it
# answer from the request file alone, to the same result. Skipped when
# /usr/bin/python3 has no torch.
. "$top_srcdir/tests/jobs/lib.sh"
"$PY" -c 'import torch' 2>/dev/null || t_skip_all "python3-torch not installed"
t_setup

ex=$top_srcdir/examples/pytorch
cp "$ex/job.ini" "$t_tmp/job.ini"
cmd=$(ini_get "$t_tmp/job.ini" job command)
ini_set "$t_tmp/job.ini" job command "$cmd --out $t_tmp/final.pt"
ini_set "$t_tmp/job.ini" job workdir "$ex"
ini_set "$t_tmp/job.ini" checkpoint store "file://$t_tmp/store"
ini_set "$t_tmp/job.ini" checkpoint local_dir "$t_tmp/local"
# The example's notice comes 4 s after each machine starts, 5 s before its
# deadline: on a loaded machine (a sanitizer build beside other suites)
# `import torch` alone took longer than that, and the notices went
# unanswered. Here each notice comes once the job trains (its file is
# made by preempt_twice below), 15 s to answer: every request must be.
ini_set "$t_tmp/job.ini" provider after 0
ini_set "$t_tmp/job.ini" provider window 20s
ini_set "$t_tmp/job.ini" provider notice_file "$t_tmp/notice"

# The same job without the request signal: the module sees the file alone.
sed -e "s|$t_tmp/store|$t_tmp/store-nosig|; s|$t_tmp/local|$t_tmp/local-nosig|; s|$t_tmp/final.pt|$t_tmp/nosig.pt|" \
	-e "s|$t_tmp/notice|$t_tmp/notice-nosig|" \
	"$t_tmp/job.ini" > "$t_tmp/nosig.ini"
ini_set "$t_tmp/nosig.ini" checkpoint signal none

# preempt_twice NAME PID NOTICE: the notices of run NAME (spotrun's PID):
# the first once the job printed its step 100, the second once it printed
# a step after its resume.
preempt_twice() {
	wait_for "$t_tmp/$1.out" '^step 100 loss ' 600 "$2" && touch "$3" || return
	_i=0
	until awk '/^resumed from step /{r = 1} r && /^step [0-9]+ loss /{f = 1} END {exit !f}' "$t_tmp/$1.out"; do
		kill -0 "$2" 2>/dev/null && [ $_i -lt 6000 ] || return
		sleep 0.1
		_i=$((_i + 1))
	done
	touch "$3"
}
t_bg run "$SPOTRUN" run "$t_tmp/job.ini"
run_pid=$t_last
t_bg nosig "$SPOTRUN" run "$t_tmp/nosig.ini"
nosig_pid=$t_last
preempt_twice run "$run_pid" "$t_tmp/notice" &
preempt_twice nosig "$nosig_pid" "$t_tmp/notice-nosig" &
# The uninterrupted run, meanwhile: the same steps without spotrun.
steps=$(echo "$cmd" | sed -nE 's/.*--steps ([0-9]+).*/\1/p')
"$PY" "$ex/train.py" --steps "$steps" --out "$t_tmp/ref.pt" > "$t_tmp/ref.out" 2>&1
ref_rc=$?
t_wait "$run_pid"
run_rc=$t_rc
t_wait "$nosig_pid"
nosig_rc=$t_rc

t_is "$run_rc" 0 "preempted run: exit 0" || t_show "$t_tmp/run.err"
t_is "$ref_rc" 0 "uninterrupted run: exit 0" || t_show "$t_tmp/ref.out"
t_is "$(grep -cE '^[0-9:]+  notice ' "$t_tmp/run.err")" 2 "two notices"
t_like "$t_tmp/run.err" '^[0-9:]+  finished exit 0: 3 attempts, 2 preemptions, ' "summary: 3 attempts, 2 preemptions"
restored=$(restored_steps "$t_tmp/run.err")
resumed=$(sed -nE 's/^resumed from step ([0-9]+) \(attempt [23]\)$/\1/p' "$t_tmp/run.out" | tr '\n' ' ')
t_is "$resumed" "$restored" "the job resumed twice, at the restored steps ($restored)"
t_unlike "$t_tmp/run.out" '^resumed from step 0 ' "no resume from step 0 (each attempt made progress)"
t_has "$t_tmp/run.out" "finished $steps steps" "the job ran all $steps steps"

run_res=$(result_of "$t_tmp/run.out")
ref_res=$(result_of "$t_tmp/ref.out")
t_like "$t_tmp/run.out" '^result: [0-9a-f]{64}$' "the job printed its result"
t_is "$run_res" "$ref_res" "same SHA-256 over the final tensors as the uninterrupted run"
t_unlike "$t_tmp/run.err" 'did not write its|missed its deadline' "every request was answered in time"

t_is "$nosig_rc" 0 "signal = none: exit 0" || t_show "$t_tmp/nosig.err"
t_like "$t_tmp/nosig.err" '^[0-9:]+  finished exit 0: 3 attempts, 2 preemptions, ' "signal = none: 3 attempts, 2 preemptions"
t_like "$t_tmp/nosig.err" '^[0-9:]+  attempt  3 restored checkpoint [0-9]+ at step [0-9]+ ' \
	"signal = none: attempt 3 restored a checkpoint the job wrote"
t_is "$(result_of "$t_tmp/nosig.out")" "$ref_res" "signal = none: the same SHA-256 as the uninterrupted run"

# Compare the saved state_dicts tensor by tensor.
"$PY" - "$t_tmp/final.pt" "$t_tmp/ref.pt" > "$t_tmp/cmp.out" 2>&1 <<'EOF'
import sys
import torch
a, b = torch.load(sys.argv[1]), torch.load(sys.argv[2])
if list(a) != list(b):
    sys.exit("different keys: %s vs %s" % (list(a), list(b)))
for k in a:
    if a[k].dtype != b[k].dtype or not torch.equal(a[k], b[k]):
        sys.exit("tensor %s differs" % k)
print("%d tensors equal" % len(a))
EOF
t_is "$?" 0 "final state_dict: every tensor torch.equal to the uninterrupted run's" || t_show "$t_tmp/cmp.out"
t_like "$t_tmp/cmp.out" '^[0-9]+ tensors equal$' "the comparison covered the tensors"

"$SPOTRUN" ls "$t_tmp/job.ini" > "$t_tmp/ls.out" 2> "$t_tmp/ls.err"
t_is "$?" 0 "spotrun ls: exit 0" || t_show "$t_tmp/ls.err"
last_step=$(sed -nE 's/^[0-9:]+  ckpt     [0-9]+ step ([0-9]+): .* committed in .*/\1/p' "$t_tmp/run.err" | tail -n 1)
t_like "$t_tmp/ls.out" "^[0-9]+ +$last_step +.* latest\$" "ls: the latest checkpoint is step $last_step" \
	|| t_show "$t_tmp/ls.out"
t_is "$(grep -cE '^[0-9]+ ' "$t_tmp/ls.out")" "$(grep -cE '^[0-9]+ +[0-9]+ +[-0-9]+ [0-9:]+ +1 ' "$t_tmp/ls.out")" \
	"each checkpoint holds one file, spotrun-torch.pt (no temporary file committed)" || t_show "$t_tmp/ls.out"

t_done
