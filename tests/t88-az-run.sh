#!/bin/sh
# t88-az-run.sh: `spotrun run`, `ls` and gc against Azure Blob (Azurite,
# started by build-aux/test-all), with the account key in AZURE_STORAGE_KEY
# as the Azure CLI reads it, and interop with the real Azure CLI (Debian's
# azure-cli 2.45):
#
# 1. The quickstart job with store = az://ACCOUNT/CONTAINER/jobs?endpoint=...:
#    two simulated preemptions inside one run, checkpoints committed to
#    Azure, the result equal to an uninterrupted run's; `spotrun ls` lists
#    them; keep = 2 leaves two manifests (as the CLI lists the container).
# 2. A job preempted (signal provider, SIGTERM, exit 75) resumes in a second
#    run from the az:// checkpoint: the next VM, same container, its blocks
#    sent in 1 MiB Put Blocks; every request, as the server sees it
#    (tests/faultproxy's header mode), with User-Agent: spotrun/VERSION.
# 3. Azure CLI -> spotrun: a checkpoint saved to a file:// store and copied
#    up with `az storage blob upload-batch` restores from az://.
#    spotrun -> Azure CLI: the az:// checkpoints copied down with
#    `az storage blob download-batch` restore from file://, so every blob
#    spotrun wrote was read byte-exact by the CLI (each chunk is checked
#    against its SHA-256).
# 4. The key never shows: not in spotrun's output or logs, not in the
#    job's environment (AZURE_STORAGE_KEY, AZURE_STORAGE_SAS_TOKEN and
#    AZURE_STORAGE_CONNECTION_STRING are dropped from it).
# 5. Each block carries an x-ms-content-crc64 by default (the proxy's
#    header mode); an Azurite in its strict mode (tests/azurite.sh
#    --strict), which refuses that header, fails the save with the fix in
#    the message, and checksum=md5 saves and restores there.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/jobs/store-run.sh"
. "$top_srcdir/tests/az-env.sh"
t_setup

c=$(az_container_new) || t_bail "cannot create a container on $SPOTRUN_TEST_AZ_ENDPOINT"
trap 'az_container_rm "$c"; t_cleanup' EXIT
acct=$SPOTRUN_TEST_AZ_ACCOUNT
ep=$SPOTRUN_TEST_AZ_ENDPOINT
# spotrun reads the key from the environment, as the Azure CLI does
export AZURE_STORAGE_ACCOUNT="$acct" AZURE_STORAGE_KEY="$SPOTRUN_TEST_AZ_KEY"
unset AZURE_STORAGE_CONNECTION_STRING AZURE_STORAGE_SAS_TOKEN AZURE_CLIENT_ID 2>/dev/null
store="az://$acct/$c/jobs?endpoint=$ep"

train="$PY $top_srcdir/examples/quickstart/train.py"
$train --steps 80 --every 10 --sleep 0 > "$t_tmp/plain80.out" 2>&1
want80=$(result_of "$t_tmp/plain80.out")
[ -n "$want80" ] || t_bail "the quickstart job printed no result"

# 1. the quickstart on az://
sr_quickstart "$store" az://
az_cli storage blob list -c "$c" --prefix jobs/ --num-results '*' --query '[].name' -o tsv \
    > "$t_tmp/objects.txt" 2>&1
t_like "$t_tmp/objects.txt" "^jobs/quickstart/" "blobs under the prefix in the container"
t_is "$(grep -cE '/manifests/[0-9]+\.json$' "$t_tmp/objects.txt")" 2 "keep = 2: two manifests left in the container" ||
    t_show "$t_tmp/objects.txt"

# 2. preempted on one VM, resumed on the next, through az://, in 1 MiB blocks,
# through tests/faultproxy's header mode: the User-Agent of every request
# as the server sees it
: "${top_builddir:=$(dirname "$SPOTRUN")}"
echo "header name=User-Agent" > "$t_tmp/control"
ep_host=${ep#http://}
"$top_builddir/tests/faultproxy" -p "$t_tmp/px.port" -t "${ep_host%%/*}" -c "$t_tmp/control" \
    -l "$t_tmp/proxy.log" 2> "$t_tmp/proxy.err" &
px=$!
trap 'kill "$px" 2>/dev/null; az_container_rm "$c"; t_cleanup' EXIT
wait_for "$t_tmp/px.port" '^[0-9]+$' 5 "$px" || t_bail "tests/faultproxy did not start (make first?)"
sr_resume "az://$acct/$c/jobs?endpoint=http://127.0.0.1:$(cat "$t_tmp/px.port")/${ep_host#*/}&block_size=1MiB" az://
ini2=$sr_sig_ini
ini_set "$ini2" checkpoint store "$store&block_size=1MiB"
ua="spotrun/$("$SPOTRUN" --version | sed 's/^spotrun //')"
all=$(grep -c '^conn [0-9]*: header User-Agent of ' "$t_tmp/proxy.log")
t_is "$([ "$all" -gt 0 ] && echo some)|$(grep -c "^conn [0-9]*: header User-Agent of [A-Z]* [^ ]*: $ua\$" "$t_tmp/proxy.log")" \
    "some|$all" "every request the server saw had User-Agent: $ua ($all requests)" ||
    grep 'header User-Agent of' "$t_tmp/proxy.log" | grep -v ": $ua\$" | head -n 3 | sed 's/^/#   /'

# 3. interop both ways, through a job that finishes in one go after a restore
ini3=$t_tmp/up.ini
sr_job "$ini3" interop "$train --steps 80 --sleep 0.04 --every 10" "file://$t_tmp/fstore" signal
sr_preempt "$ini3" up
b=$sr_step
rm -rf "$t_tmp/fstore/.tmp"
az_cli storage blob upload-batch -d "$c" --destination-path up -s "$t_tmp/fstore" -o none \
    --no-progress > "$t_tmp/sync-up.out" 2>&1
t_is "$?" 0 "az storage blob upload-batch uploads the file store" || t_show "$t_tmp/sync-up.out"
ini_set "$ini3" checkpoint store "az://$acct/$c/up?endpoint=$ep"
"$SPOTRUN" run "$ini3" > "$t_tmp/up-2.out" 2> "$t_tmp/up-2.err"
t_is "$?" 0 "spotrun restores what the Azure CLI uploaded" || t_show "$t_tmp/up-2.err"
t_has "$t_tmp/up-2.out" "resumed from step $b (attempt 1)" "... from step $b"
t_is "$(result_of "$t_tmp/up-2.out")" "$want80" "... and finishes with the right result"

mkdir -p "$t_tmp/down"
az_cli storage blob download-batch -d "$t_tmp/down" -s "$c" --pattern 'jobs/*' -o none \
    --no-progress > "$t_tmp/sync-down.out" 2>&1
t_is "$?" 0 "az storage blob download-batch downloads the az:// checkpoints" || t_show "$t_tmp/sync-down.out"
# The sig job finished (FINISHED marker): drop it so the next run restores.
rm -f "$t_tmp/down/jobs/sig/FINISHED"
ini_set "$ini2" checkpoint store "file://$t_tmp/down/jobs"
ini_set "$ini2" checkpoint local_dir "$t_tmp/local-down"
"$SPOTRUN" ls "$ini2" > "$t_tmp/down-ls.out" 2>&1
t_like "$t_tmp/down-ls.out" '^[0-9]+ +[0-9]+ +.* latest$' "the downloaded store lists a latest checkpoint" ||
    t_show "$t_tmp/down-ls.out"
"$SPOTRUN" run "$ini2" > "$t_tmp/down.out" 2> "$t_tmp/down.err"
t_is "$?" 0 "spotrun restores from what the Azure CLI downloaded" || t_show "$t_tmp/down.err"
t_like "$t_tmp/down.out" '^resumed from step [0-9]+ ' "... it resumed (every chunk checked)" ||
    t_show "$t_tmp/down.out"

# 4. the key never shows
ini4=$t_tmp/env.ini
sr_job "$ini4" envdump "env > $t_tmp/job-env.txt" "$store" local
AZURE_STORAGE_SAS_TOKEN=sv=2021-06-08\&sig=t86-not-a-real-sas \
AZURE_STORAGE_CONNECTION_STRING="AccountName=$acct;AccountKey=$SPOTRUN_TEST_AZ_KEY;BlobEndpoint=$ep" \
    "$SPOTRUN" run "$ini4" > "$t_tmp/env.out" 2> "$t_tmp/env.err"
t_is "$?" 0 "a job that dumps its environment runs" || t_show "$t_tmp/env.err"
t_unlike "$t_tmp/job-env.txt" '^(AZURE_STORAGE_KEY|AZURE_STORAGE_SAS_TOKEN|AZURE_STORAGE_CONNECTION_STRING)=' \
    "the job's environment has no Azure secret"
t_like "$t_tmp/job-env.txt" "^AZURE_STORAGE_ACCOUNT=$acct\$" "... and keeps the account name, no secret"
leaks=$(grep -rlF -e "$SPOTRUN_TEST_AZ_KEY" "$t_tmp" 2>/dev/null |
    grep -v '/down/\|/fstore/\|/az-cli/' | tr '\n' ' ')
t_is "$leaks" "" "the key is in no output, log or file spotrun wrote"

# 5. the blocks' checksum: CRC-64 by default; strict Azurite refuses it
bench=$top_builddir/tests/bench-ckpt
mkdir -p "$t_tmp/blocks"
head -c 3000000 /dev/urandom > "$t_tmp/blocks/random"
echo "header name=x-ms-content-crc64" > "$t_tmp/control"
kill -HUP "$px"
"$bench" save "az://$acct/$c/crc?endpoint=http://127.0.0.1:$(cat "$t_tmp/px.port")/${ep_host#*/}&block_size=1MiB" \
    "$t_tmp/blocks" > "$t_tmp/crc.out" 2>&1
t_is "$?" 0 "a save of 3 MB in 1 MiB blocks through the proxy" || t_show "$t_tmp/crc.out"
t_is "$(grep -c '^conn [0-9]*: header x-ms-content-crc64 of PUT [^ ]*comp=block&[^ ]*: [A-Za-z0-9+/]\{11\}=$' "$t_tmp/proxy.log")|$(grep -c '^conn [0-9]*: header x-ms-content-crc64 of PUT [^ ]*comp=block&[^ ]*: absent' "$t_tmp/proxy.log")" \
    "3|0" "its 3 Put Blocks carry an x-ms-content-crc64 of 8 bytes, none goes without" ||
    grep 'header x-ms-content-crc64' "$t_tmp/proxy.log" | head -n 5 | sed 's/^/#   /'
sh "$top_srcdir/tests/azurite.sh" start "$t_tmp/strict" --strict > "$t_tmp/strict.out" 2>&1 ||
    t_bail "cannot start a strict Azurite: $(tail -n 3 "$t_tmp/strict.out")"
trap 'sh "$top_srcdir/tests/azurite.sh" stop "$t_tmp/strict"; kill "$px" 2>/dev/null; az_container_rm "$c"; t_cleanup' EXIT
sep=$(sed -n 's/^export SPOTRUN_TEST_AZ_ENDPOINT=//p' "$t_tmp/strict/env")
az_cli_strict() {
	AZURE_STORAGE_CONNECTION_STRING="DefaultEndpointsProtocol=http;AccountName=$acct;AccountKey=$(cat "$t_tmp/strict/key");BlobEndpoint=$sep;" \
	    AZURE_CONFIG_DIR=$t_tmp/az-cli AZURE_CORE_COLLECT_TELEMETRY=no az "$@"
}
az_cli_strict storage container create -n strict -o none > "$t_tmp/strict-c.out" 2>&1 ||
    t_bail "cannot create a container on the strict Azurite: $(tail -n 3 "$t_tmp/strict-c.out")"
AZURE_STORAGE_KEY=$(cat "$t_tmp/strict/key") "$bench" save "az://$acct/strict/p?endpoint=$sep&block_size=1MiB" \
    "$t_tmp/blocks" > "$t_tmp/strict-save.out" 2>&1
t_is "$?" 1 "a save with the default checksum fails on a strict Azurite"
t_like "$t_tmp/strict-save.out" 'part [0-9]+: HTTP 500 FeatureNotSupported: .*; the server takes no x-ms-content-crc64 \(Azurite does only with --loose\): add checksum=md5 to the store.s URL$' \
    "... saying why and what to change"
AZURE_STORAGE_KEY=$(cat "$t_tmp/strict/key") "$bench" save "az://$acct/strict/p?endpoint=$sep&block_size=1MiB&checksum=md5" \
    "$t_tmp/blocks" > "$t_tmp/strict-md5.out" 2>&1
t_is "$?" 0 "with checksum=md5 it saves there" || t_show "$t_tmp/strict-md5.out"
AZURE_STORAGE_KEY=$(cat "$t_tmp/strict/key") "$bench" restore "az://$acct/strict/p?endpoint=$sep&checksum=md5" \
    "$t_tmp/blocks-back" > "$t_tmp/strict-rest.out" 2>&1 && cmp -s "$t_tmp/blocks/random" "$t_tmp/blocks-back/random"
t_is "$?" 0 "... and restores byte-exact" || t_show "$t_tmp/strict-rest.out"

t_done
