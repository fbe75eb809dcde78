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
. "$top_srcdir/tests/jobs/store-run.sh"
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
$train --steps 80 --every 10 --sleep 0 > "$t_tmp/plain80.out" 2>&1
want80=$(result_of "$t_tmp/plain80.out")
[ -n "$want80" ] || t_bail "the quickstart job printed no result"

# 1. the quickstart on S3
sr_quickstart "s3://$bucket/jobs?endpoint=$ep" s3://
s3_aws s3 ls --recursive "s3://$bucket/jobs/" > "$t_tmp/objects.txt" 2>&1
t_like "$t_tmp/objects.txt" " jobs/quickstart/" "objects under the prefix in the bucket"
nman=$(grep -cE '/manifests/[0-9]+\.json$' "$t_tmp/objects.txt")
t_is "$nman" 2 "keep = 2: two manifests left in the bucket" || t_show "$t_tmp/objects.txt"

# 2. preempted on one VM, resumed on the next, through S3
sr_resume "s3://$bucket/jobs?endpoint=$ep&part_size=5MiB" S3
ini2=$sr_sig_ini

# 3. interop both ways, through a job that finishes in one go after a restore
ini3=$t_tmp/up.ini
sr_job "$ini3" interop "$train --steps 80 --sleep 0.04 --every 10" "file://$t_tmp/fstore" signal
sr_preempt "$ini3" up
b=$sr_step
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
sr_job "$ini4" envdump "env > $t_tmp/job-env.txt" "s3://$bucket/jobs?endpoint=$ep" local
"$SPOTRUN" run "$ini4" > "$t_tmp/env.out" 2> "$t_tmp/env.err"
t_is "$?" 0 "a job that dumps its environment runs" || t_show "$t_tmp/env.err"
t_unlike "$t_tmp/job-env.txt" '^(AWS_SECRET_ACCESS_KEY|AWS_ACCESS_KEY_ID|AWS_SESSION_TOKEN)=' \
    "the job's environment has no AWS keys"
leaks=$(grep -rlF -e "$SPOTRUN_TEST_S3_SECRET_KEY" "$t_tmp" 2>/dev/null |
    grep -v '/down/\|/fstore/' | tr '\n' ' ')
t_is "$leaks" "" "the secret key is in no output, log or file spotrun wrote"

t_done
