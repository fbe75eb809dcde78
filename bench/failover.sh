#!/bin/sh
# failover.sh: issue 24's failover decision time: how long `spotrun up`
# takes, after its first place answers that it has no capacity, to ask
# the next place. Against the clouds' emulators of the tests, their
# request logs timed (--log-times: each line ends " t=SECONDS", when it
# was answered), the queue on tests/gcsemu.py (where up publishes the
# binary), BENCH_FAILOVER_RUNS runs (default 5) per cloud:
#
#  azure: tests/armemu.py, the pool of tests/pool/azure-up.ini, eastus
#         refusing its size at the call (SkuNotAvailable, 409), then in
#         the operation (ZonalAllocationFailed); the next place westus2;
#  gcp:   tests/gceemu.py, tests/pool/gcp-up.ini, us-central1's zones
#         out (ZONE_RESOURCE_POOL_EXHAUSTED, seen in the group's
#         instances); the next place europe-west4;
#  aws:   moto (tests/ec2emu.py) behind tests/ec2cap.py, the pool of
#         tests/pool/aws-failover.ini, us-east-1 refusing the CreateFleet
#         (InsufficientInstanceCapacity, 400), then reporting it in the
#         fleet's errorSet; the next place us-west-2. The proxy logs only
#         CreateFleets and errorSets: refusal is the refusing answer,
#         next the next region's CreateFleet. Skipped, said, without moto.
#
# Per run: refusal, the answer that carried the refusal (the last
# request before up's first DELETE, the refused place's drop); next, the
# first request that names the next region; decision = next - refusal
# (the drop's requests, the walk's pause before the second place, 1 s by
# design: fleet/pool-failover.c, and the next place's first call); up, the
# whole `spotrun up`. `down` between runs; every run's output checked.
# Prints each run, the medians, and the machine.
set -eu
: "${top_builddir:=$PWD}"
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${SPOTRUN:=$top_builddir/spotrun}"
: "${PY:=python3}"
N=${BENCH_FAILOVER_RUNS:-5}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-failover.XXXXXX")
pids=
cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null || :
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
command -v openssl >/dev/null || { echo "${0##*/}: openssl is needed" >&2; exit 1; }

# emu NAME SCRIPT ARGS...: an emulator on loopback; its port into $port
emu() {
	_n=$1 _s=$2
	shift 2
	"$PY" "$top_srcdir/tests/$_s" --port-file "$tmp/$_n.port" "$@" 2> "$tmp/$_n.err" &
	pids="$pids $!"
	_i=0
	until grep -q '^[0-9][0-9]*$' "$tmp/$_n.port" 2>/dev/null; do
		_i=$((_i + 1))
		[ "$_i" -lt 300 ] || { cat "$tmp/$_n.err" >&2; echo "${0##*/}: $_s did not start" >&2; exit 1; }
		sleep 0.1
	done
	port=$(cat "$tmp/$_n.port")
}
post() { "$PY" -c 'import sys, urllib.request
urllib.request.urlopen(urllib.request.Request(sys.argv[1], data=b"", method="POST")).read()' "$1"; }
now() { date +%s.%N; }

# the queue
printf 'GOOG1EQX7TESTSPOTRUNEMULATORACCESSIDFORGCSHMACKEYS0123456789AB bench+Secret/For/The/GCS/Emulator/0123456\n' \
    > "$tmp/keys"
emu gcs gcsemu.py --keys "$tmp/keys" --bucket spotrun-bf
qep=http://127.0.0.1:$port
export GS_ACCESS_KEY_ID=GOOG1EQX7TESTSPOTRUNEMULATORACCESSIDFORGCSHMACKEYS0123456789AB \
    GS_SECRET_ACCESS_KEY=bench+Secret/For/The/GCS/Emulator/0123456 BOTO_CONFIG=/dev/null \
    AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_EC2_METADATA_DISABLED=true \
    HOME=$tmp XDG_CONFIG_HOME=$tmp/config
unset SPOTRUN_QUEUE AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY 2>/dev/null || :

# Azure
sub=0f0f0f0f-bbbb-bbbb-bbbb-bbbbbbbbbbbb client=bbbbbbbb-aaaa-bbbb-cccc-bbbbbbbbbbbb
emu arm armemu.py --subscription $sub --principal "tenant-b:$client:pw-bench" \
    --log "$tmp/arm.log" --log-times
aep=http://127.0.0.1:$port
export AZURE_TENANT_ID=tenant-b AZURE_CLIENT_ID=$client AZURE_CLIENT_SECRET=pw-bench \
    AZURE_SUBSCRIPTION_ID=$sub AZURE_AUTHORITY_HOST=$aep SPOTRUN_ARM_ENDPOINT=$aep \
    SPOTRUN_AZURE_METADATA_DISABLED=true SPOTRUN_AZURE_ENDPOINT=http://127.0.0.1:1
# GCP
sa=bench@p-bf.iam.gserviceaccount.com
openssl genrsa -out "$tmp/key.pem" 2048 2>/dev/null
printf '%s kid-b %s\n' "$sa" "$(openssl rsa -in "$tmp/key.pem" -noout -modulus)" > "$tmp/sa"
emu gce gceemu.py --project p-bf --sa "$tmp/sa" \
    --image deeplearning-platform-release/common-cu121-debian-11=common-cu121-v20240922-debian-11 \
    --log "$tmp/gce.log" --log-times
gep=http://127.0.0.1:$port
"$PY" - "$tmp/key.pem" "$sa" "$gep/token" > "$tmp/adc.json" <<'EOF'
import json, sys
print(json.dumps({"type": "service_account", "project_id": "p-bf", "private_key_id": "kid-b",
    "private_key": open(sys.argv[1]).read(), "client_email": sys.argv[2],
    "client_id": "1", "token_uri": sys.argv[3]}))
EOF
export GOOGLE_APPLICATION_CREDENTIALS=$tmp/adc.json SPOTRUN_GCE_ENDPOINT=$gep NO_GCE_CHECK=True \
    GCE_METADATA_HOST=127.0.0.1:1
unset GOOGLE_CLOUD_PROJECT CLOUDSDK_CORE_PROJECT CLOUDSDK_CONFIG 2>/dev/null || :

# AWS, where this Python has moto
aws=
if python3 -c 'import moto, boto3' >/dev/null 2>&1; then
	aws=1
	emu moto ec2emu.py
	mep=http://127.0.0.1:$port
	echo '{}' > "$tmp/cap.json"
	emu cap ec2cap.py --upstream "$mep" --config "$tmp/cap.json" --log "$tmp/cap.log" --log-times
	export AWS_ACCESS_KEY_ID=AKIDEXAMPLE AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY \
	    AWS_REGION=us-east-1 AWS_ENDPOINT_URL_EC2=http://127.0.0.1:$port AWS_ENDPOINT_URL_SSM=$mep
	unset AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_REGION AWS_ENDPOINT_URL SPOTRUN_EC2_ENDPOINT \
	    2>/dev/null || :
else
	echo "aws: skipped: moto is not installed in this Python (python3 -m moto.server)"
fi

# one RUN CASE LOG POOL NEXT_REGION: one up that fails over, timed from
# LOG's lines after the mark; "CASE decision up" into $res. Each in a
# queue of its own: the queue's placement history would have the next up
# try the refused place last.
res=$tmp/res
one() {
	Q="gs://spotrun-bf/q$1-$2?endpoint=$qep"
	_mark=$(grep -c . "$3" || :)
	_t0=$(now)
	"$SPOTRUN" up "$4" --queue "$Q" --count 1 > "$tmp/up.out" 2> "$tmp/up.err" ||
	    { cat "$tmp/up.err" >&2; exit 1; }
	_t1=$(now)
	grep -q "^pool [^ ]*: no capacity in " "$tmp/up.out" && grep -q " in $5 " "$tmp/up.out" ||
	    { echo "${0##*/}: $2: up did not fail over to $5:" >&2; cat "$tmp/up.out" >&2; exit 1; }
	sed -n "$((_mark + 1)),\$p" "$3" | grep ' t=[0-9.]*$' | awk -v next_="$5" -v c="$2" \
	    -v up="$(awk -v a="$_t0" -v b="$_t1" 'BEGIN { print b - a }')" '
		{ t = $NF; sub(/^t=/, "", t) }
		# lines of ec2cap.py: REGION now|later|errors|pass CODE
		$2 == "now" || $2 == "errors" { if (!nx) refusal = t; next }
		$2 == "pass" || $2 == "later" { if (!nx && $1 == next_) nx = t; next }
		!del && $1 == "DELETE" { del = 1; refusal = prev }
		!nx && index($2, next_) { nx = t }
		{ prev = t }
		END {
			if (!refusal || !nx) { print "no refusal or next place in the log" > "/dev/stderr"; exit 1 }
			printf "%s %.3f %.3f\n", c, nx - refusal, up
		}' >> "$res"
	"$SPOTRUN" down "$4" --queue "$Q" > "$tmp/down.out" 2>&1 || { cat "$tmp/down.out" >&2; exit 1; }
}
: > "$res"
i=0
while [ "$i" -lt "$N" ]; do
	i=$((i + 1))
	post "$aep/emu/capacity?region=eastus&code=SkuNotAvailable"
	one "$i" azure-SkuNotAvailable "$tmp/arm.log" "$top_srcdir/tests/pool/azure-up.ini" westus2
	post "$aep/emu/capacity?region=eastus&code=ZonalAllocationFailed"
	one "$i" azure-ZonalAllocationFailed "$tmp/arm.log" "$top_srcdir/tests/pool/azure-up.ini" westus2
	post "$aep/emu/capacity?region=eastus"
	post "$gep/emu/capacity?zone=us-central1-a&code=ZONE_RESOURCE_POOL_EXHAUSTED"
	post "$gep/emu/capacity?zone=us-central1-b&code=ZONE_RESOURCE_POOL_EXHAUSTED"
	one "$i" gcp-ZONE_RESOURCE_POOL_EXHAUSTED "$tmp/gce.log" "$top_srcdir/tests/pool/gcp-up.ini" europe-west4
	post "$gep/emu/capacity?zone=us-central1-a"
	post "$gep/emu/capacity?zone=us-central1-b"
	[ -n "$aws" ] || continue
	echo '{"us-east-1": {"when": "now", "code": "InsufficientInstanceCapacity", "type": "g5.xlarge", "zone": "us-east-1a"}}' \
	    > "$tmp/cap.json"
	one "$i" aws-now-InsufficientInstanceCapacity "$tmp/cap.log" "$top_srcdir/tests/pool/aws-failover.ini" us-west-2
	echo '{"us-east-1": {"when": "later", "code": "InsufficientInstanceCapacity", "type": "g5.xlarge", "zone": "us-east-1a"}}' \
	    > "$tmp/cap.json"
	one "$i" aws-later-InsufficientInstanceCapacity "$tmp/cap.log" "$top_srcdir/tests/pool/aws-failover.ini" us-west-2
	echo '{}' > "$tmp/cap.json"
done
echo "case decision_s up_s"
cat "$res"
sort -k1,1 -k2n "$res" | awk -v n="$N" '
	{ d[$1, ++k[$1]] = $2; u[$1, k[$1]] = $3; if (!($1 in seen)) { seen[$1] = 1; order[++m] = $1 } }
	END {
		for (j = 1; j <= m; j++) {
			c = order[j]; mid = int((k[c] + 1) / 2)
			printf "%s: median decision %.3f s (range %.3f-%.3f), up %.2f s, of %d runs\n", c, d[c, mid], d[c, 1], d[c, k[c]], u[c, mid], k[c]
		}
	}'
echo "machine: $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo), $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
