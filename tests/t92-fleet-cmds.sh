#!/bin/sh
# t92-fleet-cmds.sh: the laptop's commands of the fleet on a file:// queue,
# with tests/fleet-helper playing the agent (claims, status markers, log
# segments, through the queue's own calls):
#
# 1. Where the queue is: --queue, $SPOTRUN_QUEUE, queue = in [fleet] of
#    $XDG_CONFIG_HOME/spotrun/config.ini, the default; the settings file's
#    faults, each with its line and fix (exit 78).
# 2. submit: a job and a sweep, the exact keys written in the queue, the
#    spec of a trial and its meta; --dry-run writes nothing; the same files
#    again are reported and not queued twice; a changed file is refused
#    with the line that differs, nothing written; --again queues NAME.r2;
#    bad files (check's messages, nothing written), two files of one name,
#    a bad --priority; --run-local (the agent in the same process).
# 3. status: the exact table of a sweep and of other jobs with costs and
#    totals, targets (a job, a sweep, a sweep file, a name of nothing),
#    --json, and 10,000 jobs read in at most 10 list requests and no GET.
# 4. logs: segments of two runs and attempts with their headers; -f
#    follows new segments and ends when the job's lease ends.
# 5. cancel: a queued job at once, a running one asked (its holder sees
#    the request, with --checkpoint), an ended one left.
# 6. requeue and retry: the lease masks, a sweep's other trials skipped, a
#    job named by itself refused in another state, a malformed lease
#    replaced at the status marker's epoch.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/jobs/fleet.sh"
t_setup
S=$SPOTRUN
T=$t_tmp
export HOME=$T/home XDG_DATA_HOME=$T/data XDG_CONFIG_HOME=$T/config
unset SPOTRUN_QUEUE
mkdir -p "$HOME" "$XDG_CONFIG_HOME/spotrun"
Q=$T/data/spotrun/queue
QU=file://$Q
cfg=$XDG_CONFIG_HOME/spotrun/config.ini

# keys DIR: the queue's objects, times (13 digits) as T and etags as E
keys() {
	(cd "$1" && find . -type f ! -path './.tmp/*' | sed -e 's|^\./||' \
	    -e 's/~[0-9a-f]\{32\}$/~E/' -e 's/~[0-9]\{13\}~/~T~/g' | LC_ALL=C sort)
}

# --- 1. where the queue is ------------------------------------------------
run q "$S" status
expect q 0 "queue $QU (the default): no jobs" "" "no settings: the default queue, empty"
run q env SPOTRUN_QUEUE="$T/envq" "$S" status
expect q 0 "queue file://$T/envq (from \$SPOTRUN_QUEUE): no jobs" "" \
	"\$SPOTRUN_QUEUE, a directory, made file://"
printf '; my settings\n[fleet]\nqueue = file://%s/cfgq\n' "$T" > "$cfg"
run q "$S" status
expect q 0 "queue file://$T/cfgq (from $cfg:3): no jobs" "" "queue = in [fleet] of the settings file"
run q env SPOTRUN_QUEUE="$T/envq" "$S" status
expect q 0 "queue file://$T/envq (from \$SPOTRUN_QUEUE): no jobs" "" "\$SPOTRUN_QUEUE wins over it"
run q env SPOTRUN_QUEUE="$T/envq" "$S" status --queue "$QU"
expect q 0 "queue $QU (from --queue): no jobs" "" "--queue wins over both"
bad_cfg() {	# CONTENT MESSAGE DESC
	printf '%b' "$1" > "$cfg"
	run c "$S" status
	expect c 78 "" "spotrun: $cfg:$2" "$3"
}
bad_cfg '[fleet]\nqeue = s3://b/q\n' "2: unknown key 'qeue' in [fleet] (did you mean 'queue'?); [fleet] takes queue, prices and provider" \
	"settings: a mistyped key, with the fix (78)"
bad_cfg '[flet]\nqueue = s3://b/q\n' "2: unknown section [flet]: the settings file has a [fleet] section only (did you mean [fleet]?); put queue under [fleet] or remove it" \
	"settings: a mistyped section"
bad_cfg 'queue = s3://b/q\n' "1: a setting before any section: the settings file has a [fleet] section only; put queue under [fleet] or remove it" \
	"settings: a key before any section"
bad_cfg '[fleet]\nqueue = q\n' "2: queue = q: neither a URL nor an absolute path; give a store URL (file:///absolute/path, s3://bucket/prefix, gs://bucket/prefix or az://account/container/prefix) or an absolute path" \
	"settings: a relative queue"
bad_cfg '[fleet]\nqueue = s3://\n' "2: queue = s3://: open store s3://: bucket \"\": a bucket name has 3 to 63 characters" \
	"settings: a queue URL that cannot be one (the store's words)"
bad_cfg '[fleet]\nqueue = /a\nqueue = /b\n' "3: queue appears twice in [fleet] (first on line 2); keep one" \
	"settings: a key twice"
bad_cfg '[fleet]\nprices = prices.ini\n' "2: prices = prices.ini: not an absolute path; give the price table's full path, as in prices = /etc/spotrun/prices.ini" \
	"settings: a relative price table"
bad_cfg '[fleet]\nqueue\n' "2: not a setting: write key = value, a [section] header, or a comment starting with ';' or '#'" \
	"settings: a line that is no setting"
rm -f "$cfg"
run q "$S" status --queue 'ftp://x/q'
t_is "$rc|$(cat "$T/q.err")" "64|spotrun: queue ftp://x/q (from --queue): open store ftp://x/q: unsupported scheme \"ftp\" (supported: file://, s3://, gs://, az://)" \
	"a --queue that is no store URL: 64, naming where it came from"

# --- 2. submit ------------------------------------------------------------
mkdir -p "$T/w"
cat > "$T/w/job.ini" <<'EOF'
[job]
name = train
command = /usr/bin/python3 train.py
ship_workdir = no
[resources]
gpus = 8
gpu_type = H100
EOF
cat > "$T/w/sweep.ini" <<'EOF'
[job]
name = lr
command = /usr/bin/python3 train.py --lr ${lr} --seed ${seed}
ship_workdir = no
[resources]
gpus = 1-2
[sweep]
lr = 0.1, 0.01
seed = 1..2
EOF
cat > "$T/w/stored.ini" <<EOF
[job]
name = own-store
command = /bin/true
ship_workdir = no
[checkpoint]
store = file://$T/mystore
EOF
run s "$S" submit -n "$T/w/sweep.ini" "$T/w/job.ini"
expect s 0 "sweep lr ($T/w/sweep.ini): 4 trials
lr.1: would be queued (lr=0.1, seed=1)
lr.2: would be queued (lr=0.1, seed=2)
lr.3: would be queued (lr=0.01, seed=1)
lr.4: would be queued (lr=0.01, seed=2)
train: would be queued
dry run: 5 jobs, nothing written to queue $QU (the default)" "" "--dry-run prints the trials and their values"
t_is "$(keys "$Q")" "" "... and writes nothing"
run s "$S" submit "$T/w/job.ini" "$T/w/sweep.ini"
expect s 0 "train: queued
sweep lr ($T/w/sweep.ini): 4 trials
lr.1: queued (lr=0.1, seed=1)
lr.2: queued (lr=0.1, seed=2)
lr.3: queued (lr=0.01, seed=1)
lr.4: queued (lr=0.01, seed=2)
5 queued, 0 already in the queue: $QU (the default)" "" "submit a job and a sweep: one line per job, a summary"
t_is "$(keys "$Q")" "index/lr.1~000000000000~T~queued~0~0~0~0~0.0000~0.0000~~
index/lr.2~000000000000~T~queued~0~0~0~0~0.0000~0.0000~~
index/lr.3~000000000000~T~queued~0~0~0~0~0.0000~0.0000~~
index/lr.4~000000000000~T~queued~0~0~0~0~0.0000~0.0000~~
index/train~000000000000~T~queued~0~0~0~0~0.0000~0.0000~~
jobs/lr.1/meta.json
jobs/lr.1/spec.ini
jobs/lr.2/meta.json
jobs/lr.2/spec.ini
jobs/lr.3/meta.json
jobs/lr.3/spec.ini
jobs/lr.4/meta.json
jobs/lr.4/spec.ini
jobs/train/meta.json
jobs/train/spec.ini
pending/09999~T~lr.1~1-2~~q~0~
pending/09999~T~lr.2~1-2~~q~0~
pending/09999~T~lr.3~1-2~~q~0~
pending/09999~T~lr.4~1-2~~q~0~
pending/09999~T~train~8-8~H100~q~0~" "the exact keys: spec and meta per job, a status and a pending marker each (GPUs, type)"
cmp -s "$Q/jobs/train/spec.ini" "$T/w/job.ini"
t_result $? "a job's spec.ini is its file as given"
t_like "$Q/jobs/lr.3/spec.ini" '^command = /usr/bin/python3 train\.py --lr 0\.01 --seed 1$' \
	"a trial's spec.ini is its expanded job file: its values in the command"
t_like "$Q/jobs/lr.3/spec.ini" '^name = lr\.3$' "... its name"
t_like "$Q/jobs/lr.3/spec.ini" '^SPOTRUN_PARAM_LR = 0\.01$' "... its parameters in [env]"
cp "$Q/jobs/lr.3/spec.ini" "$T/w/trial.ini"
run c "$S" check "$T/w/trial.ini"
expect c 0 "$T/w/trial.ini: ok" "" "... a job file that check takes"
meta=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); del m["submitted"]; print(json.dumps(m, sort_keys=True))' "$Q/jobs/lr.3/meta.json")
t_is "$meta" "{\"by\": \"$(id -un)@$(hostname)\", \"dir\": \"$T/w\", \"gpu_type\": \"\", \"gpus\": {\"max\": 2, \"min\": 1}, \"id\": \"lr.3\", \"name\": \"lr.3\", \"params\": {\"lr\": \"0.01\", \"seed\": \"1\"}, \"priority\": 0, \"store\": \"$QU/ckpt\", \"sweep\": \"lr\"}" \
	"a trial's meta.json: its sweep, values, GPUs, its file's folder, and the queue's Q/ckpt for a file that names no store"
run s "$S" submit -p 5 "$T/w/stored.ini"
expect s 0 "own-store: queued
1 queued, 0 already in the queue: $QU (the default)" "" "a job with a store of its own and --priority 5"
t_is "$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["store"], m["priority"])' "$Q/jobs/own-store/meta.json")" \
	"file://$T/mystore 5" "... its meta keeps its store and priority"
t_is "$(keys "$Q" | grep -c '^pending/09994~T~own-store~0-0~~[0-9a-f]\{16\}~0~$')|$(keys "$Q" | grep -c '^stores/[0-9a-f]\{16\}$')" \
	"1|1" "... its pending marker sorts by priority and names its store, registered in stores/"
before=$(keys "$Q")
run s "$S" submit "$T/w/sweep.ini" "$T/w/job.ini"
expect s 0 "sweep lr ($T/w/sweep.ini): 4 trials
lr.1: already in the queue (queued), the same job file (lr=0.1, seed=1)
lr.2: already in the queue (queued), the same job file (lr=0.1, seed=2)
lr.3: already in the queue (queued), the same job file (lr=0.01, seed=1)
lr.4: already in the queue (queued), the same job file (lr=0.01, seed=2)
train: already in the queue (queued), the same job file
0 queued, 5 already in the queue: $QU (the default)" "" "the same files again: each job already in the queue, exit 0"
t_is "$(keys "$Q")" "$before" "... and nothing written"
rm "$Q/jobs/lr.4/meta.json" "$Q"/index/lr.4~* "$Q"/pending/*lr.4~*
run s "$S" submit "$T/w/sweep.ini"
t_is "$rc|$(grep lr.4 "$T/s.out")|$(keys "$Q")" "0|lr.4: queued (lr=0.01, seed=2)|$before" \
	"a sweep whose submission was cut short: submitting it again completes it"
sed 's/seed = 1..2/seed = 1..3/' "$T/w/sweep.ini" > "$T/w/sweep2.ini"
mv "$T/w/sweep2.ini" "$T/w/sweep.ini"
run s "$S" submit "$T/w/job.ini" "$T/w/sweep.ini"
sid_old=$(sed -n '1s/.*(id \([0-9a-f]*\)).*/\1/p' "$Q/jobs/lr.1/spec.ini")
sid_new=$(sha256sum "$T/w/sweep.ini" | cut -c1-16)
expect s 65 "" "spotrun: $T/w/sweep.ini: job lr.1 is already in queue $QU (the default) with another job file: line 1 is '; spotrun: trial 1 of 4 of sweep lr (id $sid_old), expanded from its job' there and '; spotrun: trial 1 of 6 of sweep lr (id $sid_new), expanded from its job' here; to queue this file as new jobs: spotrun submit --again $T/w/sweep.ini; to run the queued trials again: spotrun requeue lr
spotrun: nothing was submitted" "a changed sweep: refused, saying what differs (65)"
t_is "$(keys "$Q")" "$before" "... nothing written, not even the unchanged job"
sed 's|train.py$|train.py --epochs 3|' "$T/w/job.ini" > "$T/w/job2.ini"
run s "$S" submit "$T/w/job2.ini"
expect s 65 "" "spotrun: $T/w/job2.ini: job train is already in queue $QU (the default) with another job file: line 3 is 'command = /usr/bin/python3 train.py' there and 'command = /usr/bin/python3 train.py --epochs 3' here; to queue this file as new jobs: spotrun submit --again $T/w/job2.ini; to run the queued job again: spotrun requeue train
spotrun: nothing was submitted" "a changed job file: the line that differs"
run s "$S" submit --again "$T/w/job2.ini" "$T/w/sweep.ini"
expect s 0 "$T/w/job2.ini: submitted again as train.r2
train.r2: queued
$T/w/sweep.ini: submitted again as sweep lr.r2
sweep lr.r2 ($T/w/sweep.ini): 6 trials
lr.r2.1: queued (lr=0.1, seed=1)
lr.r2.2: queued (lr=0.1, seed=2)
lr.r2.3: queued (lr=0.1, seed=3)
lr.r2.4: queued (lr=0.01, seed=1)
lr.r2.5: queued (lr=0.01, seed=2)
lr.r2.6: queued (lr=0.01, seed=3)
7 queued, 0 already in the queue: $QU (the default)" "" "--again: new jobs under the first free name, NAME.r2"
t_like "$Q/jobs/train.r2/spec.ini" '^name = train\.r2$' "... the job file's name line rewritten"
run s "$S" submit --again "$T/w/job2.ini"
t_is "$rc|$(head -n 2 "$T/s.out")" "0|$T/w/job2.ini: submitted again as train.r3
train.r3: queued" "--again once more: NAME.r3"
before=$(keys "$Q")
cat > "$T/w/bad.ini" <<'EOF'
[job]
name = bad
comand = x
EOF
run s "$S" submit "$T/w/job.ini" "$T/w/bad.ini"
"$S" check "$T/w/bad.ini" > /dev/null 2> "$T/check.err"
expect s 65 "" "$(cat "$T/check.err")" "a bad file among good ones: check's messages, 65"
t_is "$(keys "$Q")" "$before" "... and nothing written"
sed 's/name = lr/name = train/' "$T/w/sweep.ini" > "$T/w/clash.ini"
printf '[job]\nname = train.1\ncommand = /bin/true\nship_workdir = no\n' > "$T/w/clash2.ini"
run s "$S" submit "$T/w/clash.ini" "$T/w/clash2.ini"
expect s 65 "" "spotrun: $T/w/clash.ini and $T/w/clash2.ini both make job train.1; give one of them another name, nothing was submitted" \
	"two files that make one job: refused"
run s "$S" submit "$T/w/job.ini" "$T/w/job.ini"
t_is "$rc|$(cat "$T/s.err")" "0|spotrun: $T/w/job.ini: the same file as $T/w/job.ini, submitted once" "a file given twice: once"
run s "$S" submit -p 10000 "$T/w/job.ini"
expect s 64 "" "spotrun submit: --priority 10000: not an integer from -9999 to 9999; see 'spotrun help submit'" \
	"--priority out of range: 64"
t_is "$(keys "$Q")" "$before" "... nothing written by any of these"
printf '[job]\nname = rl\ncommand = /bin/true\nship_workdir = no\n' > "$T/w/rl.ini"
run s "$S" submit --queue "$T/rll" "$T/w/rl.ini"
expect s 66 "" "spotrun: queue file://$T/rll (from --queue): no such queue: $T/rll does not exist; check the spelling, or give --create to make a new queue there" \
	"a mistyped file:// queue: refused (66), naming the path and --create"
run s env SPOTRUN_QUEUE="$T/rll" "$S" submit -n "$T/w/rl.ini"
t_is "$rc|$(cat "$T/s.err")|$(ls -d "$T/rll" 2>/dev/null)" "66|spotrun: queue file://$T/rll (from \$SPOTRUN_QUEUE): no such queue: $T/rll does not exist; check the spelling, or give --create to make a new queue there|" \
	"... from \$SPOTRUN_QUEUE too, a dry run as well; no folder made"
run s "$S" submit --create --run-local --queue "$T/rl" "$T/w/rl.ini"
t_is "$rc|$(cat "$T/s.out")|$(grep -c '^spotrun agent: rl: succeeded (epoch 1)$' "$T/s.err")" "0|rl: queued
1 queued, 0 already in the queue: file://$T/rl (from --queue)|1" \
	"--run-local: submits, then an agent in this process runs the queue dry (exit 0)" ||
	t_show "$T/s.err"
run s "$S" submit -n "$top_srcdir/examples/sweep.ini"
t_is "$rc|$(tail -n 1 "$T/s.out")" "0|dry run: 4 jobs, nothing written to queue $QU (the default)" \
	"examples/sweep.ini: 4 trials"

# --- 3. status -------------------------------------------------------------
Q2=$T/q2
s2() { "$S" "$@" --queue "$Q2"; }
s2 submit --create "$T/w/sweep.ini" "$T/w/job.ini" "$T/w/stored.ini" > /dev/null 2>&1 || t_bail "submit to $Q2"
$H status "file://$Q2" lr.1 succeeded 3 3 2 7200 360 1.2346 4.1 4500 ip-10-0-1-5
$H status "file://$Q2" lr.2 running 2 2 1 3600 0 0.5 2.05 120 "gpu host 7"
$H status "file://$Q2" lr.3 failed 1 1 0 90 0 0.0125 0.05 -1 ip-10-0-1-9
$H status "file://$Q2" train released 4 5 4 86400 7200 30 98.32 99000 p5-a
run st s2 status
expect st 0 "queue file://$Q2 (from --queue)

sweep lr: 6 trials (1 running, 3 queued, 1 succeeded, 1 failed)
JOB    STATE     ATTEMPTS PREEMPTED GPU-HOURS    LOST      COST ON-DEMAND     STEP  HOST
lr.1   succeeded        3         2      2.00    0.10     \$1.23     \$4.10     4500  ip-10-0-1-5
lr.2   running          2         1      1.00    0.00     \$0.50     \$2.05      120  gpu host 7
lr.3   failed           1         0      0.03    0.00     \$0.01     \$0.05        -  ip-10-0-1-9
lr.4   queued           0         0      0.00    0.00     \$0.00     \$0.00        -  -
lr.5   queued           0         0      0.00    0.00     \$0.00     \$0.00        -  -
lr.6   queued           0         0      0.00    0.00     \$0.00     \$0.00        -  -
total                   6         3      3.02    0.10     \$1.75     \$6.20

jobs: 2 (1 released, 1 queued)
JOB        STATE     ATTEMPTS PREEMPTED GPU-HOURS    LOST      COST ON-DEMAND     STEP  HOST
own-store  queued           0         0      0.00    0.00     \$0.00     \$0.00        -  -
train      released         5         4     24.00    2.00    \$30.00    \$98.32    99000  p5-a
total                       5         4     24.00    2.00    \$30.00    \$98.32

all: 8 jobs (1 running, 1 released, 4 queued, 1 succeeded, 1 failed), 11 attempts, 7 preemptions, 27.02 GPU-hours used, 2.10 lost; cost \$31.75, on demand \$104.52, saved \$72.77 (70%)

lr.4: needs 1 GPU: no agent is running on this queue (start one: spotrun agent)
lr.5: needs 1 GPU: no agent is running on this queue (start one: spotrun agent)
lr.6: needs 1 GPU: no agent is running on this queue (start one: spotrun agent)
own-store: needs no GPU: no agent is running on this queue (start one: spotrun agent)
train: needs 8xH100: no agent is running on this queue (start one: spotrun agent)" "" \
	"status: a table per sweep and one for other jobs, totals, what the night cost and saved, why jobs wait"
run st s2 status lr.1 train
expect st 0 "queue file://$Q2 (from --queue)

sweep lr: 1 trial (1 succeeded)
JOB    STATE     ATTEMPTS PREEMPTED GPU-HOURS    LOST      COST ON-DEMAND     STEP  HOST
lr.1   succeeded        3         2      2.00    0.10     \$1.23     \$4.10     4500  ip-10-0-1-5
total                   3         2      2.00    0.10     \$1.23     \$4.10

jobs: 1 (1 released)
JOB    STATE     ATTEMPTS PREEMPTED GPU-HOURS    LOST      COST ON-DEMAND     STEP  HOST
train  released         5         4     24.00    2.00    \$30.00    \$98.32    99000  p5-a
total                   5         4     24.00    2.00    \$30.00    \$98.32

all: 2 jobs (1 released, 1 succeeded), 8 attempts, 6 preemptions, 26.00 GPU-hours used, 2.10 lost; cost \$31.23, on demand \$102.42, saved \$71.19 (70%)

train: needs 8xH100: no agent is running on this queue (start one: spotrun agent)" "" \
	"status of two jobs by id"
# agents' records: what they offer against what the jobs need, a record
# not renewed for 16 minutes (SR_QUEUE_MACHINE_STALE is 15) not counted;
# a running job's lease unrenewed for 4 minutes
mkdir -p "$Q2/agents" "$Q2/ckpt/_leases"
now=$(date +%s)
printf '{"agent":"vm-a-1","host":"vm-a","time":%s,"gpu_nodes":0,"gpus":0,"gpu_type":"","no_driver":""}' "$now" > "$Q2/agents/vm-a-1"
printf '{"agent":"vm-b-2","host":"vm-b","time":%s,"gpu_nodes":2,"gpus":2,"gpu_type":"A100","no_driver":""}' "$((now - 800))" > "$Q2/agents/vm-b-2"
printf '{"agent":"vm-c-3","host":"vm-c","time":%s,"gpu_nodes":8,"gpus":8,"gpu_type":"H100","no_driver":""}' "$((now - 960))" > "$Q2/agents/vm-c-3"
: > "$Q2/ckpt/_leases/lr.2"
touch -d '-250 seconds' "$Q2/ckpt/_leases/lr.2"
run st s2 status
t_is "$rc|$(sed -n '/^all: /,$p' "$T/st.out" | tail -n +3)" "0|lr.2: agent silent for 4m (its lease was last renewed 4m ago; another agent takes the job over once it expires)
lr.4: needs 1 GPU: waits for one of 1 agent that can run it
lr.5: needs 1 GPU: waits for one of 1 agent that can run it
lr.6: needs 1 GPU: waits for one of 1 agent that can run it
own-store: needs no GPU: waits for one of 2 agents that can run it
train: needs 8xH100: no agent has them (vm-a: 0 GPUs, vm-b: 2xA100)" \
	"status says why each job waits, against the agents' records, and that a running job's agent is silent" || t_show "$T/st.out"
rm "$Q2/agents/vm-a-1" "$Q2/agents/vm-b-2" "$Q2/ckpt/_leases/lr.2"
run st s2 status train
t_is "$rc|$(tail -n 1 "$T/st.out")" "0|train: needs 8xH100: no agent is running on this queue (start one: spotrun agent; 1 agent stopped renewing its record over 15m ago: gone, and spotrun gc --apply removes it)" \
	"an agent's record not renewed for 16m: its agent is taken for gone" || t_show "$T/st.out"
# a pool whose VMs cost its cap (the scaler set its target to 0): said
# after every queued job's reason (a job named: status asks no cloud)
mkdir -p "$Q2/pools"
printf '{"name":"gpu","cloud":"aws","region":"us-east-1","group":"fleet-1","template":"lt-1","target":0,"created":1,"updated":1,"max_vms":4,"cost_cap":10,"idle_timeout":0,"spent":10.5,"spent_at":1,"fence":3,"by":"vm-a-1","why":"cost cap $10.00 reached ($10.50 spent)"}' > "$Q2/pools/gpu"
run st s2 status train
t_is "$rc|$(tail -n 1 "$T/st.out")" "0|train: needs 8xH100: no agent is running on this queue (start one: spotrun agent; 1 agent stopped renewing its record over 15m ago: gone, and spotrun gc --apply removes it); pool gpu at its cost cap (\$10.50 spent of \$10.00): no VM comes from it until the cap is raised (cost_cap in the pool file, then spotrun up)" \
	"a pool at its cost cap: said after a queued job's reason, with the fix" || t_show "$T/st.out"
rm -r "$Q2/pools"
# gc on a queue of its own (Q2's debris is the later tests'): a record
# of an agent gone, one 14m old, live
QG=$T/qgc
"$S" submit --create --queue "$QG" "$T/w/job.ini" > /dev/null 2>&1 || t_bail "submit to $QG"
mkdir -p "$QG/agents"
mv "$Q2/agents/vm-c-3" "$QG/agents/"
printf '{"agent":"vm-d-4","host":"vm-d","time":%s,"gpu_nodes":0,"gpus":0,"gpu_type":"","no_driver":""}' "$((now - 850))" > "$QG/agents/vm-d-4"
run gc "$S" gc --grace 0s --queue "$QG"
t_is "$rc|$(grep -c 'agents/vm-c-3' "$T/gc.out")|$(grep -c 'agents/vm-d-4' "$T/gc.out")|$(ls "$QG/agents" | tr '\n' ' ')" "0|1|0|vm-c-3 vm-d-4 " \
	"gc's dry run names the gone agent's record and keeps it" || t_show "$T/gc.out"
run gc "$S" gc --apply --grace 0s --queue "$QG"
t_is "$rc|$(ls "$QG/agents" | tr '\n' ' ')" "0|vm-d-4 " \
	"gc --apply --grace 0s removes the gone agent's record, not one 14m old (renewed every 5m)" || t_show "$T/gc.out"
rm -r "$Q2/agents"
run st s2 status lr
run st2 s2 status "$T/w/sweep.ini"
t_is "$rc|$(grep -c '^[1-6]  ' "$T/st.out")|$(cat "$T/st2.out")" "0|6|$(cat "$T/st.out")" \
	"status of a sweep by name, and by its file: its 6 trials"
run st s2 status lrr
expect st 66 "" "spotrun: lrr: no such job or sweep in queue file://$Q2 (from --queue); did you mean lr? (spotrun status lists the jobs)" \
	"status of a name of nothing: 66, with the closest"
run st s2 status "$T/w/job2.ini" "$T/w/nosuch.ini"
t_is "$rc|$(head -n 1 "$T/st.err")" "65|$T/w/nosuch.ini: cannot open: No such file or directory" \
	"a target file that is not there: 65, as check says it" || t_show "$T/st.err"
run st s2 status --json
python3 - "$T/st.out" "$Q2" > "$T/json.out" 2>&1 <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["queue"] == "file://" + sys.argv[2] and d["from"] == "--queue", d["queue"]
j = {x["id"]: x for x in d["jobs"]}
assert list(j) == ["lr.1", "lr.2", "lr.3", "lr.4", "lr.5", "lr.6", "own-store", "train"], list(j)
assert j["lr.1"] == {"id": "lr.1", "sweep": "lr", "state": "succeeded", "epoch": 3,
    "updated": j["lr.1"]["updated"], "attempts": 3, "preemptions": 2, "gpu_seconds": 7200,
    "lost_gpu_seconds": 360, "gpu_hours": 2.0, "lost_gpu_hours": 0.1, "cost": 1.2346,
    "on_demand_cost": 4.1, "step": 4500, "host": "ip-10-0-1-5"}, j["lr.1"]
assert j["lr.3"]["step"] is None and j["train"]["sweep"] is None and j["lr.4"]["host"] == ""
assert [s["name"] for s in d["sweeps"]] == ["lr"]
t = d["sweeps"][0]["totals"]
assert t["jobs"] == 6 and t["states"] == {"running": 1, "released": 0, "queued": 3,
    "succeeded": 1, "failed": 1, "cancelled": 0} and t["cost"] == 1.7471, t
a = d["totals"]
assert a["jobs"] == 8 and a["gpu_seconds"] == 97290 and a["cost"] == 31.7471 \
    and a["on_demand_cost"] == 104.52 and a["saved"] == 72.7729, a
assert d["requests"] == {"total": 4, "lists": 4, "gets": 0, "puts": 0, "deletes": 0,
    "heads": 0}, d["requests"]
assert d["pools"] == [], d["pools"]
assert d["markers"] == {"stale": 0, "unreadable": 0, "malformed": 0}
print("ok")
EOF
t_is "$rc|$(cat "$T/json.out")" "0|ok" \
	"status --json: every field of a job, per-sweep and overall totals, no pool, 4 list requests (index/, malformed/, agents/, pools/), no GET"
: > "$Q2/index/not-a-marker"
run st s2 status --json
t_is "$rc|$(cat "$T/st.err")|$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["markers"]["unreadable"], len(d["jobs"]))' "$T/st.out")" \
	"0|spotrun: warning: 1 status marker in queue file://$Q2 (from --queue) cannot be read (not of the form index/ID~EPOCH~...; doc/fleet.md): skipped|1 8" \
	"a key in index/ that is no marker: skipped, with a warning"
rm -f "$Q2/index/not-a-marker"
Q3=$T/q3
$H many "file://$Q3" big 10000 || t_bail "10,000 status markers"
run big "$S" status --json --queue "$Q3"
t_is "$rc|$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["requests"]; print(len(d["jobs"]), d["totals"]["jobs"], d["totals"]["cost"], d["sweeps"][0]["name"], r["lists"], r["gets"], r["total"])' "$T/big.out")" \
	"0|10000 10000 2500.0 big 13 0 13" "status of 10,000 jobs: 13 list requests (10 of index/, 1 of malformed/, 1 of agents/, 1 of pools/), no GET"
run big "$S" status --queue "$Q3"
t_is "$rc|$(tail -n 1 "$T/big.out")" "0|all: 10000 jobs (1667 running, 1667 released, 1667 queued, 1667 succeeded, 1666 failed, 1666 cancelled), 19999 attempts, 9999 preemptions, 10000.00 GPU-hours used, 999.90 lost; cost \$2500.00, on demand \$10000.00, saved \$7500.00 (75%)" \
	"... and its table's last line"

# --- 4. logs ---------------------------------------------------------------
run l s2 logs lr.5
expect l 0 "" "spotrun: job lr.5 has no output in the queue yet" "logs of a job with none yet"
printf 'step 1\nstep 2\n' | $H log "file://$Q2" lr.5 1 1
printf 'resumed at 2\npart' | $H log "file://$Q2" lr.5 1 2
printf 'ial line\n' | $H log "file://$Q2" lr.5 1 2
printf 'run two\n' | $H log "file://$Q2" lr.5 2 1
run l s2 logs lr.5
expect l 0 "==> lr.5: run 1, attempt 1 <==
step 1
step 2
==> lr.5: run 1, attempt 2 <==
resumed at 2
partial line
==> lr.5: run 2, attempt 1 <==
run two" "" "logs: every segment in order, a header per run and attempt"
run l s2 logs lr
expect l 64 "" "spotrun: lr is a sweep of 6 trials; spotrun logs shows one job: give a trial's id, as in spotrun logs lr.1" \
	"logs of a sweep: one job, please (64)"
run l s2 logs nosuch
expect l 66 "" "spotrun: nosuch: no such job or sweep in queue file://$Q2 (from --queue); spotrun status lists the jobs" \
	"logs of nothing: 66"
t_bg hold "$H" hold "file://$Q2" lr.6 60
hold=$t_last
wait_for "$T/hold.out" '^held lr.6 epoch 1$' 10 "$hold"
t_result $? "the helper holds lr.6, as an agent would"
t_bg follow "$S" logs -f lr.6 --queue "$Q2"
follow=$t_last
sleep 1.5
printf 'first\n' | $H log "file://$Q2" lr.6 1 1
wait_for "$T/follow.out" '^first$' 10 "$follow"
t_result $? "logs -f prints a segment shipped after it started"
printf 'second\n' | $H log "file://$Q2" lr.6 1 1
s2 cancel lr.6 > /dev/null
t_wait "$hold"
t_is "$t_rc|$(tail -n 1 "$T/hold.out")" "0|cancel requested, checkpoint 0" \
	"cancel of a running job: its holder sees the request, and ends it cancelled"
i=0
while kill -0 "$follow" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
t_wait "$follow"
t_is "$t_rc|$(cat "$T/follow.out")|$(cat "$T/follow.err")" "0|==> lr.6: run 1, attempt 1 <==
first
second|spotrun: job lr.6 cancelled" "logs -f ends when the lease does, with what came before the end"

# --- 5. cancel -------------------------------------------------------------
run c s2 cancel lr.4 own-store
expect c 0 "lr.4: cancelled (no agent was running it)
own-store: cancelled (no agent was running it)
2 cancelled, 0 asked to stop, 0 had ended: file://$Q2 (from --queue)" "" "cancel of queued jobs: at once"
t_is "$($H lease "file://$Q2" lr.4)|$($H lease "file://$Q2" own-store)" "cancelled 1|cancelled 1" \
	"... their leases say cancelled (own-store's in its own store)"
$H end "file://$Q2" lr.2 released
$H end "file://$Q2" lr.1 succeeded
t_bg hold "$H" hold "file://$Q2" lr.2 60
hold=$t_last
wait_for "$T/hold.out" '^held lr.2 epoch 2$' 10 "$hold"
run c s2 cancel --checkpoint lr.2 lr.1 lr.4
t_wait "$hold"
expect c 0 "lr.2: asked to stop: the agent running it stops it at its next heartbeat (within 20 s by default), after a last checkpoint
lr.1: had ended (succeeded): nothing to cancel
lr.4: had ended (cancelled): nothing to cancel
0 cancelled, 1 asked to stop, 2 had ended: file://$Q2 (from --queue)" "" \
	"cancel --checkpoint of a running job: asked; of ended ones: left"
t_is "$t_rc|$(tail -n 1 "$T/hold.out")|$($H lease "file://$Q2" lr.2)" "0|cancel requested, checkpoint 1|cancelled 2" \
	"... the holder is asked for a last checkpoint and ends it cancelled"
run c s2 cancel nosuch lr.5
expect c 66 "" "spotrun: nosuch: no such job or sweep in queue file://$Q2 (from --queue); spotrun status lists the jobs" \
	"cancel with a name of nothing: nothing cancelled (66)"
t_is "$($H lease "file://$Q2" lr.5)" "none" "... lr.5 untouched"

# --- 6. requeue, retry -------------------------------------------------------
$H end "file://$Q2" lr.3 failed
$H end "file://$Q2" train released
run r s2 retry lr
expect r 0 "lr.2: queued again (it was cancelled)
lr.3: queued again (it was failed)
lr.4: queued again (it was cancelled)
lr.6: queued again (it was cancelled)
4 queued again, 2 skipped (1 queued, 1 succeeded): retry takes failed and cancelled jobs: file://$Q2 (from --queue)" "" \
	"retry of a sweep: its failed and cancelled trials, the others skipped"
t_is "$($H lease "file://$Q2" lr.2)|$($H lease "file://$Q2" lr.3)|$($H lease "file://$Q2" lr.1)" \
	"queued 2|queued 1|succeeded 1" "... their leases queued at their epochs, the succeeded one left"
t_is "$(keys "$Q2" | grep -c '^pending/09999~T~lr\.3~1-2~~q~1~E$')|$(keys "$Q2" | grep -c '^index/lr\.3~000000000001~T~queued~1~0~')" \
	"1|1" "... a pending marker back with the lease's epoch and etag, the status marker queued (counts kept)"
run r s2 retry lr.1
expect r 69 "0 queued again: file://$Q2 (from --queue)" "spotrun: lr.1: not retried: requeue lease _leases/lr.1 in file://$Q2/ckpt: its state is succeeded (epoch 1), not one asked for; retry takes failed and cancelled jobs: to run a succeeded one again: spotrun requeue lr.1" \
	"retry of a succeeded job by name: refused (69), naming the command that would work"
run r s2 requeue lr.1 "$T/w/job.ini"
expect r 69 "lr.1: queued again (it was succeeded)
1 queued again: file://$Q2 (from --queue)" "spotrun: train: not requeued: requeue lease _leases/train in file://$Q2/ckpt: its state is released (epoch 1), not one asked for; spotrun status train says why it waits" \
	"requeue of a succeeded job; a released one is no ended job (69)"
run r s2 requeue lr.5
expect r 69 "0 queued again: file://$Q2 (from --queue)" "spotrun: lr.5: not requeued: requeue lr.5: it was never claimed: it is still waiting in the queue; spotrun status lr.5 says why it waits" \
	"requeue of a job never claimed: it is waiting already"
$H status "file://$Q2" lr.5 failed 7 2 1 60 0 0 0 -1 h
echo 'not a lease' | $H put "file://$Q2" _leases/lr.5
run r s2 retry lr.5
t_is "$rc|$(grep -c 'malformed' "$T/r.err")" "74|1" "retry leaves a malformed lease alone"
run r s2 requeue lr.5
expect r 0 "lr.5: queued again (it was failed)
1 queued again: file://$Q2 (from --queue)" "" "requeue replaces a malformed lease"
t_is "$($H lease "file://$Q2" lr.5)" "queued 7" "... by a queued one at the status marker's epoch (7), so the next claim is above it"

# --- the README's fleet quickstart, as written ------------------------------
line=$(grep -oE '`\./spotrun submit examples/sweep\.ini[^`]*`' "$top_srcdir/README.md" | head -n 1 | tr -d '`')
t_is "$line" "./spotrun submit examples/sweep.ini && ./spotrun status" "the README shows submit, then status"
(cd "$top_srcdir" && XDG_DATA_HOME=$T/readme sh -c "$(printf '%s' "$line" | sed "s|\./spotrun|$S|g")") \
	> "$T/readme.out" 2> "$T/readme.err"
t_is "$?|$(grep -c '^quickstart-sweep\.[1-4]: queued (seed=[12], steps=[12]00)$' "$T/readme.out")|$(grep '^all: ' "$T/readme.out")|$(grep -c '^quickstart-sweep\.[1-4]: needs no GPU: no agent is running on this queue (start one: spotrun agent)$' "$T/readme.out")" \
	"0|4|all: 4 jobs (4 queued), 0 attempts, 0 preemptions, 0.00 GPU-hours used, 0.00 lost; cost \$0.00, on demand \$0.00, saved \$0.00|4" \
	"... which queues the 4 trials of examples/sweep.ini and shows them, and why they wait" || t_show "$T/readme.err"
t_done
