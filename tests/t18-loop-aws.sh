#!/bin/sh
# t18-loop-aws.sh: issue 24's loop end to end on AWS: moto (tests/ec2emu.py,
# its instances booted as VMs: --on-instance tests/jobs/vm-boot.sh, the
# launch template's user-data run as t53 runs it, host name the instance's
# private DNS name's first label), the queue on RGW (s3://, HTTPS when RGW
# serves it). moto accepts any key, so the one pair (RGW's) serves the
# queue and EC2 both, on the laptop and on the VMs. Each step waited for as
# an event, never a sleep (tests/jobs/loop.sh):
#   a job is submitted; `spotrun up` makes the pool at the queue's demand,
#   an EC2 Fleet of type maintain of 1 spot instance; the VM's agent claims
#   the job, which holds at step 5; the test interrupts the instance: the
#   emulator terminates it and stops its agent (SIGTERM), which checkpoints
#   the job and releases it (exit 143); the maintain fleet launches another
#   (ec2emu.py does what EC2 does there and moto does not), whose agent
#   resumes the job at step 5; the job succeeds; the queue drained, that
#   agent's scaler sets the fleet's target to 0 (ModifyFleet): the instance
#   is terminated, its agent exits; a second job raises the pool through
#   submit, and `spotrun down --drain` puts it back in the queue from its
#   checkpoint before deleting the fleet and the template, nothing left.
# Skipped without moto unless SPOTRUN_TEST_REQUIRE_MOTO=1.
. "$top_srcdir/tests/jobs/lib.sh"
. "$top_srcdir/tests/s3-env.sh"
. "$top_srcdir/tests/ec2emu-env.sh"
. "$top_srcdir/tests/jobs/vm.sh"
. "$top_srcdir/tests/jobs/loop.sh"
t_setup
ec2emu_have_moto || exit "$ec2emu_exit"
loop_setup ec2.log

# ---- the cloud: moto, its instances booted as VMs ----
t_bg ec2emu python3 "$top_srcdir/tests/ec2emu.py" --port-file "$T/mport" \
    --hook-port-file "$T/hport" --log "$cloud_log" --vm-dir "$T/vmud" \
    --on-instance "sh $top_srcdir/tests/jobs/vm-boot.sh $T/vm.conf"
wait_for "$T/mport" '^[0-9]+$' 60 "$t_last" || { t_show "$T/ec2emu.err"; t_bail "ec2emu.py did not start"; }
wait_for "$T/hport" '^[0-9]+$' 10 "$t_last" || { t_show "$T/ec2emu.err"; t_bail "ec2emu.py's hooks did not start"; }
mport=$(cat "$T/mport") hep=http://127.0.0.1:$(cat "$T/hport")
export AWS_REGION=us-east-1 AWS_ENDPOINT_URL_EC2=http://127.0.0.1:$mport \
    AWS_ENDPOINT_URL_SSM=http://127.0.0.1:$mport AWS_CONFIG_FILE=/dev/null \
    AWS_SHARED_CREDENTIALS_FILE=/dev/null AWS_EC2_METADATA_DISABLED=true
unset AWS_SESSION_TOKEN AWS_PROFILE AWS_DEFAULT_REGION AWS_ENDPOINT_URL SPOTRUN_EC2_ENDPOINT
loop_vm "$mport" "AWS_REGION=us-east-1
AWS_ENDPOINT_URL_EC2=http://127.0.0.1:$mport"
# cloud_state: moto's pool, "fleets=N templates=... instances=N"
cloud_state() {
	$PY -c 'import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/emu/state"))
print("fleets=%d templates=%s instances=%d" % (len(d["fleets"]), ",".join(d["templates"]), len(d["instances"])))' "$hep"
}
# cloud_preempt ID: the instance interrupted (its maintain fleet launches another)
cloud_preempt() {
	$PY -c 'import sys, urllib.request
urllib.request.urlopen(urllib.request.Request(sys.argv[1] + "/emu/preempt?id=" + sys.argv[2],
    data=b"", method="POST")).read()' "$hep" "$1"
}
# up's line names the fleet and template ids moto made: made constant
loop_up_norm() { sed -i -e 's/fleet-[0-9a-f-]*/fleet-ID/' -e 's/lt-[0-9a-f]*/lt-ID/' "$1"; }
loop_run aws "$top_srcdir/tests/pool/aws-loop.ini" \
    "pool loop: created EC2 Fleet fleet-ID in us-east-1 (launch template lt-ID, image ami-12c6146b), target 1 VM (the queue's demand)" \
    "fleets=1 templates=spotrun-pool-loop instances=0" \
    "pool loop: deleted 2 resources (EC2 Fleet, its VMs, launch template) in us-east-1; its record removed from the queue" \
    "fleets=0 templates= instances=0"
t_done
