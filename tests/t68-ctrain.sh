#!/bin/sh
# t68-ctrain.sh: examples/ctrain, a character-level language model in C
# trained with Adam through libspotrun, data-parallel over spotrun's ranks:
#  - uninterrupted, its loss falls by more than 1 (nat per character) from
#    step 0 to the end; its gradient matches finite differences of the loss;
#  - examples/ctrain/job.ini (mode = library) preempted 3 times by the local
#    provider (a notice at steps 79, 159 and 239) resumes 3 times from the
#    library's restore and ends bit-identical to the uninterrupted run: the
#    same digest (FNV-1a of parameters, Adam's m and v, step, data cursor),
#    the same final loss, the same bytes of --out;
#  - standalone (--store, params.store): saved at step 199 of a run of 200,
#    resumed by a run of 400, ends with the same digest; other settings on
#    the same checkpoint, ranks of other settings than rank 0's, and more
#    ranks than micro-batches, are refused with their messages;
#  - 2 and 3 ranks under spotrun (procs, launch = ranks; the ordered
#    reduce-scatter over TCP) end with the 1-rank run's digest;
#  - 2 ranks preempted twice (a notice at steps 79 and 159): each save is
#    collective (one checkpoint of both ranks, parameters replicated, Adam's
#    m and v in two slices), and the run ends with the 1-rank digest;
#  - saved by 2 ranks (a notice to spotrun: exit 75), resumed on 3 ranks and
#    on 1: m and v resharded by the library's restore, the same digest;
#  - 3 ranks asked for a checkpoint every second: each request one
#    collective save (the ranks vote on when), the same digest.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
. "$top_srcdir/tests/jobs/ctrain.sh"

# 1-2: uninterrupted, one rank, no store.
"$ct" --steps "$steps" --out "$t_tmp/ref.bin" > "$t_tmp/ref.out" 2> "$t_tmp/ref.err"
t_is "$?" 0 "uninterrupted run: exit 0" || t_show "$t_tmp/ref.err"
want=$(digest "$t_tmp/ref.out")
want_loss=$(final_loss "$t_tmp/ref.out")
first=$(sed -nE 's/^step 0 loss ([0-9.]+)$/\1/p' "$t_tmp/ref.out")
t_is "$(awk -v a="$first" -v b="$want_loss" 'BEGIN { print (a != "" && b != "" && b < a - 1.0) ? "falls" : "flat" }')" \
	falls "the loss falls by more than 1: $first at step 0, $want_loss after $steps steps"

# 3: the backward pass against finite differences of the loss (a missing
# term of the chain rule, or a gradient 10% off, is past the tolerance).
"$ct" --gradcheck 500 > "$t_tmp/gc.out" 2>&1
t_is "$?:$(sed -E 's/difference 0\.0[0-4][0-9]+ /difference <0.05 /' "$t_tmp/gc.out")" \
	"0:gradcheck: 500 parameters, worst relative difference <0.05 (tolerance 0.05)" \
	"the gradient of 500 parameters (100 of each tensor) matches the loss's central differences"

# 4-14: the example's job file, preempted at steps 79, 159 and 239
# (160 steps before the end: time for the notice to land).
"$SPOTRUN" check "$top_srcdir/examples/ctrain/job.ini" > "$t_tmp/check" 2>&1
t_is "$?" 0 "spotrun check accepts examples/ctrain/job.ini" || t_show "$t_tmp/check"
preempted pre 1 79 159 239
t_is "$(grep -c '^saving at step' "$t_tmp/pre.out")" 3 "3 notices reach spotrun_save"
t_is "$(final_loss "$t_tmp/pre.out")" "$want_loss" "and its final loss $want_loss"
t_unlike "$t_tmp/pre.err" '^ctrain: rank' "no error of ctrain's"

# 15-21: standalone, params.store from --store; what it refuses.
"$ct" --steps 200 --save-every 100 --store "file://$t_tmp/solo" --job solo > "$t_tmp/solo1.out" \
	2> "$t_tmp/solo1.err"
t_is "$?" 0 "standalone, 200 steps saved every 100: exit 0" || t_show "$t_tmp/solo1.err"
t_has "$t_tmp/solo1.err" "ctrain: libspotrun: checkpoint 1 of solo committed: step 199, 11 buffers" \
	"the library committed step 199 to the store of --store"
"$ct" --steps "$steps" --store "file://$t_tmp/solo" --job solo > "$t_tmp/solo2.out" 2> "$t_tmp/solo2.err"
t_has "$t_tmp/solo2.out" "resumed from step 199 on 1 rank" "a run of $steps resumes from step 199"
t_is "$(digest "$t_tmp/solo2.out")" "$want" "and ends with the uninterrupted run's digest"
"$ct" --steps "$steps" --seed 2 --store "file://$t_tmp/solo" --job solo > "$t_tmp/seed.out" \
	2> "$t_tmp/seed.err"
t_is "$?:$(cat "$t_tmp/seed.err" | grep '^ctrain: rank')" "1:ctrain: rank 0: the checkpoint of step 199 was trained with other settings (--seed, --context, --embed, --hidden, --micro, --batch or --text): give the same, or another --job" \
	"another --seed on the same job's checkpoint: refused, exit 1"
RANK=0 WORLD_SIZE=13 "$ct" > "$t_tmp/many.out" 2> "$t_tmp/many.err"
t_is "$?:$(cat "$t_tmp/many.err")" "1:ctrain: rank 0: 13 ranks for 12 micro-batches a step: give --micro at least the ranks" \
	"13 ranks for 12 micro-batches: refused, exit 1"
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
RANK=1 WORLD_SIZE=2 MASTER_PORT=$port "$ct" --hidden 64 > "$t_tmp/odd1.out" 2> "$t_tmp/odd1.err" &
odd_pid=$!
RANK=0 WORLD_SIZE=2 MASTER_PORT=$port "$ct" > "$t_tmp/odd0.out" 2> "$t_tmp/odd0.err"
rc0=$?
wait "$odd_pid"
t_is "$rc0:$?:$(cat "$t_tmp/odd0.err")" "1:1:ctrain: rank 0: join the ranks: rank 1 runs with other settings than rank 0 (options, text or ranks): give every rank the same" \
	"ranks of other settings (--hidden on rank 1): rank 0 refuses it, both exit 1"

# 22-27: 2 and 3 ranks under spotrun, uninterrupted.
for k in 2 3; do
	ctjob "r$k" "$k" "provider.preemptions=0"
	"$SPOTRUN" run "$t_tmp/r$k.ini" > "$t_tmp/r$k.out" 2> "$t_tmp/r$k.err"
	t_is "$?" 0 "$k ranks under spotrun: exit 0" || t_show "$t_tmp/r$k.err"
	t_like "$t_tmp/r$k.err" "^[0-9:]+  started  .* \\($k ranks: pids " "spotrun started $k ranks"
	t_is "$(digest "$t_tmp/r$k.out")" "$want" "$k ranks: the 1-rank run's digest, bit for bit"
done

# 28-35: 2 ranks preempted twice, every save collective.
preempted pre2 2 79 159
last=$(ls "$t_tmp/store-pre2/ct-pre2/manifests" | tail -n 1)
t_like "$t_tmp/store-pre2/ct-pre2/manifests/$last" '"world_size": 2,' "its checkpoints record world_size 2"

# 36-43: saved by 2 ranks, resumed on 3 and on 1.
ctjob two 2 "provider.name=signal" "provider.grace=20s" "provider.after=0"
t_bg two "$SPOTRUN" run "$t_tmp/two.ini"
two_pid=$t_last
wait_for "$t_tmp/two.out" '^\[0\] step 159 loss ' 60 "$two_pid"
kill -TERM "$two_pid"
t_wait "$two_pid"
t_is "$t_rc" 75 "2 ranks, a notice: checkpointed and preempted, exit 75" || t_show "$t_tmp/two.err"
at=$(sed -nE 's/^[0-9:]+  ckpt     [0-9]+ step ([0-9]+): .* committed in .*/\1/p' "$t_tmp/two.err" | tail -n 1)
t_like "$t_tmp/two.err" '^[0-9:]+  ckpt     0 step [0-9]+: .* committed in ' \
	"the notice's checkpoint of 2 ranks committed (step $at)"
cp -r "$t_tmp/store-two" "$t_tmp/store-one"
cp -r "$t_tmp/store-two" "$t_tmp/store-three"
for k in 3 1; do
	nm=$( [ $k = 3 ] && echo three || echo one)
	ranks=$( [ $k = 1 ] && echo "1 rank" || echo "$k ranks")
	ctjob "$nm" "$k" "job.name=ct-two" "provider.preemptions=0"
	"$SPOTRUN" run "$t_tmp/$nm.ini" > "$t_tmp/$nm.out" 2> "$t_tmp/$nm.err"
	t_is "$?" 0 "saved by 2 ranks, resumed on $ranks: exit 0" || t_show "$t_tmp/$nm.err"
	t_like "$t_tmp/$nm.out" "^(\[0\] )?resumed from step $at on $ranks\$" "$ranks resumed from step $at"
	t_is "$(digest "$t_tmp/$nm.out")" "$want" "resumed on $ranks: the uninterrupted digest, m and v resharded"
done

# 44-46: 3 ranks asked every second: each rank reads the request on its own
# clock, the vote has them all save the same step. (Without the vote, rank
# 0 would wait in a save the others never join, until the request's deadline
# ten minutes on: the timeout ends it.)
ctjob per3 3 "checkpoint.interval=1s" "provider.preemptions=0"
timeout -k 10 120 "$SPOTRUN" run "$t_tmp/per3.ini" > "$t_tmp/per3.out" 2> "$t_tmp/per3.err"
t_is "$?" 0 "3 ranks with periodic requests: exit 0" || t_show "$t_tmp/per3.err"
nsave=$(grep -c '^\[0\] checkpoint at step' "$t_tmp/per3.out")
ncommit=$(grep -cE '^[0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed in ' "$t_tmp/per3.err")
t_is "$([ "$nsave" -ge 1 ] && echo "$nsave = $ncommit")" "$ncommit = $ncommit" \
	"each periodic request ($nsave) is one collective save of the 3 ranks, a commit on the timeline"
t_is "$(digest "$t_tmp/per3.out")" "$want" "and the run ends with the uninterrupted digest"
t_done
