#!/bin/sh
# t71-pytorch-dcp.sh: examples/pytorch/dcp.py, a training state sharded
# across the ranks (DTensors), saved by every rank with
# torch.distributed.checkpoint into the one checkpoint directory spotrun
# hands out (doc/python.md, "Sharded state"):
#  - on 2 ranks (gloo on the CPU), a notice: each rank writes its shards,
#    rank 0 the metadata, all answer; the checkpoint commits with them all;
#  - resumed on 3 ranks from it, dcp.load() fills the 3 ranks' shards from the
#    2 ranks' files, and the end is bit-identical (result: a SHA-256 of the
#    whole state) to an uninterrupted run on 1 rank.
# Debian's torch 1.13 has no torch.distributed.checkpoint nor DTensor: there
# the job runs on tests/standins/dcp (a stand-in of the part of them the
# example uses, with the real file names), so what is tested is spotrun's
# side: every rank's files in one directory, committed and restored whole,
# read back at another world size. With torch 2.4 or later, the real ones.
# Skipped when /usr/bin/python3 has no torch.
. "$top_srcdir/tests/jobs/lib.sh"
"$PY" -c 'import torch.distributed as d; assert d.is_gloo_available()' 2>/dev/null ||
	t_skip_all "python3-torch with gloo not installed"
t_setup
t_python_module
if "$PY" -c 'import torch.distributed.checkpoint, torch.distributed.tensor, torch.distributed.device_mesh' 2>/dev/null; then
	t_diag "torch.distributed.checkpoint: the real one"
else
	PYTHONPATH=$top_srcdir/tests/standins/dcp:$PYTHONPATH
	t_diag "torch $("$PY" -c 'import torch; print(torch.__version__)') has no torch.distributed.checkpoint: the stand-in tests/standins/dcp"
fi
ex=$top_srcdir/examples/pytorch
steps=400
# dcpjob NAME PROCS PROVIDER-LINES...: the example under spotrun.
dcpjob() {
	_n=$1 _p=$2
	shift 2
	t_jobfile "$_n" "$PY $ex/dcp.py --steps $steps --sleep 0.05 --every 10" "interval = 1h" \
		"[resources]" "procs = $_p" "[env]" "GLOO_SOCKET_IFNAME = lo" "[provider]" "$@"
}

# 1-5: 2 ranks, a notice (SIGTERM to spotrun, the signal provider) once rank
# 0 has printed step 100; beside it, the uninterrupted run on 1 rank.
dcpjob sharded 2 "name = signal" "grace = 20s" "after = 0" "window = 30s" "preemptions = unlimited"
dcpjob ref 1 "name = local" "preemptions = 0"
t_bg ref "$SPOTRUN" run "$t_tmp/ref.ini"
ref_pid=$t_last
t_bg two "$SPOTRUN" run "$t_tmp/sharded.ini"
two_pid=$t_last
wait_for "$t_tmp/two.out" '^\[0\] step 100$' 180 "$two_pid" && kill -TERM "$two_pid"
t_wait "$two_pid"
t_is "$t_rc" 75 "2 ranks, a notice: checkpointed and preempted, exit 75" || t_show "$t_tmp/two.err"
at=$(sed -nE 's/^[0-9:]+  ckpt     [0-9]+ step ([0-9]+): .* committed in .*/\1/p' "$t_tmp/two.err" | tail -n 1)
t_like "$t_tmp/two.err" '^[0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed in ' \
	"the notice's checkpoint of 2 ranks committed (step $at)"
[ -n "$at" ] && [ "$at" -ge 100 ] && [ "$at" -lt "$steps" ]
t_is "$?" 0 "... at a step after 100 and before the end"
t_unlike "$t_tmp/two.out" '^\[0\] finished ' "the 2 ranks did not finish"
# The checkpoint's files, as the store's manifest lists them.
man=$(ls "$t_tmp/store/sharded/manifests/"* | tail -n 1)
t_is "$(grep -oE '"(\.metadata|__[0-9]+_0\.distcp)"' "$man" | sort | tr '\n' ' ')" \
	'".metadata" "__0_0.distcp" "__1_0.distcp" ' \
	"the checkpoint holds rank 0's metadata and both ranks' shards" || t_show "$man"

# 6-9: resumed on 3 ranks from the 2 ranks' checkpoint.
ini_set "$t_tmp/sharded.ini" resources procs 3
ini_set "$t_tmp/sharded.ini" provider preemptions 0
t_bg three "$SPOTRUN" run "$t_tmp/sharded.ini"
three_pid=$t_last
t_wait "$three_pid"
t_is "$t_rc" 0 "resumed on 3 ranks: exit 0" || t_show "$t_tmp/three.err"
t_has "$t_tmp/three.out" "[0] resumed from step $at: 3 ranks, from a checkpoint of 2" \
	"3 ranks resumed at step $at from the checkpoint of 2"
t_wait "$ref_pid"
t_is "$t_rc" 0 "the uninterrupted run on 1 rank: exit 0" || t_show "$t_tmp/ref.err"
# (one rank: its lines carry no "[0] ")
ref_res=$(sed -nE 's/^(\[0\] )?(result: [0-9a-f]{64})$/\2/p' "$t_tmp/ref.out")
t_is "$(sed -nE 's/^\[0\] (result: [0-9a-f]{64})$/\1/p' "$t_tmp/three.out")" "${ref_res:-no result}" \
	"the state at step $steps after the resume on 3 ranks: the SHA-256 of the uninterrupted run's"
t_done
