#!/bin/sh
# t84-gcs-run.sh: `spotrun run` on a gs:// store, against tests/gcsemu.py
# (our emulator of GCS's XML API: SigV4 with HMAC keys, generations,
# x-goog-if-generation-match), with the keys in GS_ACCESS_KEY_ID /
# GS_SECRET_ACCESS_KEY as gsutil reads them and nothing of AWS's set:
#
# 1. `spotrun check` takes the gs:// store; a job preempted (signal
#    provider, SIGTERM, exit 75) commits its checkpoint to GCS and resumes
#    from it in a second run (the next VM), with the result of an
#    uninterrupted run; `spotrun ls` lists the checkpoint. Periodic
#    checkpoints before the notice move LATEST by compare-and-swap.
# 2. What went over the wire is what GCS takes: conditional writes as
#    x-goog-if-generation-match (0, then generations the emulator gave),
#    none refused; no request the emulator had to refuse (no POST ?delete,
#    no S3-style If-None-Match/If-Match); every request with User-Agent:
#    spotrun/VERSION; no secret in any output.
# 3. The emulator itself refuses what GCS refuses, as seen by an
#    independent client (the aws CLI, when installed): S3's multi-object
#    delete, a part under 5 MiB, a wrong Content-MD5; and it takes the
#    CLI's own SigV4 signature (region auto).
. "$top_srcdir/tests/jobs/lib.sh"
t_setup

access=GOOG1EQX7TESTSPOTRUNEMULATORACCESSIDFORGCSHMACKEYS0123456789AB
secret='t84+Secret/For/The/GCS/Emulator/0123456'
printf '%s %s\n' "$access" "$secret" > "$t_tmp/keys"
t_bg gcsemu "$PY" "$top_srcdir/tests/gcsemu.py" --port-file "$t_tmp/port" \
    --keys "$t_tmp/keys" --bucket spotrun-e2e --log "$t_tmp/requests.log" --ua-log "$t_tmp/ua.log"
emu=$t_last
wait_for "$t_tmp/port" '^[0-9]+$' 10 "$emu" || { t_show "$t_tmp/gcsemu.err"; t_bail "gcsemu.py did not start"; }
port=$(cat "$t_tmp/port")

export GS_ACCESS_KEY_ID="$access" GS_SECRET_ACCESS_KEY="$secret" BOTO_CONFIG=/dev/null
unset GS_ENDPOINT_URL AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE \
    AWS_REGION AWS_DEFAULT_REGION AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 AWS_CA_BUNDLE 2>/dev/null
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_EC2_METADATA_DISABLED=true
store="gs://spotrun-e2e/jobs?endpoint=http://127.0.0.1:$port&part_size=5MiB"

train="$PY $top_srcdir/examples/quickstart/train.py"
$train --steps 80 --every 10 --sleep 0 > "$t_tmp/plain80.out" 2>&1
want80=$(result_of "$t_tmp/plain80.out")
[ -n "$want80" ] || t_bail "the quickstart job printed no result"

# 1. preempted on one VM, resumed on the next, through GCS
ini=$t_tmp/sig.ini
cat > "$ini" <<EOF
[job]
name = sig
shell = yes
command = echo \$\$ > $ini.pid; exec $train --steps 80 --sleep 0.04 --every 10
workdir = $t_tmp
[checkpoint]
store = $store
local_dir = $t_tmp/local-sig
interval = 1s
[provider]
name = signal
grace = 20s
EOF
t_pidfiles="$t_pidfiles $ini.pid"
"$SPOTRUN" check "$ini" > "$t_tmp/check.out" 2>&1
t_is "$?" 0 "spotrun check accepts a gs:// store" || t_show "$t_tmp/check.out"
t_bg sig-1 "$SPOTRUN" run "$ini"
pid=$t_last
# two periodic checkpoints first, so that LATEST moves by compare-and-swap
i=0
while [ "$(cat "$t_tmp/sig-1.err" 2>/dev/null | grep -c ' committed')" -lt 2 ] && [ $i -lt 200 ] &&
    kill -0 "$pid" 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
[ $i -lt 200 ] || t_diag "run 1 did not commit two checkpoints in 20 s"
kill -TERM "$pid"
t_wait "$pid"
t_is "$t_rc" 75 "run 1 preempted by SIGTERM exits 75" || t_show "$t_tmp/sig-1.err"
n=$(grep -cE "^[0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed" "$t_tmp/sig-1.err")
[ "$n" -ge 3 ]
t_result $? "run 1 committed checkpoints to gs:// (two periodic, one at the notice: $n)" ||
    t_show "$t_tmp/sig-1.err"
a=$(sed -nE 's/^checkpoint at step ([0-9]+)$/\1/p' "$t_tmp/sig-1.out" | tail -n 1)
"$SPOTRUN" ls "$ini" > "$t_tmp/ls.out" 2>&1
t_is "$?" 0 "spotrun ls on gs:// exits 0" || t_show "$t_tmp/ls.out"
t_like "$t_tmp/ls.out" "^[0-9]+ +$a .*latest$" "spotrun ls lists step $a as the latest" ||
    t_show "$t_tmp/ls.out"
"$SPOTRUN" run "$ini" > "$t_tmp/sig-2.out" 2> "$t_tmp/sig-2.err"
t_is "$?" 0 "run 2 (the next VM) exits 0" || t_show "$t_tmp/sig-2.err"
t_has "$t_tmp/sig-2.out" "resumed from step $a (attempt 1)" \
    "run 2 resumed from the gs:// checkpoint (step $a)"
t_is "$(result_of "$t_tmp/sig-2.out")" "$want80" "run 2's result equals an uninterrupted run's"

# 2. the requests, as the emulator logged them
log=$t_tmp/requests.log
t_like "$log" '^PUT /spotrun-e2e/jobs/sig/[^ ]* x-goog-if-generation-match=0 200 x-goog-generation=[0-9]+$' \
    "create-only writes went as x-goog-if-generation-match: 0"
t_like "$log" '^PUT /spotrun-e2e/jobs/sig/LATEST x-goog-if-generation-match=[1-9][0-9]* 200 x-goog-generation=[0-9]+$' \
    "LATEST moved by compare-and-swap on its generation"
n=$(grep -cE ' x-goog-if-generation-match=[0-9]+ (412|4[0-9][0-9]) ' "$log")
t_is "$n" 0 "no conditional write was refused (one writer, no lost race)" ||
    grep -E ' x-goog-if-generation-match=' "$log" | sed 's/^/#   /'
# every CAS named a generation the emulator had given before
bad=$(awk '{ for (i = 1; i <= NF; i++) {
		if ($i ~ /^x-goog-generation=/) { sub(/^x-goog-generation=/, "", $i); given[$i] = 1 }
		else if ($i ~ /^x-goog-if-generation-match=[1-9]/) {
			g = $i; sub(/^x-goog-if-generation-match=/, "", g)
			if (!(g in given)) print g
		}
	} }' "$log")
t_is "$bad" "" "every compare-and-swap names a generation the server gave"
t_unlike "$log" '^POST [^ ]*\?delete' "no POST ?delete (GCS has no multi-object delete)"
t_unlike "$log" ' (400|403|501) ' "no request refused as malformed, unsigned or unsupported"
ua="spotrun/$("$SPOTRUN" --version | sed 's/^spotrun //')"
t_is "$(grep -c . "$t_tmp/ua.log" | sed 's/^0$/none/')" "$(grep -c " $ua\$" "$t_tmp/ua.log")" \
    "every request came with User-Agent: $ua ($(grep -c . "$t_tmp/ua.log") requests)" ||
    grep -v " $ua\$" "$t_tmp/ua.log" | head -n 3 | sed 's/^/#   /'
leaks=$(grep -rlF -e "$secret" "$t_tmp" 2>/dev/null | grep -v "^$t_tmp/keys\$" | tr '\n' ' ')
t_is "$leaks" "" "the secret is in no output, log or file spotrun wrote"

# 3. the emulator against an independent client
if command -v aws > /dev/null 2>&1; then
	gaws() {
		AWS_ACCESS_KEY_ID="$access" AWS_SECRET_ACCESS_KEY="$secret" AWS_DEFAULT_REGION=auto \
		    aws --endpoint-url "http://127.0.0.1:$port" "$@"
	}
	head -c 1000 /dev/urandom > "$t_tmp/small.bin"
	gaws s3api put-object --bucket spotrun-e2e --key cli/one --body "$t_tmp/small.bin" \
	    > "$t_tmp/cli-put.out" 2>&1
	t_is "$?" 0 "the aws CLI's SigV4 (region auto) is taken" || t_show "$t_tmp/cli-put.out"
	gaws s3api delete-objects --bucket spotrun-e2e --delete 'Objects=[{Key=cli/one}]' \
	    > "$t_tmp/cli-del.out" 2>&1
	t_has "$t_tmp/cli-del.out" "(NotImplemented)" "POST ?delete: 501 NotImplemented"
	gaws s3api put-object --bucket spotrun-e2e --key cli/md5 --body "$t_tmp/small.bin" \
	    --content-md5 1B2M2Y8AsgTpgAmY7PhCfg== > "$t_tmp/cli-md5.out" 2>&1
	t_has "$t_tmp/cli-md5.out" "(BadDigest)" "a wrong Content-MD5: 400 BadDigest"
	gaws s3api create-multipart-upload --bucket spotrun-e2e --key cli/mp --query UploadId \
	    --output text > "$t_tmp/cli-mpu.out" 2>&1
	id=$(cat "$t_tmp/cli-mpu.out")
	e1=$(gaws s3api upload-part --bucket spotrun-e2e --key cli/mp --upload-id "$id" \
	    --part-number 1 --body "$t_tmp/small.bin" --query ETag --output text 2>&1)
	e2=$(gaws s3api upload-part --bucket spotrun-e2e --key cli/mp --upload-id "$id" \
	    --part-number 2 --body "$t_tmp/small.bin" --query ETag --output text 2>&1)
	gaws s3api complete-multipart-upload --bucket spotrun-e2e --key cli/mp --upload-id "$id" \
	    --multipart-upload "Parts=[{PartNumber=1,ETag=$e1},{PartNumber=2,ETag=$e2}]" \
	    > "$t_tmp/cli-complete.out" 2>&1
	t_has "$t_tmp/cli-complete.out" "(EntityTooSmall)" "a first part under 5 MiB: 400 EntityTooSmall"
	gaws s3api delete-object --bucket spotrun-e2e --key cli/none > "$t_tmp/cli-del1.out" 2>&1
	t_has "$t_tmp/cli-del1.out" "(NoSuchKey)" "deleting a missing object: 404 NoSuchKey"
else
	t_skip "no aws CLI to check the emulator with"
fi

kill -0 "$emu" 2>/dev/null
t_is "$?" 0 "the emulator is still up"
t_done
