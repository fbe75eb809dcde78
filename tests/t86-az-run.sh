#!/bin/sh
# t86-az-run.sh: `spotrun run`, `ls` and gc against Azure Blob (Azurite,
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
#    sent in 1 MiB Put Blocks.
# 3. Azure CLI -> spotrun: a checkpoint saved to a file:// store and copied
#    up with `az storage blob upload-batch` restores from az://.
#    spotrun -> Azure CLI: the az:// checkpoints copied down with
#    `az storage blob download-batch` restore from file://, so every blob
#    spotrun wrote was read byte-exact by the CLI (each chunk is checked
#    against its SHA-256).
# 4. The key never shows: not in spotrun's output or logs, not in the
#    job's environment (AZURE_STORAGE_KEY, AZURE_STORAGE_SAS_TOKEN and
#    AZURE_STORAGE_CONNECTION_STRING are dropped from it).
. "$top_srcdir/tests/jobs/lib.sh"
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
$train --sleep 0 > "$t_tmp/plain.out" 2>&1
want=$(result_of "$t_tmp/plain.out")
[ -n "$want" ] || t_bail "the quickstart job printed no result"
$train --steps 80 --every 10 --sleep 0 > "$t_tmp/plain80.out" 2>&1
want80=$(result_of "$t_tmp/plain80.out")

# 1. the quickstart on az://
ini=$t_tmp/qs.ini
sed -e "s|^#store = .*|store = $store|" \
    -e 's|^keep = 3|keep = 2|' \
    -e "s|^command = .*|command = $PY $top_srcdir/examples/quickstart/train.py --sleep 0.03|" \
    -e 's|^after = 8s|after = 1500ms|' -e 's|^window = 10s|window = 8s|' \
    -e 's|^interval = 5s|interval = 1s|' \
    "$top_srcdir/examples/quickstart.ini" > "$ini"
ini_set "$ini" checkpoint local_dir "$t_tmp/local-qs"
ini_set "$ini" checkpoint margin 2s
"$SPOTRUN" check "$ini" > "$t_tmp/check.out" 2>&1
t_is "$?" 0 "spotrun check accepts an az:// store" || t_show "$t_tmp/check.out"
"$SPOTRUN" run "$ini" > "$t_tmp/qs.out" 2> "$t_tmp/qs.err"
rc=$?
t_is "$rc" 0 "quickstart on az:// exits 0" || t_show "$t_tmp/qs.err"
t_is "$(grep -c '^resumed from step' "$t_tmp/qs.out")" 2 "resumed twice (two simulated preemptions)" ||
    t_show "$t_tmp/qs.out"
t_is "$(result_of "$t_tmp/qs.out")" "$want" "the result equals an uninterrupted run's"
t_like "$t_tmp/qs.err" "^[0-9:]+  ckpt     [0-9]+ step [0-9]+: .* committed" "checkpoints committed to Azure"
az_cli storage blob list -c "$c" --prefix jobs/ --num-results '*' --query '[].name' -o tsv \
    > "$t_tmp/objects.txt" 2>&1
t_like "$t_tmp/objects.txt" "^jobs/quickstart/" "blobs under the prefix in the container"
"$SPOTRUN" ls "$ini" > "$t_tmp/ls.out" 2>&1
t_is "$?" 0 "spotrun ls on az:// exits 0" || t_show "$t_tmp/ls.out"
t_is "$(grep -cE '^[0-9]+ ' "$t_tmp/ls.out")" 2 "keep = 2: two checkpoints listed" ||
    t_show "$t_tmp/ls.out"
t_is "$(grep -c '/manifests/' "$t_tmp/objects.txt")" 2 "keep = 2: two manifests left in the container" ||
    t_show "$t_tmp/objects.txt"

# 2. preempted on one VM, resumed on the next, through az://
ini2=$t_tmp/sig.ini
cat > "$ini2" <<EOI
[job]
name = sig
shell = yes
command = echo \$\$ > $ini2.pid; exec $train --steps 80 --sleep 0.04 --every 10
workdir = $t_tmp
[checkpoint]
store = $store&block_size=1MiB
local_dir = $t_tmp/local-sig
[provider]
name = signal
grace = 20s
EOI
t_pidfiles="$t_pidfiles $ini2.pid"
t_bg sig-1 "$SPOTRUN" run "$ini2"
pid=$t_last
wait_for "$t_tmp/sig-1.out" '^step 10 ' 20 "$pid" || t_diag "run 1 did not reach step 10"
kill -TERM "$pid"
t_wait "$pid"
t_is "$t_rc" 75 "run 1 preempted by SIGTERM exits 75" || t_show "$t_tmp/sig-1.err"
a=$(sed -nE 's/^checkpoint at step ([0-9]+)$/\1/p' "$t_tmp/sig-1.out" | tail -n 1)
"$SPOTRUN" run "$ini2" > "$t_tmp/sig-2.out" 2> "$t_tmp/sig-2.err"
t_is "$?" 0 "run 2 (the next VM) exits 0" || t_show "$t_tmp/sig-2.err"
t_has "$t_tmp/sig-2.out" "resumed from step $a (attempt 1)" "run 2 resumed from the az:// checkpoint (step $a)"
t_is "$(result_of "$t_tmp/sig-2.out")" "$want80" "run 2's result equals an uninterrupted run's"

# 3. interop both ways, through a job that finishes in one go after a restore
ini3=$t_tmp/up.ini
cat > "$ini3" <<EOI
[job]
name = interop
shell = yes
command = echo \$\$ > $ini3.pid; exec $train --steps 80 --sleep 0.04 --every 10
workdir = $t_tmp
[checkpoint]
store = file://$t_tmp/fstore
local_dir = $t_tmp/local-up
[provider]
name = signal
grace = 20s
EOI
t_pidfiles="$t_pidfiles $ini3.pid"
t_bg up-1 "$SPOTRUN" run "$ini3"
pid=$t_last
wait_for "$t_tmp/up-1.out" '^step 10 ' 20 "$pid" || t_diag "interop run 1 did not reach step 10"
kill -TERM "$pid"
t_wait "$pid"
t_is "$t_rc" 75 "interop: a checkpoint in a file:// store" || t_show "$t_tmp/up-1.err"
b=$(sed -nE 's/^checkpoint at step ([0-9]+)$/\1/p' "$t_tmp/up-1.out" | tail -n 1)
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
cat > "$ini4" <<EOI
[job]
name = envdump
shell = yes
command = env > $t_tmp/job-env.txt
workdir = $t_tmp
[checkpoint]
store = $store
local_dir = $t_tmp/local-env
[provider]
name = local
EOI
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

t_done
