#!/bin/sh
# run.sh: the GPU check, one prepared script for a machine with an NVIDIA GPU
# (run from the repository root; under 5 minutes on an H200). It builds the
# kernels for sm_90 with nvcc and their tests, runs the CPU twins' tests and
# the kernels' bodies on the host, then the CUDA test that compares the
# device with the CPU twins bit for bit (byte planes of widths 1-16, chunk
# sums of many buffer shapes), then the GPU benchmark (the kernels against a
# device-to-device copy measured in the same run, pinned host<->device
# copies), then libspotrun's device buffers through the real driver
# (tests/gpu-lib: save, an unchanged save uploading nothing, one chunk
# changed, restore bit for bit; configure builds only), then examples/ctrain on
# the GPUs (--device=cuda, one rank per GPU, NCCL: its digest against the CPU
# path's, uninterrupted and saved then resumed; configure builds only), and
# prints a summary. Without a GPU the run part says so in one
# line and stops with status 0 (the build part still runs: it is what is
# checked on machines without one).
#
# The build: configure --with-cuda and make, where the source tree is
# configured or can be (autoreconf) and configure finds the dependencies;
# else by hand, the kernels' files only (kernels/, common/util.c, compat/),
# with nvcc and gcc. xxhash.h comes from the system, or from $XXHASH_DIR (a
# copy carried along, e.g. .gpu/ with .gpu/xxhash.h, used inlined: no
# libxxhash needed there).
#
# Environment: BUILD (build directory, default /tmp/b-gpu), CUDA (toolkit,
# default /usr/local/cuda), XXHASH_DIR, BUILD_ONLY=1 (build, then stop),
# MANUAL=1 (build by hand only), BENCH_MIB (benchmark buffer, default 2048),
# LIB_MIB (each of the library check's three buffers, default 1024), NCCL
# (libnccl.so.2 for ctrain, default the toolkit's lib64 copy when there is
# one, else the loader's search).
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
b=${BUILD:-/tmp/b-gpu}
cuda=${CUDA:-/usr/local/cuda}
jobs=$(nproc 2>/dev/null || echo 4)
t0=$(date +%s)

echo "== device"
{ command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; } ||
	echo "(no nvidia-smi)"
"$cuda/bin/nvcc" --version | tail -1

mkdir -p "$b" && cd "$b" || exit 1
built=no
echo "== build (configure --with-cuda, make)"
if [ "${MANUAL:-}" = 1 ]; then
	echo "MANUAL=1: skipped"
elif [ -x "$src/configure" ] || (cd "$src" && autoreconf -fi >"$b/autoreconf.log" 2>&1); then
	if "$src/configure" -q --with-cuda="$cuda" >configure.log 2>&1 &&
		make -j"$jobs" tests/t-byteplane tests/t-chunksum tests/t-kernels-cuda tests/bench-gpu \
			tests/gpu-lib examples/ctrain/ctrain >make.log 2>&1; then
		built=configure
		bp=./tests/t-byteplane cs=./tests/t-chunksum kc=./tests/t-kernels-cuda bench=./tests/bench-gpu
		gl=./tests/gpu-lib ct=./examples/ctrain/ctrain
	else
		echo "configure or make failed ($b/configure.log, make.log: $(tail -1 configure.log))"
	fi
else
	echo "no configure and no autoreconf here"
fi
if [ $built = no ]; then
	echo "== build by hand (nvcc -fatbin for sm_90, gcc)"
	mkdir -p manual && cd manual || exit 1
	xxdir=${XXHASH_DIR:-}
	[ -z "$xxdir" ] && [ -f "$src/.gpu/xxhash.h" ] && xxdir=$src/.gpu
	[ -z "$xxdir" ] && [ -f /usr/include/xxhash.h ] && xxdir=/usr/include
	[ -n "$xxdir" ] || { echo "no xxhash.h: set XXHASH_DIR"; exit 1; }
	printf '#define _GNU_SOURCE 1\n#define HAVE_CUDA 1\n' >config.h
	inc="-I. -I$src/common -I$src/compat -I$src/kernels -I$cuda/include -I$xxdir"
	for k in byteplane chunksum; do
		"$cuda/bin/nvcc" -fatbin -O3 -std=c++17 -gencode arch=compute_90,code=sm_90 \
			-o $k.fatbin "$src/kernels/$k.cu" &&
			sh "$src/build-aux/bin-to-c" sr_fatbin_$k $k.fatbin fatbin.h >$k-fatbin.c ||
			exit 1
	done
	lib="$src/kernels/byteplane.c $src/kernels/chunksum.c $src/kernels/cudadrv.c
		$src/kernels/byteplane-cuda.c $src/kernels/chunksum-cuda.c byteplane-fatbin.c
		chunksum-fatbin.c $src/common/util.c $src/compat/strlcpy.c"
	for t in t-byteplane t-chunksum t-kernels-cuda bench-gpu; do
		gcc -O2 -std=gnu11 -DXXH_INLINE_ALL -DSR_CUDA_STUB="\"$cuda/lib64/stubs/libcuda.so\"" \
			$inc -o $t "$src/tests/$t.c" $lib -ldl -lpthread -lm || exit 1
	done
	built=manual
	bp=./t-byteplane cs=./t-chunksum kc=./t-kernels-cuda bench=./bench-gpu
	gl="" ct=""	# the library (and ctrain on it) need the configure build
fi
echo "built ($built) in $(($(date +%s) - t0)) s: $bp $cs $kc $bench $gl $ct"
[ "${BUILD_ONLY:-}" = 1 ] && exit 0

rc=0
summary=""
tap() {	# name program [args]: run a TAP program, keep its log, count its lines
	name=$1
	shift
	"$@" >"$name.log" 2>&1 || rc=1
	set -- "$name"
	grep -q '^not ok' "$1.log" && rc=1
	line="$1: $(grep -c '^ok' "$1.log") ok ($(grep -c '# SKIP' "$1.log") skipped), $(grep -c '^not ok' "$1.log") not ok"
	summary="$summary
  $line"
	echo "$line"
	grep -E '^(not ok|# )' "$1.log" | head -20
}
echo "== CPU twins, and the kernels' bodies run on the host"
tap t-byteplane "$bp"
tap t-chunksum "$cs"
echo "== CUDA kernels against the CPU twins, bit for bit"
tap t-kernels-cuda "$kc"
if grep -q '^# no GPU here' t-kernels-cuda.log; then
	echo "== no GPU on this machine: the device checks and the benchmark did not run" \
		"($(sed -n 's/^# no GPU here (\(.*\)): .*/\1/p' t-kernels-cuda.log))"
	exit $rc
fi
echo "== GPU benchmark"
"$bench" -s "${BENCH_MIB:-2048}" | tee bench.log || rc=1
echo "== libspotrun device buffers through the driver"
if [ -n "$gl" ]; then
	tap gpu-lib "$gl" -s "${LIB_MIB:-1024}"
else
	echo "not built by hand (MANUAL=1 or configure failed): the library needs the configure build"
fi
echo "== examples/ctrain on the GPUs (one rank each, NCCL) against its CPU path"
if [ -n "$ct" ]; then
	nccl=${NCCL:-}
	[ -z "$nccl" ] && [ -f "$cuda/lib64/libnccl.so.2" ] && nccl=$cuda/lib64/libnccl.so.2
	ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
	[ "$ngpu" -ge 1 ] 2>/dev/null || ngpu=1
	[ "$ngpu" -le 12 ] || ngpu=12	# a step's 12 micro-batches
	# ctrain_ranks NAME ARGS...: ngpu ranks on the GPUs; rank 0's output in NAME.out
	ctrain_ranks() {
		n=$1 port=$((29700 + $(date +%S)))
		shift
		pids=
		for r in $(seq 0 $((ngpu - 1))); do
			RANK=$r LOCAL_RANK=$r WORLD_SIZE=$ngpu MASTER_PORT=$port timeout 120 "$ct" \
				--device cuda ${nccl:+--nccl-library "$nccl"} "$@" >"$n-$r.out" 2>"$n-$r.err" &
			pids="$pids $!"
		done
		crc=0
		for p in $pids; do wait "$p" || crc=1; done
		cp "$n-0.out" "$n.out"
		return $crc
	}
	ctd() { sed -n 's/^digest //p' "$1" | tail -1; }
	"$ct" --steps 400 >ctrain-cpu.out 2>ctrain-cpu.err || rc=1
	ctrain_ranks ctrain-gpu --steps 400 || rc=1
	rm -rf "$b/ctrain-store"
	ctrain_ranks ctrain-save --steps 200 --save-every 100 --store "file://$b/ctrain-store" \
		--job gpu || rc=1
	ctrain_ranks ctrain-resume --steps 400 --store "file://$b/ctrain-store" --job gpu || rc=1
	cpu=$(ctd ctrain-cpu.out) gpu=$(ctd ctrain-gpu.out) res=$(ctd ctrain-resume.out)
	verdict=$([ -n "$cpu" ] && [ "$gpu" = "$cpu" ] && [ "$res" = "$cpu" ] && echo same || echo DIFFERENT)
	[ "$verdict" = same ] || rc=1
	line="ctrain: $ngpu GPU rank(s): cpu $cpu, gpu ${gpu:-none}, saved and resumed ${res:-none}: $verdict"
	summary="$summary
  $line"
	echo "$line"
	[ "$verdict" = same ] || tail -3 ctrain-gpu-0.err ctrain-resume-0.err 2>/dev/null
else
	echo "not built by hand (MANUAL=1 or configure failed): ctrain needs the configure build"
fi
echo "== summary ($(($(date +%s) - t0)) s)$summary"
grep -E '^  |^bench-gpu' bench.log | sed 's/^/  /'
echo "== result: $([ $rc = 0 ] && echo PASS || echo FAIL)"
exit $rc
