#!/bin/sh
# bench/goodput.sh: goodput of periodic checkpoints vs. checkpoints on the
# preemption notice, modelled on the real AWS spot trace in ../shared (see
# tests/bench-goodput.c for the model). Run by `make bench`, which sets
# top_srcdir and top_builddir; the trace can be given as $1 instead.
set -e
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=.}"
trace=${1:-$top_srcdir/../shared/data/spot-traces/aws-p3.2xlarge-us-east-1c-2023-04-22.json}
prog=$top_builddir/tests/bench-goodput
if [ ! -x "$prog" ]; then
	echo "goodput.sh: $prog is not built; run 'make tests/bench-goodput' in the build directory" >&2
	exit 1
fi
if [ ! -r "$trace" ]; then
	echo "goodput.sh: no trace at $trace; give one as the first argument" >&2
	exit 1
fi
exec "$prog" "$trace" 1800
