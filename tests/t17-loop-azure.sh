#!/bin/sh
# t17-loop-azure.sh: issue 24's loop end to end on Azure: tests/armemu.py
# boots each VM it makes as a VM (--on-instance tests/jobs/vm-boot.sh: the
# set's customData run as t53 runs it, in network and UTS namespaces of its
# own, host name the VM's computer name, its agent the unit's ExecStart),
# the queue on RGW (s3://, HTTPS when RGW serves it). The laptop's
# credentials are a service principal's; the VMs' agents take theirs from
# the metadata service's managed identity (the emulator's), as a VM of a
# set with an identity does. Each step waited for as an event, never a
# sleep (tests/jobs/loop.sh):
#   a job is submitted; `spotrun up` makes the pool at the queue's demand,
#   a Flexible set of 1 Spot VM (Try & Restore on); the VM's install script
#   fetches spotrun from the bucket, its agent claims the job, which holds
#   at step 5; the test evicts the VM: the emulator deletes it and stops
#   its agent (SIGTERM), which checkpoints the job and releases it (exit
#   143); Try & Restore makes another VM (a name and computer name of its
#   own), whose agent claims the job and resumes it at step 5; the job
#   succeeds; the queue drained, that agent's scaler sets the set's
#   capacity to 0 ("queue drained"): the emulator deletes the VM, its agent
#   exits; `spotrun down` leaves the emulator empty. The job ran twice
#   (step 0, step 5), finished once.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/s3-env.sh"
. "$top_srcdir/tests/jobs/vm.sh"
. "$top_srcdir/tests/jobs/loop.sh"
t_setup
loop_setup arm.log

# ---- the cloud: armemu.py, its VMs booted as VMs ----
sub=0f0f0f0f-1717-1717-1717-171717171717
client=17171717-aaaa-bbbb-cccc-171717171717
t_bg armemu "$PY" "$top_srcdir/tests/armemu.py" --port-file "$T/aport" --subscription $sub \
    --principal "tenant-17:$client:pw-t17-secret" --log "$cloud_log" --vm-dir "$T/vmud" \
    --on-instance "sh $top_srcdir/tests/jobs/vm-boot.sh $T/vm.conf"
wait_for "$T/aport" '^[0-9]+$' 30 "$t_last" || { t_show "$T/armemu.err"; t_bail "armemu.py did not start"; }
aport=$(cat "$T/aport")
aep=http://127.0.0.1:$aport
export AZURE_TENANT_ID=tenant-17 AZURE_CLIENT_ID=$client AZURE_CLIENT_SECRET=pw-t17-secret \
    AZURE_SUBSCRIPTION_ID=$sub AZURE_AUTHORITY_HOST=$aep SPOTRUN_ARM_ENDPOINT=$aep
export SPOTRUN_AZURE_METADATA_DISABLED=true SPOTRUN_AZURE_ENDPOINT=http://127.0.0.1:1
# the VMs: RGW and the emulator (ARM and the metadata service) on their
# loopback; the agent's token from the metadata service, as a VM's
loop_vm "$aport" "SPOTRUN_ARM_ENDPOINT=http://127.0.0.1:$aport
SPOTRUN_AZURE_ENDPOINT=http://127.0.0.1:$aport"
# cloud_state: the emulator's resources, "groups=... sets=... vms=..."
cloud_state() {
	$PY -c 'import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/emu/state"))
print(" ".join("%s=%s" % (k, ",".join(d[k])) for k in ("groups", "sets", "vms")))' "$aep"
}
# cloud_preempt NAME: the VM evicted (Try & Restore on: another made)
cloud_preempt() {
	$PY -c 'import sys, urllib.request
urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/emu/evict?vm=" + sys.argv[2],
    data=b"", method="POST")).read()' "$aep" "$1"
}
set=spotrun-pool-loop-eastus
# one token per scaler's lease: its client kept from step to step
loop_token='token managed-identity' loop_step_request='^GET /subscriptions/[^ ]*/virtualMachines\\?'
loop_run azure "$top_srcdir/tests/pool/azure-loop.ini" \
    "pool loop: created VM scale set (Flexible) $set in eastus (resource group spotrun-pool-loop, image microsoft-dsvm:ubuntu-hpc:2204:latest), target 1 VM (the queue's demand)" \
    "groups=spotrun-pool-loop sets=spotrun-pool-loop/$set vms=" \
    "pool loop: deleted 3 resources (VM scale set (Flexible), its VMs, resource group) in eastus; its record removed from the queue" \
    "groups= sets= vms="
t_has "$cloud_log" "token managed-identity client=" \
    "the VMs' scalers took their tokens from the metadata service (a managed identity), not a secret"
t_done
