#!/bin/sh
# t83-s3-faults.sh: checkpoints to s3:// under network and server faults,
# with tests/faultproxy between spotrun and a Ceph RGW of this test's own
# (tests/rgw.sh in its temp dir: the test kills and stops that gateway,
# which would break the other S3 tests that share build-aux/test-all's).
# The job (tests/jobs/chainjob.py) checkpoints 12 or 60 MiB of
# incompressible state, so every save is a multipart upload in 5 MiB parts;
# its `result:` line is the same as an uninterrupted run's only when every
# resume got the state of the checkpoint it names.
#
# (a)-(d) One `spotrun run` with periodic checkpoints; as each next save is
#    requested (the job takes 0.5 s to answer) the proxy faults its
#    connections: resets after 1 MB, 60 s stalls (stall_timeout=2 must drop
#    them after ~2 s), bursts of 503 SlowDown, 500s, drops after the request
#    headers, and replies lost after the server acted. Each save retries and
#    commits, nothing is reported as an error, the run goes on; every
#    committed manifest references only packs that exist whole; the next
#    run restores the newest checkpoint and ends with the uninterrupted
#    result.
# (e) The gateway killed and restarted in the middle of the multipart
#    upload of a 60 MiB checkpoint (the proxy slows the upload to ~8 s so
#    the kill lands mid-way): the upload retries and commits, or fails
#    cleanly with the previous checkpoint newest; the next run restores the
#    newest and ends with the uninterrupted result.
# (f) Failures that outlast the retries (attempts=3), each within 15 s:
#    f1, every upload reset (small requests pass): the save fails with an
#    error naming the part, the cause and the store, the previous checkpoint
#    stays newest, the upload was aborted (list-multipart-uploads lacks it),
#    the run goes on and commits once uploads pass. f3, the gateway gone in
#    the middle of an upload: the same, but the abort could not reach the
#    server either, so a leftover upload is reported, not asserted. f2, the
#    gateway gone between saves (no proxy): "Couldn't connect to server",
#    the previous checkpoint stays, the run goes on once it is back.
#    (spotrun is held with SIGSTOP while the store is checked, so that no
#    newer checkpoint lands meanwhile.)
# (g) A bit of each part inverted on the way: refused by the server (its
#    check of the signed SHA-256, or of Content-MD5), sent again, restored
#    byte-exact; with checksum=none the damage lands and the restore's
#    XXH3-128 finds it.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/s3-env.sh"
. "$top_srcdir/tests/jobs/faults.sh"
t_setup
: "${top_builddir:=$(dirname "$SPOTRUN")}"

rgw=$t_tmp/rgw
px=
t83_cleanup() {
	[ -n "$px" ] && kill "$px" 2>/dev/null
	"$top_srcdir/tests/rgw.sh" stop "$rgw" >/dev/null 2>&1
	t_cleanup
}
trap t83_cleanup EXIT
"$top_srcdir/tests/rgw.sh" start "$rgw" > "$t_tmp/rgw-start.out" 2>&1 ||
	s3_unavailable "tests/rgw.sh could not start a gateway of this test's own: $(tail -n 1 "$t_tmp/rgw-start.out")"
. "$rgw/env"
export AWS_ACCESS_KEY_ID="$SPOTRUN_TEST_S3_ACCESS_KEY"
export AWS_SECRET_ACCESS_KEY="$SPOTRUN_TEST_S3_SECRET_KEY"
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
export AWS_EC2_METADATA_DISABLED=true
unset AWS_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_CA_BUNDLE 2>/dev/null
bucket=$(s3_bucket_new) || t_bail "cannot create a bucket on $SPOTRUN_TEST_S3_ENDPOINT"

"$top_builddir/tests/faultproxy" -p "$t_tmp/px.port" -t "${SPOTRUN_TEST_S3_ENDPOINT#http://}" \
	-c "$t_tmp/control" -l "$t_tmp/proxy.log" &
px=$!
wait_for "$t_tmp/px.port" '^[0-9]+$' 5 "$px" || t_bail "tests/faultproxy did not start (make first?)"
pep=http://127.0.0.1:$(cat "$t_tmp/px.port")

COMMIT='^[0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed'
ERROR='^[0-9:]+  error    '
REQUEST='^[0-9:]+  request  periodic checkpoint'

# next_save FILE PID: wait until spotrun has asked for the checkpoint after
# the last one it committed or failed. The job takes 0.5 s to answer
# (--delay), so a fault armed now meets that save's upload.
next_save() {
	_done=$(grep -cE "$COMMIT|$ERROR" "$1")
	wait_count "$1" "$REQUEST" $((_done + 1)) 30 "$2"
}

# step_before_error FILE N: the step of the last checkpoint committed
# before the Nth error.
step_before_error() {
	awk -v n="$2" -v err="$ERROR" -v ok="$COMMIT" '
	$0 ~ ok { s = $0; sub(/^[0-9:]+  ckpt     [0-9]+ step /, "", s); sub(/:.*/, "", s); last = s }
	$0 ~ err && ++e == n { print last; exit }' "$1"
}

# mk_ini FILE NAME ENDPOINT COMMAND URL-OPTIONS [KEY=VALUE in [checkpoint]...]
mk_ini() {
	_f=$1 _n=$2 _ep=$3 _c=$4 _o=$5
	shift 5
	t_pidjob "$_f" "$_n" "s3://$bucket/jobs?endpoint=$_ep&part_size=5MiB&concurrency=4&stall_timeout=2$_o" \
	    "$_c" signal 40s "$@"
}

# latest JOB.ini: the step of the checkpoint `spotrun ls` calls latest.
latest() {
	timeout 60 "$SPOTRUN" ls "$1" 2>&1 | sed -nE 's/^[0-9]+ +([0-9]+) .* latest$/\1/p'
}

# listed JOB.ini: how many checkpoints `spotrun ls` lists.
listed() {
	timeout 60 "$SPOTRUN" ls "$1" 2>&1 | grep -cE '^[0-9]+ +[0-9]+ '
}

# complete JOB: "N M": N committed manifests of JOB (seq <= LATEST), M chunk
# references among them to a pack that is missing or too short.
complete() {
	_d=$t_tmp/complete-$1
	rm -rf "$_d"
	mkdir -p "$_d"
	s3_aws s3 sync --no-progress "s3://$bucket/jobs/$1/manifests" "$_d/m" > /dev/null 2>&1
	s3_aws s3 cp --no-progress "s3://$bucket/jobs/$1/LATEST" "$_d/LATEST" > /dev/null 2>&1
	s3_aws s3api list-objects-v2 --bucket "$bucket" --prefix "jobs/$1/packs/" \
		--query 'Contents[].[Key,Size]' --output text > "$_d/packs" 2>/dev/null
	$PY - "$_d" <<'EOF'
import json, os, sys
d = sys.argv[1]
latest = int(open(d + "/LATEST").read().split()[0])	# "SEQ EPOCH": fenced runs
size = {}
for line in open(d + "/packs"):
    key, _, n = line.rstrip("\n").rpartition("\t")
    if key:
        size[key] = int(n)
committed = bad = 0
for name in sorted(os.listdir(d + "/m")):
    if not name.endswith(".json") or int(name.split(".")[0]) > latest:
        continue	# a commit record (SEQ.commit), or not committed
    committed += 1
    for e in json.load(open(d + "/m/" + name))["entries"]:
        for c in e.get("chunks", []):
            if size.get("jobs/" + c["pack"], -1) < c["offset"] + c["clen"]:
                bad += 1
print(committed, bad)
EOF
}

uploads() {
	s3_aws s3api list-multipart-uploads --bucket "$bucket" \
		--query 'length(Uploads || `[]`)' --output text 2>/dev/null
}

job="$PY $JOBS/chainjob.py --steps 1000"
$job --sleep 0 > "$t_tmp/plain.out" 2>&1
want=$(result_of "$t_tmp/plain.out")
[ -n "$want" ] || t_bail "chainjob.py printed no result: $(tail -n 3 "$t_tmp/plain.out")"

# ---- (a)-(d): faults during the saves of one run ----
# attempts=16: a part may meet all 6 slowdowns, and on a loaded machine
# (load 20-36 on 2 CPUs) stall_timeout=2 may also drop slow but sound
# transfers, each a try (the likely cause of the one failure seen with 8:
# a part's last try a 500, after retries)
ini=$t_tmp/a.ini
mk_ini "$ini" faults "$pep" "$job --sleep 0.05 --delay 0.5 --size 12582912 --stay" "&attempts=16" \
	interval=1s keep=100
t_bg a-1 "$SPOTRUN" run "$ini"
pid=$t_last
wait_count "$t_tmp/a-1.err" "$COMMIT" 1 30 "$pid" || t_diag "no first checkpoint"
# Each fault: FAULT, the log line each faulted connection leaves, how many.
# The next save's parts are the next new connections: its 3 parts (5, 5
# and 2 MiB) and their retries; the other requests mostly go on a
# kept-alive one, but on a loaded machine one of them may open a new
# connection and meet the fault: any request of the job's counts.
for spec in \
	"reset after=1000000 count=3|reset after 1000000 bytes from the client\$|3" \
	"stall seconds=60 then=close count=2|stall 60.0 s begins\$|2" \
	"slowdown count=6|slowdown: 503 SlowDown to [A-Z]+ /$bucket/jobs/faults/|6" \
	"internal count=3|internal: 500 InternalError to [A-Z]+ /$bucket/jobs/faults/|3" \
	"drop count=3|drop after the request headers of [A-Z]+ /$bucket/jobs/faults/|3" \
	"lose count=3|lose: forwarded [0-9]+ bytes of [A-Z]+ /$bucket/jobs/faults/.*, reset before the reply\$|3"
do
	f=${spec%%|*}
	rest=${spec#*|}
	line=${rest%|*}
	k=${rest##*|}
	name=${f%% *}
	next_save "$t_tmp/a-1.err" "$pid" || t_diag "$name: no request for the next save"
	n=$(grep -cE "$COMMIT" "$t_tmp/a-1.err")
	before=$(plog ": $line")
	mark=$(wc -l < "$t_tmp/proxy.log")
	stalled=$(plog ': stalled request: PUT ')
	fault "$f"
	wait_count "$t_tmp/a-1.err" "$COMMIT" $((n + 1)) 30 "$pid"
	t_result $? "$name: the save after \"$f\" commits" || t_show "$t_tmp/a-1.err" 5
	if [ "$name" = stall ]; then
		# stall_timeout=2 drops a connection that moved no byte for
		# 2 s: the save commits while the proxy still holds both
		# stalled parts (it closes them 60 s on), and not before 2 s.
		# Events and a lower bound: a loaded machine passes too.
		t_is "$(plog ': stall 60.0 s, then close$')" 0 \
			"stall: the client dropped the stalled parts, the server did not close them" ||
			t_show "$t_tmp/proxy.log" 12
		# The save timed is the one whose parts were stalled (the
		# proxy names the request it holds): on a loaded machine the
		# fault may be armed after that save's parts had connected,
		# and the stalls then meet the save after it.
		wait_plog ': stalled request: PUT ' $((stalled + 1)) 10
		seq=$(tail -n +"$((mark + 1))" "$t_tmp/proxy.log" |
			sed -nE 's|.*: stalled request: PUT /[^ ]*/packs/0*([0-9]+)-[0-9a-f]+\.tar\?partNumber=.*|\1|p' |
			head -n 1)
		wait_count "$t_tmp/a-1.err" "^[0-9:]+  ckpt     ${seq:-X} step [0-9]+: .* committed" 1 30 "$pid"
		took=$(grep -E "^[0-9:]+  ckpt     ${seq:-X} step [0-9]+: .* committed" "$t_tmp/a-1.err" |
			tail -n 1 | sed -nE 's/.* committed in ([0-9.]+)(ms|s).*/\1 \2/p' |
			awk '{ print $2 == "ms" ? $1 / 1000 : $1 }')
		t_result "$(awk -v d="${took:-0}" 'BEGIN { exit !(d >= 2) }'; echo $?)" \
			"stall: the save that met the stalls (checkpoint ${seq:-?}) waited out stall_timeout=2 s: it took ${took:-?} s (>= 2)" ||
			{ tail -n +"$((mark + 1))" "$t_tmp/proxy.log" | grep 'stall' > "$t_tmp/stalls"
			  t_show "$t_tmp/stalls" 8; t_show "$t_tmp/a-1.err" 8; }
	fi
	wait_plog ": $line" $((before + k)) 10
	t_is "$(($(plog ": $line") - before))" "$k" "$name: the proxy faulted $k connections of that save" ||
		{ tail -n +"$((mark + 1))" "$t_tmp/proxy.log" > "$t_tmp/proxy.since"; t_show "$t_tmp/proxy.since" 60; }
done
fault pass
t_unlike "$t_tmp/a-1.err" '^[0-9:]+  (error|warning) ' "no save failed or warned: every fault was retried" ||
	{ grep -v ': pass: ' "$t_tmp/proxy.log" > "$t_tmp/proxy.faults"; t_show "$t_tmp/proxy.faults" 80; }
kill -TERM "$pid"
wait_max "$pid" 60
t_is "$t_rc" 75 "SIGTERM: the notice checkpoint commits, exit 75" || t_show "$t_tmp/a-1.err"
a=$(sed -nE 's/^checkpoint at step ([0-9]+)$/\1/p' "$t_tmp/a-1.out" | tail -n 1)
t_is "$(latest "$ini")" "$a" "the notice checkpoint (step $a) is the latest"
n=$(grep -cE "$COMMIT" "$t_tmp/a-1.err")
t_is "$(listed "$ini")" "$n" "spotrun ls lists the $n checkpoints committed (keep = 100)"
t_is "$(complete faults)" "$n 0" "all $n committed manifests reference only packs that exist whole"
t_is "$(uploads)" 0 "no multipart upload left behind"
ini_set "$ini" job command "echo \$\$ > $ini.pid; exec $job --sleep 0"
timeout 120 "$SPOTRUN" run "$ini" > "$t_tmp/a-2.out" 2> "$t_tmp/a-2.err"
t_is "$?" 0 "the next run exits 0" || t_show "$t_tmp/a-2.err"
t_has "$t_tmp/a-2.out" "resumed from step $a (attempt " "... it resumed from the newest checkpoint (step $a), data ok"
t_is "$(result_of "$t_tmp/a-2.out")" "$want" "... and ends with the uninterrupted result"

# ---- (e): the gateway killed and restarted in mid-upload ----
ini=$t_tmp/e.ini
mk_ini "$ini" big "$pep" "$job --sleep 0.05 --delay 0.5 --size 62914560 --stay" "&attempts=8" interval=0
t_bg e-1 "$SPOTRUN" run "$ini"
pid=$t_last
wait_for "$t_tmp/e-1.out" '^starting fresh' 20 "$pid" || t_diag "e: the job did not start"
kill -TERM "$pid"
wait_max "$pid" 60
t_is "$t_rc" 75 "e: checkpoint A of 60 MiB on SIGTERM, exit 75" || t_show "$t_tmp/e-1.err"
a=$(sed -nE 's/^checkpoint at step ([0-9]+)$/\1/p' "$t_tmp/e-1.out" | tail -n 1)
t_bg e-2 "$SPOTRUN" run "$ini"
pid=$t_last
wait_for "$t_tmp/e-2.out" "^resumed from step $a " 60 "$pid" || t_diag "e: run 2 did not resume"
# 4 parts at a time at 2 MiB/s each: 60 MiB take ~8 s; the kill comes ~2 s in.
mark=$(wc -l < "$t_tmp/proxy.log")
fault "slow rate=2097152 count=all"
kill -TERM "$pid"
wait_for "$t_tmp/e-2.out" '^checkpoint at step ' 20 "$pid" || t_diag "e: the job wrote no checkpoint B"
b=$(sed -nE 's/^checkpoint at step ([0-9]+)$/\1/p' "$t_tmp/e-2.out" | tail -n 1)
sleep 2
"$top_srcdir/tests/rgw.sh" restart-gateway "$rgw" > "$t_tmp/restart.out" 2>&1 ||
	t_diag "restart-gateway: $(cat "$t_tmp/restart.out")"
fault pass
wait_max "$pid" 60
t_is "$t_rc" 75 "e: run 2 exits 75 after its notice checkpoint" || t_show "$t_tmp/e-2.err"
# Bytes the client sent through the proxy since: the 60 MiB pack once,
# plus what the kill cut off and was sent again.
sent=$(tail -n +"$((mark + 1))" "$t_tmp/proxy.log" | awk '/: (slow [0-9]+ B\/s: )?pass: / {
	for (i = 2; i < NF; i++) if ($(i + 1) == "bytes" && $(i + 2) == "in,") s += $i }
	END { printf "%d", s / 1048576 }')
t_result "$([ "$sent" -ge 62 ]; echo $?)" "e: the kill cut parts in flight: $sent MiB sent for a 60 MiB pack" ||
	t_show "$t_tmp/proxy.log" 30
if grep -qE "^[0-9:]+  ckpt     [0-9]+ step $b: .* committed" "$t_tmp/e-2.err"; then
	t_result 0 "e: the upload retried and checkpoint B (step $b) committed"
	t_is "$(latest "$ini")" "$b" "e: B is the latest"
	t_is "$(uploads)" 0 "e: no multipart upload left behind"
	newest=$b
else
	t_like "$t_tmp/e-2.err" '^[0-9:]+  error    notice checkpoint failed: .*; the previous checkpoint stays the newest$' \
		"e: checkpoint B failed cleanly"
	t_is "$(latest "$ini")" "$a" "e: A (step $a) stays the latest"
	t_diag "e: multipart uploads left: $(uploads) (the abort may have met the gateway down)"
	newest=$a
fi
t_is "$(complete big | cut -d' ' -f2)" 0 "e: the committed manifests reference only whole packs"
ini_set "$ini" job command "echo \$\$ > $ini.pid; exec $job --sleep 0 --size 62914560"
timeout 120 "$SPOTRUN" run "$ini" > "$t_tmp/e-3.out" 2> "$t_tmp/e-3.err"
t_is "$?" 0 "e: the next run exits 0" || t_show "$t_tmp/e-3.err"
t_has "$t_tmp/e-3.out" "resumed from step $newest (attempt " "e: it resumed from the newest (step $newest), data ok"
t_is "$(result_of "$t_tmp/e-3.out")" "$want" "e: and ends with the uninterrupted result"

# ---- (f): failures longer than the retries (attempts=3) ----
# failed_upload FILE N: the pack key whose upload the Nth error names.
failed_upload() {
	grep -E "$ERROR" "$1" | sed -n "$2p" |
		sed -nE 's/.*upload ([^ :]+\/packs\/[0-9]+-[0-9a-f]+\.tar).*/\1/p'
}

# has_upload KEY: whether the bucket holds a multipart upload of jobs/KEY.
has_upload() {
	s3_aws s3api list-multipart-uploads --bucket "$bucket" --query 'Uploads[].Key' \
		--output text 2>/dev/null | tr '\t' '\n' | grep -qxF "jobs/$1"
}

# f1 and f3 in one run through the proxy.
ini=$t_tmp/f.ini
mk_ini "$ini" down "$pep" "$job --sleep 0.05 --delay 0.5 --size 12582912" "&attempts=3" interval=1s
t_bg f "$SPOTRUN" run "$ini"
pid=$t_last
wait_count "$t_tmp/f.err" "$COMMIT" 1 30 "$pid" || t_diag "f1: no first checkpoint"

# f1: every upload of more than 1 MB reset, on every connection: the parts
# fail after 3 tries; the abort, a small request, reaches the server.
next_save "$t_tmp/f.err" "$pid" || t_diag "f1: no request for the next save"
fault "reset after=1000000 count=all"
wait_count "$t_tmp/f.err" "$ERROR" 1 15 "$pid"
t_result $? "f1: uploads reset past 3 tries: the save fails within 15 s" || t_show "$t_tmp/f.err" 5
# Hold spotrun still (SIGSTOP) while the store is checked, so that no
# newer checkpoint lands meanwhile.
kill -STOP "$pid"
fault pass
t_diag "f1: $(grep -E "$ERROR" "$t_tmp/f.err" | sed -n 1p)"
t_is "$(grep -E "$ERROR" "$t_tmp/f.err" | sed -n 1p | grep -cE "${ERROR}periodic checkpoint failed: .*upload [^ ]+/packs/.*: part [0-9]+: .*Connection reset by peer.*; the previous checkpoint stays the newest\$")" 1 \
	"f1: the error names the part and the reset, and says the previous checkpoint stays"
t_is "$(grep -E "$ERROR" "$t_tmp/f.err" | sed -n 1p | grep -c "s3://$bucket")" 1 \
	"f1: the error names the store (s3://$bucket)"
a=$(step_before_error "$t_tmp/f.err" 1)
t_is "$(latest "$ini")" "$a" "f1: the previous checkpoint (step $a) is still the latest"
key=$(failed_upload "$t_tmp/f.err" 1)
t_result "$([ -n "$key" ] && ! has_upload "$key"; echo $?)" \
	"f1: spotrun aborted the failed upload (${key:-no key in the error}): list-multipart-uploads has none"
kill -CONT "$pid"
wait_count "$t_tmp/f.err" "$COMMIT" "$(($(grep -cE "$COMMIT" "$t_tmp/f.err") + 1))" 30 "$pid"
t_result $? "f1: the run goes on and commits once uploads pass again"

# f3: the gateway dies in the middle of an upload and stays down past the
# retries: the abort cannot reach it either.
next_save "$t_tmp/f.err" "$pid" || t_diag "f3: no request for the next save"
# 4 parts at 1 MiB/s each: the 12 MiB take ~5 s; the gateway goes ~2 s in.
fault "slow rate=1048576 count=all"
sleep 2
"$top_srcdir/tests/rgw.sh" stop-gateway "$rgw"
wait_count "$t_tmp/f.err" "$ERROR" 2 15 "$pid"
t_result $? "f3: the gateway gone in mid-upload: the save fails within 15 s" || t_show "$t_tmp/f.err" 5
kill -STOP "$pid"
fault pass
t_diag "f3: $(grep -E "$ERROR" "$t_tmp/f.err" | sed -n 2p)"
t_is "$(grep -E "$ERROR" "$t_tmp/f.err" | sed -n 2p | grep -cE "${ERROR}periodic checkpoint failed: .*; the previous checkpoint stays the newest\$")" 1 \
	"f3: the error says the previous checkpoint stays"
t_is "$(grep -E "$ERROR" "$t_tmp/f.err" | sed -n 2p | grep -c "s3://$bucket")" 1 \
	"f3: the error names the store (s3://$bucket)"
"$top_srcdir/tests/rgw.sh" restart-gateway "$rgw" > "$t_tmp/restart.out" 2>&1 ||
	t_diag "restart-gateway: $(cat "$t_tmp/restart.out")"
a=$(step_before_error "$t_tmp/f.err" 2)
t_is "$(latest "$ini")" "$a" "f3: the previous checkpoint (step $a) is still the latest"
kill -CONT "$pid"
kill -TERM "$pid"
wait_max "$pid" 60
key=$(failed_upload "$t_tmp/f.err" 2)
if [ "$(grep -cE "$ERROR" "$t_tmp/f.err")" -lt 2 ]; then
	t_diag "f3: no save failed, so no upload to abort"
elif [ -z "$key" ]; then
	t_diag "f3: the error names no upload (the save failed before its upload began)"
elif has_upload "$key"; then
	t_diag "f3: the failed upload of $key is still on the server: the gateway was down" \
		"during the abort, so spotrun could not abort it (a lifecycle rule reaps it)"
else
	t_diag "f3: the failed upload of $key was aborted"
fi
t_is "$(complete down | cut -d' ' -f2)" 0 "f: the committed manifests reference only whole packs"

# f2: the gateway down between saves, longer than the retries; straight to
# the gateway, as a client meets a server that is gone.
ini=$t_tmp/f2.ini
mk_ini "$ini" down2 "$SPOTRUN_TEST_S3_ENDPOINT" "$job --sleep 0.05 --delay 0.5 --size 12582912" "&attempts=3" interval=1s
t_bg f2 "$SPOTRUN" run "$ini"
pid=$t_last
wait_count "$t_tmp/f2.err" "$COMMIT" 1 30 "$pid" || t_diag "f2: no first checkpoint"
next_save "$t_tmp/f2.err" "$pid" || t_diag "f2: no request for the next save"
"$top_srcdir/tests/rgw.sh" stop-gateway "$rgw"
wait_count "$t_tmp/f2.err" "$ERROR" 1 15 "$pid"
t_result $? "f2: the gateway down past 3 tries: the save fails within 15 s" || t_show "$t_tmp/f2.err" 5
kill -STOP "$pid"
t_diag "f2: $(grep -E "$ERROR" "$t_tmp/f2.err" | head -n 1)"
t_like "$t_tmp/f2.err" "${ERROR}periodic checkpoint failed: .*Couldn't connect to server.*; the previous checkpoint stays the newest\$" \
	"f2: the error says the server cannot be reached and the previous checkpoint stays"
t_like "$t_tmp/f2.err" "$ERROR.*s3://$bucket" "f2: the error names the store (s3://$bucket)"
"$top_srcdir/tests/rgw.sh" restart-gateway "$rgw" > "$t_tmp/restart.out" 2>&1 ||
	t_diag "restart-gateway: $(cat "$t_tmp/restart.out")"
a=$(step_before_error "$t_tmp/f2.err" 1)
t_is "$(latest "$ini")" "$a" "f2: the previous checkpoint (step $a) is still the latest"
kill -CONT "$pid"
wait_count "$t_tmp/f2.err" "$COMMIT" "$(($(grep -cE "$COMMIT" "$t_tmp/f2.err") + 1))" 30 "$pid"
t_result $? "f2: the run goes on and commits once the gateway is back"
kill -TERM "$pid"
wait_max "$pid" 60

# ---- (g): a part's bytes damaged on the way ----
# The proxy inverts one bit of each part's body (byte 2000000 of its
# connection, inside the first part sent on it). The server checks every
# part, by its signed SHA-256 (checksum=sha256, the default: 400
# XAmzContentSHA256Mismatch) or its Content-MD5 (checksum=md5: 400
# BadDigest), and refuses it; the part is sent again and the checkpoint
# restores byte-exact. With checksum=none nothing checks the parts on the
# way: the damage lands, and the restore's XXH3-128 finds it (the fault is
# real). 12 MiB in 5 MiB parts: 3 parts, each the first on its connection
# when the three go out at once; on a loaded machine a part can be ready
# only after an earlier one's connection is free again, and goes out on it
# past the flipped byte: 1 to 3 parts are damaged then, each refused.
bck=$top_builddir/tests/bench-ckpt
mkdir -p "$t_tmp/g-src"
head -c 12582912 /dev/urandom > "$t_tmp/g-src/state.bin"
FLIPPED=': flip byte 2000000: pass: '
g_uploads=$(uploads)	# f3's may be left
for sum in sha256 md5 none; do
	before=$(plog "$FLIPPED")
	fault "flip after=2000000 count=4"
	"$bck" save "s3://$bucket/g-$sum?endpoint=$pep&part_size=5MiB&concurrency=4&checksum=$sum" \
		"$t_tmp/g-src" > "$t_tmp/g-$sum.out" 2>&1
	t_is "$?" 0 "g: checksum=$sum: the save with damaged parts ends with 0" ||
		t_show "$t_tmp/g-$sum.out"
	wait_plog "$FLIPPED" $((before + 1)) 10
	flips=$(($(plog "$FLIPPED") - before))
	[ "$flips" -ge 1 ] && [ "$flips" -le 3 ]
	t_result $? "g: checksum=$sum: the proxy damaged 1 to 3 of the 3 parts ($flips)" ||
		t_show "$t_tmp/proxy.log" 8
	fault pass
	"$bck" restore "s3://$bucket/g-$sum?endpoint=$SPOTRUN_TEST_S3_ENDPOINT" "$t_tmp/g-$sum-back" \
		> "$t_tmp/g-$sum-back.out" 2>&1
	rc=$?
	if [ "$sum" = none ]; then
		t_is "$rc" 1 "g: checksum=none: the damage reached the server, the restore refuses it"
		t_has "$t_tmp/g-$sum-back.out" ': checksum mismatch (XXH3-128 ' \
			"g: checksum=none: ... by the chunk's XXH3-128"
	else
		t_is "$rc" 0 "g: checksum=$sum: the server refused each damaged part, the save sent it again" ||
			t_show "$t_tmp/g-$sum-back.out"
		cmp -s "$t_tmp/g-src/state.bin" "$t_tmp/g-$sum-back/state.bin"
		t_result $? "g: checksum=$sum: the checkpoint restores byte-exact"
	fi
done
t_is "$(uploads)" "$g_uploads" "g: no multipart upload left behind"

# No s3_bucket_rm: the gateway of this test, and its data, go with it.
t_done
