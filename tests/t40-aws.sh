#!/bin/sh
# t40-aws.sh: `spotrun run` with [provider] name = aws end to end, against
# tests/mdemu (the metadata emulator) on loopback: the rebalance
# recommendation starts an early checkpoint, the spot interruption notice
# is on the timeline with the emulator's deadline, the job checkpoints,
# and the run exits 75 (no next VM on AWS); the next run resumes. Then the
# job file's keys: endpoint (an IPv6 literal: the emulator on [::1]) wins
# over $SPOTRUN_AWS_ENDPOINT, and poll sets the polling interval. Then the
# actions: a notice whose time is already past stops the job at once (no
# time for a checkpoint) instead of being ignored; hibernate asks for a
# checkpoint and leaves the job running (the hibernation freezes it).
set -u
. "$top_srcdir/tests/jobs/cloud.sh"
echo "1..17"

# mdemu: a rebalance recommendation 0.5 s, the notice 1.5 s after the job
# reached step 5 (an event: a loaded machine starts the job late).
cloud_emu "$tmp/port" "$tmp/emu.log" -C "$tmp/local/at-step-5" -R 0.5 -T 1.5 -U
SPOTRUN_AWS_ENDPOINT=$emu_url
export SPOTRUN_AWS_ENDPOINT

cloud_job "$tmp" awsjob aws

"$SPOTRUN" run "$tmp/job.ini" >"$tmp/out" 2>"$tmp/err"
check $? 75 "the aws notice: checkpoint, then exit 75"
grep -q 'spotrun: awsjob on aws, p5.48xlarge, store ' "$tmp/err" &&
	ok "the facts come from the metadata service" || nok "facts line"
grep -q 'warning  aws rebalance recommendation (' "$tmp/err" &&
	ok "the rebalance recommendation is on the timeline" || nok "rebalance on the timeline"
grep -q 'notice   aws spot interruption (terminate at ' "$tmp/err" && grep -q 'ckpt     0 step [0-9]' "$tmp/err" &&
	ok "the notice and the committed checkpoint are on the timeline" || nok "timeline of the notice"
grep -q '^PUT /latest/api/token ttl=21600 token=none -> 200$' "$tmp/emu.log" &&
	! grep -q 'token=none -> 401' "$tmp/emu.log" &&
	ok "IMDSv2: a token with a TTL, and every GET carried it" || nok "IMDSv2 headers: $(head -3 "$tmp/emu.log")"
check_ua "$tmp/emu.log" "IMDS"

# The next run resumes from the notice's checkpoint (the emulator still
# announces the interruption, so this run too ends with 75 or finishes).
kill $emu; wait $emu 2>/dev/null; emu=
cloud_emu "$tmp/port2" "$tmp/emu2.log"
SPOTRUN_AWS_ENDPOINT=$emu_url "$SPOTRUN" run "$tmp/job.ini" >"$tmp/out2" 2>"$tmp/err"
rc=$?
step=$(sed -n 's/^resumed at //p' "$tmp/out2")
[ $rc = 0 ] && [ -n "$step" ] && [ "$step" -ge 5 ] &&
	ok "the next run resumes from that checkpoint (step $step) and finishes" || nok "resume: rc $rc, step '$step'"

# The job file's endpoint, an IPv6 literal, wins over the environment (a
# closed port here); poll = 100ms: about 30 polls in the 3 s from the job's
# step 5 to the notice (the default, 500ms, makes at most 7; 10 or more
# leaves a loaded machine 300 ms a poll).
kill $emu; wait $emu 2>/dev/null; emu=
cloud_emu "$tmp/port6" "$tmp/emu6.log" -6 -C "$tmp/v6/local/at-step-5" -T 3
mkdir "$tmp/v6"
cloud_job "$tmp/v6" awsv6 aws
printf 'endpoint = http://[::1]:%s\npoll = 100ms\n' "$(cat "$tmp/port6")" >>"$tmp/v6/job.ini"
SPOTRUN_AWS_ENDPOINT=http://127.0.0.1:1 "$SPOTRUN" run "$tmp/v6/job.ini" >"$tmp/out6" 2>"$tmp/err"
check $? 75 "endpoint = http://[::1]:PORT: the notice over IPv6, checkpoint, exit 75"
grep -q '^PUT /latest/api/token ttl=21600 token=none -> 200$' "$tmp/emu6.log" &&
	ok "the job file's endpoint won over SPOTRUN_AWS_ENDPOINT" || nok "no request reached [::1]"
polls=$(sed -n '/^gate /,$p' "$tmp/emu6.log" | grep -c '^GET /latest/meta-data/spot/instance-action ttl=- token=good -> 404$')
[ "$polls" -ge 10 ] && ok "poll = 100ms: $polls polls before the notice" || nok "poll = 100ms: only $polls polls"

# A notice time already past: acted on (no time for a checkpoint: the job
# is stopped at once, exit 75), not ignored while the job runs on.
kill $emu; wait $emu 2>/dev/null; emu=
cloud_emu "$tmp/portp" "$tmp/emup.log" -T 1 -b '{"action":"terminate","time":"2001-09-09T01:46:40Z"}'
mkdir "$tmp/past"
cloud_job "$tmp/past" awspast aws
SPOTRUN_AWS_ENDPOINT=$emu_url "$SPOTRUN" run "$tmp/past/job.ini" >"$tmp/outp" 2>"$tmp/err"
check $? 75 "a notice time in the past: exit 75"
grep -qE '^[0-9:]+  notice   aws spot interruption \(terminate at 2001-09-09T01:46:40Z, already past\), deadline already past \([0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:.]+ [+-][0-9]{4}\)$' "$tmp/err" &&
	grep -qE '^[0-9:]+  ckpt     no time for a checkpoint: the notice left 0ms, margin = 1\.0s; the previous checkpoint stays the newest$' "$tmp/err" &&
	grep -qE '^[0-9:]+  stop     no checkpoint for this notice; SIGTERM to the job$' "$tmp/err" &&
	ok "a notice time in the past: no time for a checkpoint, the job is stopped" || nok "past notice on the timeline"
grep -q 'done at 40' "$tmp/outp" && nok "a notice time in the past: the job ran on to its end" ||
	ok "a notice time in the past: the job did not run on"

# hibernate: a checkpoint, and the job is not stopped (the hibernation
# freezes its processes; here the instance never goes, so it finishes).
kill $emu; wait $emu 2>/dev/null; emu=
cloud_emu "$tmp/porth" "$tmp/emuh.log" -T 1 -A hibernate
mkdir "$tmp/hib"
cloud_job "$tmp/hib" awshib aws
echo 'early_checkpoint = no' >>"$tmp/hib/job.ini"
SPOTRUN_AWS_ENDPOINT=$emu_url "$SPOTRUN" run "$tmp/hib/job.ini" >"$tmp/outh" 2>"$tmp/err"
check $? 0 "hibernate: the job runs to its end, exit 0"
grep -qE '^[0-9:]+  warning  aws spot interruption \(hibernate at [0-9T:-]+Z\): the job is frozen with the instance, not stopped$' "$tmp/err" &&
	ok "hibernate: on the timeline as a freeze, not a stop" || nok "hibernate on the timeline"
grep -qE '^[0-9:]+  ckpt     0 step [0-9]+: .* committed in ' "$tmp/err" &&
	ok "hibernate: a checkpoint is committed (early_checkpoint = no does not skip it)" || nok "hibernate: no checkpoint"
! grep -qE '^[0-9:]+  (stop|notice) ' "$tmp/err" && grep -q 'done at 40' "$tmp/outh" &&
	ok "hibernate: the job is not stopped" || nok "hibernate: the job was stopped"
