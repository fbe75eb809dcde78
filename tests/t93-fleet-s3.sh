#!/bin/sh
# t93-fleet-s3.sh: the laptop's commands of the fleet on an s3:// queue in
# a real S3 server (Ceph RGW, started by build-aux/test-all), the objects
# read back with the aws CLI, tests/fleet-helper playing the agent:
#
# 1. submit of a job and a sweep: the exact keys in the bucket, a trial's
#    spec as the CLI reads it; the same files again are not queued twice;
#    a job whose store is a file:// folder is warned about.
# 2. status: the exact table from markers the helper wrote; 10,000 jobs in
#    10 list requests and no GET.
# 3. logs of two attempts; logs -f ending with the job's lease.
# 4. cancel of a queued and of a running job; retry of a sweep's failed
#    and cancelled trials; the leases as the CLI reads them.
# 5. The keys never show in any output.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/jobs/fleet.sh"
. "$top_srcdir/tests/s3-env.sh"
t_setup

bucket=$(s3_bucket_new) || t_bail "cannot create a bucket on $SPOTRUN_TEST_S3_ENDPOINT"
trap 's3_bucket_rm "$bucket"; t_cleanup' EXIT
export AWS_ACCESS_KEY_ID="$SPOTRUN_TEST_S3_ACCESS_KEY"
export AWS_SECRET_ACCESS_KEY="$SPOTRUN_TEST_S3_SECRET_KEY"
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null
export AWS_EC2_METADATA_DISABLED=true
unset AWS_PROFILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3 SPOTRUN_QUEUE 2>/dev/null
S=$SPOTRUN
T=$t_tmp
export HOME=$T/home XDG_DATA_HOME=$T/data XDG_CONFIG_HOME=$T/config
mkdir -p "$HOME"
ep=$SPOTRUN_TEST_S3_ENDPOINT
QU="s3://$bucket/q?endpoint=$ep"
# The queue from the settings file, as on a laptop set up for the fleet.
mkdir -p "$XDG_CONFIG_HOME/spotrun"
printf '[fleet]\nqueue = %s\n' "$QU" > "$XDG_CONFIG_HOME/spotrun/config.ini"
W="$QU (from $XDG_CONFIG_HOME/spotrun/config.ini:2)"

# keys PREFIX: the bucket's keys under q/PREFIX, as the aws CLI lists them,
# times as T and etags as E
keys() {
	s3_aws s3api list-objects-v2 --bucket "$bucket" --prefix "q/$1" --query 'Contents[].Key' \
	    --output text | tr '\t' '\n' | grep -v '^None$' | sed -e 's/~[0-9a-f]\{32\}$/~E/' \
	    -e 's/~[0-9]\{13\}~/~T~/g' | LC_ALL=C sort
}

# --- 1. submit ------------------------------------------------------------
mkdir -p "$T/w"
printf '[job]\nname = train\ncommand = /usr/bin/python3 train.py\n[resources]\ngpus = 4\n' > "$T/w/job.ini"
cat > "$T/w/sweep.ini" <<'EOF'
[job]
name = lr
command = /usr/bin/python3 train.py --lr ${lr}
[sweep]
lr = 0.1, 0.01, 0.001
EOF
printf '[job]\nname = here\ncommand = /bin/true\n[checkpoint]\nstore = file://%s/mine\n' "$T" > "$T/w/here.ini"
run s "$S" submit "$T/w/job.ini" "$T/w/sweep.ini"
# the three files share one compressed member whose size moves by a byte
# with the temp folder's random name in them: any count of bytes
nbytes() { sed -i 's/uploaded 3 chunks, [0-9][0-9]* bytes/uploaded 3 chunks, N bytes/' "$t_tmp/$1.out"; }
nbytes s
expect s 0 "train: workdir $T/w: snapshot 0, 3 files, 264 bytes; uploaded 3 chunks, N bytes (0 chunks already in the store)
lr: workdir $T/w: snapshot 0, 3 files, 264 bytes; uploaded 3 chunks, N bytes (0 chunks already in the store)
train: queued
sweep lr ($T/w/sweep.ini): 3 trials
lr.1: queued (lr=0.1)
lr.2: queued (lr=0.01)
lr.3: queued (lr=0.001)
4 queued, 0 already in the queue: $W" "" "submit a job and a sweep to s3://, the queue from the settings file"
# the job's folder shipped (doc/fleet.md): one snapshot per name, the
# sweep's trials sharing theirs; a pack's name ends in random hex
t_is "$(keys | sed 's/-[0-9a-f]\{16\}\.tar$/-RAND.tar/')" "q/ckpt/_workdir/lr/LATEST
q/ckpt/_workdir/lr/manifests/0000000000.commit
q/ckpt/_workdir/lr/manifests/0000000000.json
q/ckpt/_workdir/lr/packs/0000000000-RAND.tar
q/ckpt/_workdir/train/LATEST
q/ckpt/_workdir/train/manifests/0000000000.commit
q/ckpt/_workdir/train/manifests/0000000000.json
q/ckpt/_workdir/train/packs/0000000000-RAND.tar
q/index/lr.1~000000000000~T~queued~0~0~0~0~0.0000~0.0000~~
q/index/lr.2~000000000000~T~queued~0~0~0~0~0.0000~0.0000~~
q/index/lr.3~000000000000~T~queued~0~0~0~0~0.0000~0.0000~~
q/index/train~000000000000~T~queued~0~0~0~0~0.0000~0.0000~~
q/jobs/lr.1/meta.json
q/jobs/lr.1/spec.ini
q/jobs/lr.2/meta.json
q/jobs/lr.2/spec.ini
q/jobs/lr.3/meta.json
q/jobs/lr.3/spec.ini
q/jobs/train/meta.json
q/jobs/train/spec.ini
q/pending/09999~T~lr.1~0-0~~q~0~
q/pending/09999~T~lr.2~0-0~~q~0~
q/pending/09999~T~lr.3~0-0~~q~0~
q/pending/09999~T~train~4-4~~q~0~" "the exact keys in the bucket (aws CLI)"
s3_aws s3 cp "s3://$bucket/q/jobs/lr.2/spec.ini" "$T/lr2.ini" > /dev/null 2>&1
t_like "$T/lr2.ini" '^command = /usr/bin/python3 train\.py --lr 0\.01$' "a trial's spec.ini as the CLI reads it"
s3_aws s3 cp "s3://$bucket/q/jobs/train/meta.json" "$T/meta.json" > /dev/null 2>&1
t_is "$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["store"], m["gpus"], m["workdir"])' "$T/meta.json")" \
	"s3://$bucket/q/ckpt?endpoint=$ep {'min': 4, 'max': 4} _workdir/train/manifests/0000000000.json" \
	"a job naming no store keeps its checkpoints in Q/ckpt; its meta.json names its folder's snapshot"
before=$(keys)
run s "$S" submit "$T/w/sweep.ini" "$T/w/job.ini"
t_is "$rc|$(tail -n 1 "$T/s.out")|$(keys)" "0|0 queued, 4 already in the queue: $W|$before" \
	"the same files again: already there, nothing written"
run s "$S" submit "$T/w/here.ini"
nbytes s
expect s 0 "here: workdir $T/w: snapshot 0, 3 files, 264 bytes; uploaded 3 chunks, N bytes (0 chunks already in the store)
here: queued
1 queued, 0 already in the queue: $W" "spotrun: warning: $T/w/here.ini:5: store = file://$T/mine is on this machine, which agents on other machines cannot read; leave store out to keep the checkpoints in the queue's store (s3://$bucket/q/ckpt?endpoint=$ep)" \
	"a checkpoint store on this machine for an s3:// queue: queued, with a warning"

# --- 2. status ------------------------------------------------------------
$H status "$QU" lr.1 succeeded 2 2 1 7200 720 0.9 3.0 800 ip-10-0-0-1
$H status "$QU" lr.2 running 1 1 0 1800 0 0.2 0.6 100 ip-10-0-0-2
run st "$S" status lr.1 lr.2 lr.3
expect st 0 "queue $W

sweep lr: 3 trials (1 running, 1 queued, 1 succeeded)
JOB    STATE     ATTEMPTS PREEMPTED GPU-HOURS    LOST      COST ON-DEMAND     STEP  HOST
lr.1   succeeded        2         1      2.00    0.20     \$0.90     \$3.00      800  ip-10-0-0-1
lr.2   running          1         0      0.50    0.00     \$0.20     \$0.60      100  ip-10-0-0-2
lr.3   queued           0         0      0.00    0.00     \$0.00     \$0.00        -  -
total                   3         1      2.50    0.20     \$1.10     \$3.60

all: 3 jobs (1 running, 1 queued, 1 succeeded), 3 attempts, 1 preemption, 2.50 GPU-hours used, 0.20 lost; cost \$1.10, on demand \$3.60, saved \$2.50 (69%)

lr.3: needs no GPU: no agent is running on this queue (start one: spotrun agent)" "" \
	"status of a sweep's jobs on s3://, and why the queued one waits"
run st "$S" status lr
expect st 0 "sweep lr: 3 trials, metric loss (smallest is best)
TRIAL  lr    STATE     ATT/P    TIME     COST      LAST      BEST CURVE
1      0.1   succeeded   2/1       -    \$0.90         -         -
2      0.01  running     1/0       -    \$0.20         -         -
3      0.001 queued      0/0       -    \$0.00         -         -

3: queued, needs no GPU: no agent is running on this queue (start one: spotrun ~" "" \
	"status of a sweep on s3://: its trials, and why the queued one waits (cut to 80 columns)"
BQ="s3://$bucket/big?endpoint=$ep"
$H many "$BQ" big 10000 || t_bail "10,000 status markers on S3"
run big "$S" status --json --queue "$BQ"
t_is "$rc|$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["requests"]; print(len(d["jobs"]), d["totals"]["on_demand_cost"], r["lists"], r["gets"], r["total"])' "$T/big.out")" \
	"0|10000 10000.0 13 0 13" "status of 10,000 jobs on S3: 13 list requests (10 of index/, 1 of malformed/, 1 of agents/, 1 of pools/), no GET"

# --- 3. logs --------------------------------------------------------------
printf 'one\n' | $H log "$QU" lr.1 1 1
printf 'two\n' | $H log "$QU" lr.1 2 1
run l "$S" logs lr.1
expect l 0 "==> lr.1: run 1, attempt 1 <==
one
==> lr.1: run 2, attempt 1 <==
two" "" "logs from S3: two runs, their headers"
t_bg hold "$H" hold "$QU" lr.3 60
hold=$t_last
wait_for "$T/hold.out" '^held lr.3 epoch 1$' 20 "$hold"
t_result $? "the helper holds lr.3"
t_bg follow "$S" logs -f lr.3
follow=$t_last
sleep 1.5
printf 'live\n' | $H log "$QU" lr.3 1 1
wait_for "$T/follow.out" '^live$' 20 "$follow"
t_result $? "logs -f prints a segment shipped to S3 after it started"

# --- 4. cancel, retry -----------------------------------------------------
run c "$S" cancel --checkpoint lr.3 train
t_wait "$hold"
expect c 0 "lr.3: asked to stop: the agent running it stops it at its next heartbeat (within 20 s by default), after a last checkpoint
train: cancelled (no agent was running it)
1 cancelled, 1 asked to stop, 0 had ended: $W" "" "cancel of a running and of a queued job on S3"
t_is "$t_rc|$(tail -n 1 "$T/hold.out")" "0|cancel requested, checkpoint 1" "... the holder ends lr.3 cancelled"
i=0
while kill -0 "$follow" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
t_wait "$follow"
t_is "$t_rc|$(cat "$T/follow.err")" "0|spotrun: job lr.3 cancelled" "logs -f ends with the job's lease"
$H end "$QU" lr.2 failed
run r "$S" retry lr
expect r 0 "lr.2: queued again (it was failed)
lr.3: queued again (it was cancelled)
2 queued again, 1 skipped (1 succeeded): retry takes failed and cancelled jobs: $W" "" "retry of a sweep on S3"
s3_aws s3 cp "s3://$bucket/q/ckpt/_leases/lr.3" "$T/lease.json" > /dev/null 2>&1
t_is "$(python3 -c 'import json,sys; l=json.load(open(sys.argv[1])); print(l["job"], l["state"], l["epoch"], l["owner"]["agent"])' "$T/lease.json")" \
	"lr.3 queued 1 spotrun retry" "... lr.3's lease, as the CLI reads it: queued at its epoch, by spotrun retry"

# --- 5. no key in any output ----------------------------------------------
if grep -rlF -e "$SPOTRUN_TEST_S3_SECRET_KEY" "$T" > "$T/leaks" 2>/dev/null; then
	t_result 1 "the secret key is in no output"
	t_show "$T/leaks"
else
	t_result 0 "the secret key is in no output"
fi
t_done
