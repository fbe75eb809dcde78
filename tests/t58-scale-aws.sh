#!/bin/sh
# t58-scale-aws.sh: the pool sized to its queue by its agents
# (fleet/agent-scale.c, fleet/pool-scale.c; doc/fleet.md "Pool scaling")
# against moto (tests/ec2emu.py), the agents local processes, the queue in
# moto's S3. Exact behaviour, each step waited for as an event (the pool's
# record changing, a line of an agent), never a sleep:
#   up --count 1 sets the first target, the record carries max_vms;
#   3 jobs queued (of a GPU, which no agent here offers, so the demand
#   holds still while it is read), an agent raises the target to max_vms, 2, saying
#   "demand 3 VMs, max 2", the fleet's target follows;
#   a second agent does not scale while the first holds the pool's lease;
#   the queue drained by a cancel, the jobs ended by an agent of one GPU
#   that scales nothing (SPOTRUN_SCALE_INTERVAL=0; SPOTRUN_SCALE_IDLE=1): target 0, "queue drained";
#   the agents gone, their lease released, `submit` raises the pool from 0;
#   status shows the pool's line and its VM (id, state, zone, type, price,
#   age), the price the spot price history's at its launch (ec2emu.py's
#   --spot-price), --json the record's fields and the VM exactly,
#   --no-cloud the line alone (and "vms": null);
#   a scaler stopped before its write (fault pool-scale-write:stop) past
#   its lease's TTL, whose lease another agent took, writes nothing when it
#   wakes: the record stays byte for byte the other's;
#   the record keeps the VM's launch price once a step listed it
#   ("prices"), and status takes a VM's price from there rather than ask
#   the history again (a price put in the record is what status shows);
#   a pool past its cost cap goes to 0 ("cost cap $1.00 reached") and
#   submit does not raise it;
#   the pool's cost split: spent (till then) all idle, in jobs 0 (no
#   agent names the VM); an agent whose instance is the pool's VM (label
#   instance) running a job on it: in jobs above 0, spent = in jobs + idle
#   in the record (each rounded to the millionth), status prints the three;
#   a step whose record changed between its read and its cloud write (as
#   `down --drain` marks it) writes nothing to the cloud;
#   a pool waiting for capacity with no group (AWS: no fleet) is left at
#   its target, "waiting for capacity: no group to size; ...", no
#   ModifyFleet sent;
#   down leaves no fleet.
# Skipped without moto unless SPOTRUN_TEST_REQUIRE_MOTO=1.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${SPOTRUN:=$PWD/spotrun}"
data=$top_srcdir/tests/pool

. "$top_srcdir/tests/ec2emu-env.sh"
ec2emu_have_moto || exit "$ec2emu_exit"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t58-scale.XXXXXX") || { echo "Bail out! mktemp"; exit 1; }
emu_pid=
agents=
cleanup() {
	for p in $agents; do
		kill -CONT "$p" 2>/dev/null
		kill -KILL "$p" 2>/dev/null
	done
	[ -n "$emu_pid" ] && kill "$emu_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# the spot price history: g5.xlarge in us-east-1a 0.3712 since 2020 (what
# a VM launched now pays), 0.9 from 2099 (not yet); none of g5.2xlarge,
# the cost-capped pool's type, priced by the table
ec2emu_start --ssm-param "/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id=ami-12c6146b" \
    --spot-price g5.xlarge,us-east-1a,0.5,2019-01-01T00:00:00Z \
    --spot-price g5.xlarge,us-east-1a,0.3712,2020-01-01T00:00:00Z \
    --spot-price g5.xlarge,us-east-1a,0.9,2099-01-01T00:00:00Z \
    --spot-price g5.xlarge,us-east-1c,0.11,2020-01-01T00:00:00Z
export HOME=$tmp XDG_CONFIG_HOME=$tmp/config
unset SPOTRUN_FAULT SPOTRUN_SCALE_INTERVAL SPOTRUN_SCALE_IDLE
q=s3://spotrun-t58/queue
q2=s3://spotrun-t58/cap

n=0
failed=0
result() {	# result OK DESC
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}
is() {	# is GOT WANT DESC
	result "$([ "$1" = "$2" ]; echo $?)" "$3"
	if [ "$1" != "$2" ]; then
		printf '%s\n' "$2" | sed 's/^/# want: /'
		printf '%s\n' "$1" | sed 's/^/# got:  /'
	fi
}
run() {	# run WANT_CODE DESC ARGS...
	want=$1 desc=$2
	shift 2
	"$SPOTRUN" "$@" > "$tmp/out" 2> "$tmp/err"
	code=$?
	result "$([ "$code" -eq "$want" ]; echo $?)" "$desc: exit $want"
	[ "$code" -eq "$want" ] || { echo "# got exit $code"; sed 's/^/# stderr: /' "$tmp/err"; }
}
# An object of moto's S3 (moto checks no signature, but files what an
# unsigned request asks under another account): the pool's record.
s3get() {
	curl -s -H "Authorization: AWS4-HMAC-SHA256 Credential=$AWS_ACCESS_KEY_ID/20250101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0" \
	    "$ep/spotrun-t58/$1"
}
record() { s3get "$1/pools/$2"; }
# field JSON NAME: a number's or a string's value in a compact record
field() {
	printf '%s' "$1" | sed -n -e "s/.*\"$2\":\"\([^\"]*\)\".*/\1/p" \
	    -e "t" -e "s/.*\"$2\":\([-0-9.]*\).*/\1/p"
}
# until DESC CMD...: wait for CMD to succeed (60 s at most: an event, not a time)
until_() {
	desc=$1
	shift
	i=0
	while ! "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		if [ $i -gt 600 ]; then
			echo "# timed out waiting for: $desc"
			return 1
		fi
		sleep 0.1
	done
	return 0
}
# the epoch of the pool's lease now
lease_epoch() { s3get queue/_leases/pool.t58 | sed -n 's/.*"epoch":\([0-9]*\).*/\1/p'; }
has_field() { [ "$(field "$(record "$1" "$2")" "$3")" = "$4" ]; }
# The fleets' targets on moto by boto3, "POOL TARGET" a line.
fleets() {
	python3 - "$ep" <<'EOF'
import sys, boto3
ec2 = boto3.client("ec2", endpoint_url=sys.argv[1], region_name="us-east-1")
for f in ec2.describe_fleets()["Fleets"]:
    if not f["FleetState"].startswith("deleted"):
        tags = dict((t["Key"], t["Value"]) for t in f.get("Tags", []))
        print(tags.get("spotrun:pool"), f["TargetCapacitySpecification"]["TotalTargetCapacity"])
EOF
}
# agent NAME QUEUE [VAR=VALUE...] [-- ARGS]: an agent of no GPU in the
# background, quick to scale; its id NAME-PID in $aid, its stderr in $tmp/NAME.err
agent() {
	name=$1 aq=$2
	shift 2
	(
		export SPOTRUN_SCALE_INTERVAL=0.2 SPOTRUN_SCALE_IDLE=1 SPOTRUN_LEASE_TTL=10s
		while [ $# -gt 0 ] && [ "$1" != -- ]; do export "$1"; shift; done
		[ $# -gt 0 ] && shift
		exec "$SPOTRUN" agent --queue "$aq" --provider local --label gpus=0 \
		    --label host="$name" --dir "$tmp/$name" "$@" 2> "$tmp/$name.err"
	) &
	apid=$!
	agents="$agents $apid"
	aid=$name-$apid
}
stop_agent() {	# stop_agent PID: SIGTERM, and wait for its end
	kill -TERM "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
said() { grep -qF -- "$2" "$tmp/$1.err"; }

python3 -c "import sys, boto3; boto3.client('s3', endpoint_url=sys.argv[1], region_name='us-east-1').create_bucket(Bucket='spotrun-t58')" "$ep"
mkdir "$tmp/w"
cat > "$tmp/w/sweep.ini" <<EOF
[job]
name = s
command = /bin/true
ship_workdir = no
[resources]
gpus = 1
[sweep]
n = 1, 2, 3
EOF
cat > "$tmp/w/one.ini" <<EOF
[job]
name = one
command = /bin/true
ship_workdir = no
[resources]
gpus = 1
EOF
cp "$tmp/w/one.ini" "$tmp/w/two.ini"
sed -i 's/^name = one/name = two/' "$tmp/w/two.ini"

# ---- up sets the first target ----
run 0 "up --count 1" up "$data/aws-scale.ini" --queue "$q" --count 1
r=$(record queue t58)
is "$(field "$r" target) $(field "$r" max_vms) $(field "$r" by) $(field "$r" fence)" "1 2 spotrun up 0" \
    "the record: target 1, max_vms 2, by spotrun up, fence 0"
is "$(fleets)" "t58 1" "the fleet's target is 1"

# ---- agents raise it to the demand, within max_vms ----
run 0 "submit a sweep of 3" submit --queue "$q" "$tmp/w/sweep.ini"
is "$(grep -c '^pool' "$tmp/out")" "0" "submit leaves a pool above 0 to its scaler"
agent agA "$q"
pa=$apid ida=$aid
until_ "agent A raises the target to 2" has_field queue t58 target 2
r=$(record queue t58)
is "$(field "$r" by) / $(field "$r" why)" "$ida / demand 3 VMs, max 2" "agent A set it: demand 3 VMs, max 2"
is "$(fleets)" "t58 2" "the fleet's target is 2"
said agA "pool t58: scaling it (its lease, epoch 1)"; result $? "agent A took the pool's lease, epoch 1"
said agA "pool t58: target 1 -> 2 (demand 3 VMs, max 2)"; result $? "agent A says the move"

# ---- a second agent does not scale while the first holds the lease ----
agent agB "$q"
pb=$apid
until_ "agent B sees A scaling" said agB "pool t58: scaled by $ida"
result $? "agent B: pool t58: scaled by A"
grep -q "pool t58: \(target\|scaling\)" "$tmp/agB.err"
result "$([ $? -ne 0 ]; echo $?)" "agent B neither holds the lease nor moves the target"
is "$(field "$(record queue t58)" by)" "$ida" "the record is still A's"

# ---- the queue drained: to 0 ----
run 0 "cancel the sweep" cancel --queue "$q" s
# an agent of a GPU ends the cancelled jobs at its claims (it scales nothing)
agent agF "$q" SPOTRUN_SCALE_INTERVAL=0 -- --label gpus=1
pf=$apid
until_ "the queue drained, target 0" has_field queue t58 target 0
r=$(record queue t58)
is "$(field "$r" by) / $(field "$r" why)" "$ida / queue drained" "agent A took it to 0: queue drained"
is "$(fleets)" "t58 0" "the fleet's target is 0"
stop_agent "$pa"
stop_agent "$pb"
stop_agent "$pf"
# A keeper whose renewal came too late (a TTL of 3 s, as it was, on a loaded machine)
# lost the lease: it is no longer A's to release, and stays as it was
# until it expires (seen once at load 12).
if said agA "pool t58: lost its lease"; then
	is "$(s3get queue/_leases/pool.t58 | sed -n 's/.*"state":"\([a-z]*\)".*/\1/p')" "running" \
	    "the agents gone: A had lost the pool's lease, which it leaves to expire"
else
	is "$(s3get queue/_leases/pool.t58 | sed -n 's/.*"state":"\([a-z]*\)".*/\1/p')" "released" \
	    "the agents gone, the pool's lease is released"
fi

# ---- submit raises it from 0 ----
run 0 "submit one job" submit --queue "$q" "$tmp/w/one.ini"
is "$(grep '^pool' "$tmp/out")" "pool t58: target 1 (demand 1 VM)" "submit raises the pool from 0"
r=$(record queue t58)
e=$(lease_epoch)
is "$(field "$r" target) $(field "$r" by) $(field "$r" fence)" "1 spotrun submit $e" \
    "the record: target 1, by spotrun submit, fenced with the lease's epoch ($e)"
result "$([ "$e" -gt 1 ]; echo $?)" "submit claimed the lease over the agents' (epoch $e > 1)"
is "$(fleets)" "t58 1" "the fleet's target is 1"

# ---- status ----
# spent's figures: "$S spent, $J in jobs, $I idle", the dollars as D
money() { sed 's/\$[0-9][0-9]*\.[0-9][0-9] \(spent\|of\|in jobs\|idle\)/$D \1/g'; }
run 0 "status" status --queue "$q"
is "$(sed -n '/^pool/,$p' "$tmp/out" | sed -e 's/fleet-[0-9a-f-]*/fleet-ID/' -e 's/i-[0-9a-f]*/i-ID/' \
    -e 's/ [0-9hms.]*$/ AGE/' | money)" "pool t58 on aws in us-east-1: EC2 Fleet fleet-ID, target 1 VM (demand 1 VM, by spotrun submit); \$D spent, \$D in jobs, \$D idle; VMs: 1 running
  i-ID running us-east-1a g5.xlarge \$0.3712/h AGE" "status: the pool's line, its VMs by state, each VM at the spot price in effect at its launch"
run 0 "status --json" status --queue "$q" --json
python3 - "$tmp/out" > "$tmp/pools" <<'EOF'
import json, re, sys, time
d = json.load(open(sys.argv[1]))
for p in d["pools"]:
    assert p["created"] > 0 and p["updated"] >= p["created"] and p["spent_at"] > 0, p
    # no agent names the VM yet: what it cost is all idle
    assert p["spent"] > 0 and p["idle"] == p["spent"] and p["in_jobs"] == 0, p
    for k in ("created", "updated", "spent_at", "fence", "spent", "idle"):
        p[k] = "X"
    p["group"] = re.sub(r"fleet-[0-9a-f-]+", "fleet-ID", p["group"])
    p["template"] = re.sub(r"lt-[0-9a-f]+", "lt-ID", p["template"])
    for v in p["vms"]:
        assert re.fullmatch(r"i-[0-9a-f]+", v["id"]) and v["name"] == v["id"], v
        assert abs(v["launched"] + v["age_seconds"] - time.time()) < 120, v
        v["id"] = v["name"] = "i-ID"
        v["launched"] = v["age_seconds"] = "X"
    print(json.dumps(p, sort_keys=True))
EOF
is "$(cat "$tmp/pools")" '{"by": "spotrun submit", "cloud": "aws", "cost_cap": null, "created": "X", "engine": "EC2 Fleet", "fence": "X", "group": "fleet-ID", "idle": "X", "idle_timeout": 1800.0, "in_jobs": 0.0, "max_vms": 2, "name": "t58", "region": "us-east-1", "spent": "X", "spent_at": "X", "target": 1, "template": "lt-ID", "tried": null, "updated": "X", "vms": [{"age_seconds": "X", "billed": true, "id": "i-ID", "launched": "X", "name": "i-ID", "price_from": "launch", "price_per_hour": 0.3712, "spot": true, "state": "running", "type": "g5.xlarge", "zone": "us-east-1a"}], "vms_error": null, "waiting": false, "why": "demand 1 VM"}' \
    "status --json: the pool's record and its VM, priced at launch"
run 0 "status --no-cloud" status --queue "$q" --no-cloud
is "$(sed -n '/^pool/,$p' "$tmp/out" | sed 's/fleet-[0-9a-f-]*/fleet-ID/' | money)" \
    "pool t58 on aws in us-east-1: EC2 Fleet fleet-ID, target 1 VM (demand 1 VM, by spotrun submit); \$D spent, \$D in jobs, \$D idle" \
    "status --no-cloud: the record alone"
run 0 "status --json --no-cloud" status --queue "$q" --json --no-cloud
is "$(python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["pools"][0]; print(p["name"], p["vms"], p["vms_error"])' "$tmp/out")" \
    "t58 None None" "status --json --no-cloud: the record, no VMs (null)"

# ---- a stale scaler writes nothing ----
agent agC "$q" SPOTRUN_FAULT=pool-scale-write:stop
pc=$apid
until_ "agent C stops before its write" said agC "fault injected at pool-scale-write: stopping"
result $? "agent C holds the lease and stops before its write"
ec=$(sed -n 's/.*pool t58: scaling it (its lease, epoch \([0-9]*\)).*/\1/p' "$tmp/agC.err")
is "$ec" "$((e + 1))" "agent C's lease is the next epoch"
agent agD "$q" SPOTRUN_SCALE_INTERVAL=3600
pd=$apid idd=$aid
until_ "agent D takes the lease over and writes" has_field queue t58 by "$idd"
r=$(record queue t58)
is "$(field "$r" fence)" "$((ec + 1))" "agent D wrote under the epoch above C's"
kill -CONT "$pc"
until_ "agent C wakes fenced" said agC "pool t58: the pool's lease (epoch $ec) was lost: writing nothing"
result $? "agent C, awake: the lease lost, writing nothing"
is "$(record queue t58)" "$r" "the record is byte for byte agent D's"
stop_agent "$pc"
stop_agent "$pd"

# ---- the launch prices kept in the record ----
# (agent D's step listed the VM the submit's raise launched)
r=$(record queue t58)
is "$(python3 -c 'import json, re, sys; p = json.loads(sys.argv[1])["prices"]; print([(re.fullmatch(r"i-[0-9a-f]+", k) is not None, v) for k, v in p.items()])' "$r")" \
    "[(True, 0.3712)]" "the record keeps the VM's launch price: {\"i-ID\": 0.3712}"
# a price of the record's is not asked again: one put there is what status shows
python3 - "$ep" "$r" <<'PY'
import json, sys, boto3
r = json.loads(sys.argv[2])
r["prices"] = dict((k, 0.25) for k in r["prices"])
boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1").put_object(
    Bucket="spotrun-t58", Key="queue/pools/t58", Body=json.dumps(r, separators=(",", ":")))
PY
run 0 "status, a price in the record" status --queue "$q"
is "$(sed -n '/^  i-/p' "$tmp/out" | sed -e 's/i-[0-9a-f]*/i-ID/' -e 's/ [0-9hms.]*$/ AGE/')" \
    "  i-ID running us-east-1a g5.xlarge \$0.25/h AGE" \
    "status prices the VM from the record, not the history (which says 0.3712)"

# ---- the cost cap ----
cat > "$tmp/prices.ini" <<'EOF'
[aws]
as_of = 2025-01-01
source = t58: ten dollars a second
g5.2xlarge = 36000 36000
EOF
run 0 "up of a pool with a cost cap" up "$data/aws-scale-cap.ini" --queue "$q2" --count 1
run 0 "submit to its queue" submit --queue "$q2" "$tmp/w/one.ini"
agent agE "$q2" -- --prices "$tmp/prices.ini"
pe=$apid
until_ "the cost cap takes the pool to 0" has_field cap t58c target 0
is "$(field "$(record cap t58c)" why | sed 's/[0-9][0-9.]*/N/g')" 'cost cap $N reached ($N spent)' \
    "the record says why: the cost cap reached"
is "$(field "$(record cap t58c)" why | cut -d' ' -f3)" '$1.00' "the cap is the file's, \$1.00"
stop_agent "$pe"
run 0 "submit another job" submit --queue "$q2" "$tmp/w/two.ini"
is "$(grep '^pool' "$tmp/out" | sed 's/[0-9][0-9.]*/N/g')" 'pool tNc: target N (cost cap $N reached ($N spent))' \
    "submit does not raise a pool past its cost cap"
is "$(fleets | sort)" "t58 1
t58c 0" "the fleets' targets: t58 1, t58c 0"

run 0 "status of the capped pool" status --queue "$q2"
is "$(sed -n '/^pool/,$p' "$tmp/out" | sed -e 's/fleet-[0-9a-f-]*/fleet-ID/' -e 's/\$[0-9][0-9.]* spent)/$N spent)/' \
    -e 's/; \$[0-9][0-9.]* of/; $N of/' -e 's/\$[0-9][0-9.]* idle/$N idle/')" "pool t58c on aws in us-east-1: EC2 Fleet fleet-ID, target 0 VMs (cost cap \$1.00 reached (\$N spent), by $(field "$(record cap t58c)" by)); \$N of \$1.00 spent, \$0.00 in jobs, \$N idle; no VMs" \
    "status: the capped pool at 0 (priced by the table: no history of g5.2xlarge), no VMs"

# ---- a pool waiting for capacity with no group: nothing to size ----
# (every place refused at `up`: on AWS no fleet is left, its record's group
# is ""); its record made from t58's, at target 0, in a queue of its own
python3 - "$ep" "$(record queue t58)" <<'PY'
import json, sys, boto3
r = json.loads(sys.argv[2])
r.update(name="t58w", group="", target=0, waiting=True, fence=0, by="spotrun up", why="")
r["tried"] = "g5.xlarge in us-east-1 (InsufficientInstanceCapacity)"
boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1").put_object(
    Bucket="spotrun-t58", Key="wait/pools/t58w", Body=json.dumps(r, separators=(",", ":")))
PY
run 0 "submit to the waiting pool's queue" submit --queue s3://spotrun-t58/wait "$tmp/w/one.ini"
is "$(grep '^pool' "$tmp/out")$(grep -c warning "$tmp/err")" \
    'pool t58w: target 0 (waiting for capacity: no group to size; the next `spotrun up` tries again)0' \
    "submit leaves a pool with no group at its target, saying why, no warning (no ModifyFleet of no fleet)"
r=$(record wait t58w)
is "$(field "$r" target) $(field "$r" group)|$(field "$r" why)" \
    '0 |waiting for capacity: no group to size; the next `spotrun up` tries again' \
    "its record: target 0, no group, why"
is "$(fleets | sort)" "t58 1
t58c 0" "no fleet made or changed"

# ---- the cost split: a job on the pool's VM ----
# an agent whose instance is the pool's VM (a billed one: label instance,
# as its provider's facts would say on the VM), running a job of no GPU
# that waits; the job of a GPU left pending keeps the demand at 2, so the
# target only rises and the fleet ends no VM (ec2emu.py would end the
# newest, which need not be this one when two launched in one second)
vm=$("$SPOTRUN" status --queue "$q" --json | python3 -c 'import json, sys; print([v["id"] for v in json.load(sys.stdin)["pools"][0]["vms"] if v["billed"]][0])')
r=$(record queue t58)
idle0=$(field "$r" idle)
cat > "$tmp/w/busy.ini" <<EOF
[job]
name = busy
command = sh -c 'until [ -e $tmp/go ]; do sleep 0.1; done'
ship_workdir = no
EOF
run 0 "submit a job that waits" submit --queue "$q" "$tmp/w/busy.ini"
agent agG "$q" SPOTRUN_SCALE_IDLE=3600 -- --label instance="$vm"
pg=$apid
in_jobs() { python3 -c 'import json, sys; sys.exit(json.loads(sys.argv[1])["in_jobs"] <= 0)' "$(record queue t58)"; }
until_ "a step counts the VM busy" in_jobs
rc=$?
result $rc "a step with the job running on the VM adds to in jobs"
[ $rc -eq 0 ] || { sed 's/^/# agG: /' "$tmp/agG.err"; echo "# record: $(record queue t58)"; }
r=$(record queue t58)
is "$(python3 -c 'import json, sys; r = json.loads(sys.argv[1]); print(abs(r["spent"] - r["in_jobs"] - r["idle"]) < 1e-9, r["in_jobs"] > 0, r["idle"] >= float(sys.argv[2]) > 0)' "$r" "$idle0")" \
    "True True True" "the record: spent = in jobs + idle (idle written as the difference of the two, each rounded to the millionth); idle kept from before"
run 0 "status with the split" status --queue "$q" --no-cloud
is "$(sed -n '/^pool/p' "$tmp/out" | sed 's/.*; //' | money)" '$D spent, $D in jobs, $D idle' \
    "status: the pool's line ends with spent, in jobs, idle"
touch "$tmp/go"
stop_agent "$pg"

# ---- a step whose record changed before its cloud write writes nothing ----
# (`down --drain` marks the record and then sets the target to 0: a step
# that had read the record before must not raise the fleet after: t18
# under load saw ask_again do it.) Pool t58r's record, in a queue of its
# own, says target 1 and names t58c's fleet, at 0 (as after down's
# ModifyFleet); a pending GPU job asks for 1 VM, so its agent's step would
# ask the cloud again for the VM it does not see; it stops before its
# write (pool-scale-write:stop, its lease long enough to stay fresh), the
# record is marked draining meanwhile, and the agent, woken, writes nothing
python3 - "$ep" "$(record queue t58)" "$(field "$(record cap t58c)" group)" "$(field "$(record cap t58c)" template)" <<'PY'
import json, sys, boto3
r = json.loads(sys.argv[2])
r.update(name="t58r", group=sys.argv[3], template=sys.argv[4], target=1, fence=0,
    by="spotrun up", why="")
boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1").put_object(
    Bucket="spotrun-t58", Key="race/pools/t58r", Body=json.dumps(r, separators=(",", ":")))
PY
run 0 "submit a GPU job to t58r's queue" submit --queue s3://spotrun-t58/race "$tmp/w/one.ini"
agent agR s3://spotrun-t58/race SPOTRUN_FAULT=pool-scale-write:stop SPOTRUN_LEASE_TTL=600s
pr=$apid
until_ "agent R stops before its write" said agR "fault injected at pool-scale-write: stopping"
rc=$?
result $rc "agent R decided (demand 1 VM, none billed) and stopped before writing"
[ $rc -eq 0 ] || { sed 's/^/# submit: /' "$tmp/out" "$tmp/err"; sed 's/^/# agR: /' "$tmp/agR.err"; }
python3 - "$ep" "$(record race t58r)" <<'PY'
import json, sys, boto3
r = json.loads(sys.argv[2])
r.update(draining=1.0, by="spotrun down", why="draining for spotrun down")
boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1").put_object(
    Bucket="spotrun-t58", Key="race/pools/t58r", Body=json.dumps(r, separators=(",", ":")))
PY
kill -CONT "$pr"
until_ "agent R wakes and sees the record changed" said agR "pool t58r: its record changed since this step read it (by spotrun down: draining for spotrun down): writing nothing"
result $? "agent R, awake: the record changed under it, writing nothing"
is "$(fleets | grep '^t58c ')" "t58c 0" "the fleet t58r names stays at 0 (no ModifyFleet)"
kill -KILL "$pr" 2>/dev/null
wait "$pr" 2>/dev/null

# ---- down ----
run 0 "down t58" down "$data/aws-scale.ini" --queue "$q"
run 0 "down t58c" down "$data/aws-scale-cap.ini" --queue "$q2"
is "$(fleets)" "" "no fleet left"
echo "1..$n"
[ "$failed" -eq 0 ]
