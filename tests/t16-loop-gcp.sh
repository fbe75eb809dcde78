#!/bin/sh
# t16-loop-gcp.sh: issue 24's loop end to end on GCP: tests/gceemu.py
# boots each instance it makes as a VM (--on-instance
# tests/jobs/vm-boot.sh: the instance's user-data run as t53 runs it, in
# network and UTS namespaces of its own, its agent the unit's ExecStart),
# the queue on RGW (s3://, HTTPS when RGW serves it). Each step waited for
# as an event (a file, a log line, the emulator's state), never a sleep:
#   a job (a shell job checkpointing by the file protocol) is submitted;
#   `spotrun up` makes the pool at the queue's demand, 1 VM; the VM's
#   install script fetches spotrun from the bucket, its agent claims the
#   job; the job holds at step 5 until a checkpoint request; the test
#   preempts the instance: the emulator deletes it and stops its agent
#   (SIGTERM, as systemd at shutdown), which checkpoints the job and
#   releases it (exit 143); the group makes the instance again, a fresh VM
#   of the same name whose agent claims the job and resumes it at step 5;
#   the job succeeds; the queue drained, the agent's scaler
#   (SPOTRUN_SCALE_INTERVAL=1, SPOTRUN_SCALE_IDLE=2 in the VM's
#   environment file) sets the group's target to 0 ("queue drained"): the
#   emulator deletes the instance, its agent exits; `spotrun down` leaves
#   the emulator empty. The job ran twice (step 0, step 5), finished once.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/s3-env.sh"
. "$top_srcdir/tests/jobs/vm.sh"
. "$top_srcdir/tests/jobs/loop.sh"
t_setup
command -v openssl >/dev/null 2>&1 || t_skip_all "openssl not found"
loop_setup gce.log
unset GOOGLE_CLOUD_PROJECT CLOUDSDK_CORE_PROJECT CLOUDSDK_CONFIG 2>/dev/null

# ---- the cloud: gceemu.py, its instances booted as VMs ----
sa=t16-up@p-t16.iam.gserviceaccount.com
openssl genrsa -out "$T/key.pem" 2048 2>/dev/null || t_bail "openssl genrsa failed"
printf '%s kid-16 %s\n' "$sa" "$(openssl rsa -in "$T/key.pem" -noout -modulus 2>/dev/null)" > "$T/sa"
t_bg gceemu "$PY" "$top_srcdir/tests/gceemu.py" --port-file "$T/gport" --project p-t16 \
    --sa "$T/sa" --image deeplearning-platform-release/common-cu121-debian-11=common-cu121-v20240922-debian-11 \
    --log "$T/gce.log" --vm-dir "$T/vmud" --on-instance "sh $top_srcdir/tests/jobs/vm-boot.sh $T/vm.conf"
wait_for "$T/gport" '^[0-9]+$' 30 "$t_last" || { t_show "$T/gceemu.err"; t_bail "gceemu.py did not start"; }
gport=$(cat "$T/gport")
gep=http://127.0.0.1:$gport
$PY - "$T/key.pem" "$sa" "$gep/token" > "$T/adc.json" <<'EOF' || t_bail "key file"
import json, sys
print(json.dumps({"type": "service_account", "project_id": "p-t16", "private_key_id": "kid-16",
    "private_key": open(sys.argv[1]).read(), "client_email": sys.argv[2],
    "client_id": "1616", "token_uri": sys.argv[3]}))
EOF
export GOOGLE_APPLICATION_CREDENTIALS=$T/adc.json SPOTRUN_GCE_ENDPOINT=$gep
export NO_GCE_CHECK=True GCE_METADATA_HOST=127.0.0.1:1
# the VMs: RGW and the emulator (Compute and the metadata server) on
# their loopback; the agent's token from the metadata server, as a VM's
loop_vm "$gport" "SPOTRUN_GCE_ENDPOINT=http://127.0.0.1:$gport
GCE_METADATA_HOST=127.0.0.1:$gport"
# cloud_state: the emulator's resources, "templates=... groups=... instances=..."
cloud_state() {
	$PY -c 'import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/emu/state"))
print(" ".join("%s=%s" % (k, ",".join(d[k])) for k in ("templates", "groups", "instances")))' "$gep"
}
# cloud_preempt ZONE/NAME
cloud_preempt() {
	$PY -c 'import sys, urllib.request
z, n = sys.argv[2].split("/")
urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/emu/preempt?zone=%s&name=%s" % (z, n),
    data=b"", method="POST")).read()' "$gep" "$1"
}
group=spotrun-pool-loop-us-central1
# one token per scaler's lease: its client kept from step to step
loop_token='token grant=metadata' loop_step_request='/listManagedInstances '
loop_run gcp "$top_srcdir/tests/pool/gcp-loop.ini" \
    "pool loop: created managed instance group $group in us-central1 (instance template spotrun-pool-loop, image projects/deeplearning-platform-release/global/images/common-cu121-v20240922-debian-11), target 1 VM (the queue's demand)" \
    "templates=spotrun-pool-loop groups=us-central1/$group instances=" \
    "pool loop: deleted 2 resources (managed instance group, its VMs, instance template) in us-central1; its record removed from the queue" \
    "templates= groups= instances="
t_done
