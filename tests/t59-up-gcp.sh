#!/bin/sh
# t59-up-gcp.sh: `spotrun up POOL.ini --queue URL` and `spotrun down` on GCP
# against tests/gceemu.py (Compute, its OAuth token endpoint; the Deep
# Learning VM family served as one image), the queue on tests/gcsemu.py
# (gs://, where up publishes the binary the user-data fetches). The
# credentials are a service account's key made here by openssl, named by
# GOOGLE_APPLICATION_CREDENTIALS; the emulator checks its JWT's RS256
# signature. What is checked, reading the emulator's state back (GET
# /emu/dump, a view of our own):
#   up --count 2: one template spotrun-pool-t59, labelled spotrun-pool and
#   spotrun-queue (hashed), SPOT and DELETE, the family's image, the
#   service account, its user-data `spotrun cloud-init`'s and free of any
#   credential; one regional group in us-central1 over the file's zones at
#   target 2, two instances labelled; the record; status's line and VM
#   lines (name, state, zone, type, price, age; a VM still being made
#   CREATING), --json's VMs (id the instance's, launch its
#   creationTimestamp). A second
#   up makes nothing; --count 1 resizes. The group's only VM preempted in a
#   region out of capacity: up moves the pool to the next region (the
#   template kept), status says where it found none; every region out:
#   up goes round once and the pool waits, status says "waiting for
#   capacity: tried ..."; capacity back: a later up finds it filled. down
#   leaves no group, template or instance; a second down finds nothing;
#   no credentials: exit 69, said.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/gcs-env.sh"
t_setup
command -v openssl >/dev/null 2>&1 || t_skip_all "openssl not found"

gcs_start t59 spotrun-t59
Q="gs://spotrun-t59/q?endpoint=http://127.0.0.1:$port"
secret=$GS_SECRET_ACCESS_KEY

# the service account's key, and the emulator's line for it (its modulus)
sa=t59-up@p-t59.iam.gserviceaccount.com
openssl genrsa -out "$t_tmp/key.pem" 2048 2>/dev/null || t_bail "openssl genrsa failed"
printf '%s kid-59 %s\n' "$sa" "$(openssl rsa -in "$t_tmp/key.pem" -noout -modulus 2>/dev/null)" \
    > "$t_tmp/sa"
family=deeplearning-platform-release/common-cu121-debian-11
image=common-cu121-v20240922-debian-11
t_bg gceemu "$PY" "$top_srcdir/tests/gceemu.py" --port-file "$t_tmp/gport" --project p-t59 \
    --sa "$t_tmp/sa" --image "$family=$image" --log "$t_tmp/gce.log"
wait_for "$t_tmp/gport" '^[0-9]+$' 30 "$t_last" ||
    { t_show "$t_tmp/gceemu.err"; t_bail "gceemu.py did not start"; }
gep=http://127.0.0.1:$(cat "$t_tmp/gport")
$PY - "$t_tmp/key.pem" "$sa" "$gep/token" > "$t_tmp/adc.json" <<'EOF' || t_bail "key file"
import json, sys
print(json.dumps({"type": "service_account", "project_id": "p-t59", "private_key_id": "kid-59",
    "private_key": open(sys.argv[1]).read(), "client_email": sys.argv[2],
    "client_id": "5959", "token_uri": sys.argv[3]}))
EOF
export GOOGLE_APPLICATION_CREDENTIALS=$t_tmp/adc.json SPOTRUN_GCE_ENDPOINT=$gep
# never the metadata server (none on loopback either)
export NO_GCE_CHECK=True GCE_METADATA_HOST=127.0.0.1:1 HOME=$t_tmp XDG_CONFIG_HOME=$t_tmp/config
unset GOOGLE_CLOUD_PROJECT CLOUDSDK_CORE_PROJECT CLOUDSDK_CONFIG SPOTRUN_QUEUE 2>/dev/null
pool=$top_srcdir/tests/pool/gcp-up.ini

# The emulator's state, one line per fact, into $t_tmp/state;
# user-data=FILE writes the template's user-data to FILE.
gce() {
	$PY - "$gep" "$@" > "$t_tmp/state" <<'EOF'
import json, sys, urllib.request
ep = sys.argv[1]
def post(path):
    urllib.request.urlopen(urllib.request.Request(ep + path, data=b"", method="POST")).read()
tail = lambda u: u.rsplit("/", 1)[-1]
for what in sys.argv[2:]:
    d = json.load(urllib.request.urlopen(ep + "/emu/dump"))	# after the hooks before it
    if what == "templates":
        for t in d["templates"]:
            p = t["properties"]
            print("template", t["name"], tail(p["machineType"]), " ".join("%s=%s" % kv for kv in sorted(p["labels"].items())))
            print("scheduling", " ".join("%s=%s" % kv for kv in sorted(p["scheduling"].items())))
            print("image", p["disks"][0]["initializeParams"]["sourceImage"])
            print("account", " ".join(a["email"] for a in p.get("serviceAccounts", [])))
            print("metadata", " ".join(i["key"] for i in p["metadata"]["items"]))
    elif what.startswith("user-data="):
        items = d["templates"][0]["properties"]["metadata"]["items"]
        open(what[10:], "w").write([i["value"] for i in items if i["key"] == "user-data"][0])
    elif what == "groups":
        for g in d["groups"]:
            print("group", g["name"], tail(g["region"]), "target", g["targetSize"], tail(g["instanceTemplate"]),
                "zones", ",".join(tail(z["zone"]) for z in g["distributionPolicy"].get("zones", [])))
    elif what == "instances":
        for i in d["instances"]:
            print("instance", tail(i["zone"]), tail(i["machineType"]), " ".join("%s=%s" % kv for kv in sorted(i["labels"].items())))
            print("id-of", i["name"], i["id"], i["creationTimestamp"])
    elif what == "preempt":	# every instance, as a preemption deletes it
        for i in d["instances"]:
            post("/emu/preempt?zone=%s&name=%s" % (tail(i["zone"]), i["name"]))
    elif what.startswith("full="):	# full=ZONE:CODE, a zone without capacity
        z, c = what[5:].split(":")
        post("/emu/capacity?zone=%s&code=%s" % (z, c))
    elif what.startswith("free="):
        post("/emu/capacity?zone=%s" % what[5:])
    elif what.startswith("advice="):	# advice=LOCATION:TYPE:RATE,RATE...
        loc, t, rates = what[7:].split(":")
        post("/emu/advice?location=%s&type=%s&rates=%s" % (loc, t, rates))
    elif what.startswith("advice-deny="):
        post("/emu/advice?deny=" + what[12:])
EOF
}
lines() { grep "^$1" "$t_tmp/state"; }
# run WANT_CODE DESC ARGS...: spotrun ARGS, its code checked, out and err kept
run() {
	_want=$1 _desc=$2
	shift 2
	"$SPOTRUN" "$@" > "$t_tmp/out" 2> "$t_tmp/err"
	_code=$?
	t_is "$_code" "$_want" "$_desc: exit $_want" || t_show "$t_tmp/err"
}
lq=$($PY -c 'import hashlib, sys; print("h-" + hashlib.sha256(sys.argv[1].encode()).hexdigest()[:61])' "$Q")
labels="spotrun-pool=t59 spotrun-queue=$lq"
img=projects/deeplearning-platform-release/global/images/$image

# ---- up: made ----
run 0 "up --count 2" up "$pool" --queue "$Q" --count 2
t_is "$(cat "$t_tmp/out")" "pool t59: created managed instance group spotrun-pool-t59-us-central1 in us-central1 (instance template spotrun-pool-t59, image $img), target 2 VMs" \
    "up says what it made, the image the family's"
t_is "$(cat "$t_tmp/err")" "" "up: nothing on stderr"
gce templates groups instances "user-data=$t_tmp/ud"
t_is "$(lines template; lines scheduling; lines image; lines account; lines metadata)" \
    "template spotrun-pool-t59 g2-standard-4 $labels
scheduling automaticRestart=False instanceTerminationAction=DELETE onHostMaintenance=TERMINATE provisioningModel=SPOT
image $img
account spotrun-agent@p-t59.iam.gserviceaccount.com
metadata spotrun-queue user-data" \
    "one template: labelled, SPOT with DELETE, the family's image, the role, user-data in metadata"
t_is "$(lines group)" "group spotrun-pool-t59-us-central1 us-central1 target 2 spotrun-pool-t59 zones us-central1-a,us-central1-b" \
    "one group in the first region, over the file's zones, target 2"
t_is "$(lines instance | sort)" "instance us-central1-a g2-standard-4 $labels
instance us-central1-b g2-standard-4 $labels" "two instances, labelled, one a zone"
"$SPOTRUN" cloud-init --queue "$Q" --labels pool=t59 --idle-timeout 30m00s > "$t_tmp/ci" 2> "$t_tmp/ci.err"
norm() { sed -e 's/Date=[0-9TZ]*/Date=D/' -e 's/Signature=[0-9a-f]*/Signature=S/' "$1"; }
t_is "$(norm "$t_tmp/ud")" "$(norm "$t_tmp/ci")" "the user-data is cloud-init's for the queue (the URL's date and signature aside)"
bad=
for s in "$secret" "PRIVATE KEY" private_key refresh_token ya29. client_secret "$(sed -n 2p "$t_tmp/key.pem")"; do
	grep -qF -- "$s" "$t_tmp/ud" && bad="$bad [$s]"
done
t_is "${bad:-none}" none "the user-data holds no credential: no HMAC secret, key, token"
t_has "$t_tmp/gce.log" "token grant=jwt-bearer kid=kid-59 iss=$sa" "the token came from the key's JWT, its signature checked"
# status's pool lines: the line, then its VMs sorted, a VM's name's
# suffix and its age made constant
pool_lines() {
	sed -n '/^pool/p' "$t_tmp/out"
	sed -n '/^pool/,$p' "$t_tmp/out" | sed -n 's/^  //p' |
	    sed -e 's/^spotrun-t59-[a-z0-9]\{4\} /spotrun-t59-XXXX /' \
	    -e 's/ [0-9][0-9hms.]*$/ AGE/' -e 's/^/  /' | sort
}
run 0 "status" status --queue "$Q"
t_is "$(pool_lines)" "pool t59 on gcp in us-central1: managed instance group spotrun-pool-t59-us-central1, target 2 VMs (as spotrun up set it); VMs: 2 RUNNING
  spotrun-t59-XXXX RUNNING us-central1-a g2-standard-4 \$0.2827/h AGE
  spotrun-t59-XXXX RUNNING us-central1-b g2-standard-4 \$0.2827/h AGE" \
    "status shows the pool's line and its VMs (name, state, zone, type, the table's spot price, age)"
run 0 "status --json" status --queue "$Q" --json
gce instances
t_is "$($PY - "$t_tmp/out" "$t_tmp/state" <<'EOF'
import datetime, json, sys
p = json.load(open(sys.argv[1]))["pools"][0]
dump = {}
for line in open(sys.argv[2]):
    w = line.split()
    if w and w[0] == "id-of":
        dump[w[1]] = w[2:]
for v in sorted(p["vms"], key=lambda v: v["zone"]):
    # the instance's id and creationTimestamp, as the VM's id and launch
    iid, created = dump[v["name"]]
    t = datetime.datetime.fromisoformat(created).timestamp()
    print(v["id"] == iid, abs(v["launched"] - t) < 0.001, v["zone"], v["type"], v["state"],
        v["spot"], v["billed"], v["price_per_hour"], v["price_from"], v["age_seconds"] >= 0)
EOF
)" "True True us-central1-a g2-standard-4 RUNNING True True 0.2827 table True
True True us-central1-b g2-standard-4 RUNNING True True 0.2827 table True" \
    "status --json: each VM's id the instance's, its launch its creationTimestamp, zone, type, state, spot, priced by the table"

# ---- up again: found, not made twice ----
run 0 "up again" up "$pool" --queue "$Q" --count 2
t_is "$(cat "$t_tmp/out")" "pool t59: found managed instance group spotrun-pool-t59-us-central1 in us-central1 by its tags; target 2 VMs" \
    "a second up finds the pool by its labels"
gce templates groups instances
t_is "$(lines template | wc -l) $(lines group | wc -l) $(lines instance | wc -l)" "1 1 2" \
    "still one template, one group, two instances"
run 0 "up --count 1" up "$pool" --queue "$Q" --count 1
gce groups instances
t_is "$(lines group; lines instance | wc -l)" "group spotrun-pool-t59-us-central1 us-central1 target 1 spotrun-pool-t59 zones us-central1-a,us-central1-b
1" "--count 1: the group's target is 1, one instance left"

# ---- failover: the first region out of capacity ----
gce full=us-central1-a:ZONE_RESOURCE_POOL_EXHAUSTED full=us-central1-b:ZONE_RESOURCE_POOL_EXHAUSTED preempt
run 0 "up, its VM preempted, no capacity in us-central1" up "$pool" --queue "$Q" --count 1
t_is "$(cat "$t_tmp/out")" "pool t59: no capacity in g2-standard-4 in us-central1 (ZONE_RESOURCE_POOL_EXHAUSTED)
pool t59: created managed instance group spotrun-pool-t59-europe-west4 in europe-west4 (instance template spotrun-pool-t59), target 1 VM" \
    "up moves the pool to the next region, the template kept"
gce templates groups instances
t_is "$(lines template | cut -d' ' -f1-3; lines group; lines instance)" "template spotrun-pool-t59 g2-standard-4
group spotrun-pool-t59-europe-west4 europe-west4 target 1 spotrun-pool-t59 zones europe-west4-a,europe-west4-b,europe-west4-c
instance europe-west4-a g2-standard-4 $labels" \
    "one group, in europe-west4 (Compute's zones), its instance there; none left in us-central1"
run 0 "status after the move" status --queue "$Q"
t_is "$(pool_lines)" "pool t59 on gcp in europe-west4: managed instance group spotrun-pool-t59-europe-west4, target 1 VM (as spotrun up set it); moved here after no capacity: tried g2-standard-4 in us-central1 (ZONE_RESOURCE_POOL_EXHAUSTED); VMs: 1 RUNNING
  spotrun-t59-XXXX RUNNING europe-west4-a g2-standard-4 \$0.2827/h AGE" \
    "status says where up found no capacity"

# ---- every region out: the pool waits ----
gce full=europe-west4-a:QUOTA_EXCEEDED full=europe-west4-b:QUOTA_EXCEEDED \
    full=europe-west4-c:QUOTA_EXCEEDED preempt
run 0 "up, no capacity anywhere" up "$pool" --queue "$Q" --count 1
t_is "$(cat "$t_tmp/out")" "pool t59: no capacity in g2-standard-4 in europe-west4 (QUOTA_EXCEEDED), g2-standard-4 in us-central1 (ZONE_RESOURCE_POOL_EXHAUSTED)
pool t59: waiting for capacity in us-central1, spotrun-pool-t59-us-central1 (every place tried), target 1 VM" \
    "up goes round once and waits"
run 0 "status while waiting" status --queue "$Q"
t_is "$(pool_lines)" "pool t59 on gcp in us-central1: managed instance group spotrun-pool-t59-us-central1, target 1 VM (as spotrun up set it); waiting for capacity: tried g2-standard-4 in europe-west4 (QUOTA_EXCEEDED), g2-standard-4 in us-central1 (ZONE_RESOURCE_POOL_EXHAUSTED); VMs: 1 CREATING
  spotrun-t59-XXXX CREATING us-central1-a - price unknown age unknown" \
    "status says: waiting for capacity, and what was tried"
gce free=us-central1-b groups instances
t_is "$(lines group | cut -d' ' -f2-4; lines instance | cut -d' ' -f1-2)" "spotrun-pool-t59-us-central1 us-central1 target
instance us-central1-b" "capacity back: the waiting group fills itself"
run 0 "up after capacity came back" up "$pool" --queue "$Q" --count 1
t_is "$(cat "$t_tmp/out")" "pool t59: found managed instance group spotrun-pool-t59-us-central1 in us-central1 by its tags; target 1 VM" \
    "a later up finds it there, no failover"
run 0 "status" status --queue "$Q"
t_is "$(pool_lines)" "pool t59 on gcp in us-central1: managed instance group spotrun-pool-t59-us-central1, target 1 VM (as spotrun up set it); VMs: 1 RUNNING
  spotrun-t59-XXXX RUNNING us-central1-b g2-standard-4 \$0.2827/h AGE" \
    "status: no longer waiting, its VM running"

# ---- down ----
run 0 "down" down "$pool" --queue "$Q"
t_is "$(cat "$t_tmp/out")" "pool t59: deleted 2 resources (managed instance group, its VMs, instance template) in us-central1, europe-west4; its record removed from the queue" \
    "down says what it deleted"
t_is "$($PY -c 'import json, sys, urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1] + "/emu/state")))' "$gep")" \
    "{'templates': [], 'groups': [], 'instances': []}" "nothing left on the emulator: no template, group or instance"
run 0 "down again" down "$pool" --queue "$Q"
t_is "$(cat "$t_tmp/out")" "pool t59: nothing left in us-central1, europe-west4" "a second down: nothing left"

# ---- advice.capacityHistory: a region Google saw preempting goes after ----
# each in a queue of its own (the first queue's history has us-central1's
# refusals); the newest of each zone's daily rates counts, the region's
# best zone's
made() { sed -n 's/^pool t59: created managed instance group [^ ]* in \([^ ]*\) .*/\1/p' "$t_tmp/out"; }
advice_lines() { grep -c '^advice ' "$t_tmp/gce.log"; }
gce free=us-central1-a free=europe-west4-a free=europe-west4-b free=europe-west4-c \
    "advice=zones/us-central1-a:g2-standard-4:0.2,0.7" "advice=zones/us-central1-b:g2-standard-4:0.9,0.6"
a0=$(advice_lines)
run 0 "up, us-central1's zones at newest rates 0.7 and 0.6" up "$pool" --queue "gs://spotrun-t59/qa?endpoint=http://127.0.0.1:$port" --count 1
t_is "$(made)|$(($(advice_lines) - a0))|$(grep -c 'no capacity' "$t_tmp/out")" "europe-west4|3|0" \
    "up asks the advice of both zones of us-central1 and of europe-west4 (none named there), and places the pool in europe-west4 first"
t_has "$t_tmp/gce.log" "advice zones/us-central1-b g2-standard-4" "the advice asked for a zone of the pool, SPOT, the pool's type"
run 0 "down" down "$pool" --queue "gs://spotrun-t59/qa?endpoint=http://127.0.0.1:$port"
gce "advice=zones/us-central1-a:g2-standard-4:0.9,0.3"
run 0 "up, us-central1-a's newest rate 0.3" up "$pool" --queue "gs://spotrun-t59/qb?endpoint=http://127.0.0.1:$port" --count 1
t_is "$(made)" "us-central1" "a zone under the line (0.3 < 0.5): the file's order, us-central1"
run 0 "down" down "$pool" --queue "gs://spotrun-t59/qb?endpoint=http://127.0.0.1:$port"
gce "advice=zones/us-central1-a:g2-standard-4:0.9" advice-deny=1
run 0 "up, the advice denied (403)" up "$pool" --queue "gs://spotrun-t59/qc?endpoint=http://127.0.0.1:$port" --count 1
t_is "$(made)|$(cat "$t_tmp/err")" "us-central1|" "an account without the advice: the file's order, nothing said on stderr, up goes on"
run 0 "down" down "$pool" --queue "gs://spotrun-t59/qc?endpoint=http://127.0.0.1:$port"
gce advice-deny=0

# ---- no credentials ----
env -u GOOGLE_APPLICATION_CREDENTIALS "$SPOTRUN" down "$pool" --queue "$Q" > "$t_tmp/out" 2> "$t_tmp/err"
t_is "$? $(cat "$t_tmp/err")" "69 spotrun down: open GCE client: find GCP credentials: none: set GOOGLE_APPLICATION_CREDENTIALS or run \`gcloud auth application-default login\` (the metadata server is not asked: NO_GCE_CHECK)" \
    "no credentials: exit 69, said, the metadata server not asked"
t_done
