#!/bin/sh
# t42-azure.sh: `spotrun run` with [provider] name = azure end to end,
# against tests/mdemu (the metadata emulator) on loopback: a Preempt event
# for this VM appears in Scheduled Events, the notice is on the timeline,
# the job checkpoints, the checkpoint commits, and only then is the event
# acknowledged (a POST of StartRequests with its EventId, from a thread of
# its own, which the run waits for before it ends); the run exits 75
# (no next VM on Azure) and the next run resumes from that checkpoint and
# finishes. When this VM's name cannot be read, the events are watched all
# the same: a Preempt of any VM stops the job after a checkpoint (said on
# the timeline and stderr) and is not acknowledged. A NotBefore already
# past leaves no time for a checkpoint: the job is stopped at once.
set -u
. "$top_srcdir/tests/jobs/cloud.sh"
echo "1..14"
id=602d9444-d2cd-49c7-8624-8643e7171297

# mdemu: a Preempt for this VM at 1.5 s (NotBefore 30 s later); the first
# call to scheduledevents takes 1 s (the service starting).
cloud_emu "$tmp/port" "$tmp/emu.log" -Z 1.5 -z 1 -U
SPOTRUN_AZURE_ENDPOINT=$emu_url
export SPOTRUN_AZURE_ENDPOINT

# The job notes when it hands over its checkpoint (before spotrun commits
# it), so the ack can be shown to come after.
cloud_job "$tmp" azjob azure

"$SPOTRUN" run "$tmp/job.ini" >"$tmp/out" 2>"$tmp/err"
check $? 75 "the azure notice: checkpoint, then exit 75"
grep -q 'spotrun: azjob on azure, Standard_ND96isr_H100_v5, store ' "$tmp/err" &&
	ok "the facts come from the instance metadata service" || nok "facts line"
grep -q "notice   azure Preempt event $id" "$tmp/err" && grep -q 'ckpt     0 step [0-9]' "$tmp/err" &&
	ok "the notice and the committed checkpoint are on the timeline" || nok "timeline of the notice"
post=$(grep -c "^POST /metadata/scheduledevents?api-version=2020-07-01 metadata=true -> 200 ctype=application/json body={\"StartRequests\":\[{\"EventId\":\"$id\"}\]} wall=" "$tmp/emu.log")
check "$post" 1 "one ack: the StartRequests POST with the event's id"
# The ack goes out beside the job; the run waits for it before it ends, and
# says so before its last line.
sed -n 's/^[0-9:]*  \(ack\|preempted\) .*/\1/p' "$tmp/err" | tr '\n' ' ' | grep -qx 'ack preempted ' &&
	ok "the run waited for the ack before it ended" || nok "the ack on the timeline"
# The ack comes after the job handed the checkpoint over (spotrun commits
# it in between, and acks in the commit's completion).
wall=$(sed -n 's/^POST .* wall=//p' "$tmp/emu.log" | head -n 1)
done_at=$(find "$tmp/local" -name done-times -exec tail -n 1 {} \; 2>/dev/null | tail -n 1)
[ -n "$wall" ] && [ -n "$done_at" ] && awk -v a="$wall" -v d="$done_at" 'BEGIN { exit !(a > d) }' &&
	ok "the ack came after the checkpoint ($done_at < $wall)" || nok "ack order: ack '$wall', checkpoint '$done_at'"
check_ua "$tmp/emu.log" "Azure IMDS"

# The next run resumes from the notice's checkpoint (no event now).
kill $emu; wait $emu 2>/dev/null; emu=
cloud_emu "$tmp/port2" "$tmp/emu2.log"
SPOTRUN_AZURE_ENDPOINT=$emu_url "$SPOTRUN" run "$tmp/job.ini" >"$tmp/out2" 2>"$tmp/err"
rc=$?
step=$(sed -n 's/^resumed at //p' "$tmp/out2")
[ $rc = 0 ] && [ -n "$step" ] && [ "$step" -ge 5 ] &&
	ok "the next run resumes from that checkpoint (step $step) and finishes" || nok "resume: rc $rc, step '$step'"
grep -q 'done at 40' "$tmp/out2" && ok "the job ran to its end" || nok "the job's end: $(tail -2 "$tmp/out2")"

# This VM's name cannot be read (500): another VM's Preempt counts.
kill $emu; wait $emu 2>/dev/null; emu=
cloud_emu "$tmp/portn" "$tmp/emun.log" -n 1000 -O 1
mkdir "$tmp/noname"
cloud_job "$tmp/noname" aznoname azure
SPOTRUN_AZURE_ENDPOINT=$emu_url "$SPOTRUN" run "$tmp/noname/job.ini" >"$tmp/outn" 2>"$tmp/err"
check $? 75 "name unknown: another VM's Preempt: checkpoint, then exit 75"
[ "$(grep -c '^spotrun: warning: azure: ' "$tmp/err")" = 1 ] &&
	grep -qxF "spotrun: warning: azure: GET $emu_url/metadata/instance/compute/name?api-version=2021-02-01&format=text: HTTP status 500; until this VM's name is read, every Preempt or Terminate event counts as this VM's (polling goes on; later errors are not shown)" "$tmp/err" &&
	ok "name unknown: one warning says what counts meanwhile" || nok "name unknown: the warning"
grep -qE '^[0-9:]+  notice   azure Preempt event 1f4a7c0e-0000-4000-8000-00000000beef for othervm \(this VM.s name is unknown: taken as this VM.s\), deadline ' "$tmp/err" &&
	grep -qE '^[0-9:]+  ckpt     0 step [0-9]+: ' "$tmp/err" &&
	ok "name unknown: the notice says so, and the checkpoint commits" || nok "name unknown: the timeline"
check "$(grep -c '^POST ' "$tmp/emun.log")" 0 "name unknown: another VM's event is not acknowledged"

# NotBefore already past: the event may start at once, so no checkpoint.
kill $emu; wait $emu 2>/dev/null; emu=
cloud_emu "$tmp/portb" "$tmp/emub.log" -Z 1 -N 'Mon, 19 Sep 2016 18:29:47 GMT'
mkdir "$tmp/past"
cloud_job "$tmp/past" azpast azure
SPOTRUN_AZURE_ENDPOINT=$emu_url "$SPOTRUN" run "$tmp/past/job.ini" >"$tmp/outb" 2>"$tmp/err"
rc=$?
[ $rc = 75 ] && grep -qE '^[0-9:]+  ckpt     no time for a checkpoint: the notice left 0ms, margin = 1\.0s; the previous checkpoint stays the newest$' "$tmp/err" &&
	grep -qE '^[0-9:]+  stop     no checkpoint for this notice; SIGTERM to the job$' "$tmp/err" &&
	! grep -q 'done at 40' "$tmp/outb" &&
	ok "NotBefore in the past: no time for a checkpoint, the job is stopped at once, exit 75" ||
	nok "NotBefore in the past: rc $rc"
