#!/bin/sh
# t69-ctrain-cuda.sh: examples/ctrain's device path (--device=cuda: the
# parameters, gradients and Adam state in device memory, the model's CUDA
# kernels, the ranks through NCCL) on this machine without a GPU: the CUDA
# driver is tests/fake-cuda.c (device memory the host cannot dereference;
# kern.cu's fat binary, built by nvcc, run as ctrain's exported CPU twins),
# NCCL is tests/fake-nccl.c (the ranks over an abstract Unix socket named
# by the unique id, fake-cuda's device bytes moved, failures injected,
# init/abort/destroy traced). Asserts:
#  - 1 rank by hand, 2 and 3 ranks under spotrun: the CPU path's digest and
#    final bytes (the kernels compute in the CPU reference's order);
#  - 2 ranks under spotrun preempted twice: resumed from the library's
#    restore into device memory, the CPU digest, each rank's communicator
#    aborted once per notice;
#  - saved by 2 ranks on 2 devices (--save-every 100 of 200 steps), resumed
#    by 3: the
#    CPU digest; each rank's communicator inited, aborted before each
#    checkpoint (rank 0's lines in order: init, abort, commit, init, abort,
#    commit), and after the restore a fresh unique id on all 3;
#  - a failed collective (ncclBroadcast on rank 1, ncclAllReduce on rank 0),
#    a failed ncclCommInitRank after a checkpoint and a failed kernel launch
#    end each rank with exit 1 and a message naming the rank, the step and
#    the call (the peer: a remote error), not a hang; no driver, no GPU,
#    no NCCL, a rank on the other path: refused with their messages;
#  - a checkpoint of 2 ranks on the CPU path resumes on the device path,
#    ending with the CPU digest.
. "$top_srcdir/tests/jobs/lib.sh"
t_setup
. "$top_srcdir/tests/jobs/ctrain.sh"
fc=$top_builddir/tests/.libs/fake-cuda.so
fn=$top_builddir/tests/.libs/fake-nccl.so
[ -f "$fc" ] && [ -f "$fn" ] || t_bail "no $fc or $fn (make check builds them)"
export FAKE_CUDA_DELAY_US=0 FAKE_NCCL_TRACE=1
unset FAKE_CUDA_FAIL FAKE_NCCL_FAIL
dev="--device cuda --cuda-library $fc --nccl-library $fn"
"$ct" $dev --steps 1 > "$t_tmp/probe.out" 2> "$t_tmp/probe.err" ||
	! grep -q 'this ctrain has no CUDA kernels' "$t_tmp/probe.err" ||
	t_skip_all "ctrain was built without nvcc: no kernels to run"
port() {
	"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# ranks W NAME ARGS...: W ranks of ctrain by hand, NAME-R.out and .err each,
# under a timeout; $rcs: their exit codes, rank 0's first.
ranks() {
	_w=$1 _nm=$2 _port=$(port) _pids=
	shift 2
	for _r in $(seq 0 $((_w - 1))); do
		RANK=$_r WORLD_SIZE=$_w MASTER_PORT=$_port timeout -k 5 90 "$ct" $dev "$@" \
			> "$t_tmp/$_nm-$_r.out" 2> "$t_tmp/$_nm-$_r.err" &
		_pids="$_pids $!"
	done
	rcs=
	for _p in $_pids; do
		wait "$_p"
		rcs="$rcs${rcs:+:}$?"
	done
}
# nccl_lines FILE RANK: rank RANK's fake-nccl lines of FILE, as "init ID",
# "abort ID", "destroy ID".
nccl_lines() {
	sed -nE "s/^(\\[[0-9]+\\] )?fake-nccl: rank $2: ncclComm(InitRank|Abort|Destroy)(,| of [0-9]+ ranks,) id (.*)\$/\\2 \\4/p" "$1" |
		sed -e 's/^InitRank/init/' -e 's/^Abort/abort/' -e 's/^Destroy/destroy/'
}

# 1-3: the CPU reference; the device path on 1 rank.
"$ct" --steps "$steps" --out "$t_tmp/ref.bin" > "$t_tmp/ref.out" 2> "$t_tmp/ref.err"
want=$(digest "$t_tmp/ref.out")
t_is "$(echo "$want" | wc -c)" 17 "the CPU path's digest ($want)" || t_show "$t_tmp/ref.err"
"$ct" $dev --steps "$steps" --out "$t_tmp/d1.bin" > "$t_tmp/d1.out" 2> "$t_tmp/d1.err"
t_is "$?:$(digest "$t_tmp/d1.out")" "0:$want" "device path, 1 rank: exit 0, the CPU digest" ||
	t_show "$t_tmp/d1.err"
cmp -s "$t_tmp/ref.bin" "$t_tmp/d1.bin"
t_is "$?" 0 "and the CPU path's final parameters, m and v, byte for byte"

# 4-9: 2 and 3 ranks under spotrun.
ct_args=$dev
for k in 2 3; do
	ctjob "d$k" "$k" "provider.preemptions=0"
	"$SPOTRUN" run "$t_tmp/d$k.ini" > "$t_tmp/d$k.out" 2> "$t_tmp/d$k.err"
	t_is "$?" 0 "device path, $k ranks under spotrun: exit 0" || t_show "$t_tmp/d$k.err"
	t_is "$(grep -c "fake-nccl: rank [0-9]: ncclCommInitRank of $k ranks, id " "$t_tmp/d$k.err")" "$k" \
		"each of the $k ranks joined one communicator"
	t_is "$(digest "$t_tmp/d$k.out")" "$want" "device path, $k ranks: the CPU digest, bit for bit"
done

# 10-17: 2 ranks preempted twice.
preempted dpre 2 79 159
t_is "$(nccl_lines "$t_tmp/dpre.err" 0 | grep -c '^abort '):$(nccl_lines "$t_tmp/dpre.err" 1 | grep -c '^abort ')" \
	"2:2" "each rank aborted its communicator before each notice's checkpoint (2)"

# 18-26: saved by 2 ranks, resumed on 3; the communicators' lives.
FAKE_CUDA_DEVICES=2 ranks 2 s2 --steps 200 --save-every 100 --store "file://$t_tmp/solo" --job solo
t_is "$rcs" "0:0" "2 ranks on 2 GPUs (rank 1 on device 1), saved at steps 99 and 199: exit 0" ||
	t_show "$t_tmp/s2-0.err"
ids=$(nccl_lines "$t_tmp/s2-0.err" 0 | sed -n 's/^init //p' | tr '\n' ' ')
set -- $ids
t_is "$(sed -nE -e 's/^fake-nccl: rank 0: ncclComm(InitRank|Abort).*/\1/p' \
	-e 's/^ctrain: libspotrun: checkpoint [0-9]+ of solo committed: step ([0-9]+),.*/commit \1/p' \
	"$t_tmp/s2-0.err" | tr '\n' ' ')" "InitRank Abort commit 99 InitRank Abort commit 199 " \
	"rank 0: init, abort, commit at step 99, a new communicator, abort, commit at step 199"
t_is "$#:$(nccl_lines "$t_tmp/s2-0.err" 0 | tr '\n' ' ')" "2:init $1 abort $1 init $2 abort $2 " \
	"rank 0: 2 inits with 2 ids, each aborted before a checkpoint, none destroyed"
t_is "$(nccl_lines "$t_tmp/s2-1.err" 1 | tr '\n' ' ')" "init $1 abort $1 init $2 abort $2 " \
	"rank 1: the same communicators, the same aborts"
t_is "$([ "$1" != "$2" ] && echo fresh)" fresh "the second communicator has a fresh unique id"
ranks 3 s3 --steps "$steps" --store "file://$t_tmp/solo" --job solo
t_is "$rcs" "0:0:0" "resumed on 3 ranks: exit 0" || t_show "$t_tmp/s3-0.err"
t_has "$t_tmp/s3-0.out" "resumed from step 199 on 3 ranks" "3 ranks resume from step 199"
t_is "$(digest "$t_tmp/s3-0.out")" "$want" "saved by 2 ranks, resumed by 3 on the device path: the CPU digest"
id3=$(nccl_lines "$t_tmp/s3-0.err" 0 | sed -n 's/^init //p')
t_is "$(for r in 0 1 2; do nccl_lines "$t_tmp/s3-$r.err" $r | tr '\n' ' '; echo; done | sort -u |
	sed "s/$id3/ID/g"):$(case " $ids " in *" $id3 "*) echo reused;; *) echo fresh;; esac)" \
	"init ID destroy ID :fresh" \
	"after the restore: one communicator of a fresh unique id on the 3 ranks, destroyed at the end"

# 27-35: failures end every rank with the rank, the step and the call.
FAKE_NCCL_FAIL=ncclBroadcast:21@1 ranks 2 fb --steps 50
t_is "$rcs:$(grep '^ctrain: rank' "$t_tmp/fb-1.err")" \
	"1:1:ctrain: rank 1: step 5: ncclBroadcast (the micro-batches' gradients): unhandled system error (2)" \
	"ncclBroadcast failed on rank 1 at step 5: both exit 1, rank 1 names the call"
t_is "$(grep '^ctrain: rank' "$t_tmp/fb-0.err")" \
	"ctrain: rank 0: step 5: ncclBroadcast (the micro-batches' gradients): remote process exited or there was a network error (6)" \
	"and rank 0, waiting on it, fails with a remote error, not a hang"
FAKE_NCCL_FAIL=ncclAllReduce:3@0 ranks 2 fa --steps 50
t_is "$rcs:$(grep -h '^ctrain: rank' "$t_tmp/fa-0.err" "$t_tmp/fa-1.err" | tr '\n' '|')" \
	"1:1:ctrain: rank 0: step 2: ncclAllReduce (the checkpoint vote): unhandled system error (2)|ctrain: rank 1: step 2: ncclAllReduce (the checkpoint vote): remote process exited or there was a network error (6)|" \
	"ncclAllReduce failed on rank 0 at step 2: both exit 1 with the call named"
FAKE_NCCL_FAIL=ncclCommInitRank:2:6@1 FAKE_NCCL_JOIN_S=2 ranks 2 fi --steps 100 --save-every 20 \
	--store "file://$t_tmp/fi" --job fi
t_is "$rcs:$(grep -h '^ctrain: rank' "$t_tmp/fi-0.err" "$t_tmp/fi-1.err" | tr '\n' '|')" \
	"1:1:ctrain: rank 0: step 20: ncclCommInitRank (a new communicator): unhandled system error (2)|ctrain: rank 1: step 20: ncclCommInitRank (a new communicator): remote process exited or there was a network error (6)|" \
	"a new communicator after the checkpoint of step 19 fails on rank 1: both exit 1, the call named (rank 0 after FAKE_NCCL_JOIN_S)"
FAKE_CUDA_FAIL=cuLaunchKernel:4 "$ct" $dev --steps 5 > "$t_tmp/fk.out" 2> "$t_tmp/fk.err"
t_is "$?:$(grep '^ctrain: rank' "$t_tmp/fk.err")" \
	"1:ctrain: rank 0: step 0: launch ct_k_softmax (cuLaunchKernel): CUDA_ERROR_UNKNOWN (999)" \
	"a kernel launch that fails: exit 1, the kernel named"
"$ct" --device cuda --cuda-library "$fc" --nccl-library "$t_tmp/none.so" > "$t_tmp/nn.out" 2> "$t_tmp/nn.err"
t_is "$?:$(cat "$t_tmp/nn.err")" \
	"1:ctrain: rank 0: --device=cuda: no NCCL ($t_tmp/none.so: cannot open shared object file: No such file or directory): --nccl-library or SPOTRUN_NCCL_LIBRARY names it" \
	"no NCCL where it is named: exit 1, saying which"
"$ct" --device cuda --cuda-library "$t_tmp/none.so" > "$t_tmp/nc.out" 2> "$t_tmp/nc.err"
t_is "$?:$(cat "$t_tmp/nc.err")" \
	"1:ctrain: rank 0: --device=cuda: no CUDA driver ($t_tmp/none.so: cannot open shared object file: No such file or directory)" \
	"no CUDA driver where it is named: exit 1, saying which"
FAKE_CUDA_DEVICES=0 "$ct" $dev > "$t_tmp/n0.out" 2> "$t_tmp/n0.err"
t_is "$?:$(cat "$t_tmp/n0.err")" "1:ctrain: rank 0: --device=cuda: no CUDA device ($fc: the driver sees none)" \
	"a driver that sees no GPU: exit 1, saying so"
_port=$(port)
RANK=1 WORLD_SIZE=2 MASTER_PORT=$_port timeout 60 "$ct" > "$t_tmp/mix1.out" 2> "$t_tmp/mix1.err" &
mix_pid=$!
RANK=0 WORLD_SIZE=2 MASTER_PORT=$_port timeout 60 "$ct" $dev > "$t_tmp/mix0.out" 2> "$t_tmp/mix0.err"
mix0=$?
wait "$mix_pid"
t_is "$mix0:$?:$(grep '^ctrain: rank' "$t_tmp/mix0.err")" \
	"1:1:ctrain: rank 0: join the ranks: rank 1 runs with other settings than rank 0 (options, text or ranks): give every rank the same" \
	"a rank on the CPU path with one on the GPU: refused when they join, both exit 1"

# 36-37: a checkpoint moves between the paths: saved by 2 ranks on the CPU,
# resumed by 1 on the GPU.
ct_args=
ctsolo() {
	RANK=$1 WORLD_SIZE=2 MASTER_PORT=$2 timeout 90 "$ct" --steps 200 --save-every 200 \
		--store "file://$t_tmp/mv" --job mv > "$t_tmp/mv-$1.out" 2> "$t_tmp/mv-$1.err"
}
_port=$(port)
ctsolo 1 "$_port" &
mv_pid=$!
ctsolo 0 "$_port"
mv0=$?
wait "$mv_pid"
"$ct" $dev --steps "$steps" --store "file://$t_tmp/mv" --job mv > "$t_tmp/mvd.out" 2> "$t_tmp/mvd.err"
t_is "$mv0:$?:$(grep '^resumed' "$t_tmp/mvd.out")" "0:0:resumed from step 199 on 1 rank" \
	"saved by 2 ranks on the CPU path, resumed by 1 on the device path"
t_is "$(digest "$t_tmp/mvd.out")" "$want" "and the CPU path's uninterrupted digest"
t_done
