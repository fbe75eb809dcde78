#!/bin/sh
# loop.sh: issue 24's figures of the pool's loop on GCP, from
# tests/t16-loop-gcp.sh run BENCH_LOOP_RUNS times (default 5) against
# tests/gceemu.py (each instance booted as a VM from its user-data) and
# RGW (the one of $SPOTRUN_TEST_S3_ENDPOINT, else started here with
# tests/rgw.sh --tls and stopped at exit). Measured per run
# (tests/jobs/loop.sh, LOOP_BENCH_OUT):
#
#  up_to_job: seconds from `spotrun up` to the job's first line on the VM;
#  boot:      the emulated boot: from the emulator making the instance to
#             its agent started (the user-data's install script: spotrun
#             fetched from the bucket by its presigned URL, checked);
#  spotrun:   up_to_job less boot: spotrun's own time (up's calls, the
#             agent's start, its claim, the workdir, the job's start;
#             target < 5 s);
#  requests per decision: the Compute requests the agents made after up
#             (the emulator's log, its test hooks aside) over the scaling
#             decisions that moved the group's target (the agents' lines
#             "pool NAME: target A -> B").
#
# Prints each run's line, then the medians, with the machine.
set -eu
: "${top_builddir:=$PWD}"
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$top_srcdir/bench/lib.sh"
: "${SPOTRUN:=$top_builddir/spotrun}"
N=${BENCH_LOOP_RUNS:-5}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-loop.XXXXXX")
started=
cleanup() {
	[ -z "$started" ] || sh "$top_srcdir/tests/rgw.sh" stop "$tmp/rgw" >/dev/null 2>&1 || :
	rm -rf "$tmp"
}
trap cleanup EXIT
if [ -z "${SPOTRUN_TEST_S3_ENDPOINT:-}" ]; then
	rgw_tools || exit 0
	rgw_up "$tmp/rgw" --tls
	started=1
fi
res=$tmp/res
export top_srcdir top_builddir SPOTRUN LOOP_BENCH_OUT=$res SPOTRUN_TEST_REQUIRE_S3=1
i=0
while [ "$i" -lt "$N" ]; do
	i=$((i + 1))
	if ! sh "$top_srcdir/tests/t16-loop-gcp.sh" > "$tmp/run$i.tap" 2>&1 ||
	    grep -q '^not ok' "$tmp/run$i.tap"; then
		cat "$tmp/run$i.tap" >&2
		echo "${0##*/}: run $i failed" >&2
		exit 1
	fi
done
cat "$res"
sort -n -k2 "$res" | awk -v n="$N" '
	{ up[NR] = $2; boot[NR] = $4; own[NR] = $6; req += $8; dec += $10 }
	END {
		m = int((n + 1) / 2)
		printf "the median run of %d (by up to the job): up to the job %.2f s, emulated boot %.2f s, spotrun %.2f s\n", n, up[m], boot[m], own[m]
		printf "Compute requests per scaling decision: %.1f (%d requests, %d decisions)\n", dec ? req / dec : 0, req, dec
	}'
echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo), $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
