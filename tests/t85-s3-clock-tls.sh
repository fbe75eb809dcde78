#!/bin/sh
# t85-s3-clock-tls.sh: two ways an s3:// store fails before S3 looks at the
# request, each with an error that says what to fix, against Ceph RGW
# (build-aux/test-all starts it with tests/rgw.sh --tls):
#
# 1. Clock skew: `spotrun ls` with the process clock 20 minutes ahead
#    (Debian's faketime, LD_PRELOAD libfaketime) gets RGW's 403
#    RequestTimeTooSkewed: the error says the clock is ~1200 s ahead, that
#    15 min are allowed and how to set the clock; 20 minutes behind says
#    behind; 14 minutes ahead is still accepted.
# 2. TLS: RGW's HTTPS endpoint, its certificate from a private CA. Without
#    the CA, or with another bundle, the error says the certificate is not
#    trusted and to set AWS_CA_BUNDLE; with AWS_CA_BUNDLE=the CA's PEM file
#    a run commits a multipart checkpoint over HTTPS and the next run
#    restores it and ends with the uninterrupted result.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/s3-env.sh"
t_setup

bucket=$(s3_bucket_new) || t_bail "cannot create a bucket on $SPOTRUN_TEST_S3_ENDPOINT"
trap 's3_bucket_rm "$bucket"; t_cleanup' EXIT
export AWS_ACCESS_KEY_ID="$SPOTRUN_TEST_S3_ACCESS_KEY"
export AWS_SECRET_ACCESS_KEY="$SPOTRUN_TEST_S3_SECRET_KEY"
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
export AWS_EC2_METADATA_DISABLED=true
unset AWS_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_CA_BUNDLE 2>/dev/null

# mk_ini FILE NAME STORE COMMAND: a job for the signal provider.
mk_ini() {
	cat > "$1" <<EOF
[job]
name = $2
shell = yes
command = echo \$\$ > $1.pid; exec $4
workdir = $t_tmp
[checkpoint]
store = $3
local_dir = $t_tmp/local-$2
[provider]
name = signal
grace = 20s
EOF
	t_pidfiles="$t_pidfiles $1.pid"
}

# ---- 1. clock skew ----
ini=$t_tmp/clock.ini
mk_ini "$ini" clock "s3://$bucket/jobs?endpoint=$SPOTRUN_TEST_S3_ENDPOINT" "/bin/true"
if ! command -v faketime > /dev/null 2>&1; then
	for i in 1 2 3 4 5 6; do
		t_skip "clock skew: no faketime (build-aux/install-deps installs it)"
	done
elif ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
    timeout 60 faketime -f '+20m' "$SPOTRUN" --version > "$t_tmp/probe.out" 2>&1;
    [ $? = 124 ] && grep -q 'libfaketime: Unexpected recursive calls' "$t_tmp/probe.out"; then
	# clang's AddressSanitizer runtime (linked into the program) calls
	# clock_gettime while it starts, before libfaketime has its own
	# pointers: libfaketime says so and the process deadlocks, whatever
	# spotrun would do. The gcc builds, sanitized or not, run these.
	for i in 1 2 3 4 5 6; do
		t_skip "clock skew: libfaketime deadlocks in this build's sanitizer start (clang ASan: $(head -n 1 "$t_tmp/probe.out"))"
	done
else
	# An ASan build wants its runtime first; libfaketime comes first here.
	# Each run is bounded, so that a deadlock is a failure, not a hang of
	# the suite.
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
	export ASAN_OPTIONS
	ahead=$(faketime -f '+20m' date +%s)
	t_result "$([ $((ahead - $(date +%s))) -ge 1190 ]; echo $?)" \
		"faketime -f '+20m' moves a process's clock 20 minutes ahead"
	timeout 120 faketime -f '+20m' "$SPOTRUN" ls "$ini" > "$t_tmp/ahead.out" 2>&1
	t_is "$?" 74 "spotrun ls 20 minutes ahead fails (74)" || t_show "$t_tmp/ahead.out"
	# The server's time comes from its Date header when the error body has
	# no <ServerTime> (RGW's has none); the second may tick in between.
	t_like "$t_tmp/ahead.out" '^spotrun: list checkpoints of clock: get clock/LATEST: this machine'"'"'s clock is 1(19[89]|20[0-2]) s ahead of the server'"'"'s \(RequestTimeTooSkewed; at most 15 min are allowed\): set the clock right, e\.g\. `timedatectl set-ntp true` or chrony$' \
		"... the error says the clock is ~1200 s ahead, 15 min are allowed, and how to set it"
	timeout 120 faketime -f '-20m' "$SPOTRUN" ls "$ini" > "$t_tmp/behind.out" 2>&1
	t_is "$?" 74 "spotrun ls 20 minutes behind fails (74)" || t_show "$t_tmp/behind.out"
	t_like "$t_tmp/behind.out" '^spotrun: list checkpoints of clock: get clock/LATEST: this machine'"'"'s clock is 1(19[89]|20[0-2]) s behind the server'"'"'s \(RequestTimeTooSkewed; at most 15 min are allowed\): set the clock right, e\.g\. `timedatectl set-ntp true` or chrony$' \
		"... the error says ~1200 s behind"
	timeout 120 faketime -f '+14m' "$SPOTRUN" ls "$ini" > "$t_tmp/near.out" 2>&1
	t_is "$?" 0 "14 minutes ahead is within S3's 15 minutes: spotrun ls works" || t_show "$t_tmp/near.out"
fi

# ---- 2. TLS ----
if [ -z "${SPOTRUN_TEST_S3_TLS_ENDPOINT:-}" ] || [ ! -f "${SPOTRUN_TEST_S3_CA:-}" ]; then
	if [ "${SPOTRUN_TEST_REQUIRE_S3:-}" = 1 ]; then
		t_result 1 "TLS: no SPOTRUN_TEST_S3_TLS_ENDPOINT or SPOTRUN_TEST_S3_CA, and SPOTRUN_TEST_REQUIRE_S3=1 (build-aux/test-all starts RGW with tests/rgw.sh --tls)"
	else
		t_skip "TLS: no HTTPS endpoint (start RGW with tests/rgw.sh start DIR --tls)"
	fi
	t_done
fi
train="$PY $JOBS/chainjob.py --steps 200"
$train --sleep 0 > "$t_tmp/plain.out" 2>&1
want=$(result_of "$t_tmp/plain.out")
ini=$t_tmp/tls.ini
mk_ini "$ini" tls "s3://$bucket/jobs?endpoint=$SPOTRUN_TEST_S3_TLS_ENDPOINT&part_size=5MiB" \
	"$train --sleep 0.02 --size 7340032 --stay"
untrusted="the server's TLS certificate is not trusted: SSL certificate problem: unable to get local issuer certificate (for a private CA set AWS_CA_BUNDLE to its PEM file)"
"$SPOTRUN" ls "$ini" > "$t_tmp/tls-no-ca.out" 2>&1
t_is "$?" 74 "TLS: spotrun ls without the CA fails (74)"
t_is "$(cat "$t_tmp/tls-no-ca.out")" "spotrun: list checkpoints of tls: get tls/LATEST: $untrusted" \
	"TLS: the error says the certificate is not trusted and to set AWS_CA_BUNDLE"
AWS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt "$SPOTRUN" ls "$ini" > "$t_tmp/tls-other.out" 2>&1
t_is "$?:$(cat "$t_tmp/tls-other.out")" "74:spotrun: list checkpoints of tls: get tls/LATEST: $untrusted" \
	"TLS: AWS_CA_BUNDLE with the public CAs only: the same error"
"$SPOTRUN" run "$ini" > "$t_tmp/tls-run0.out" 2> "$t_tmp/tls-run0.err"
rc=$?
t_result "$([ "$rc" -ne 0 ] && [ "$rc" -ne 75 ]; echo $?)" "TLS: spotrun run without the CA fails ($rc)" ||
	t_show "$t_tmp/tls-run0.err"
t_has "$t_tmp/tls-run0.err" "$untrusted" "TLS: ... with the same advice"
t_unlike "$t_tmp/tls-run0.out" '^starting fresh' "TLS: ... before it starts the job (no checkpoint could be kept)"

export AWS_CA_BUNDLE="$SPOTRUN_TEST_S3_CA"
"$SPOTRUN" ls "$ini" > "$t_tmp/tls-ls.out" 2>&1
t_is "$?:$(cat "$t_tmp/tls-ls.out")" \
	"0:no checkpoints of job tls in s3://$bucket/jobs?endpoint=$SPOTRUN_TEST_S3_TLS_ENDPOINT&part_size=5MiB" \
	"TLS: with AWS_CA_BUNDLE=the CA, spotrun ls works"
t_bg tls-1 "$SPOTRUN" run "$ini"
pid=$t_last
wait_for "$t_tmp/tls-1.out" '^starting fresh' 60 "$pid" || t_diag "TLS: the job did not start"
kill -TERM "$pid"
t_wait "$pid"
t_is "$t_rc" 75 "TLS: a 7 MiB checkpoint (2 parts) committed over HTTPS, exit 75" || t_show "$t_tmp/tls-1.err"
a=$(sed -nE 's/^checkpoint at step ([0-9]+)$/\1/p' "$t_tmp/tls-1.out" | tail -n 1)
t_like "$t_tmp/tls-1.err" "^[0-9:]+  ckpt     [0-9]+ step ${a:-X}: .* committed" "TLS: ... checkpoint at step $a"
ini_set "$ini" job command "echo \$\$ > $ini.pid; exec $train --sleep 0"
"$SPOTRUN" run "$ini" > "$t_tmp/tls-2.out" 2> "$t_tmp/tls-2.err"
t_is "$?" 0 "TLS: the next run exits 0" || t_show "$t_tmp/tls-2.err"
t_has "$t_tmp/tls-2.out" "resumed from step $a (attempt " "TLS: it restored the checkpoint over HTTPS, data ok"
t_is "$(result_of "$t_tmp/tls-2.out")" "$want" "TLS: and ends with the uninterrupted result"
t_done
