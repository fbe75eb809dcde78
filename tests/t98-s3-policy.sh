#!/bin/sh
# t98-s3-policy.sh: the least-privilege policy of doc/aws.md is enough for
# the fleet, and no wider than it needs to be, on Ceph RGW (build-aux/
# test-all). The policy is the JSON block after doc/aws.md's spotrun-policy
# marker, made a bucket policy of a bucket the first user owns, for
# tests/rgw.sh's second user (SPOTRUN_TEST_S3_LIMITED_*: owns no bucket, may
# create none), who then runs everything:
#
# 1. submit of two jobs (a workdir over one part: a multipart upload), cancel
#    of the one still queued;
# 2. an agent that runs the other, whose checkpoints (12 MiB: multipart)
#    survive a preemption (the local provider's notice_file, made once the
#    first checkpoint is committed: one notice, whatever the machine's
#    load): it resumes from one, its data intact; the agent sweeps the
#    queue's debris when idle;
# 3. status, logs, gc --apply;
# 4. not wider: the same user is refused on another bucket; with
#    s3:DeleteObject taken out of the policy, cancel fails with AccessDenied
#    naming the key.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/s3-env.sh"
[ -n "${SPOTRUN_TEST_S3_LIMITED_ACCESS_KEY:-}" ] ||
    s3_unavailable "no second S3 user (SPOTRUN_TEST_S3_LIMITED_*: tests/rgw.sh start makes one)"
t_setup
. "$top_srcdir/tests/jobs/agent.sh"
. "$top_srcdir/tests/jobs/fleet.sh"	# run NAME CMD...
bucket=$(s3_bucket_new) || t_bail "cannot create a bucket on $SPOTRUN_TEST_S3_ENDPOINT"
other=$(s3_bucket_new) || { s3_bucket_rm "$bucket"; t_bail "cannot create a second bucket"; }
trap 's3_bucket_rm "$bucket"; s3_bucket_rm "$other"; t_cleanup' EXIT
T=$t_tmp
ep=$SPOTRUN_TEST_S3_ENDPOINT
Q="s3://$bucket/q?endpoint=$ep"

# policy PREFIX [ACTION]: doc/aws.md's policy for $bucket and PREFIX, with
# its statement for RGW's DeleteObjects, as a bucket policy for the limited
# user, less ACTION (in the statements on the prefix's objects) when given,
# in $T/policy.json
policy() {
	$PY - "$top_srcdir/doc/aws.md" "$bucket" "$1" "$SPOTRUN_TEST_S3_LIMITED_USER" "${2:-}" \
	    > "$T/policy.json" <<'EOF'
import json, re, sys
doc, bucket, prefix, user, drop = sys.argv[1:]
text = open(doc).read()
def block(marker):
    m = re.search(r"^<!-- %s:[^\n]*-->\n```json\n(.*?)\n```$" % marker, text, re.S | re.M)
    if m is None:
        sys.exit("doc/aws.md: no ```json block after a <!-- %s: --> line" % marker)
    return json.loads(m.group(1).replace("BUCKET", bucket).replace("PREFIX", prefix))
p = block("spotrun-policy")
p["Statement"].append(block("spotrun-policy-rgw"))
for s in p["Statement"]:
    s["Principal"] = {"AWS": ["arn:aws:iam:::user/" + user]}
    if drop and isinstance(s["Action"], list) and drop in s["Action"]:
        s["Action"].remove(drop)
json.dump(p, sys.stdout, indent=1)
EOF
}
policy q || t_bail "cannot read the policy of doc/aws.md"
s3_aws s3api put-bucket-policy --bucket "$bucket" --policy "file://$T/policy.json" ||
    t_bail "RGW refuses the policy of doc/aws.md"

# From here on, spotrun has only the limited user's keys (s3_aws, the
# owner's, sets the policy).
export AWS_ACCESS_KEY_ID="$SPOTRUN_TEST_S3_LIMITED_ACCESS_KEY"
export AWS_SECRET_ACCESS_KEY="$SPOTRUN_TEST_S3_LIMITED_SECRET_KEY"
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
export AWS_EC2_METADATA_DISABLED=true
unset AWS_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 2>/dev/null || true
export HOME=$T/home XDG_DATA_HOME=$T/data XDG_CONFIG_HOME=$T/config
mkdir -p "$HOME"

# --- 1. submit, cancel ------------------------------------------------------
mkdir -p "$T/w"
head -c 10485760 /dev/urandom > "$T/w/data.bin"	# over one part (8 MiB)
job() {
	printf '[job]\nname = %s\ncommand = %s %s/blobjob.py --steps %s --sleep 0.05 --sizes 12582912\n' \
	    "$1" "$PY" "$JOBS" "$2"
	printf '[checkpoint]\ninterval = 2s\nmargin = 1s\n'
	printf '[provider]\nname = local\nnotice_file = %s/notice\nwindow = 60s\n' "$T"
	printf '[resources]\ngpus = 1\n'
}
job big 300 > "$T/w/big.ini"
job idle 10 > "$T/w/idle.ini"
run sub "$SPOTRUN" submit --queue "$Q" "$T/w/big.ini" "$T/w/idle.ini"
t_is "$rc|$(tail -n 1 "$T/sub.out")" "0|2 queued, 0 already in the queue: $Q (from --queue)" \
    "submit as the limited user, its 10 MiB workdir in a multipart upload" || t_show "$T/sub.err"
run can "$SPOTRUN" cancel --queue "$Q" idle
t_is "$rc|$(head -n 1 "$T/can.out")" "0|idle: cancelled (no agent was running it)" \
    "cancel of a queued job" || t_show "$T/can.err"

# --- 2. the agent -----------------------------------------------------------
# A 30 s lease: with agent.sh's 3 s, RGW on a loaded machine (load 15, a
# sanitizer suite beside) answered a renewal after 2.6 s while the 12 MiB
# checkpoint's parts went up, the agent rightly gave the lease up, and
# with no other agent the job stayed running. What this case checks is the
# limited user's rights, not the lease's margins (t37, t86 do those).
SPOTRUN_LEASE_TTL=30s
ag_start ag 1 --queue "$Q" --idle-timeout 4s
ag_pid=$t_last
SPOTRUN_LEASE_TTL=3s
wait_for "$T/ag.err" "^[0-9:]+  ckpt +[0-9]+ step [0-9]+: .* committed" 300 "$ag_pid" ||
    t_diag "no checkpoint committed before the notice"
touch "$T/notice"
ag_wait_bounded "$ag_pid" 300
t_is "$t_rc" 0 "an agent as the limited user runs the job and ends idle" || t_show "$T/ag.err" 30
t_like "$T/ag.err" "^spotrun agent: big: succeeded \\(epoch [0-9]+\\)$" "... the job succeeded"
t_like "$T/ag.err" "^[0-9:]+  attempt  1 restored checkpoint [0-9]+ at step [0-9]+ \\(12\\.0 MiB" \
    "... after its preemption, restored from a 12 MiB checkpoint"
t_like "$T/ag.err" "ckpt .* 12\\.[0-9] MiB" "... its checkpoints 12 MiB (multipart)" ||
    grep ckpt "$T/ag.err" | head -n 5 | while read -r l; do t_diag "$l"; done
t_unlike "$T/ag.err" "AccessDenied|access denied" "... and never refused"

# --- 3. status, logs, gc ----------------------------------------------------
run st "$SPOTRUN" status --queue "$Q"
# one notice: two attempts, one preemption
t_is "$rc|$(awk '$1 == "big" || $1 == "idle" { print $2, $3, $4 }' "$T/st.out" | tr '\n' ' ')" \
    "0|succeeded 2 1 cancelled 0 0 " \
    "status: the job succeeded after its preemption, the other cancelled" || t_show "$T/st.out"
run lg "$SPOTRUN" logs --queue "$Q" big
t_like "$T/lg.out" "^\\+[0-9.]+ out resumed from step [0-9]+, data ok$" \
    "logs: the job resumed from a checkpoint, its 12 MiB intact" || t_show "$T/lg.err"
run gc "$SPOTRUN" gc --queue "$Q" --apply
t_is "$rc" 0 "gc --apply of the queue" || t_show "$T/gc.err"
t_unlike "$T/gc.err" "AccessDenied|access denied" "... never refused"

# --- 4. not wider than needed -----------------------------------------------
run ob "$SPOTRUN" status --queue "s3://$other/q?endpoint=$ep"
t_is "$rc" 74 "the same user on another bucket of the owner's: refused" || t_show "$T/ob.err"
t_like "$T/ob.err" "access denied \\(AccessDenied\\) for the credentials from .*s3://$other" \
    "... AccessDenied, naming the bucket"
policy q2 s3:DeleteObject
s3_aws s3api put-bucket-policy --bucket "$bucket" --policy "file://$T/policy.json" ||
    t_bail "RGW refuses the policy without s3:DeleteObject"
Q2="s3://$bucket/q2?endpoint=$ep"
run sub2 "$SPOTRUN" submit --queue "$Q2" "$T/w/idle.ini"
t_is "$rc" 0 "without s3:DeleteObject: submit still works (it deletes nothing)" ||
    t_show "$T/sub2.err"
run can2 "$SPOTRUN" cancel --queue "$Q2" idle
t_is "$rc" 74 "... cancel fails" || t_show "$T/can2.err"
t_like "$T/can2.err" "^spotrun: cancel idle \\(cancelled\\): status of idle: remove the old marker: delete q2/index/idle~[^ ]*: AccessDenied$" \
    "... with AccessDenied, naming the key"
t_done
