#!/bin/sh
# t22-up-azure-cli.sh: `spotrun up` and `down` on Azure with the Azure
# CLI's login as the credentials, as Terraform and the Azure SDKs take it:
# the real az (Debian's azure-cli 2.45, on MSAL) logged in as a service
# principal to tests/armemu.py over HTTPS (a cloud registered with an
# authority of the AD FS shape, the one MSAL keeps the port of: see
# armemu.py), spotrun's own ARM calls on the emulator's HTTP port. No
# AZURE_* credential variable and no subscription set; the metadata
# service disabled. What is checked:
#   before `az login`: up exits 69 and says to run it;
#   after it: up makes the pool in the subscription az names, with tokens
#   az got from the authority (each asked again: they live 120 s, inside
#   MSAL's 5-minute margin), none of them in the user-data;
#   a subscription az does not know (AZURE_SUBSCRIPTION_ID): az's own
#   error, said; down leaves nothing; after `az logout`: exit 69 again.
. "$top_srcdir/tests/jobs/lib.sh"
if ! command -v az >/dev/null 2>&1; then
	[ "${SPOTRUN_TEST_REQUIRE_AZ:-}" = 1 ] &&
	    t_bail "no Azure CLI on PATH (build-aux/install-deps --test installs azure-cli)"
	t_skip_all "no Azure CLI on PATH (build-aux/install-deps --test installs azure-cli)"
fi
. "$top_srcdir/tests/gcs-env.sh"
t_setup

# a CA and a certificate for 127.0.0.1 (tests/daemon-util.sh's)
st=$t_tmp/srv
mkdir -p "$st/log"
die() { t_bail "$*"; }
. "$top_srcdir/tests/daemon-util.sh"
make_tls

gcs_start t22 spotrun-t22
Q="gs://spotrun-t22/q?endpoint=http://127.0.0.1:$port"
sub=0f0f0f0f-2222-2222-2222-222222222222
tenant=2a2a2a2a-2222-2222-2222-222222222222
client=22222222-aaaa-bbbb-cccc-222222222222
t_bg armemu "$PY" "$top_srcdir/tests/armemu.py" --port-file "$t_tmp/aport" \
    --tls-port-file "$t_tmp/tport" --tls-cert "$st/tls/server.pem" --tls-key "$st/tls/server.key" \
    --subscription $sub --tenant $tenant --principal "adfs:$client:pw-t22-secret" \
    --token-ttl 120 --log "$t_tmp/arm.log"
wait_for "$t_tmp/tport" '^[0-9]+$' 30 "$t_last" ||
    { t_show "$t_tmp/armemu.err"; t_bail "armemu.py did not start"; }
aep=http://127.0.0.1:$(cat "$t_tmp/aport")
tep=https://127.0.0.1:$(cat "$t_tmp/tport")
unset AZURE_TENANT_ID AZURE_CLIENT_ID AZURE_CLIENT_SECRET AZURE_SUBSCRIPTION_ID \
    AZURE_AUTHORITY_HOST SPOTRUN_QUEUE 2>/dev/null
export SPOTRUN_ARM_ENDPOINT=$aep
# never the metadata service (none on loopback either)
export SPOTRUN_AZURE_METADATA_DISABLED=true SPOTRUN_AZURE_ENDPOINT=http://127.0.0.1:1
export HOME=$t_tmp XDG_CONFIG_HOME=$t_tmp/config AZURE_CONFIG_DIR=$t_tmp/azure
export REQUESTS_CA_BUNDLE=$st/tls/ca.pem AZURE_CORE_COLLECT_TELEMETRY=no \
    AZURE_CORE_NO_COLOR=true AZURE_CORE_ONLY_SHOW_ERRORS=true
pool=$top_srcdir/tests/pool/azure-cli.ini

run() {
	_want=$1 _desc=$2
	shift 2
	"$SPOTRUN" "$@" > "$t_tmp/out" 2> "$t_tmp/err"
	_code=$?
	t_is "$_code" "$_want" "$_desc: exit $_want" || t_show "$t_tmp/err"
}
azc() {
	_desc=$1
	shift
	az "$@" > "$t_tmp/az.out" 2> "$t_tmp/az.err"
	t_is "$?" 0 "az $_desc" || { t_show "$t_tmp/az.err"; t_show "$t_tmp/arm.log"; }
}
grants() { grep -c "token grant=client_credentials tenant=adfs client=$client" "$t_tmp/arm.log"; }
state() { "$PY" -c 'import json, sys, urllib.request
print(json.dumps(json.load(urllib.request.urlopen(sys.argv[1] + "/emu/state")), sort_keys=True))' "$aep"; }
none="none: set AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET (a service principal), run \`az login\` (the Azure CLI's login, found in $t_tmp/azure), or run on an Azure VM with a managed identity (the metadata service is not asked: SPOTRUN_AZURE_METADATA_DISABLED=true)"

# ---- before az login ----
run 69 "up before az login" up "$pool" --queue "$Q" --count 1
t_is "$(cat "$t_tmp/err")" "spotrun up: open ARM client: find Azure credentials: $none" \
    "up before az login: says to run it"

# ---- az login, as a user does it (a service principal's) ----
azc "cloud register (the emulator's HTTPS authority and ARM)" cloud register --name Emu \
    --endpoint-active-directory "$tep/adfs" --endpoint-resource-manager "$tep/" \
    --endpoint-active-directory-resource-id https://management.core.windows.net/ \
    --endpoint-active-directory-graph-resource-id https://graph.windows.net/
azc "cloud set" cloud set --name Emu
azc "login --service-principal" login --service-principal -u "$client" -p pw-t22-secret \
    --tenant "$tenant"
g0=$(grants)
t_is "$([ "$g0" -ge 1 ] && echo yes)" yes "az login got its tokens from the emulator's authority ($g0)"
t_has "$t_tmp/arm.log" "GET /subscriptions?api-version=" "az login listed the subscriptions"

# ---- up with az's login ----
run 0 "up with az's login" up "$pool" --queue "$Q" --count 1
t_is "$(cat "$t_tmp/out")" "pool t22: created VM scale set (Flexible) spotrun-pool-t22-eastus in eastus (resource group spotrun-pool-t22, image microsoft-dsvm:ubuntu-hpc:2204:latest), target 1 VM" \
    "up says what it made"
t_is "$(state)" '{"groups": ["spotrun-pool-t22"], "sets": ["spotrun-pool-t22/spotrun-pool-t22-eastus"], "vms": ["'"$(state | sed -n 's/.*"vms": \["\([^"]*\)".*/\1/p')"'"], "vnets": ["spotrun-pool-t22/spotrun-pool-t22-eastus"]}' \
    "the group, network, set and VM made"
t_has "$t_tmp/arm.log" "PUT /subscriptions/$sub/resourcegroups/spotrun-pool-t22?" \
    "in the subscription az names (none set)"
g=$(grants)
t_is "$([ "$g" -gt "$g0" ] && echo more)" more "spotrun's token came from az (az asked the authority again: $g grants)"
"$PY" - "$aep" "$t_tmp/ud" <<'PYEOF'
import base64, json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/emu/dump"))
cd = d["sets"][0]["properties"]["virtualMachineProfile"]["osProfile"]["customData"]
open(sys.argv[2], "wb").write(base64.b64decode(cd))
PYEOF
bad=
for s in pw-t22-secret eyJ0eXAi accessToken msal; do
	grep -qF -- "$s" "$t_tmp/ud" && bad="$bad [$s]"
done
t_is "${bad:-none}" none "the user-data holds no token nor secret"

# ---- a subscription az does not know: its own error ----
other=0f0f0f0f-9999-9999-9999-999999999999
AZURE_SUBSCRIPTION_ID=$other "$SPOTRUN" down "$pool" --queue "$Q" > "$t_tmp/out" 2> "$t_tmp/err"
t_is "$? $(cat "$t_tmp/err")" "69 spotrun down: find pool t22: get token from the Azure CLI's login (az account get-access-token, $t_tmp/azure): az account get-access-token failed: ERROR: Subscription '$other' not found. Check the spelling and casing and try again." \
    "a subscription az does not know: exit 69 with az's own error"
t_is "$(state | grep -c spotrun-pool-t22-eastus)" 1 "... and deletes nothing"

# ---- down with az's login ----
run 0 "down with az's login" down "$pool" --queue "$Q"
t_is "$(state)" '{"groups": [], "sets": [], "vms": [], "vnets": []}' "down leaves nothing"

# ---- az logout ----
azc logout logout
run 69 "down after az logout" down "$pool" --queue "$Q"
t_is "$(cat "$t_tmp/err")" "spotrun down: open ARM client: find Azure credentials: $none" \
    "after az logout: says to run az login"
t_done
