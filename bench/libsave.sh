#!/bin/sh
# libsave.sh: library mode's save of registered host buffers into an s3://
# store against directory mode's save of the same bytes as files, on the
# same server in one run (issue 13). The server is Ceph's RADOS Gateway on
# loopback over HTTPS (tests/rgw.sh start --tls, stopped at exit); the
# state is the real trained state of bench/train-state.py (trained once
# into $STATE as bench/compress.sh does: bf16 weights, fp32 master
# weights, Adam's m and v).
#
#  real:   two checkpoints, the state at steps 180 and 200. Library mode:
#          tests/bench-libsave registers the four kinds as host buffers
#          and calls spotrun_save for each; training is blocked for the
#          whole call (it returns once the checkpoint is committed).
#          Directory mode: the job writes the four files (bench-libsave
#          write: buffered, as torch.save does; what the job waits for),
#          then spotrun's directory save of them (bench-ckpt save, which
#          the supervisor runs while the job trains on). Wall and CPU
#          seconds per GiB of each, the ratio, and the server's CPU
#          (radosgw + ceph-osd). The same two checkpoints with
#          spotrun_save_async (bench-libsave save-async): the seconds
#          training is blocked (the copy into the library's staging
#          memory) and until the checkpoint is durable (spotrun_wait).
#          Runs rotate which side goes first (blocking, async,
#          directory); median and range of BENCH_LIBSAVE_REPS (default
#          3). The last run's newest checkpoint of each side is restored
#          and compared with the state: a difference fails the benchmark.
#  lora:   95% of the raw state in frozen tensors (the four kinds at step
#          200, never changed) and 5% in three small ones (weights, m, v
#          of an adapter) that change at every checkpoint;
#          BENCH_LIBSAVE_LORA (default 4) checkpoints of each side. What
#          each checkpoint after the first uploads (the save's new bytes)
#          / raw: target <= 5%; and the bytes the store holds at the end.
#
# Exit status: non-zero when the benchmark itself fails (a save, a
# restored state that differs); for an unmet target only with
# BENCH_STRICT=1. Skipped without radosgw, the aws CLI or PyTorch.
# Environment: STATE (default $top_builddir/bench-state), BENCH_LIBSAVE_REPS,
# BENCH_LIBSAVE_LORA, BENCH_LIBSAVE_DIR (the directory-mode files and the
# restores; default $TMPDIR or /tmp: a disk, not a tmpfs), BENCH_THREADS
# (threads of both sides; default all CPUs).
set -eu
: "${top_builddir:=.}"
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$top_srcdir/bench/lib.sh"
lib=$top_builddir/tests/bench-libsave
ck=$top_builddir/tests/bench-ckpt
for p in "$lib" "$ck"; do
	[ -x "$p" ] || make -C "$top_builddir" "tests/${p##*/}" >/dev/null
done
rgw_tools || exit 0
state=${STATE:-$top_builddir/bench-state}
if ! real_state "$state"; then
	echo "libsave.sh: skipped: no PyTorch for ${PYTHON:-/usr/bin/python3} (Debian: python3-torch)"
	exit 0
fi
reps=${BENCH_LIBSAVE_REPS:-3}
nlora=${BENCH_LIBSAVE_LORA:-4}
tmp=$(mktemp -d "${BENCH_LIBSAVE_DIR:-${TMPDIR:-/tmp}}/bench-libsave.XXXXXX")
st=$tmp/rgw
trap 'sh "$top_srcdir/tests/rgw.sh" stop "$st"; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM
res=$tmp/results
bucket=spotrun-bench
: "${SPOTRUN_RGW_MEMSTORE_BYTES:=$((3 << 30))}"
export SPOTRUN_RGW_MEMSTORE_BYTES
rgw_up "$st" --tls
url() { echo "s3://$bucket/$1?endpoint=$ep"; }
# kv KEY LINE: the value of KEY=... in a line of key=value pairs.
kv() { printf '%s\n' "$2" | tr ' ' '\n' | sed -n "s/^$1=//p"; }

s=$state
a=$state_steps
b=$state_prev
real="bf16=bf16:$s/bf16-$b.bin,$s/bf16-$a.bin fp32=f32:$s/fp32-$b.bin,$s/fp32-$a.bin
adam-m=f32:$s/adam-m-$b.bin,$s/adam-m-$a.bin adam-v=f32:$s/adam-v-$b.bin,$s/adam-v-$a.bin"
frozen_bytes=$(cat "$s/bf16-$a.bin" "$s/fp32-$a.bin" "$s/adam-m-$a.bin" "$s/adam-v-$a.bin" | wc -c)
# The adapter's three tensors: together 5/95 of the frozen bytes.
w=$((frozen_bytes * 5 / 95 / 3 / 4 * 4))
lora="base-bf16=bf16:$s/bf16-$a.bin base-fp32=f32:$s/fp32-$a.bin base-m=f32:$s/adam-m-$a.bin
base-v=f32:$s/adam-v-$a.bin lora=f32:$s/fp32-$a.bin%$w lora-m=f32:$s/adam-m-$a.bin%$w
lora-v=f32:$s/adam-v-$a.bin%$w"

# lib_side NAME N SPECS [save-async]: library mode, N checkpoints in one
# process, with spotrun_save or spotrun_save_async. Records NAME_K (the
# seconds training was blocked), NAME_K_durable (until committed),
# NAME_K_cpu, NAME_K_new, NAME_K_stored, NAME_K_raw per checkpoint K, and
# NAME_srv (the server's CPU over all of them).
lib_side()
{
	_s0=$(rgw_cpu "$st")
	# shellcheck disable=SC2086
	"$lib" "${4:-save}" "$(url "$1")" "$2" $3 >"$tmp/lib.out" ||
	    { echo "libsave.sh: library save $1 failed" >&2; exit 1; }
	rec "$1_srv" "$(secs "$_s0" "$(rgw_cpu "$st")")"
	while read -r _l; do
		_k=$(kv ckpt "$_l")
		rec "$1_$_k" "$(kv seconds "$_l")"
		rec "$1_${_k}_durable" "$(kv durable "$_l")"
		rec "$1_${_k}_cpu" "$(kv cpu "$_l")"
		rec "$1_${_k}_new" "$(kv new "$_l")"
		rec "$1_${_k}_stored" "$(kv stored "$_l")"
		rec "$1_${_k}_raw" "$(kv raw "$_l")"
	done <"$tmp/lib.out"
}
# dir_side NAME N SPECS: directory mode, N checkpoints: the job's write of
# its files (NAME_K_write), then spotrun's save of the directory (NAME_K,
# the save's own wall time; NAME_K_cpu, the process's user + system).
dir_side()
{
	_d=$tmp/dir-$1
	rm -rf "$_d"
	mkdir -p "$_d"
	_s0=$(rgw_cpu "$st")
	_k=0
	while [ "$_k" -lt "$2" ]; do
		# shellcheck disable=SC2086
		_l=$("$lib" write "$_d" "$_k" $3)
		_k=$((_k + 1))
		rec "$1_${_k}_write" "$(kv seconds "$_l")"
		/usr/bin/time -f '%U %S' -o "$tmp/time" "$ck" save "$(url "$1")" "$_d" \
		    >"$tmp/dir.out" 2>"$tmp/dir.err" ||
		    { cat "$tmp/dir.err" >&2; echo "libsave.sh: directory save $1 failed" >&2; exit 1; }
		_l=$(cat "$tmp/dir.out")
		rec "$1_$_k" "$(kv seconds "$_l")"
		rec "$1_${_k}_cpu" "$(awk 'END { print $1 + $2 }' "$tmp/time")"
		rec "$1_${_k}_new" "$(kv new "$_l")"
		rec "$1_${_k}_stored" "$(kv stored "$_l")"
		rec "$1_${_k}_raw" "$(kv raw "$_l")"
	done
	rec "$1_srv" "$(secs "$_s0" "$(rgw_cpu "$st")")"
}

awsc s3api create-bucket --bucket "$bucket" >/dev/null
cat "$s"/*.bin >/dev/null
: >"$res"
# One untimed save first: the OSD's first objects cost it page faults that
# later runs, reusing its freed memory, do not pay.
# shellcheck disable=SC2086
"$lib" save "$(url warmup)" 1 $real >/dev/null
drop
i=0
while [ "$i" -lt "$reps" ]; do
	i=$((i + 1))
	# Who goes first rotates.
	case $((i % 3)) in
	1) lib_side lib 2 "$real"; dir_side dir 2 "$real"; lib_side alib 2 "$real" save-async ;;
	2) dir_side dir 2 "$real"; lib_side alib 2 "$real" save-async; lib_side lib 2 "$real" ;;
	0) lib_side alib 2 "$real" save-async; lib_side lib 2 "$real"; dir_side dir 2 "$real" ;;
	esac
	if [ "$i" -eq "$reps" ]; then
		for _p in lib alib; do
			# shellcheck disable=SC2086
			"$lib" restore "$(url $_p)" 2 $real >/dev/null ||
			    { echo "libsave.sh: the library's restore of $_p differs" >&2; exit 1; }
		done
		"$ck" restore "$(url dir)" "$tmp/restored" >/dev/null 2>"$tmp/dir.err" &&
		    diff -r "$tmp/dir-dir" "$tmp/restored" >/dev/null ||
		    { cat "$tmp/dir.err" >&2; echo "libsave.sh: the directory restore differs" >&2; exit 1; }
		rm -rf "$tmp/restored"
	fi
	drop
done
lib_side lora-lib "$nlora" "$lora"
lib_side lora-alib "$nlora" "$lora" save-async
dir_side lora-dir "$nlora" "$lora"
for _p in lora-lib lora-alib lora-dir; do
	rec "${_p}_held" "$(stored "$_p/")"
done
for _p in lora-lib lora-alib; do
	# shellcheck disable=SC2086
	"$lib" restore "$(url $_p)" "$nlora" $lora >/dev/null ||
	    { echo "libsave.sh: the library's LoRA restore of $_p differs" >&2; exit 1; }
done

awk -v reps="$reps" -v nlora="$nlora" -v frozen="$frozen_bytes" -v cpus="$(nproc)" \
    -v strict="${BENCH_STRICT:-0}" \
    "$bench_stats_awk"'
function gib(k) { return median(k "_raw") / 1073741824 }
function verdict(ok) { if (!ok) failed = 1; return ok ? "met" : "NOT MET" }
{ cnt[$1]++; val[$1, cnt[$1]] = $2 }
END {
	printf "the state of a real training run (steps 180 and 200), %.1f MB a checkpoint, to" \
	    " Ceph RGW over HTTPS on loopback (memstore OSD), %d CPUs shared by client and" \
	    " server; median (range) of %d runs\n", median("lib_1_raw") / 1e6, cpus, reps
	for (k = 1; k <= 2; k++) {
		printf "checkpoint %d%s:\n", k,
		    k == 1 ? " (the first: every chunk new)" : " (20 steps later)"
		printf "  %-30s save %5.2f s (%s)  %5.2f s/GiB  CPU %5.2f s/GiB  new/raw %.3f\n",
		    "library (spotrun_save)", median("lib_" k), range("lib_" k),
		    median("lib_" k) / gib("lib_" k), median("lib_" k "_cpu") / gib("lib_" k),
		    median("lib_" k "_new") / median("lib_" k "_raw")
		printf "  %-30s save %5.2f s (%s)  %5.2f s/GiB  CPU %5.2f s/GiB  new/raw %.3f;" \
		    " the job'\''s write %.2f s (%s)\n", "directory mode (files)", median("dir_" k),
		    range("dir_" k), median("dir_" k) / gib("dir_" k),
		    median("dir_" k "_cpu") / gib("dir_" k),
		    median("dir_" k "_new") / median("dir_" k "_raw"),
		    median("dir_" k "_write"), range("dir_" k "_write")
		printf "  directory / library: wall %.2fx, CPU %.2fx\n",
		    median("dir_" k) / median("lib_" k),
		    median("dir_" k "_cpu") / median("lib_" k "_cpu")
	}
	printf "server CPU for both checkpoints: library %.2f s, directory mode %.2f s\n",
	    median("lib_srv"), median("dir_srv")
	print "training blocked per checkpoint (checkpoint 2):"
	printf "  library, blocking spotrun_save: %.2f s (the whole save)\n", median("lib_2")
	printf "  directory mode: %.2f s (the job writes its files; then %.2f s of save run" \
	    " beside training, which must not write its next checkpoint before it ends)\n",
	    median("dir_2_write"), median("dir_2")
	printf "  library, spotrun_save_async: %.3f s (%.3f-%.3f) (the copy into staging)," \
	    " durable %.2f s (%s) after the call; CPU %.2f s/GiB\n", median("alib_2"),
	    best("alib_2"), worst("alib_2"), median("alib_2_durable"),
	    range("alib_2_durable"), median("alib_2_cpu") / gib("alib_2")
	printf "LoRA-like: %.1f MB frozen (95%%), %.1f MB changed at every checkpoint (5%%)," \
	    " %d checkpoints each\n", frozen / 1e6, (median("lora-lib_1_raw") - frozen) / 1e6,
	    nlora
	split("lora-lib lora-alib lora-dir", sides, " ")
	split("library|library, async|directory mode", what, "|")
	for (side = 1; side <= 3; side++) {
		p = sides[side]
		printf "  %-24s", what[side]
		top = 0
		for (k = 1; k <= nlora; k++) {
			r = median(p "_" k "_new") / median(p "_" k "_raw")
			printf " %d: %.4f", k, r
			if (k > 1 && r > top) top = r
			sum += median(p "_" k "_new")
		}
		printf "  (new/raw; blocked %.3f s at checkpoint 2)\n",
		    side < 3 ? median(p "_2") : median(p "_2_write")
		printf "  %-24s the store holds %.1f MB after %d checkpoints: the new bytes summed and" \
		    " %.1f KB (manifests, catalog); after the first, <= 5%%: %s\n", "",
		    median(p "_held") / 1e6, nlora, (median(p "_held") - sum) / 1e3,
		    verdict(top <= 0.05)
		sum = 0
	}
	exit failed && strict
}' "$res"
