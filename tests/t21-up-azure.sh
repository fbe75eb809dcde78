#!/bin/sh
# t21-up-azure.sh: `spotrun up POOL.ini --queue URL` and `spotrun down` on
# Azure against tests/armemu.py (ARM, Entra ID's token endpoint), the
# queue on tests/gcsemu.py (where up publishes the binary the user-data
# fetches). The credentials are a service principal's (AZURE_TENANT_ID,
# AZURE_CLIENT_ID, AZURE_CLIENT_SECRET; the emulator checks the secret),
# the metadata service disabled. What is checked, reading the emulator's
# state back (GET /emu/dump, a view of our own):
#   up --count 2: one resource group, one network and one Flexible set
#   spotrun-pool-t21-eastus, tagged spotrun:pool and spotrun:queue, Spot
#   with Delete, maxPrice -1, Microsoft's HPC image, over zones 1 and 2 at
#   capacity 2, two VMs; its customData `spotrun cloud-init`'s user-data,
#   free of any credential; the record; status's line and VM lines (name,
#   state, zone, size, price, age), --json's VMs (id the vmId, launch its
#   timeCreated). A second up makes
#   nothing. With 2 jobs queued, a VM evicted comes back by Try & Restore
#   (the set's spotRestorePolicy); one it does not bring back lowers the
#   set's capacity, and an agent's scaler sets it again, once; with no
#   agent left, submit does. The set's VMs evicted in a region out of capacity: up moves
#   the pool to the next region, status says where it found none. down
#   leaves nothing; a second down finds nothing. Both regions refusing a new
#   set at the call (SkuNotAvailable): up waits, no DELETE of a set ARM
#   never made; down leaves nothing. down --drain stopped at its look
#   (fault pool-drain-look:stop) while the set is raised: it sets the
#   target to 0 again and says so. No credentials: exit 69.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/gcs-env.sh"
t_setup

gcs_start t21 spotrun-t21
Q="gs://spotrun-t21/q?endpoint=http://127.0.0.1:$port"
secret=$GS_SECRET_ACCESS_KEY
sub=0f0f0f0f-2121-2121-2121-212121212121
client=21212121-aaaa-bbbb-cccc-212121212121
t_bg armemu "$PY" "$top_srcdir/tests/armemu.py" --port-file "$t_tmp/aport" \
    --subscription $sub --principal "tenant-21:$client:pw-t21-secret" --log "$t_tmp/arm.log"
wait_for "$t_tmp/aport" '^[0-9]+$' 30 "$t_last" ||
    { t_show "$t_tmp/armemu.err"; t_bail "armemu.py did not start"; }
aep=http://127.0.0.1:$(cat "$t_tmp/aport")
export AZURE_TENANT_ID=tenant-21 AZURE_CLIENT_ID=$client AZURE_CLIENT_SECRET=pw-t21-secret \
    AZURE_SUBSCRIPTION_ID=$sub AZURE_AUTHORITY_HOST=$aep SPOTRUN_ARM_ENDPOINT=$aep
# never the metadata service (none on loopback either)
export SPOTRUN_AZURE_METADATA_DISABLED=true SPOTRUN_AZURE_ENDPOINT=http://127.0.0.1:1
export HOME=$t_tmp XDG_CONFIG_HOME=$t_tmp/config
unset SPOTRUN_QUEUE 2>/dev/null
pool=$top_srcdir/tests/pool/azure-up.ini

# The emulator's state, one line per fact, into $t_tmp/state;
# user-data=FILE writes the set's decoded customData to FILE.
arm() {
	$PY - "$aep" "$@" > "$t_tmp/state" <<'PYEOF'
import base64, json, sys, urllib.request
ep = sys.argv[1]
def post(path):
    urllib.request.urlopen(urllib.request.Request(ep + path, data=b"", method="POST")).read()
tags = lambda o: " ".join("%s=%s" % kv for kv in sorted(o.get("tags", {}).items()))
for what in sys.argv[2:]:
    d = json.load(urllib.request.urlopen(ep + "/emu/dump"))
    if what == "groups":
        for g in d["groups"]:
            print("group", g["name"], g["location"], tags(g))
        for v in d["vnets"]:
            print("vnet", v["name"], v["location"], tags(v))
    elif what == "sets":
        for s in d["sets"]:
            p = s["properties"]; vmp = p["virtualMachineProfile"]; im = vmp["storageProfile"]["imageReference"]
            print("set", s["name"], s["location"], s["sku"]["name"], "capacity", s["sku"]["capacity"],
                "zones", ",".join(s.get("zones", [])), tags(s))
            print("spot", p["orchestrationMode"], vmp["priority"], vmp["evictionPolicy"],
                "maxPrice=%g" % vmp["billingProfile"]["maxPrice"], ":".join(im[k] for k in ("publisher", "offer", "sku", "version")),
                "restore=%s/%s" % (p["spotRestorePolicy"]["enabled"], p["spotRestorePolicy"]["restoreTimeout"]))
    elif what.startswith("user-data="):
        cd = d["sets"][0]["properties"]["virtualMachineProfile"]["osProfile"]["customData"]
        open(what[10:], "wb").write(base64.b64decode(cd))
    elif what == "vms":
        for v in d["vms"]:
            print("vm", v["location"], ",".join(v.get("zones", [])), v["properties"]["hardwareProfile"]["vmSize"])
            print("id-of", v["name"], v["properties"]["vmId"], v["properties"]["timeCreated"])
    elif what.startswith("full="):	# full=REGION:CODE
        r, c = what[5:].split(":")
        post("/emu/capacity?region=%s&code=%s" % (r, c))
    elif what.startswith("evict="):
        post("/emu/evict?set=" + what[6:])
PYEOF
}
lines() { grep "^$1" "$t_tmp/state"; }
run() {
	_want=$1 _desc=$2
	shift 2
	"$SPOTRUN" "$@" > "$t_tmp/out" 2> "$t_tmp/err"
	_code=$?
	t_is "$_code" "$_want" "$_desc: exit $_want" || t_show "$t_tmp/err"
}
tg="spotrun:pool=t21 spotrun:queue=$Q"
img=microsoft-dsvm:ubuntu-hpc:2204:latest

# ---- up: made ----
run 0 "up --count 2" up "$pool" --queue "$Q" --count 2
t_is "$(cat "$t_tmp/out")" "pool t21: created VM scale set (Flexible) spotrun-pool-t21-eastus in eastus (resource group spotrun-pool-t21, image $img), target 2 VMs" \
    "up says what it made"
t_is "$(cat "$t_tmp/err")" "" "up: nothing on stderr"
arm groups sets vms "user-data=$t_tmp/ud"
t_is "$(lines group; lines vnet)" "group spotrun-pool-t21 eastus $tg
vnet spotrun-pool-t21-eastus eastus $tg" "one resource group and one network, tagged"
t_is "$(lines set; lines spot)" "set spotrun-pool-t21-eastus eastus Standard_NC4as_T4_v3 capacity 2 zones 1,2 $tg
spot Flexible Spot Delete maxPrice=-1 $img restore=True/PT1H" \
    "one Flexible set of Spot VMs, eviction Delete, maxPrice -1, the HPC image, zones 1 and 2, Try & Restore for 1 hour, tagged"
t_is "$(lines vm | sort)" "vm eastus 1 Standard_NC4as_T4_v3
vm eastus 2 Standard_NC4as_T4_v3" "two VMs, one a zone"
"$SPOTRUN" cloud-init --queue "$Q" --labels pool=t21 --idle-timeout 30m00s > "$t_tmp/ci" 2> "$t_tmp/ci.err"
norm() { sed -e 's/Date=[0-9TZ]*/Date=D/' -e 's/Signature=[0-9a-f]*/Signature=S/' "$1"; }
t_is "$(norm "$t_tmp/ud")" "$(norm "$t_tmp/ci")" "customData is cloud-init's user-data for the queue"
bad=
for s in "$secret" pw-t21-secret eyJ0eXAi client_secret; do
	grep -qF -- "$s" "$t_tmp/ud" && bad="$bad [$s]"
done
t_is "${bad:-none}" none "the user-data holds no credential"
t_has "$t_tmp/arm.log" "token grant=client_credentials tenant=tenant-21 client=$client" \
    "the token came from the service principal's secret"
# status's pool lines, a VM's name's suffix and its age made constant,
# the cost an agent's scaler counted once it ran (the seconds it ran) left out
pool_lines() {
	sed -n '/^pool/,$p' "$t_tmp/out" | sed -e 's/_[0-9a-f]\{8\} / NAME /' \
	    -e 's/ \$[0-9.]* spent, \$[0-9.]* in jobs, \$[0-9.]* idle;//' \
	    -e 's/ [0-9][0-9hms.]*$/ AGE/'
}
run 0 "status" status --queue "$Q"
t_is "$(pool_lines)" "pool t21 on azure in eastus: VM scale set (Flexible) spotrun-pool-t21-eastus, target 2 VMs (as spotrun up set it); VMs: 2 Succeeded
  spotrun-pool-t21-eastus NAME Succeeded eastus-1 Standard_NC4as_T4_v3 \$0.21/h AGE
  spotrun-pool-t21-eastus NAME Succeeded eastus-2 Standard_NC4as_T4_v3 \$0.21/h AGE" \
    "status shows the pool's line and its VMs (name, state, zone, size, the table's spot price, age)"
run 0 "status --json" status --queue "$Q" --json
arm vms
t_is "$($PY - "$t_tmp/out" "$t_tmp/state" <<'EOF'
import datetime, json, sys
p = json.load(open(sys.argv[1]))["pools"][0]
dump = {}
for line in open(sys.argv[2]):
    w = line.split()
    if w and w[0] == "id-of":
        dump[w[1]] = w[2:]
for v in p["vms"]:
    # the vmId and timeCreated ARM wrote, as the VM's id and launch
    vmid, created = dump[v["name"]]
    t = datetime.datetime.fromisoformat(created).timestamp()
    print(v["id"] == vmid, abs(v["launched"] - t) < 0.001, v["zone"], v["type"], v["state"],
        v["spot"], v["billed"], v["price_per_hour"], v["price_from"], v["age_seconds"] >= 0)
EOF
)" "True True eastus-1 Standard_NC4as_T4_v3 Succeeded True True 0.21 table True
True True eastus-2 Standard_NC4as_T4_v3 Succeeded True True 0.21 table True" \
    "status --json: each VM's id its vmId, its launch its timeCreated, zone, size, state, spot, priced by the table"

# ---- up again: found, not made twice ----
run 0 "up again" up "$pool" --queue "$Q" --count 2
t_is "$(cat "$t_tmp/out")" "pool t21: found VM scale set (Flexible) spotrun-pool-t21-eastus in eastus by its tags; target 2 VMs" \
    "a second up finds the pool by its tags"
arm groups sets vms
t_is "$(lines group | wc -l) $(lines vnet | wc -l) $(lines set | wc -l) $(lines vm | wc -l)" "1 1 1 2" \
    "still one group, network, set; two VMs"

# ---- evictions: Try & Restore brings a VM back; past it, the scaler ----
# two jobs of a GPU no agent here has: the demand holds at 2 VMs
cat > "$t_tmp/two.ini" <<EOF
[job]
name = two
command = /bin/true
ship_workdir = no
[resources]
gpus = 1
[sweep]
n = 1, 2
EOF
run 0 "submit 2 jobs" submit --queue "$Q" "$t_tmp/two.ini"
set=spotrun-pool-t21-eastus
arm vms
ids0=$(lines id-of | cut -d' ' -f3 | sort)
arm "evict=$set&count=1" sets vms
ids1=$(lines id-of | cut -d' ' -f3 | sort)
t_is "$(lines set | cut -d' ' -f5,6) $(lines vm | wc -l) $(printf '%s\n%s\n' "$ids0" "$ids1" | sort | uniq -u | wc -l)" \
    "capacity 2 2 2" "a VM evicted, Try & Restore makes another (a new vmId): capacity 2, 2 VMs"
arm "evict=$set&count=1&restore=0" sets vms
t_is "$(lines set | cut -d' ' -f5,6) $(lines vm | wc -l)" "capacity 1 1" \
    "a VM evicted that Try & Restore does not bring back: the set's capacity drops to 1, 1 VM"
t_bg agA env SPOTRUN_SCALE_INTERVAL=0.2 SPOTRUN_LEASE_TTL=10s "$SPOTRUN" agent --queue "$Q" \
    --provider local --label gpus=0 --label host=agA --dir "$t_tmp/agA"
apid=$t_last
wait_for "$t_tmp/agA.err" 'pool t21: target 2, set again' 60 "$apid"
t_has "$t_tmp/agA.err" "pool t21: target 2, set again (demand 2 VMs; asked again for 1 VM the cloud dropped)" \
    "an agent's scaler sees 1 VM of 2 and the set's capacity 1: it sets 2 again, and says so"
arm sets vms
t_is "$(lines set | cut -d' ' -f5,6) $(lines vm | wc -l)" "capacity 2 2" "the set is at 2 again, 2 VMs"
kill -TERM "$apid" 2>/dev/null
t_wait "$apid"
t_is "$(grep -c 'set again' "$t_tmp/agA.err")" 1 "asked again once: the next steps see 2 VMs"
run 0 "cancel the jobs" cancel --queue "$Q" two
# no agent left (its lease released): submit asks again for what the set lost
arm "evict=$set&restore=0" sets vms
t_is "$(lines set | cut -d' ' -f5,6) $(lines vm | wc -l)" "capacity 0 0" \
    "both VMs evicted, not brought back: capacity 0, no VM"
sed 's/^name = two/name = three/' "$t_tmp/two.ini" > "$t_tmp/three.ini"
run 0 "submit 2 jobs, the pool's agents gone" submit --queue "$Q" "$t_tmp/three.ini"
t_has "$t_tmp/out" "pool t21: target 2 (demand 2 VMs; asked again for 2 VMs the cloud dropped)" \
    "submit steps the pool whose lease was released: the set's capacity set to 2 again"
arm sets vms
t_is "$(lines set | cut -d' ' -f5,6) $(lines vm | wc -l)" "capacity 2 2" "the set is at 2 again, 2 VMs"
run 0 "cancel them" cancel --queue "$Q" three

# ---- failover: the first region out of capacity ----
arm full=eastus:ZonalAllocationFailed evict=spotrun-pool-t21-eastus
run 0 "up, its VMs evicted, no capacity in eastus" up "$pool" --queue "$Q" --count 1
t_is "$(cat "$t_tmp/out")" "pool t21: no capacity in Standard_NC4as_T4_v3 in eastus (ZonalAllocationFailed)
pool t21: created VM scale set (Flexible) spotrun-pool-t21-westus2 in westus2 (resource group spotrun-pool-t21, image $img), target 1 VM" \
    "up moves the pool to the next region"
arm groups sets vms
t_is "$(lines set | cut -d' ' -f1-6; lines vm)" "set spotrun-pool-t21-westus2 westus2 Standard_NC4as_T4_v3 capacity 1
vm westus2 1 Standard_NC4as_T4_v3" "one set, in westus2, its VM there; none left in eastus"
run 0 "status after the move" status --queue "$Q"
t_is "$(pool_lines)" "pool t21 on azure in westus2: VM scale set (Flexible) spotrun-pool-t21-westus2, target 1 VM (as spotrun up set it); moved here after no capacity: tried Standard_NC4as_T4_v3 in eastus (ZonalAllocationFailed); VMs: 1 Succeeded
  spotrun-pool-t21-westus2 NAME Succeeded westus2-1 Standard_NC4as_T4_v3 \$0.21/h AGE" \
    "status says where up found no capacity"

# ---- down ----
run 0 "down" down "$pool" --queue "$Q"
t_is "$(cat "$t_tmp/out")" "pool t21: deleted 4 resources (VM scale set (Flexible), its VMs, resource group) in eastus, westus2; its record removed from the queue" \
    "down says what it deleted (the set, two networks, the group)"
t_is "$($PY -c 'import json, sys, urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1] + "/emu/dump")))' "$aep")" \
    "{'groups': [], 'vnets': [], 'sets': [], 'vms': []}" "nothing left on the emulator"
run 0 "down again" down "$pool" --queue "$Q"
t_is "$(cat "$t_tmp/out")" "pool t21: nothing left in eastus, westus2" "a second down: nothing left"

# ---- failover of a new pool refused at the call: nothing to delete ----
# (eastus's capacity failure above ranks it last: westus2 is tried first)
arm full=eastus:SkuNotAvailable full=westus2:SkuNotAvailable
dels=$(grep -c "^DELETE .*/virtualMachineScaleSets/" "$t_tmp/arm.log")
run 0 "up, both regions refusing the size at the call" up "$pool" --queue "$Q" --count 1
t_is "$(cat "$t_tmp/out")" "pool t21: no capacity in Standard_NC4as_T4_v3 in westus2 (SkuNotAvailable), Standard_NC4as_T4_v3 in eastus (SkuNotAvailable)
pool t21: waiting for capacity in eastus (every place tried), target 1 VM" \
    "up says both regions refused (SkuNotAvailable) and waits"
t_is "$(grep -c "^DELETE .*/virtualMachineScaleSets/" "$t_tmp/arm.log")" "$dels" \
    "no DELETE of a set ARM refused at the call (it made none)"
arm full=eastus: full=westus2:
run 0 "down after it" down "$pool" --queue "$Q"
t_is "$($PY -c 'import json, sys, urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1] + "/emu/dump")))' "$aep")" \
    "{'groups': [], 'vnets': [], 'sets': [], 'vms': []}" "nothing left on the emulator again"

# ---- --drain-timeout alone, or not a duration: exit 64, nothing asked ----
"$SPOTRUN" down "$pool" --queue "$Q" --drain-timeout 5m > "$t_tmp/out" 2> "$t_tmp/err"
t_is "$? $(cat "$t_tmp/err")" "64 spotrun down: --drain-timeout 5m: without --drain (add it)" \
    "--drain-timeout without --drain: exit 64, said"
"$SPOTRUN" down "$pool" --queue "$Q" --drain --drain-timeout soon > "$t_tmp/out" 2> "$t_tmp/err"
t_is "$? $(cat "$t_tmp/err")" "64 spotrun down: --drain-timeout soon: not a duration (e.g. 10m, 90s)" \
    "--drain-timeout soon: exit 64, said"

# ---- a drain that finds the target raised: set to 0 again ----
# (a scaler's write that crossed the drain's mark; down stopped at its look,
# fault pool-drain-look:stop, the set's capacity raised meanwhile)
run 0 "up again" up "$pool" --queue "$Q" --count 1
SPOTRUN_FAULT=pool-drain-look:stop "$SPOTRUN" down "$pool" --queue "$Q" --drain --drain-timeout 60s \
    > "$t_tmp/dout" 2> "$t_tmp/derr" &
dpid=$!
wait_for "$t_tmp/derr" "fault injected at pool-drain-look: stopping" 60 "$dpid" ||
    { t_show "$t_tmp/derr"; t_bail "down --drain did not reach its look"; }
$PY - "$aep" <<'PYEOF'
import json, sys, urllib.parse, urllib.request
ep = sys.argv[1]
form = urllib.parse.urlencode({"grant_type": "client_credentials",
    "client_id": "21212121-aaaa-bbbb-cccc-212121212121", "client_secret": "pw-t21-secret",
    "scope": "https://management.azure.com/.default"}).encode()
tok = json.load(urllib.request.urlopen(ep + "/tenant-21/oauth2/v2.0/token", data=form))["access_token"]
s = json.load(urllib.request.urlopen(ep + "/emu/dump"))["sets"][0]
req = urllib.request.Request(ep + s["id"] + "?api-version=2024-03-01", method="PATCH",
    data=json.dumps({"sku": {"capacity": 2}}).encode(),
    headers={"Authorization": "Bearer " + tok, "Content-Type": "application/json"})
urllib.request.urlopen(req).read()
PYEOF
arm sets
t_is "$(lines set | cut -d' ' -f5,6)" "capacity 2" "the set raised to 2 while down's look waits"
kill -CONT "$dpid"
# its next look stops again only if the first left VMs billed (the target
# not set back to 0): then it is killed, not waited for
_i=0
while kill -0 "$dpid" 2>/dev/null && [ "$_i" -lt 600 ] &&
    [ "$(grep -c 'fault injected at pool-drain-look' "$t_tmp/derr")" -lt 2 ]; do
	sleep 0.1
	_i=$((_i + 1))
done
[ "$(grep -c 'fault injected at pool-drain-look' "$t_tmp/derr")" -lt 2 ] || kill -KILL "$dpid"
wait "$dpid"
t_is "$? $(grep -c 'its target set to 0 again 1 time (a scaler raised it as the drain began)' "$t_tmp/dout")" "0 1" \
    "down --drain sets the target to 0 again, and says so"
t_is "$($PY -c 'import json, sys, urllib.request; print(json.load(urllib.request.urlopen(sys.argv[1] + "/emu/dump")))' "$aep")" \
    "{'groups': [], 'vnets': [], 'sets': [], 'vms': []}" "nothing left after that drain"

# ---- no credentials ----
env -u AZURE_CLIENT_SECRET "$SPOTRUN" down "$pool" --queue "$Q" > "$t_tmp/out" 2> "$t_tmp/err"
t_is "$? $(cat "$t_tmp/err")" "69 spotrun down: open ARM client: find Azure credentials: none: set AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET (a service principal), run \`az login\` (the Azure CLI's login, found in $t_tmp/.azure), or run on an Azure VM with a managed identity (the metadata service is not asked: SPOTRUN_AZURE_METADATA_DISABLED=true)" \
    "no credentials: exit 69, said, the metadata service not asked"
t_done
