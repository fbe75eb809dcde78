#!/bin/sh
# t46-no-metadata.sh: where no metadata address may be asked, none is:
# every cloud's endpoint (SPOTRUN_AWS_ENDPOINT, _GCP_, _AZURE_) points at
# tests/mdemu, whose log counts each request it got, and no credentials are
# set, so an s3:// or az:// store would ask the instance role or the
# managed identity. Asserted: no request with [provider] name = local or
# signal (the run's store included; a library job told so for its own),
# with `spotrun agent --provider local` and with provider = local in the
# settings file (the queue's store included), nor with auto when
# AWS_EC2_METADATA_DISABLED, SPOTRUN_AZURE_METADATA_DISABLED and
# NO_GCE_CHECK say so; the errors say why the instance role and the
# managed identity were not asked. A control
# (auto, nothing disabled) shows the emulator does count what reaches it.
# Nothing is ever sent to 169.254.169.254.
set -u
. "$top_srcdir/tests/jobs/cloud.sh"
echo "1..18"

cloud_emu "$tmp/port" "$tmp/emu.log"
SPOTRUN_AWS_ENDPOINT=$emu_url SPOTRUN_GCP_ENDPOINT=$emu_url SPOTRUN_AZURE_ENDPOINT=$emu_url
export SPOTRUN_AWS_ENDPOINT SPOTRUN_GCP_ENDPOINT SPOTRUN_AZURE_ENDPOINT
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_CONFIG_FILE \
    AWS_SHARED_CREDENTIALS_FILE AWS_EC2_METADATA_DISABLED AWS_EC2_METADATA_SERVICE_ENDPOINT \
    AZURE_STORAGE_CONNECTION_STRING AZURE_STORAGE_KEY AZURE_STORAGE_SAS_TOKEN AZURE_STORAGE_ACCOUNT \
    AZURE_CLIENT_ID SPOTRUN_AZURE_METADATA_DISABLED NO_GCE_CHECK SPOTRUN_QUEUE 2>/dev/null
HOME=$tmp XDG_CONFIG_HOME=$tmp/cfg AWS_REGION=us-east-1
export HOME XDG_CONFIG_HOME AWS_REGION
S3="s3://bkt/p?endpoint=http://127.0.0.1:1"
AZ="az://acct/cont?endpoint=http://127.0.0.1:1"

# requests: how many requests the emulator has logged so far
requests() { grep -vc '^start ' "$tmp/emu.log"; }
# job NAME STORE PROVIDER: $tmp/NAME.ini, a job that would run `true`
job() {
	printf '[job]\nname = %s\ncommand = true\n[checkpoint]\nstore = %s\nlocal_dir = %s/local-%s\n[provider]\nname = %s\n' \
	    "$1" "$2" "$tmp" "$1" "$3" >"$tmp/$1.ini"
}
# none WHAT DESC: no request reached the emulator since $before
none() {
	check "$(($(requests) - before))" 0 "$1: no request to a metadata address"
}
role_note='instance role (not asked: this provider asks no metadata address)'
mi_note='managed identity (not asked: this provider asks no metadata address)'

# 1-6: runs
for p in local signal; do
	job "s3-$p" "$S3" "$p"
	before=$(requests)
	err=$tmp/run-s3-$p.err
	timeout 60 "$SPOTRUN" run "$tmp/s3-$p.ini" >/dev/null 2>"$err"
	none "run, provider $p, s3:// without keys"
	grep -qF "$role_note" "$err" && ok "... the instance role not asked, said" || nok "the instance role's note"
done
job az-local "$AZ" local
before=$(requests)
err=$tmp/run-az.err
timeout 60 "$SPOTRUN" run "$tmp/az-local.ini" >/dev/null 2>"$err"
none "run, provider local, az:// without keys"
grep -qF "$mi_note" "$err" && ok "... the managed identity not asked, said" || nok "the managed identity's note"

# 7-8: auto with the three variables
job az-auto "$AZ" auto
before=$(requests)
err=$tmp/run-off.err
AWS_EC2_METADATA_DISABLED=true SPOTRUN_AZURE_METADATA_DISABLED=true NO_GCE_CHECK=True \
    timeout 60 "$SPOTRUN" run "$tmp/az-auto.ini" >/dev/null 2>"$err"
none "auto with AWS_EC2_METADATA_DISABLED, SPOTRUN_AZURE_METADATA_DISABLED, NO_GCE_CHECK"
grep -qF 'managed identity (SPOTRUN_AZURE_METADATA_DISABLED=true)' "$err" &&
	ok "... the managed identity not asked, the variable named" || nok "the variable's note"

# 9-10: a job of mode = library is told, for libspotrun's own store
for p in local auto; do
	printf '[job]\nname = lib-%s\nshell = yes\ncommand = echo "x$SPOTRUN_STORE_NO_METADATA" > %s/lib-%s.env\n[checkpoint]\nmode = library\nstore = file://%s/store\nlocal_dir = %s/local-lib-%s\n[provider]\nname = %s\n' \
	    "$p" "$tmp" "$p" "$tmp" "$tmp" "$p" "$p" >"$tmp/lib-$p.ini"
	AWS_EC2_METADATA_DISABLED=true SPOTRUN_AZURE_METADATA_DISABLED=true NO_GCE_CHECK=true \
	    timeout 60 "$SPOTRUN" run "$tmp/lib-$p.ini" >/dev/null 2>"$tmp/lib-$p.err"
done
check "$(cat "$tmp/lib-local.env" 2>/dev/null)" x1 \
    "mode = library, provider local: the job gets SPOTRUN_STORE_NO_METADATA=1 (libspotrun's store)"
check "$(cat "$tmp/lib-auto.env" 2>/dev/null)" x "... with auto, nothing"

# 11-16: agents
before=$(requests)
err=$tmp/ag1.err
timeout 60 "$SPOTRUN" agent --provider local --queue "$S3" --idle-timeout 1s --dir "$tmp/ag1" 2>"$err"
check "$?" 0 "agent --provider local, an s3:// queue without keys: idle, exit 0"
none "agent --provider local"
grep -qF "$role_note" "$err" && ok "... the instance role not asked, said" || nok "the agent's note"
mkdir -p "$tmp/cfg/spotrun"
printf '[fleet]\nprovider = local\nqueue = %s\n' "$S3" >"$tmp/cfg/spotrun/config.ini"
before=$(requests)
err=$tmp/ag2.err
timeout 60 "$SPOTRUN" agent --idle-timeout 1s --dir "$tmp/ag2" 2>"$err"
none "agent with provider = local in the settings file"
grep -q '^spotrun agent: .* on local local-vm-1, ' "$err" && ok "... which it says it runs on" ||
	nok "the settings' provider: not on local"
rm -f "$tmp/cfg/spotrun/config.ini"
err=$tmp/ag3.err
"$SPOTRUN" agent --provider ec2 --queue "$S3" --dir "$tmp/ag3" 2>"$err"
rc=$?
[ $rc = 64 ] && grep -qF 'spotrun agent: provider ec2: not a provider; give one of auto, aws, azure, gcp, local or signal' "$err" &&
	ok "agent --provider ec2: exit 64, the names it takes" || nok "--provider ec2: rc $rc"

# 17-18: the control: auto, nothing disabled, asks the emulator
before=$(requests)
err=$tmp/ag4.err
timeout 60 "$SPOTRUN" agent --queue "file://$tmp/q" --idle-timeout 1s --dir "$tmp/ag4" 2>"$err"
[ "$(($(requests) - before))" -gt 0 ] && ok "control: an agent with auto asks the emulator" ||
	nok "control: no request reached the emulator"
grep -q '^spotrun agent: .* on aws ' "$err" && ok "... and finds aws there" || nok "control: not aws"
