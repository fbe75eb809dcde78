#!/bin/sh
# loop.sh: issue 24's figures of the pool's loop on a cloud's emulator:
# BENCH_LOOP_CLOUD=gcp (the default) runs tests/t16-loop-gcp.sh against
# tests/gceemu.py, azure tests/t17-loop-azure.sh against tests/armemu.py,
# aws tests/t18-loop-aws.sh against moto (tests/ec2emu.py: it needs moto
# 5.2.1 in python3's path) (each instance booted as a VM from its
# user-data), BENCH_LOOP_RUNS times
# (default 5), with
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
#  requests per decision: the cloud's requests the agents made after up
#             (the emulator's log, its test hooks aside) over the scaling
#             decisions that moved the group's target (the agents' lines
#             "pool NAME: target A -> B"), and the writes among them
#             (POST, PUT, PATCH, DELETE; token grants aside): the reads
#             are the steps' listings, one a step (SPOTRUN_SCALE_INTERVAL,
#             1 s in the loop tests), whether or not the target moves.
#
# Prints each run's line, then the medians, with the machine.
set -eu
: "${top_builddir:=$PWD}"
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$top_srcdir/bench/lib.sh"
: "${SPOTRUN:=$top_builddir/spotrun}"
N=${BENCH_LOOP_RUNS:-5}
case ${BENCH_LOOP_CLOUD:-gcp} in
gcp) t=t16-loop-gcp ;;
azure) t=t17-loop-azure ;;
aws) t=t18-loop-aws ;;
*) echo "${0##*/}: BENCH_LOOP_CLOUD=$BENCH_LOOP_CLOUD: want gcp, azure or aws" >&2; exit 2 ;;
esac
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
export top_srcdir top_builddir SPOTRUN LOOP_BENCH_OUT=$res SPOTRUN_TEST_REQUIRE_S3=1 \
    SPOTRUN_TEST_REQUIRE_MOTO=1
i=0
while [ "$i" -lt "$N" ]; do
	i=$((i + 1))
	if ! sh "$top_srcdir/tests/$t.sh" > "$tmp/run$i.tap" 2>&1 ||
	    grep -q '^not ok' "$tmp/run$i.tap"; then
		cat "$tmp/run$i.tap" >&2
		echo "${0##*/}: run $i failed" >&2
		exit 1
	fi
done
cat "$res"
echo "cloud: ${BENCH_LOOP_CLOUD:-gcp} ($t)"
sort -n -k2 "$res" | awk -v n="$N" -v cloud="${BENCH_LOOP_CLOUD:-gcp}" '
	{ up[NR] = $2; boot[NR] = $4; own[NR] = $6; req += $8; dec += $10; wr += $12 }
	END {
		m = int((n + 1) / 2)
		printf "the median run of %d (by up to the job): up to the job %.2f s, emulated boot %.2f s, spotrun %.2f s\n", n, up[m], boot[m], own[m]
		printf "%s requests per scaling decision: %.1f (%d requests, %d decisions); writes %.1f\n", cloud, dec ? req / dec : 0, req, dec, dec ? wr / dec : 0
	}'
echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo), $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
