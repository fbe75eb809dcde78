#!/bin/sh
# t82-s3-run.sh: `spotrun run`, `ls` and gc against a real S3 server (Ceph
# RGW, started by build-aux/test-all), and interop with the aws CLI:
#
# 1. The quickstart job with store = s3://BUCKET/jobs?endpoint=...: two
#    simulated preemptions inside one run, checkpoints committed to S3,
#    the result equal to an uninterrupted run's; `spotrun ls` lists them;
#    keep = 2 leaves two manifests and only the packs they reference.
# 2. A job preempted (signal provider, exit 75) resumes in a second run
#    from the S3 checkpoint: the next VM, same bucket.
# 3. aws CLI -> spotrun: a checkpoint saved to a file:// store and copied
#    up with `aws s3 sync` restores from s3://.
#    spotrun -> aws CLI: the S3 checkpoint copied down with `aws s3 sync`
#    restores from file://, so every object spotrun wrote was read
#    byte-exact by the CLI (each chunk is checked against its SHA-256).
# 4. The keys never show: not in spotrun's output or logs, not in the
#    job's environment.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/s3-env.sh"
t_setup

bucket=$(s3_bucket_new) || t_bail "cannot create a bucket on $SPOTRUN_TEST_S3_ENDPOINT"
trap 's3_bucket_rm "$bucket"; t_cleanup' EXIT
ep=$SPOTRUN_TEST_S3_ENDPOINT
# spotrun reads the keys from the environment, as the aws CLI does
export AWS_ACCESS_KEY_ID="$SPOTRUN_TEST_S3_ACCESS_KEY"
export AWS_SECRET_ACCESS_KEY="$SPOTRUN_TEST_S3_SECRET_KEY"
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
export AWS_EC2_METADATA_DISABLED=true
unset AWS_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 2>/dev/null

train="$PY $top_srcdir/examples/quickstart/train.py"
$train --sleep 0 > "$t_tmp/plain.out" 2>&1
want=$(result_of "$t_tmp/plain.out")
[ -n "$want" ] || t_bail "the quickstart job printed no result"
$train --steps 80 --every 10 --sleep 0 > "$t_tmp/plain80.out" 2>&1
want80=$(result_of "$t_tmp/plain80.out")

# 1. the quickstart on S3
ini=$t_tmp/qs.ini
sed -e "s|^#store = .*|store = s3://$bucket/jobs?endpoint=$ep|" \
    -e 's|^keep = 3|keep = 2|' \
    -e "s|^command = .*|command = $PY $top_srcdir/examples/quickstart/train.py --sleep 0.03|" \
    -e 's|^after = 8s|after = 1500ms|' -e 's|^window = 10s|window = 8s|' \
    -e 's|^interval = 5s|interval = 1s|' \
    "$top_srcdir/examples/quickstart.ini" > "$ini"
ini_set "$ini" checkpoint local_dir "$t_tmp/local-qs"
ini_set "$ini" checkpoint margin 2s
"$SPOTRUN" check "$ini" > "$t_tmp/check.out" 2>&1
t_is "$?" 0 "spotrun check accepts an s3:// store" || t_show "$t_tmp/check.out"
"$SPOTRUN" run "$ini" > "$t_tmp/qs.out" 2> "$t_tmp/qs.err"
rc=$?
t_is "$rc" 0 "quickstart on s3:// exits 0" || t_show "$t_tmp/qs.err"
t_is "$(grep -c '^resumed from step' "$t_tmp/qs.out")" 2 "resumed twice (two simulated preemptions)" ||
    t_show "$t_tmp/qs.out"
t_is "$(result_of "$t_tmp/qs.out")" "$want" "the result equals an uninterrupted run's"
t_like "$t_tmp/qs.err" "^[0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed" "checkpoints committed to S3"
s3_aws s3 ls --recursive "s3://$bucket/jobs/" > "$t_tmp/objects.txt" 2>&1
t_like "$t_tmp/objects.txt" " jobs/quickstart/" "objects under the prefix in the bucket"
"$SPOTRUN" ls "$ini" > "$t_tmp/ls.out" 2>&1
t_is "$?" 0 "spotrun ls on s3:// exits 0" || t_show "$t_tmp/ls.out"
t_is "$(grep -cE '^[0-9]+ ' "$t_tmp/ls.out")" 2 "keep = 2: two checkpoints listed" ||
    t_show "$t_tmp/ls.out"
nman=$(grep -c '/manifests/' "$t_tmp/objects.txt")
t_is "$nman" 2 "keep = 2: two manifests left in the bucket" || t_show "$t_tmp/objects.txt"

# 2. preempted on one VM, resumed on the next, through S3
ini2=$t_tmp/sig.ini
cat > "$ini2" <<EOF
[job]
name = sig
shell = yes
command = echo \$\$ > $ini2.pid; exec $train --steps 80 --sleep 0.04 --every 10
workdir = $t_tmp
[checkpoint]
store = s3://$bucket/jobs?endpoint=$ep&part_size=5MiB
local_dir = $t_tmp/local-sig
[provider]
name = signal
grace = 20s
EOF
t_pidfiles="$t_pidfiles $ini2.pid"
t_bg sig-1 "$SPOTRUN" run "$ini2"
pid=$t_last
wait_for "$t_tmp/sig-1.out" '^step 10 ' 20 "$pid" || t_diag "run 1 did not reach step 10"
kill -TERM "$pid"
t_wait "$pid"
t_is "$t_rc" 75 "run 1 preempted by SIGTERM exits 75" || t_show "$t_tmp/sig-1.err"
a=$(sed -nE 's/^checkpoint at step ([0-9]+)$/\1/p' "$t_tmp/sig-1.out" | tail -n 1)
"$SPOTRUN" run "$ini2" > "$t_tmp/sig-2.out" 2> "$t_tmp/sig-2.err"
t_is "$?" 0 "run 2 (the next VM) exits 0" || t_show "$t_tmp/sig-2.err"
t_has "$t_tmp/sig-2.out" "resumed from step $a (attempt 1)" "run 2 resumed from the S3 checkpoint (step $a)"
t_is "$(result_of "$t_tmp/sig-2.out")" "$want80" "run 2's result equals an uninterrupted run's"

# 3. interop both ways, through a job that finishes in one go after a restore
ini3=$t_tmp/up.ini
cat > "$ini3" <<EOF
[job]
name = interop
shell = yes
command = echo \$\$ > $ini3.pid; exec $train --steps 80 --sleep 0.04 --every 10
workdir = $t_tmp
[checkpoint]
store = file://$t_tmp/fstore
local_dir = $t_tmp/local-up
[provider]
name = signal
grace = 20s
EOF
t_pidfiles="$t_pidfiles $ini3.pid"
t_bg up-1 "$SPOTRUN" run "$ini3"
pid=$t_last
wait_for "$t_tmp/up-1.out" '^step 10 ' 20 "$pid" || t_diag "interop run 1 did not reach step 10"
kill -TERM "$pid"
t_wait "$pid"
t_is "$t_rc" 75 "interop: a checkpoint in a file:// store" || t_show "$t_tmp/up-1.err"
b=$(sed -nE 's/^checkpoint at step ([0-9]+)$/\1/p' "$t_tmp/up-1.out" | tail -n 1)
s3_aws s3 sync --no-progress --exclude '.tmp/*' "$t_tmp/fstore" "s3://$bucket/up" > "$t_tmp/sync-up.out" 2>&1
t_is "$?" 0 "aws s3 sync uploads the file store" || t_show "$t_tmp/sync-up.out"
ini_set "$ini3" checkpoint store "s3://$bucket/up?endpoint=$ep"
"$SPOTRUN" run "$ini3" > "$t_tmp/up-2.out" 2> "$t_tmp/up-2.err"
t_is "$?" 0 "spotrun restores what the aws CLI uploaded" || t_show "$t_tmp/up-2.err"
t_has "$t_tmp/up-2.out" "resumed from step $b (attempt 1)" "... from step $b"
t_is "$(result_of "$t_tmp/up-2.out")" "$want80" "... and finishes with the right result"

s3_aws s3 sync --no-progress "s3://$bucket/jobs" "$t_tmp/down" > "$t_tmp/sync-down.out" 2>&1
t_is "$?" 0 "aws s3 sync downloads the S3 checkpoints" || t_show "$t_tmp/sync-down.out"
# The sig job finished (FINISHED marker): drop it so the next run restores.
rm -f "$t_tmp/down/sig/FINISHED"
ini_set "$ini2" checkpoint store "file://$t_tmp/down"
ini_set "$ini2" checkpoint local_dir "$t_tmp/local-down"
"$SPOTRUN" ls "$ini2" > "$t_tmp/down-ls.out" 2>&1
t_like "$t_tmp/down-ls.out" '^[0-9]+ +[0-9]+ +.* latest$' "the downloaded store lists a latest checkpoint" ||
    t_show "$t_tmp/down-ls.out"
"$SPOTRUN" run "$ini2" > "$t_tmp/down.out" 2> "$t_tmp/down.err"
t_is "$?" 0 "spotrun restores from what the aws CLI downloaded" || t_show "$t_tmp/down.err"
t_like "$t_tmp/down.out" '^resumed from step [0-9]+ ' "... it resumed (every chunk checked)" ||
    t_show "$t_tmp/down.out"

# 4. the keys never show
ini4=$t_tmp/env.ini
cat > "$ini4" <<EOF
[job]
name = envdump
shell = yes
command = env > $t_tmp/job-env.txt
workdir = $t_tmp
[checkpoint]
store = s3://$bucket/jobs?endpoint=$ep
local_dir = $t_tmp/local-env
[provider]
name = local
EOF
"$SPOTRUN" run "$ini4" > "$t_tmp/env.out" 2> "$t_tmp/env.err"
t_is "$?" 0 "a job that dumps its environment runs" || t_show "$t_tmp/env.err"
t_unlike "$t_tmp/job-env.txt" '^(AWS_SECRET_ACCESS_KEY|AWS_ACCESS_KEY_ID|AWS_SESSION_TOKEN)=' \
    "the job's environment has no AWS keys"
leaks=$(grep -rlF -e "$SPOTRUN_TEST_S3_SECRET_KEY" "$t_tmp" 2>/dev/null |
    grep -v '/down/\|/fstore/' | tr '\n' ' ')
t_is "$leaks" "" "the secret key is in no output, log or file spotrun wrote"

t_done
