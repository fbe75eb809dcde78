#!/bin/sh
# t99-up-dry.sh: `spotrun up POOL.ini --queue URL --dry-run`: the plan
# printed for an aws, a gcp and an azure pool against the golden files in
# tests/pool/; a bad pool file (65, every error with its line), a shape no
# type has (65), no queue (64), and `up` of an azure pool without
# --dry-run on a queue no VM can reach (64, refused before any cloud is
# asked). Nothing is created: the dry run connects nowhere.
#
# The harness exports SPOTRUN and top_srcdir; by hand:
#   SPOTRUN=$PWD/spotrun top_srcdir=/path/to/src sh /path/to/src/tests/t99-up-dry.sh
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${SPOTRUN:=$PWD/spotrun}"
data=$top_srcdir/tests/pool

if [ ! -x "$SPOTRUN" ]; then
	echo "Bail out! no spotrun binary at $SPOTRUN (run 'make spotrun' first)"
	exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t98-up.XXXXXX") || { echo "Bail out! mktemp"; exit 1; }
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
unset SPOTRUN_QUEUE

n=0
failed=0
result() {	# result OK DESC: one TAP line; OK is an exit status (0 = pass)
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

# up WANT_CODE WANT_STDOUT_FILE WANT_STDERR DESC ARGS...: run `spotrun up
# ARGS` in $data and compare its exit code, stdout with a file (or
# /dev/null) and stderr exactly.
up() {
	want_code=$1 want_out=$2 want_err=$3 desc=$4
	shift 4
	(cd "$data" && "$SPOTRUN" up "$@" > "$tmp/out" 2> "$tmp/err")
	code=$?
	result "$([ "$code" -eq "$want_code" ]; echo $?)" "$desc: exit $want_code"
	[ "$code" -eq "$want_code" ] || echo "# got exit $code"
	cmp -s "$tmp/out" "$want_out"
	result $? "$desc: stdout"
	cmp -s "$tmp/out" "$want_out" || diff "$want_out" "$tmp/out" | sed 's/^/# /'
	result "$([ "$(cat "$tmp/err")" = "$want_err" ]; echo $?)" "$desc: stderr"
	[ "$(cat "$tmp/err")" = "$want_err" ] || sed 's/^/# got: /' "$tmp/err"
}

q=s3://demo-bucket/queue
up 0 "$data/aws.out" "" "aws: the example's plan" \
	"$top_srcdir/examples/pool-aws.ini" --queue "$q" --dry-run
up 0 "$data/gcp.out" "" "gcp: a regional MIG per region" gcp.ini --queue gs://demo/q -n
SPOTRUN_QUEUE=az://acct/queue up 0 "$data/azure.out" "" \
	"azure: a Flexible VMSS, the queue from SPOTRUN_QUEUE" azure.ini --dry-run
up 65 /dev/null "bad.ini:5: unknown key 'max_vm' in [pool]; did you mean 'max_vms'? Valid keys: name, cloud, regions, zones, max_vms, max_price, cost_cap, idle_timeout, on_demand_after" \
	"a bad pool file: its errors with their lines" bad.ini --queue "$q" --dry-run
up 65 /dev/null "spotrun up: noshape.ini: gpus 3xH100: no aws instance type of the built-in price table has it; known shapes: 8xH100, 8xA100, 1xV100, 4xV100, 8xV100, 1xL40S, 4xL40S, 8xL40S, 1xL4, 4xL4, 8xL4, 1xA10G, 4xA10G, 8xA10G, 1xT4, 4xT4" \
	"a shape no instance type has" noshape.ini --queue "$q" --dry-run
up 64 /dev/null "spotrun up: no queue; give --queue URL or set SPOTRUN_QUEUE" \
	"no queue" gcp.ini --dry-run
up 64 /dev/null "spotrun up: --queue file://$tmp/q is a directory of this machine: a VM cannot fetch spotrun's binary from it; give --source (a git repository or a source tarball) to build it there" \
	"azure without --dry-run: a queue no VM can reach, refused before anything is made" \
	azure.ini --queue "file://$tmp/q"
echo "1..$n"
[ "$failed" -eq 0 ]
