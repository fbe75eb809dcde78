#!/bin/sh
# t75-up-aws-failover.sh: `spotrun up` fails over on AWS, against moto
# (tests/ec2emu.py) behind tests/ec2cap.py, a proxy of the tests that
# answers EC2's capacity errors as AWS does (moto never does): the error
# document of a CreateFleet refused at once, or a maintain fleet's
# DescribeFleets errorSet. What is checked, reading moto's state back
# with boto3 and the proxy's log of CreateFleets:
#   a fleet in us-east-1 that reports InsufficientInstanceCapacity later
#   is deleted with its template, and the pool is made in us-west-2; up
#   says where it found none, the record's tried, status's "moved here"
#   line; the queue's placement history (Q/placement/aws) has the
#   refusal (region, zone, type, code). The next up, us-east-1 mended,
#   goes to us-west-2 first (the history's order) and asks us-east-1
#   nothing. Every region refusing (Unsupported and
#   InsufficientInstanceCapacity at once, one later): the pool waits on
#   the last, status says "waiting for capacity: tried ..." in the order
#   tried, and the history has every refusal. down leaves nothing. A
#   history seeded with preemptions: a region preempted twice in the hour
#   goes after one preempted once, before one that refused; a fleet's
#   overrides (type x zone) put the twice-preempted one last, Priority
#   1, 2... in that order.
# Skipped without moto unless SPOTRUN_TEST_REQUIRE_MOTO=1.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${SPOTRUN:=$PWD/spotrun}"
pool=$top_srcdir/tests/pool/aws-failover.ini

. "$top_srcdir/tests/ec2emu-env.sh"
ec2emu_have_moto || exit "$ec2emu_exit"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t75-fail.XXXXXX") || { echo "Bail out! mktemp"; exit 1; }
emu_pid=
cap_pid=
cleanup() {
	[ -n "$cap_pid" ] && kill "$cap_pid" 2>/dev/null
	[ -n "$emu_pid" ] && kill "$emu_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ec2emu_start
echo '{}' > "$tmp/cap.json"
: > "$tmp/cap.log"
python3 "$top_srcdir/tests/ec2cap.py" --port-file "$tmp/cport" --upstream "$ep" \
	--config "$tmp/cap.json" --log "$tmp/cap.log" 2> "$tmp/cap.err" &
cap_pid=$!
i=0
while [ ! -s "$tmp/cport" ] && [ $i -lt 600 ]; do
	kill -0 "$cap_pid" 2>/dev/null || break
	sleep 0.2
	i=$((i + 1))
done
[ -s "$tmp/cport" ] || { echo "Bail out! tests/ec2cap.py did not start: $(tail -3 "$tmp/cap.err")"; exit 1; }
export AWS_ENDPOINT_URL_EC2=http://127.0.0.1:$(cat "$tmp/cport")
export HOME=$tmp XDG_CONFIG_HOME=$tmp/config
q=s3://spotrun-t75/queue

# moto's state (through moto itself, not the proxy), one line per fact.
moto() {
	python3 - "$ep" "$@" > "$tmp/state" <<'PY'
import json, sys, boto3
ep = sys.argv[1]
s3 = boto3.client("s3", endpoint_url=ep, region_name="us-east-1")
for what in sys.argv[2:]:
    if what == "bucket":
        s3.create_bucket(Bucket="spotrun-t75")
    elif what == "pool":
        for region in ("us-east-1", "us-west-2", "eu-west-1"):
            ec2 = boto3.client("ec2", endpoint_url=ep, region_name=region)
            nf = sum(1 for f in ec2.describe_fleets()["Fleets"] if not f["FleetState"].startswith("deleted"))
            nt = len(ec2.describe_launch_templates()["LaunchTemplates"])
            ni = sum(1 for r in ec2.describe_instances()["Reservations"] for i in r["Instances"]
                     if i["State"]["Name"] != "terminated")
            print("%s fleets %d templates %d instances %d" % (region, nf, nt, ni))
    elif what == "record":
        r = json.loads(s3.get_object(Bucket="spotrun-t75", Key="queue/pools/t75")["Body"].read())
        print("record", r["region"], r.get("tried", "-"), r.get("waiting", "-"))
    elif what == "history":
        h = json.loads(s3.get_object(Bucket="spotrun-t75", Key="queue/placement/aws")["Body"].read())
        for e in h["events"]:
            print("event", e["region"], e["zone"] or "-", e["type"], e["why"])
    elif what == "overrides":
        ec2 = boto3.client("ec2", endpoint_url=ep, region_name="us-east-1")
        for f in ec2.describe_fleets()["Fleets"]:
            if f["FleetState"].startswith("deleted"):
                continue
            for c in f["LaunchTemplateConfigs"]:
                for o in c.get("Overrides", []):
                    print("override", int(o.get("Priority", 0)), o["InstanceType"], o.get("AvailabilityZone", "-"))
PY
}
cap() { printf '%s\n' "$1" > "$tmp/cap.json"; }
# seed QUEUE EVENTS: QUEUE's placement history for aws, written as is
# (EVENTS: "REGION ZONE TYPE WHY AGE_SECONDS" lines, ZONE - for none)
seed() {
	python3 - "$ep" "$1" "$2" <<'PY'
import json, sys, time, boto3
ev = []
for line in sys.argv[3].splitlines():
    region, zone, typ, why, age = line.split()
    ev.append({"region": region, "zone": "" if zone == "-" else zone, "type": typ, "why": why,
               "at": time.time() - float(age)})
boto3.client("s3", endpoint_url=sys.argv[1], region_name="us-east-1").put_object(
    Bucket="spotrun-t75", Key=sys.argv[2] + "/placement/aws", Body=json.dumps({"events": ev}))
PY
}

n=0
failed=0
result() {
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}
is() {
	result "$([ "$1" = "$2" ]; echo $?)" "$3"
	if [ "$1" != "$2" ]; then
		printf '%s\n' "$2" | sed 's/^/# want: /'
		printf '%s\n' "$1" | sed 's/^/# got:  /'
	fi
}
run() {
	want=$1 desc=$2
	shift 2
	"$SPOTRUN" "$@" > "$tmp/out" 2> "$tmp/err"
	code=$?
	result "$([ "$code" -eq "$want" ]; echo $?)" "$desc: exit $want"
	[ "$code" -eq "$want" ] || { echo "# got exit $code"; sed 's/^/# stderr: /' "$tmp/err"; }
}
ids() { sed -e 's/fleet-[0-9a-f-]*/fleet-ID/g' -e 's/lt-[0-9a-f]*/lt-ID/g' "$@"; }

moto bucket

# ---- a fleet that reports no capacity later: the next region ----
cap '{"us-east-1": {"when": "later", "code": "InsufficientInstanceCapacity", "type": "g5.xlarge", "zone": "us-east-1a"}}'
run 0 "up, us-east-1 without capacity" up "$pool" --queue "$q" --count 1
is "$(ids "$tmp/out")" "pool t75: no capacity in g5.xlarge in us-east-1 (InsufficientInstanceCapacity)
pool t75: created EC2 Fleet fleet-ID in us-west-2 (launch template lt-ID, image ami-12c6146b), target 1 VM" "up says where it found none and where it made the pool"
is "$(cat "$tmp/cap.log")" "us-east-1 later InsufficientInstanceCapacity
us-west-2 pass" "CreateFleet in us-east-1, then in us-west-2"
moto pool record history
is "$(cat "$tmp/state")" "us-east-1 fleets 0 templates 0 instances 0
us-west-2 fleets 1 templates 1 instances 1
eu-west-1 fleets 0 templates 0 instances 0
record us-west-2 g5.xlarge in us-east-1 (InsufficientInstanceCapacity) False
event us-east-1 us-east-1a g5.xlarge InsufficientInstanceCapacity" "us-east-1's fleet and template deleted; the pool in us-west-2; record and history"
run 0 "status" status --queue "$q" --no-cloud
is "$(ids "$tmp/out" | tail -1)" "pool t75 on aws in us-west-2: EC2 Fleet fleet-ID, target 1 VM (as spotrun up set it); moved here after no capacity: tried g5.xlarge in us-east-1 (InsufficientInstanceCapacity)" "status: moved here after no capacity"
run 0 "down" down "$pool" --queue "$q"

# ---- the history's order: us-east-1 failed lately, so it goes last ----
cap '{}'
: > "$tmp/cap.log"
run 0 "up again, every region with capacity" up "$pool" --queue "$q" --count 1
is "$(ids "$tmp/out")" "pool t75: created EC2 Fleet fleet-ID in us-west-2 (launch template lt-ID, image ami-12c6146b), target 1 VM" "the region that failed lately is tried after the others"
is "$(cat "$tmp/cap.log")" "us-west-2 pass" "us-east-1 asked nothing"
run 0 "down" down "$pool" --queue "$q"

# ---- every region refuses: the pool waits on the last ----
cap '{"us-east-1": {"when": "now", "code": "InsufficientInstanceCapacity", "type": "g5.xlarge", "zone": "us-east-1a"},
 "us-west-2": {"when": "now", "code": "Unsupported"},
 "eu-west-1": {"when": "later", "code": "MaxSpotInstanceCountExceeded", "type": "g5.xlarge", "zone": "eu-west-1b"}}'
: > "$tmp/cap.log"
run 0 "up, no capacity anywhere" up "$pool" --queue "$q" --count 1
is "$(ids "$tmp/out")" "pool t75: no capacity in g5.xlarge in us-west-2 (Unsupported), g5.xlarge in eu-west-1 (MaxSpotInstanceCountExceeded), g5.xlarge in us-east-1 (InsufficientInstanceCapacity)
pool t75: waiting for capacity in us-east-1 (every place tried), target 1 VM" "up: every region refused, in the history's order; waiting"
is "$(cat "$tmp/cap.log")" "us-west-2 now Unsupported
eu-west-1 later MaxSpotInstanceCountExceeded
us-east-1 now InsufficientInstanceCapacity" "CreateFleet asked in that order"
run 0 "status" status --queue "$q" --no-cloud
is "$(tail -1 "$tmp/out")" "pool t75 on aws in us-east-1: no EC2 Fleet, target 1 VM (as spotrun up set it); waiting for capacity: tried g5.xlarge in us-west-2 (Unsupported), g5.xlarge in eu-west-1 (MaxSpotInstanceCountExceeded), g5.xlarge in us-east-1 (InsufficientInstanceCapacity)" "status: waiting for capacity, tried ..."
moto pool history
is "$(cat "$tmp/state")" "us-east-1 fleets 0 templates 0 instances 0
us-west-2 fleets 0 templates 0 instances 0
eu-west-1 fleets 0 templates 0 instances 0
event us-east-1 us-east-1a g5.xlarge InsufficientInstanceCapacity
event us-west-2 - g5.xlarge Unsupported
event eu-west-1 eu-west-1b g5.xlarge MaxSpotInstanceCountExceeded
event us-east-1 - g5.xlarge InsufficientInstanceCapacity" "nothing left behind; the history has every refusal"
run 0 "down" down "$pool" --queue "$q"
# ---- preemptions weigh less than capacity failures ----
# a queue of its own whose history has, in the last hour, 2 preemptions
# of g5.xlarge in us-east-1 (rank 1) and a capacity failure in us-west-2
# (rank 2): eu-west-1 first, then us-east-1, us-west-2 last
q2=s3://spotrun-t75/q2
seed q2 "us-east-1 us-east-1a g5.xlarge preempted 600
us-east-1 us-east-1a g5.xlarge preempted 300
us-west-2 - g5.xlarge InsufficientInstanceCapacity 900
eu-west-1 - g5.xlarge preempted 60"
cap '{"eu-west-1": {"when": "now", "code": "InsufficientInstanceCapacity", "type": "g5.xlarge", "zone": "eu-west-1a"}}'
: > "$tmp/cap.log"
run 0 "up, history of preemptions and a refusal" up "$pool" --queue "$q2" --count 1
is "$(cat "$tmp/cap.log")" "eu-west-1 now InsufficientInstanceCapacity
us-east-1 pass" "one preemption weighs nothing, two move a region after, a refusal further"
run 0 "down" down "$pool" --queue "$q2"

# ---- a fleet's overrides follow the history ----
# 2 preemptions of g5.xlarge in us-east-1a: that override goes last, the
# same type in us-east-1b keeps its turn
q3=s3://spotrun-t75/q3
seed q3 "us-east-1 us-east-1a g5.xlarge preempted 600
us-east-1 us-east-1a g5.xlarge preempted 300"
cap '{}'
: > "$tmp/cap.log"
run 0 "up of two types in two zones" up "$top_srcdir/tests/pool/aws-failover2.ini" --queue "$q3" --count 1
moto overrides
is "$(cat "$tmp/state")" "override 1 g5.xlarge us-east-1b
override 2 g6.xlarge us-east-1a
override 3 g6.xlarge us-east-1b
override 4 g5.xlarge us-east-1a" "the overrides: the twice-preempted type and zone last, Priority in that order"
run 0 "down" down "$top_srcdir/tests/pool/aws-failover2.ini" --queue "$q3"

echo "1..$n"
[ "$failed" -eq 0 ]
