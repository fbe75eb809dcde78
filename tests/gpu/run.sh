#!/bin/sh
# run.sh: the GPU check, one prepared script for a machine with an NVIDIA GPU
# (run from the repository root). It configures with CUDA, builds the kernels
# and their tests, runs the CPU byte-plane test, then the CUDA test that
# compares the device kernels with their CPU twins on random data of odd
# sizes and widths 1-16 (2 and 4 on the vector paths), and times split and
# join on device. Where the build dependencies of the full configure are
# missing, it compiles just the kernels and the test with gcc and nvcc.
# Environment: BUILD (build directory, default /tmp/b-gpu), CUDA (toolkit,
# default /usr/local/cuda).
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
b=${BUILD:-/tmp/b-gpu}
cuda=${CUDA:-/usr/local/cuda}
jobs=$(nproc 2>/dev/null || echo 4)

echo "== device"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1 || true
"$cuda/bin/nvcc" --version | tail -1

mkdir -p "$b" && cd "$b" || exit 1
echo "== build (configure --with-cuda)"
if "$src/configure" -q --with-cuda="$cuda" >configure.log 2>&1 &&
	make -j"$jobs" libkernels.a libcommon.a tests/t-byteplane tests/t-byteplane-cuda \
		>make.log 2>&1; then
	bp=./tests/t-byteplane
	bpc=./tests/t-byteplane-cuda
else
	echo "configure/make failed (see $b/*.log: $(tail -1 configure.log)); building by hand"
	mkdir -p manual && cd manual || exit 1
	printf '#define _GNU_SOURCE 1\n#define HAVE_CUDA 1\n' >config.h
	inc="-I. -I$src/common -I$src/compat -I$src/kernels"
	"$cuda/bin/nvcc" -O3 -std=c++17 -Xcompiler -fno-exceptions,-fno-threadsafe-statics -gencode arch=compute_90,code=sm_90 $inc \
		-c -o byteplane-cu.o "$src/kernels/byteplane.cu" || exit 1
	for t in t-byteplane t-byteplane-cuda; do
		gcc -O2 -std=gnu11 $inc -I"$cuda/include" -o "$t" "$src/tests/$t.c" \
			"$src/kernels/byteplane.c" "$src/common/util.c" "$src/compat/strlcpy.c" \
			byteplane-cu.o \
			-L"$cuda/lib64" -lcudart -lpthread -lm || exit 1
	done
	bp=./t-byteplane
	bpc=./t-byteplane-cuda
fi

rc=0
echo "== CPU twin: $bp"
"$bp" >bp.log 2>&1 || rc=1
grep -E '^(not ok|1\.\.)' bp.log
grep -c '^ok' bp.log | sed 's/^/ok lines: /'
echo "== CUDA kernels vs CPU twins, then device throughput: $bpc"
SPOTRUN_GPU_BENCH=1 "$bpc" || rc=1
grep -q '^not ok' bp.log && rc=1
echo "== result: $([ $rc = 0 ] && echo PASS || echo FAIL)"
exit $rc
