#!/bin/sh
# t54-up-aws.sh: `spotrun up POOL.ini --queue URL` and `spotrun down` on
# AWS against moto (tests/ec2emu.py: EC2, SSM and S3 on one loopback port;
# the Deep Learning AMI's public SSM parameter served as ami-12c6146b, one
# of moto's images, since moto has none of AWS's DLAMI parameters). What
# is checked, reading moto's state back with boto3:
#   up: exactly one launch template spotrun-pool-t54, tagged with the pool
#   and the queue, InstanceInitiatedShutdownBehavior=terminate, the image
#   from the SSM parameter, its user-data decoding to `spotrun cloud-init
#   --queue Q --idle-timeout 30m00s`'s text (the presigned URL's date and
#   signature aside); one EC2 Fleet of type maintain, tagged, target 2;
#   2 instances tagged; the pool's record in the queue (Q/pools/t54);
#   status's pool line. A second up finds the pool by its tags (still one
#   fleet, one template); --count 1 moves the target; up without --count
#   takes the queue's demand; down leaves no template, fleet or live
#   instance and removes the record; a second down says nothing is left
#   (exit 0); down of an unknown name (66); no credentials (69) and an
#   unknown region (69) said as `verb object: reason`.
# Every endpoint is overridden to moto (EC2, SSM, S3): the image id and
# the objects found in moto's bucket show the calls went there.
# Skipped without moto unless SPOTRUN_TEST_REQUIRE_MOTO=1.
set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${SPOTRUN:=$PWD/spotrun}"
data=$top_srcdir/tests/pool
dlami=/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id

. "$top_srcdir/tests/ec2emu-env.sh"
ec2emu_have_moto || exit "$ec2emu_exit"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/t54-up.XXXXXX") || { echo "Bail out! mktemp"; exit 1; }
emu_pid=
cleanup() {
	[ -n "$emu_pid" ] && kill "$emu_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

ec2emu_start --ssm-param "$dlami=ami-12c6146b"

# Keys of no account, no config file, no instance role; every service's
# endpoint moto's (ec2emu-env.sh).
export HOME=$tmp XDG_CONFIG_HOME=$tmp/config
q=s3://spotrun-t54/queue

# moto's state, one line per fact, by boto3 (a view of our own, not
# spotrun's), into $tmp/state: one Python for every section asked (under
# load, starting one costs seconds); user-data=FILE writes the template's
# user-data, decoded, to FILE.
moto() {
	python3 - "$ep" "$@" > "$tmp/state" <<'EOF'
import base64, json, sys, boto3
ep = sys.argv[1]
kw = dict(endpoint_url=ep, region_name="us-east-1")
ec2 = boto3.client("ec2", **kw)
s3 = boto3.client("s3", **kw)
def tags(r):
    return " ".join("%s=%s" % (t["Key"], t["Value"]) for t in sorted(r.get("Tags", []), key=lambda t: t["Key"]) if t["Key"].startswith("spotrun:"))
def template_data():
    t = ec2.describe_launch_templates()["LaunchTemplates"][0]
    return ec2.describe_launch_template_versions(LaunchTemplateId=t["LaunchTemplateId"])["LaunchTemplateVersions"][0]["LaunchTemplateData"]
for what in sys.argv[2:]:
    if what == "bucket":
        s3.create_bucket(Bucket="spotrun-t54")
    elif what == "templates":
        for t in ec2.describe_launch_templates()["LaunchTemplates"]:
            print("template", t["LaunchTemplateName"], tags(t))
    elif what == "template-tags":
        d = template_data()
        print("image", d.get("ImageId"), "shutdown", d.get("InstanceInitiatedShutdownBehavior"))
        for s in d.get("TagSpecifications", []):
            print("tags for", s["ResourceType"] + ":", tags(s))
    elif what.startswith("user-data="):
        with open(what[10:], "wb") as f:
            f.write(base64.b64decode(template_data()["UserData"]))
    elif what == "fleets":
        for f in ec2.describe_fleets()["Fleets"]:
            if not f["FleetState"].startswith("deleted"):
                print("fleet", f["Type"], "target", f["TargetCapacitySpecification"]["TotalTargetCapacity"], tags(f))
    elif what == "instances":
        for r in ec2.describe_instances()["Reservations"]:
            for i in r["Instances"]:
                if i["State"]["Name"] != "terminated":
                    print("instance", i["InstanceType"], tags(i))
    elif what == "record":
        try:
            r = json.loads(s3.get_object(Bucket="spotrun-t54", Key="queue/pools/t54")["Body"].read())
            print("record", r["name"], r["cloud"], r["region"], r["group"][:6], r["template"][:3], r["target"])
        except s3.exceptions.NoSuchKey:
            print("record none")
    elif what == "bin":
        r = s3.list_objects_v2(Bucket="spotrun-t54", Prefix="queue/bin/")
        print("binary", len(r.get("Contents", [])))
EOF
}
# lines KIND: the state's lines of that kind
lines() { grep "^$1" "$tmp/state"; }

n=0
failed=0
result() {	# result OK DESC: one TAP line; OK is an exit status (0 = pass)
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}
# is GOT WANT DESC
is() {
	result "$([ "$1" = "$2" ]; echo $?)" "$3"
	if [ "$1" != "$2" ]; then
		printf '%s\n' "$2" | sed 's/^/# want: /'
		printf '%s\n' "$1" | sed 's/^/# got:  /'
	fi
}
# run WANT_CODE DESC ARGS...: spotrun ARGS, its code checked, out and err kept
run() {
	want=$1 desc=$2
	shift 2
	"$SPOTRUN" "$@" > "$tmp/out" 2> "$tmp/err"
	code=$?
	result "$([ "$code" -eq "$want" ]; echo $?)" "$desc: exit $want"
	[ "$code" -eq "$want" ] || { echo "# got exit $code"; sed 's/^/# stderr: /' "$tmp/err"; }
}
# the fleet's and the template's ids in spotrun's line, as xxx
ids() { sed -e 's/fleet-[0-9a-f-]*/fleet-ID/g' -e 's/lt-[0-9a-f]*/lt-ID/g' "$@"; }

moto bucket
pool=$data/aws-up.ini

# ---- up: made ----
run 0 "up --count 2" up "$pool" --queue "$q" --count 2
is "$(ids "$tmp/out")" "pool t54: created EC2 Fleet fleet-ID in us-east-1 (launch template lt-ID, image ami-12c6146b), target 2 VMs" "up says what it made, the image from the SSM parameter"
is "$(cat "$tmp/err")" "" "up: nothing on stderr"
moto templates template-tags "user-data=$tmp/ud" bin fleets instances record
is "$(lines template)" "template spotrun-pool-t54 spotrun:pool=t54 spotrun:queue=$q" "exactly one launch template, tagged"
is "$(lines image; lines tags)" "image ami-12c6146b shutdown terminate
tags for instance: spotrun:pool=t54 spotrun:queue=$q
tags for volume: spotrun:pool=t54 spotrun:queue=$q
tags for launch-template: spotrun:pool=t54 spotrun:queue=$q" "the template: the DLAMI's id, poweroff terminates, instances and volumes tagged"
"$SPOTRUN" cloud-init --queue "$q" --labels pool=t54 --idle-timeout 30m00s > "$tmp/ci" 2>&1
norm() { sed -e 's/X-Amz-Date=[0-9TZ]*/X-Amz-Date=D/' -e 's/X-Amz-Signature=[0-9a-f]*/X-Amz-Signature=S/' "$1"; }
is "$(norm "$tmp/ud")" "$(norm "$tmp/ci")" "the user-data is cloud-init's for the queue (URL's date and signature aside)"
is "$(head -1 "$tmp/ud")" "#cloud-config" "the user-data is cloud-config"
is "$(lines binary)" "binary 1" "the binary is in the queue's bucket on moto"
is "$(lines fleet)" "fleet maintain target 2 spotrun:pool=t54 spotrun:queue=$q" "one fleet of type maintain, target 2, tagged"
is "$(lines instance)" "instance g5.xlarge spotrun:pool=t54 spotrun:queue=$q
instance g5.xlarge spotrun:pool=t54 spotrun:queue=$q" "two instances, tagged"
is "$(lines record)" "record t54 aws us-east-1 fleet- lt- 2" "the pool's record in the queue"
run 0 "status --no-cloud" status --queue "$q" --no-cloud
is "$(ids "$tmp/out")" "queue $q (from --queue): no jobs

pool t54 on aws in us-east-1: EC2 Fleet fleet-ID, target 2 VMs (as spotrun up set it)" "status shows the pool's line"

# ---- up again: found, not made twice ----
run 0 "up again" up "$pool" --queue "$q" --count 2
is "$(ids "$tmp/out")" "pool t54: found EC2 Fleet fleet-ID in us-east-1 by its tags; target 2 VMs" "a second up finds the pool by its tags"
moto templates fleets
is "$(lines template | wc -l) $(lines fleet | wc -l)" "1 1" "still one template and one fleet"
run 0 "up --count 1" up "$pool" --queue "$q" --count 1
moto fleets instances record
is "$(lines fleet)" "fleet maintain target 1 spotrun:pool=t54 spotrun:queue=$q" "--count 1: the fleet's target is 1"
is "$(lines instance | wc -l)" "1" "one instance left"
is "$(lines record)" "record t54 aws us-east-1 fleet- lt- 1" "the record's target follows"
run 0 "up without --count, empty queue" up "$pool" --queue "$q"
is "$(ids "$tmp/out")" "pool t54: found EC2 Fleet fleet-ID in us-east-1 by its tags; target 0 VMs (the queue's demand)" "no --count: the queue's demand, none"
mkdir "$tmp/w"
cat > "$tmp/w/sweep.ini" <<'EOF'
[job]
name = lr
command = /bin/true
ship_workdir = no
[resources]
gpus = 1
[sweep]
lr = 0.1, 0.01, 0.001
EOF
run 0 "submit a sweep of 3" submit --queue "$q" "$tmp/w/sweep.ini"
run 0 "up without --count, 3 pending" up "$pool" --queue "$q"
is "$(ids "$tmp/out")" "pool t54: found EC2 Fleet fleet-ID in us-east-1 by its tags; target 3 VMs (the queue's demand)" "no --count: one VM per pending job"
moto fleets
is "$(lines fleet)" "fleet maintain target 3 spotrun:pool=t54 spotrun:queue=$q" "the fleet's target is the demand"
run 0 "up --count 0" up "$pool" --queue "$q" --count 0
run 64 "up --count above max_vms" up "$pool" --queue "$q" --count 5
is "$(cat "$tmp/err")" "spotrun up: --count 5: want a whole number from 0 to the pool's max_vms, 4" "--count 5 refused"

# ---- down ----
run 0 "down" down "$pool" --queue "$q"
is "$(sed 's/deleted [0-9]* resources/deleted N resources/' "$tmp/out")" "pool t54: deleted N resources (EC2 Fleet, its VMs, launch template) in us-east-1; its record removed from the queue" "down says what it deleted"
moto templates fleets instances record
is "$(cat "$tmp/state")" "record none" "nothing left: no template, no fleet, no live instance, no record"
run 0 "down again" down "$pool" --queue "$q"
is "$(cat "$tmp/out")" "pool t54: nothing left in us-east-1" "a second down: nothing left"
run 66 "down of a name without a record" down t54 --queue "$q"
is "$(cat "$tmp/err")" "spotrun down: pool t54: no record in queue $q (from --queue); give its pool file (its regions are searched by tag)" "down NAME: no record said"

# ---- errors ----
run 69 "an unknown region" up "$data/aws-mars.ini" --queue "$q" --count 1
is "$(sed 's/127.0.0.1:[0-9]*/127.0.0.1:PORT/' "$tmp/err")" "spotrun up: find pool t54-mars: HTTP 500 from http://127.0.0.1:PORT/ without an EC2 error document" "an unknown region: verb object: reason"
moto templates fleets
is "$(cat "$tmp/state")" "" "and nothing made"
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY "$SPOTRUN" down "$pool" --queue "file://$tmp/fq" \
	> "$tmp/out" 2> "$tmp/err"
is "$? $(cat "$tmp/err")" "69 spotrun down: find pool t54: find AWS credentials: none found; tried env (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY not set), profile default (/dev/null: no [default], /dev/null: no [default]), instance role (AWS_EC2_METADATA_DISABLED=true); set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or a profile in ~/.aws/credentials, or run on an EC2 instance with a role" "no credentials: exit 69, said"
echo "1..$n"
[ "$failed" -eq 0 ]
