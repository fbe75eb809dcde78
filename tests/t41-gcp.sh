#!/bin/sh
# t41-gcp.sh: `spotrun run` with [provider] name = gcp end to end, against
# tests/mdemu (the metadata emulator) on loopback: instance/preempted flips
# to TRUE while a long-poll waits, the notice is on the timeline at once,
# the job checkpoints, and the run exits 75 (no next VM on GCP); the next
# run resumes from that checkpoint and finishes.
set -u
. "$top_srcdir/tests/jobs/cloud.sh"
echo "1..7"

# mdemu: instance/preempted turns TRUE 1.5 s after the job reached step 5.
cloud_emu "$tmp/port" "$tmp/emu.log" -C "$tmp/local/at-step-5" -G 1.5 -U
SPOTRUN_GCP_ENDPOINT=$emu_url
export SPOTRUN_GCP_ENDPOINT

cloud_job "$tmp" gcpjob gcp

"$SPOTRUN" run "$tmp/job.ini" >"$tmp/out" 2>"$tmp/err"
check $? 75 "the gcp notice: checkpoint, then exit 75"
grep -q 'spotrun: gcpjob on gcp, a3-highgpu-8g, store ' "$tmp/err" &&
	ok "the facts come from the metadata server" || nok "facts line"
grep -q 'notice   gcp preemption (instance/preempted = TRUE)' "$tmp/err" && grep -q 'ckpt     0 step [0-9]' "$tmp/err" &&
	ok "the notice and the committed checkpoint are on the timeline" || nok "timeline of the notice"
# The first GET of instance/preempted is plain; its ETag goes back as
# last_etag in the long-poll that the flip answers.
etag=$(sed -n 's|^GET /computeMetadata/v1/instance/preempted flavor=Google -> 200 etag=||p' "$tmp/emu.log" | head -n 1)
[ -n "$etag" ] && grep -q "^GET /computeMetadata/v1/instance/preempted?wait_for_change=true&last_etag=$etag&timeout_sec=10 flavor=Google -> 200 etag=" "$tmp/emu.log" &&
	! grep -q 'flavor=- ' "$tmp/emu.log" &&
	ok "a long-poll with last_etag caught the flip; every request had Metadata-Flavor" || nok "long-poll: $(head -5 "$tmp/emu.log")"
check_ua "$tmp/emu.log" "the GCP metadata server"

# The next run resumes from the notice's checkpoint (not preempted now).
kill $emu; wait $emu 2>/dev/null; emu=
cloud_emu "$tmp/port2" "$tmp/emu2.log"
SPOTRUN_GCP_ENDPOINT=$emu_url "$SPOTRUN" run "$tmp/job.ini" >"$tmp/out2" 2>"$tmp/err"
rc=$?
step=$(sed -n 's/^resumed at //p' "$tmp/out2")
[ $rc = 0 ] && [ -n "$step" ] && [ "$step" -ge 5 ] &&
	ok "the next run resumes from that checkpoint (step $step) and finishes" || nok "resume: rc $rc, step '$step'"
grep -q 'done at 40' "$tmp/out2" && ok "the job ran to its end" || nok "the job's end: $(tail -2 "$tmp/out2")"
